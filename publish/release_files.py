"""The files of a release, written once at publish from its snapshot, so the server only sends them.

- Every fixed document of the API at its URL path: ``api/public/products.json``,
  ``llms-full.txt``, the OpenAPI document and the rest (``DOCUMENTS``).
- Whole-table distributions under ``api/public/downloads/``: Parquet for every public table
  (column types kept, the per-sample readings among them), the bench measurements also as
  CSV and JSON lines (``TEXT_FORMATS``).
- The page.json documents' records packed end to end with an index (``release.folder.PAGE_PACK``),
  and the envelope every one of them begins with (``release.folder.PAGE_ENVELOPE``).
- What crawlers and answer engines read first: ``robots.txt``, ``llms.txt``, the sitemap index
  ``sitemap.xml`` and its sitemaps under ``sitemaps/`` (``publish.crawler_files``).
- The distributions described for open-data tools from the data dictionary
  (``public.table_descriptions``): dataset.json is also Croissant, and ``datapackage.json`` a
  Frictionless data package.

Every text file of ``GZIP_MINIMUM_BYTES`` or more gets a gzip copy (``.gz``) and, where
zstd saves a further ``ZSTD_MUST_SAVE``, a zstd copy (``.zst``). The base URL is the one the
marts were built with, read from the snapshot: the whole release speaks of one address.

A publish writes only what changed since the release being served (``FileMaker``). Each file
and its compressed copies (or the sitemaps, together) are keyed by what they are made from: the
tables they read, by their keys in the snapshot (``publish.snapshot_copy.table_key``), and the
code that writes them (``producer_digest``). A document written in Python counts every table
as read, as it may read any; a table's distribution, written by one statement, only that table.
The keys go into the manifest; a file whose key the release being served recorded is
hard-linked from it, not written. A document that names its release (version, time) cannot be
taken from another release: a collection names it only in its head, before the items, so it is
written as a head and a body compressed apart, and a release whose collection did not change
writes the head anew and copies the body, plain and compressed (``restamp``). The page.json
packs hold the records without their envelope, so they are linked whole; when some table
changed, a page whose row hashes as before is copied from the packs before, so that a changed
page costs its own rendering (``write_packs``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import importlib.metadata
import io
import json
import os
import shutil
import zlib
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Any, BinaryIO

import orjson
import zstandard

from foundations.input_problems import sha256_of
from foundations.settings import PROJECT_ROOT
from public import documents, openapi, table_descriptions
from public.openapi import BENCH_COLUMNS, OPERATIONS
from publish import crawler_files
from release.folder import (
    CAPABILITIES,
    CLAIMS,
    DATA_PACKAGE,
    DATASET,
    DOWNLOADS_DIR,
    ENCODINGS,
    FULL_TEXT,
    GZIP_HEADER,
    GZIP_LEVEL,
    GZIP_MINIMUM_BYTES,
    GZIP_TRAILER_BYTES,
    LLMS,
    OPENAPI,
    PAGE_ENVELOPE,
    PAGE_INDEX,
    PAGE_PACK,
    PAGE_PACK_GZIP,
    PAGE_PATHS,
    PRESS_KIT,
    RELEASES_PREFIX,
    ROBOTS,
    PageEntry,
    PageIndex,
    deflate_head,
    gzip_trailer,
)
from release.local_store import rows_of, sql_string, table_keys
from release.manifest import PublishedRelease, ReleaseError, ReleaseFile
from release.snapshot import Snapshot, read_snapshot
from warehouse.contract import STORED_ORDER, table_query
from warehouse.reference_data import SECTIONS

ZSTD_LEVEL = 9
ZSTD_MUST_SAVE = 0.05  # of the gzip copy's size, or no zstd copy is kept
COPY_BYTES = 1024 * 1024
# Every distributed table goes as Parquet; these also as text, for spreadsheets and line tools.
# (Not the per-sample readings: at 10M readings their CSV is 2.8 GB to the Parquet's 0.3 GB.)
TEXT_FORMATS: dict[str, tuple[str, ...]] = {"bench_measurements": ("csv", "jsonl")}
COPY_OPTIONS = {"parquet": "FORMAT parquet, COMPRESSION zstd", "csv": "FORMAT csv, HEADER", "jsonl": "FORMAT json"}
FORMAT_NAMES = {"parquet": "Parquet", "csv": "CSV", "jsonl": "JSON lines"}
# What writes a release's files: this project's packages it is written with (the release's
# format, what the public sees, publish itself and what lies under them), and the libraries
# whose output lands in the files. A change to any of them makes every file again, once.
PRODUCER_PACKAGES = ("foundations", "warehouse", "release", "public", "publish")
PRODUCER_LIBRARIES = ("duckdb", "orjson", "zstandard", "numpy")

# Writes one file of the release (at the path given) from the snapshot.
FileWriter = Callable[[Path, Snapshot], None]
# Writes a document into an open file, from the snapshot.
Writer = Callable[[BinaryIO, Snapshot], None]


def streamed(write: Writer) -> FileWriter:
    """A file writer of a document written as it is read (buffered, never whole in memory)."""

    def write_file(target: Path, snapshot: Snapshot) -> None:
        with target.open("wb", buffering=COPY_BYTES) as out:
            write(out, snapshot)

    return write_file


def whole(build: Callable[[Snapshot], dict[str, Any]]) -> FileWriter:
    """A file writer of a small document built whole."""
    return streamed(lambda out, snapshot: out.write(documents.encode(build(snapshot))))


def json_lines(table: str) -> FileWriter:
    """A file writer of ``table`` as JSON lines, in ``TABLE_ORDER``, written by DuckDB."""

    def write_file(target: Path, snapshot: Snapshot) -> None:
        snapshot.connection.execute(f"COPY ({table_query(table)}) TO {sql_string(str(target))} (FORMAT json)")

    return write_file


@dataclass(frozen=True)
class Document:
    """A fixed document: how it is written, what it is made from besides the code, and how it
    names the release it belongs to."""

    write: FileWriter
    # The tables it reads; None for any (a document written in Python may read any table).
    tables: tuple[str, ...] | None = None
    # Whether it names its release (version or time), so that no other release holds it.
    names_release: bool = False
    # For a document that names its release only in a head before its body: the bytes that end
    # that head (the collection's key opening its list), so that the body is kept (``restamp``).
    body_follows: bytes | None = None


def collection(listed: documents.Collection) -> Document:
    """A collection document: it names its release only in its head, before its items."""
    return Document(
        streamed(partial(documents.write_collection, collection=listed)),
        names_release=True,
        body_follows=b',"' + listed.key.encode() + b'":[',
    )


# URL path (no leading slash) of each fixed document -> how it is written from the snapshot.
# The dataset descriptor comes last, as it lists the others' sizes and sha256 (``DATASET``).
DOCUMENTS: dict[str, Document] = {
    **{path.lstrip("/"): collection(listed) for path, listed in documents.COLLECTIONS.items()},
    CAPABILITIES: Document(whole(documents.capabilities), names_release=True),
    PRESS_KIT: Document(whole(documents.press_kit), names_release=True),
    OPENAPI: Document(whole(lambda snapshot: openapi.document(snapshot.base_url, snapshot.dictionary))),
    # DuckDB writes a claim's columns (text, numbers, a date, lists of text) as documents.record
    # would, and ten million reading ids without a Python object each.
    CLAIMS: Document(json_lines("claims"), tables=("claims",)),
    FULL_TEXT: Document(streamed(documents.write_full_text)),
}
# Served at their own address like the documents above, but outside the API's contract: for crawlers.
CRAWLER_DOCUMENTS: dict[str, Document] = {
    ROBOTS: Document(streamed(crawler_files.write_robots)),
    LLMS: Document(streamed(crawler_files.write_llms_txt)),
}


@cache
def producer_digest() -> str:
    """The sha256 of the code that writes a release's files and of the libraries' versions."""
    digest = hashlib.sha256()
    for package in PRODUCER_PACKAGES:
        for path in sorted((PROJECT_ROOT / package).rglob("*.py")):
            digest.update(path.relative_to(PROJECT_ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    for library in PRODUCER_LIBRARIES:
        digest.update(f"{library} {importlib.metadata.version(library)}\0".encode())
    digest.update(f"zlib {zlib.ZLIB_RUNTIME_VERSION}".encode())
    return digest.hexdigest()


def key_of(*made_of: Any) -> str:
    """The key of a file made from ``made_of`` (JSON-encodable) by this code."""
    return hashlib.sha256(json.dumps([producer_digest(), *made_of]).encode()).hexdigest()


@dataclass
class FileMaker:
    """Makes the files of one release into ``folder``: links each group of files from
    ``previous`` when that release made it from the same things, writes it otherwise, and
    records what each file was made from (``made_from``, for the manifest)."""

    folder: Path
    previous: PublishedRelease | None
    made_from: dict[str, dict[str, Any]] = field(default_factory=dict)
    linked: dict[str, str] = field(default_factory=dict)  # path -> sha256, of the files linked

    def previous_files(self, key: str) -> list[ReleaseFile]:
        """The files of the previous release made from ``key``, all still on its disk (or none)."""
        if self.previous is None:
            return []
        files = [f for f in self.previous.manifest.files.values() if f.made_from and f.made_from.get("key") == key]
        return files if all(self.previous.path_of(f).is_file() for f in files) else []

    def make(self, key: str, write: Callable[[], Iterable[str]]) -> bool:
        """The files made from ``key``: linked from the previous release, or written by ``write``
        (which returns the paths it wrote); whether they were linked."""
        found = self.previous_files(key)
        for file in found:
            target = self.folder / file.path
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(self.previous.path_of(file), target)
            self.made_from[file.path] = dict(file.made_from)
            self.linked[file.path] = file.sha256
        if not found:
            self.record(key, write())
        return bool(found)

    def record(self, key: str, paths: Iterable[str], extra: dict[str, dict[str, Any]] | None = None) -> None:
        """Record that the files at ``paths`` were made from ``key`` (with ``extra`` by path)."""
        for path in paths:
            self.made_from[path] = {"key": key, **(extra or {}).get(path, {})}

    def sha256(self, path: str) -> str:
        """The sha256 of the written file ``path``: the previous release's for a linked file."""
        return self.linked.get(path) or sha256_of(self.folder / path)


def write_release_files(
    folder: Path, snapshot_file: Path, previous: PublishedRelease | None = None
) -> dict[str, dict[str, Any]]:
    """Write every served file of the release ``folder`` from its finished ``snapshot_file``,
    taking from ``previous`` what it made from the same things; what each file was made from."""
    snapshot = read_snapshot(snapshot_file)
    maker = FileMaker(folder, previous)
    try:
        keys = table_keys(snapshot.connection)
        every_table = sorted(keys.items())
        downloads, tables = write_distributions(maker, snapshot, keys)
        for path, document in DOCUMENTS.items():
            write_document(maker, snapshot, path, document, every_table)
        distributions = [describe_file(maker, entry) for entry in downloads]
        record_sets = [
            table_descriptions.croissant_record_set(tables[entry["table"]], entry["@id"])
            for entry in distributions
            if entry.get("table") and entry["@id"].endswith(".parquet")
        ]
        dataset = documents.dataset(snapshot, [as_listed(entry) for entry in distributions], record_sets)
        write_file(folder, DATASET, lambda target: target.write_bytes(documents.encode(dataset)))
        package = documents.data_package(snapshot, tables, distributions, DATA_PACKAGE)
        write_file(folder, DATA_PACKAGE, lambda target: target.write_bytes(documents.encode(package)))
        write_page_pack(maker, snapshot, every_table)
        for path, document in CRAWLER_DOCUMENTS.items():
            write_document(maker, snapshot, path, document, every_table)
        maker.make(key_of("sitemaps", every_table), lambda: write_sitemaps(folder, snapshot))
    finally:
        snapshot.connection.close()
    return maker.made_from


def write_document(
    maker: FileMaker, snapshot: Snapshot, path: str, document: Document, every_table: list[tuple[str, str]]
) -> None:
    """One fixed document and its copies: linked, restamped or written (``Document``)."""
    made_of = every_table if document.tables is None else [item for item in every_table if item[0] in document.tables]
    key = key_of("document", path, made_of)

    def write() -> list[str]:
        return write_file(maker.folder, path, lambda target: document.write(target, snapshot))

    if document.body_follows is not None:
        if not restamp(maker, snapshot, path, key):
            write_enveloped(maker, path, key, document.body_follows, lambda target: document.write(target, snapshot))
    elif document.names_release:
        write()
    else:
        maker.make(key, write)


def write_distributions(
    maker: FileMaker, snapshot: Snapshot, keys: dict[str, str]
) -> tuple[list[dict[str, Any]], dict[str, table_descriptions.DescribedTable]]:
    """Each public table as Parquet (the bench measurements also as CSV and JSON lines): their
    dataset.json entries, the collections' documents included, and each table as written,
    described by the data dictionary."""
    folder = maker.folder
    (folder / DOWNLOADS_DIR).mkdir(parents=True, exist_ok=True)
    written: list[tuple[str, str, str | None]] = []  # (path, what it holds, its table)
    tables: dict[str, table_descriptions.DescribedTable] = {}
    for table in snapshot.distributed_tables:
        columns = (
            ", ".join(f'"{c}"' for c in BENCH_COLUMNS)
            if table == "bench_measurements"
            else snapshot.public_columns(table)
        )
        select = f'SELECT {columns} FROM "{table}"'
        tables[table] = table_descriptions.describe_table(
            snapshot.connection, table, select, snapshot.dictionary[table]
        )
        if table in STORED_ORDER:
            select += f" ORDER BY {STORED_ORDER[table]}"
        for extension in ("parquet", *TEXT_FORMATS.get(table, ())):
            path = f"{DOWNLOADS_DIR}/{table}.{extension}"

            def copy(path: str = path, select: str = select, options: str = COPY_OPTIONS[extension]) -> list[str]:
                destination = sql_string(str(folder / path))
                snapshot.connection.execute(f"COPY ({select}) TO {destination} ({options})")
                return [path, *compress_copies(folder, path)]

            maker.make(key_of("copy", select, COPY_OPTIONS[extension], keys[table]), copy)
            written.append((path, f"The {table} table, whole ({FORMAT_NAMES[extension]})", table))
    for operation in OPERATIONS:  # the collections, downloadable as they are served
        path = operation.path.lstrip("/")
        if operation.download and path in DOCUMENTS:
            written.append((path, operation.download, None))
    version_root = f"{snapshot.base_url}{RELEASES_PREFIX}{snapshot.version}/"
    entries = [
        {
            "@id": path,
            "name": name,
            "path": path,
            "table": table,
            "contentUrl": version_root + path,
            "encodingFormat": table_descriptions.croissant_format(path),
        }
        for path, name, table in written
    ]
    return entries, tables


def describe_file(maker: FileMaker, entry: dict[str, Any]) -> dict[str, Any]:
    """A distribution entry with the written file's size and sha256 (a Croissant FileObject)."""
    size = (maker.folder / entry["path"]).stat().st_size
    return {"@type": "cr:FileObject", **entry, "contentSize": f"{size} B", "sha256": maker.sha256(entry["path"])}


def as_listed(entry: dict[str, Any]) -> dict[str, Any]:
    """A distribution entry as dataset.json lists it: without the bookkeeping of where it was written."""
    return {k: v for k, v in entry.items() if k not in ("path", "table")}


def write_file(folder: Path, path: str, write: Callable[[Path], None]) -> list[str]:
    """The file at ``path`` as ``write`` writes it, and its compressed copies: the paths written."""
    target = folder / path
    target.parent.mkdir(parents=True, exist_ok=True)
    write(target)
    return [path, *compress_copies(folder, path)]


def compress_copies(folder: Path, path: str, head_length: int = 0) -> dict[str, int]:
    """Write the gzip copy of a text file, and its zstd copy where that saves more: both at
    once, on two threads (each library compresses without holding the GIL). Each copy's path,
    with where its body begins: the first ``head_length`` bytes (a head that names the release)
    are compressed apart from the body, so that a later release can put a new head before the
    same compressed body (``restamp``)."""
    source = folder / path
    if source.suffix == ".parquet" or source.stat().st_size < GZIP_MINIMUM_BYTES:
        return {}
    gzipped, zstd = path + ENCODINGS["gzip"], path + ENCODINGS["zstd"]
    with ThreadPoolExecutor(max_workers=1) as beside:
        zstd_written = beside.submit(write_zstd, source, folder / zstd, head_length)
        copies = {gzipped: write_gzip(source, folder / gzipped, head_length)}
        copies[zstd] = zstd_written.result()
    if (folder / zstd).stat().st_size > (folder / gzipped).stat().st_size * (1 - ZSTD_MUST_SAVE):
        (folder / zstd).unlink()
        del copies[zstd]
    return copies


def write_gzip(source: Path, target: Path, head_length: int = 0) -> int:
    """``source`` as one gzip member: its first ``head_length`` bytes as deflate blocks of their
    own, ended on a byte boundary, then the rest compressed apart; where the rest's blocks begin."""
    with source.open("rb") as plain, target.open("wb") as out:
        head = plain.read(head_length)
        out.write(GZIP_HEADER + (deflate_head(head) if head else b""))
        body_at = out.tell()
        crc, size = zlib.crc32(head), len(head)
        compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
        while block := plain.read(COPY_BYTES):
            crc, size = zlib.crc32(block, crc), size + len(block)
            out.write(compressor.compress(block))
        out.write(compressor.flush() + gzip_trailer(crc, size))
    return body_at


def write_zstd(source: Path, target: Path, head_length: int = 0) -> int:
    """``source`` as one zstd frame with its size in the header (so that a client can decode it
    in one call): its first ``head_length`` bytes as raw blocks, then the blocks of the rest as
    zstd compresses it alone; where those begin."""
    size = source.stat().st_size
    compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
    with source.open("rb") as plain, target.open("wb") as out:
        if not head_length:
            compressor.copy_stream(plain, out, size=size)
            return 0
        head = plain.read(head_length)
        body = io.BytesIO()
        compressor.copy_stream(plain, body, size=size - len(head))
        frame = ZstdFrame.parse(body.getbuffer())
        out.write(frame.with_head(head, size))
        body_at = out.tell()
        out.write(body.getbuffer()[frame.length :])
    return body_at


@dataclass(frozen=True)
class ZstdFrame:
    """The header of a zstd frame as ``zstandard`` writes one (no dictionary, no checksum): its
    length, and its window, which the blocks compressed under it need."""

    MAGIC = b"\x28\xb5\x2f\xfd"
    RAW_BLOCK_MAX = 128 * 1024
    length: int
    window_descriptor: int | None  # None: a single-segment frame, whose window is its content

    @classmethod
    def parse(cls, frame: bytes | memoryview) -> ZstdFrame:
        if bytes(frame[:4]) != cls.MAGIC:
            raise ValueError("not a zstd frame")
        descriptor = frame[4]
        single_segment, checksum, dictionary = descriptor >> 5 & 1, descriptor >> 2 & 1, descriptor & 3
        if checksum or dictionary:
            raise ValueError("a zstd frame with a checksum or a dictionary cannot take a new head")
        size_bytes = (1 if single_segment else 0, 2, 4, 8)[descriptor >> 6]
        return cls(5 + (0 if single_segment else 1) + size_bytes, None if single_segment else frame[5])

    def with_head(self, head: bytes, content_size: int) -> bytes:
        """A frame header for ``content_size`` bytes under this frame's window, then ``head`` as
        raw blocks: this frame's blocks may follow unchanged, as raw blocks change none of the
        state (entropy tables, repeated offsets) that compressed blocks carry over."""
        single_segment = self.window_descriptor is None
        descriptor = 3 << 6 | (1 << 5 if single_segment else 0)  # an eight-byte content size
        window = b"" if single_segment else bytes([self.window_descriptor])
        header = self.MAGIC + bytes([descriptor]) + window + content_size.to_bytes(8, "little")
        pieces = (head[at : at + self.RAW_BLOCK_MAX] for at in range(0, len(head), self.RAW_BLOCK_MAX))
        return header + b"".join((len(piece) << 3).to_bytes(3, "little") + piece for piece in pieces)


def write_enveloped(maker: FileMaker, path: str, key: str, body_follows: bytes, write: FileWriter) -> None:
    """Write a document that names its release only in its head, and its copies with that head
    compressed apart; record where each one's body begins, for ``restamp``."""
    target = maker.folder / path
    target.parent.mkdir(parents=True, exist_ok=True)
    write(target)
    with target.open("rb") as written:
        start = written.read(64 * 1024)
    head_length = start.index(body_follows) + len(body_follows)
    body_at = {path: head_length, **compress_copies(maker.folder, path, head_length)}
    maker.record(key, body_at, {copy: {"body_at": at} for copy, at in body_at.items()})


def restamp(maker: FileMaker, snapshot: Snapshot, path: str, key: str) -> bool:
    """Make the document ``path`` and its copies from the previous release's, made from the same
    ``key``: its head naming this release instead of that one, then that document's body,
    copied, plain and compressed. False (nothing written) when the previous release holds no
    such document, or its head does not name that release as expected."""
    previous = maker.previous
    files = {file.path: file for file in maker.previous_files(key)}
    if previous is None or path not in files or not all("body_at" in f.made_from for f in files.values()):
        return False
    source = previous.path_of(files[path])
    with source.open("rb") as old:
        old_head = old.read(files[path].made_from["body_at"])
    published_then = dt.datetime.fromisoformat(previous.manifest.published_at)
    head = restamped(
        old_head,
        {
            b'"generated_at":': (documents.iso_ms(published_then), documents.iso_ms(snapshot.published_at)),
            b'"dataset_version":': (previous.manifest.version, snapshot.version),
        },
    )
    if head is None:
        return False
    target = maker.folder / path
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as out, source.open("rb") as old:
        out.write(head)
        old.seek(len(old_head))
        shutil.copyfileobj(old, out, COPY_BYTES)
    body_at = {path: len(head)}
    for copy, file in files.items():
        if copy != path:
            put_head = restamp_gzip if copy.endswith(ENCODINGS["gzip"]) else restamp_zstd
            body_at[copy] = put_head(
                previous.path_of(file), file.made_from["body_at"], head, target, maker.folder / copy
            )
    maker.record(key, body_at, {copy: {"body_at": at} for copy, at in body_at.items()})
    return True


def restamped(head: bytes, fields: dict[bytes, tuple[str, str]]) -> bytes | None:
    """``head`` with each named field's old value replaced by its new one; None unless each field
    appears there exactly once, with its old value."""
    for name, (old, new) in fields.items():
        before, after = name + orjson.dumps(old), name + orjson.dumps(new)
        if head.count(name) != 1 or head.count(before) != 1:
            return None
        head = head.replace(before, after)
    return head


def restamp_gzip(old_copy: Path, body_at: int, head: bytes, plain: Path, target: Path) -> int:
    """The gzip copy of ``plain`` (``head``, then the body ``old_copy`` holds compressed from
    ``body_at``): the head's blocks, the old body's blocks, a trailer for the whole; where the
    body begins."""
    crc = 0
    with plain.open("rb") as document:
        while block := document.read(COPY_BYTES):
            crc = zlib.crc32(block, crc)
    with target.open("wb") as out, old_copy.open("rb") as old:
        out.write(GZIP_HEADER + deflate_head(head))
        new_body_at = out.tell()
        old.seek(body_at)
        remaining = old_copy.stat().st_size - GZIP_TRAILER_BYTES - body_at
        while remaining > 0:
            block = old.read(min(COPY_BYTES, remaining))
            out.write(block)
            remaining -= len(block)
        out.write(gzip_trailer(crc, plain.stat().st_size))
    return new_body_at


def restamp_zstd(old_copy: Path, body_at: int, head: bytes, plain: Path, target: Path) -> int:
    """The zstd copy of ``plain`` (``head``, then the body ``old_copy`` holds compressed from
    ``body_at``): a frame header for the whole, the head's raw blocks, the old body's blocks;
    where the body begins."""
    with old_copy.open("rb") as old, target.open("wb") as out:
        frame = ZstdFrame.parse(old.read(64))
        out.write(frame.with_head(head, plain.stat().st_size))
        new_body_at = out.tell()
        old.seek(body_at)
        shutil.copyfileobj(old, out, COPY_BYTES)
    return new_body_at


def write_sitemaps(folder: Path, snapshot: Snapshot) -> list[str]:
    """The sitemaps and their index, with their compressed copies: the paths written."""
    written = []
    for path in crawler_files.write_sitemaps(folder, snapshot, SECTIONS):
        written += [path, *compress_copies(folder, path)]
    return written


def write_page_pack(maker: FileMaker, snapshot: Snapshot, every_table: list[tuple[str, str]]) -> None:
    """The envelope every page.json document of the release begins with, and each page's part
    after it, end to end, plain and gzipped alone, with their index (``release.folder``): the
    packs and index linked while no table changed, the envelope written every time."""
    folder = maker.folder
    envelope = orjson.dumps(documents.envelope(snapshot, documents.USAGE["page"]))[:-1] + b',"page":'
    (folder / PAGE_ENVELOPE).parent.mkdir(parents=True, exist_ok=True)
    (folder / PAGE_ENVELOPE).write_bytes(envelope)
    maker.make(key_of("pages", every_table), lambda: write_packs(folder, snapshot, maker.previous))


# Each page's path and the 64-bit hash of its row, in pack order (``TABLE_ORDER["pages"]``).
PAGE_SOURCES_SQL = "SELECT path, hash(row) FROM pages AS row ORDER BY path"
CHANGED_PAGES_SQL = "SELECT * FROM pages WHERE path IN (SELECT unnest($paths)) ORDER BY path"


def write_packs(folder: Path, snapshot: Snapshot, previous: PublishedRelease | None) -> list[str]:
    """Each page's part after the envelope (its record, then the envelope's closing brace), end
    to end, plain and as a gzip member each, and their index; the paths written. A page whose
    row hashes as it did in ``previous`` (under the same code) is copied from its packs, so
    that a changed page costs its own rendering, not every page's."""
    under_this_code = int(producer_digest()[:16], 16)  # a page's source counts only under the same code
    found = snapshot.connection.execute(PAGE_SOURCES_SQL).fetchall()
    sources = [(path, row_hash ^ under_this_code) for path, row_hash in found]
    before = previous_pages(previous)
    changed = [path for path, source in sources if path not in before or int(before[path]["source"]) != source]
    if len(changed) > len(sources) // 2:  # most pages: every row as it comes
        wanted = set(changed)
        fresh = (row for row in snapshot.stream("pages") if row["path"] in wanted)
    else:  # a few: only theirs
        fresh = iter(rows_of(snapshot.connection, CHANGED_PAGES_SQL, {"paths": changed}) if changed else ())
    pages: list[tuple[str, PageEntry]] = []
    member_overhead = len(GZIP_HEADER) + GZIP_TRAILER_BYTES
    with contextlib.ExitStack() as stack:
        pack = stack.enter_context((folder / PAGE_PACK).open("wb"))
        gzip_pack = stack.enter_context((folder / PAGE_PACK_GZIP).open("wb"))
        if before:
            old_pack = stack.enter_context((previous.folder / PAGE_PACK).open("rb")).fileno()
            old_gzip_pack = stack.enter_context((previous.folder / PAGE_PACK_GZIP).open("rb")).fileno()
        for path, source in sources:
            old = before.get(path)
            if old is not None and int(old["source"]) == source:
                part = os.pread(old_pack, int(old["part_length"]), int(old["part_offset"]))
                member_at = int(old["deflate_offset"]) - len(GZIP_HEADER)
                member = os.pread(old_gzip_pack, int(old["deflate_length"]) + member_overhead, member_at)
                digest = old["part_sha256"].tobytes()
            else:
                row = next(fresh)
                if row["path"] != path:  # both are in path order, from one read-only snapshot
                    raise RuntimeError(f"page {path} was not read in order (read {row['path']})")
                part = documents.encode(documents.record(row)) + b"}"
                member = GZIP_HEADER + zlib.compress(part, GZIP_LEVEL, -zlib.MAX_WBITS)
                member += gzip_trailer(zlib.crc32(part), len(part))
                digest = hashlib.sha256(part).digest()
            deflate_at = gzip_pack.tell() + len(GZIP_HEADER)
            pages.append((path, (pack.tell(), len(part), deflate_at, len(member) - member_overhead, digest, source)))
            pack.write(part)
            gzip_pack.write(member)
    PageIndex.write(folder, pages)
    return [PAGE_PACK, PAGE_PACK_GZIP, PAGE_INDEX, PAGE_PATHS]


def previous_pages(previous: PublishedRelease | None) -> dict[str, Any]:
    """The rows of ``previous``'s page index by path: empty without a release before, or one
    whose packs are in another layout."""
    if previous is None or not all((previous.folder / path).is_file() for path in (PAGE_PACK, PAGE_PACK_GZIP)):
        return {}
    try:
        return PageIndex.read(previous.folder).by_path()
    except (OSError, ValueError, ReleaseError):
        return {}
