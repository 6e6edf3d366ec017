"""Large files that a tester's sheet changes in a few places, written from parts a later release copies.

Such a file lists the rows of a table in the order a file lists them (``listed_order``): a table
that a publish patches by row (``PATCHED_BY``: the claims, the products, each grouped by product),
or the bench measurements, stored in stream order (protocol, then product) and grouped by
measurement (a product's rows lie apart there, one in each of its protocols' stretches). Its
rows are cut into parts: runs of groups in that order, a run ending after each group whose key
hashes to a multiple of ``GROUPS_PER_PART`` (content-defined, as in rsync: a new or removed group
moves no other part's bounds). A part's source is what its rows hash to (each group's count and
row hashes: as the snapshot recorded them for a patched table, ``SNAPSHOT_GROUPS_TABLE``; hashed
from the listed columns at each publish for the measurements, which the snapshot does not patch
and are a small fraction of the readings) under this code and the table's columns as described
(``encoding_key``). The file is a head, its parts
with a separator between them, and a tail; its gzip copy is one member of the same pieces,
each deflated apart (``release.codecs.GzipParts``). An index beside them (``parts_index_path``)
says where each part lies in both and what it was made from.

The next release takes a part whose source it finds in that index as it is, plain and deflated,
and encodes only the others: one sheet re-encodes a part or two, not ten million rows. A release
with no index before it encodes every part, through the same code, so that its bytes are the
same as if it had taken them, and the text files the same as DuckDB's ``COPY`` of the whole
(``tests/api/test_release.py``). The zstd copy is compressed whole, its head apart
(``release.codecs.zstd_copy``): the claims at a fast level (700 MB at 10M readings), the products
and the bench measurements at the usual one (zstd's fast levels save nothing over gzip on them).
A release whose parts are those before, in the same order, takes that copy's body as it is.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import logging
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np

from foundations.content_keys import value_key
from public import documents
from public.documents import encoded_record
from publish.file_keys import FileMaker, producer_digest
from publish.snapshot_copy import stored_groups
from release.codecs import ENCODINGS, GZIP_MINIMUM_BYTES, ZSTD_FAST_LEVEL, GzipParts, zstd_copy
from release.local_store import sql_string
from release.manifest import PublishedRelease
from release.snapshot import Snapshot, streamed_rows
from warehouse.contract import PATCHED_BY, listed_order

# One group (a product, a measurement) in this many ends a part: about 512 a part. Each part's gzip starts with
# no history, so small parts compress worse: parts of 64 products made products.json.gz 26 %
# larger than one gzip of the whole; parts of 512, 4 % (claims.jsonl: 7 % and 1 %). A sheet
# re-encodes one part: 1 MB of products, 4 MB of claims.
GROUPS_PER_PART = 512
PARTS_DIR = "records/parts"

log = logging.getLogger(__name__)


def parts_index_path(path: str) -> str:
    """Where the index of the parted file ``path`` lies in its release."""
    return f"{PARTS_DIR}/{path}.npy"


# Each part of a file, in file order: its source, and where it lies in the plain file and in
# the gzip copy's deflate stream.
PART_DTYPE = np.dtype(
    [("source", "<u8"), ("plain_at", "<u8"), ("plain_length", "<u8"), ("deflate_at", "<u8"), ("deflate_length", "<u8")]
)


@dataclass(frozen=True)
class PartsToEncode:
    """The parts of a file that need encoding: their numbers in file order and each one's row
    count. ``cursor`` holds the temporary table ``part_of`` (``table_parts``); DuckDB may write
    into ``scratch``."""

    snapshot: Snapshot
    cursor: duckdb.DuckDBPyConnection
    layout: PartedLayout
    wanted: list[int]
    rows: list[int]
    scratch: Path

    @property
    def table(self) -> str:
        return self.layout.table

    def query(self) -> str:
        """Their rows, in file order (part, then ``listed_order``)."""
        order = ", ".join(f"row.{column.strip()}" for column in listed_order(self.table).split(","))
        return (
            f'SELECT {self.layout.select("row.")} FROM "{self.table}" AS row JOIN part_of '
            f'ON part_of.group_key IS NOT DISTINCT FROM row."{self.layout.grouped_by}" '
            f"WHERE part_of.part IN ({', '.join(map(str, self.wanted))}) ORDER BY part_of.part, {order}"
        )


# Encodes the parts of a file, a part's bytes at a time.
PartEncoder = Callable[[PartsToEncode], Iterator[bytes]]


@dataclass(frozen=True)
class Part:
    """A run of groups of rows: its number in file order, its rows, and its source."""

    number: int
    rows: int
    source: int


@dataclass(frozen=True)
class PartedLayout:
    """How a document is made of its parts: how they are encoded, the ``head`` before them (made
    for each release), the ``separator`` between two, the ``tail``; the level its zstd copy is
    compressed at, whole, each time. It lists ``columns`` of ``table`` (None: every one), grouped
    by ``group``: None for the column a patched table is grouped by (``PATCHED_BY``, whose groups
    the snapshot records), or a column whose rows lie together in ``listed_order`` (their groups
    summarised from the rows at each publish)."""

    table: str
    encode: PartEncoder
    head: Callable[[Snapshot], bytes] = lambda snapshot: b""
    separator: bytes = b""
    tail: bytes = b""
    zstd_level: int = ZSTD_FAST_LEVEL
    columns: tuple[str, ...] | None = None
    group: str | None = None

    @property
    def grouped_by(self) -> str:
        return self.group or PATCHED_BY[self.table]

    def select(self, prefix: str = "") -> str:
        """The select list of the columns it lists (their names kept), each after ``prefix``."""
        return ", ".join(f'{prefix}"{column}"' for column in self.columns) if self.columns else f"{prefix}*"

    def groups(self) -> str:
        """Each group's key, row count and sum of row hashes (``group_key``, ``n``, ``h``)."""
        if self.group is None:
            return stored_groups(self.table)
        return (
            f'SELECT "{self.group}"::VARCHAR AS group_key, count(*) AS n, sum(hash(row)) AS h '
            f'FROM (SELECT {self.select()} FROM "{self.table}") AS row GROUP BY ALL'
        )


def encoding_key(snapshot: Snapshot, table: str) -> str:
    """What a part's bytes follow besides its rows: this code, and ``table``'s columns as the
    snapshot holds them and as its data dictionary describes them (which are private, which JSON)."""
    columns = snapshot.connection.execute(f'DESCRIBE "{table}"').fetchall()
    described = [
        sorted((name, str(value)) for name, value in row.items()) for row in snapshot.dictionary.get(table, [])
    ]
    return value_key([producer_digest(), [list(column[:2]) for column in columns], described])


def table_parts(cursor: duckdb.DuckDBPyConnection, layout: PartedLayout, encoding: str) -> list[Part]:
    """The parts of the rows ``layout`` lists in file order, their sources keyed by ``encoding``;
    each group's part in ``cursor``'s temporary table ``part_of``."""
    group, table = f'"{layout.grouped_by}"', layout.table
    rows = cursor.execute(
        f"SELECT recorded.group_key, recorded.n, recorded.h, hash(recorded.group_key) % {GROUPS_PER_PART} = 0 "
        f"FROM ({layout.groups()}) AS recorded JOIN "
        f'(SELECT {group}::VARCHAR AS group_key, min(({listed_order(table)})) AS first FROM "{table}" GROUP BY ALL) '
        "AS listed ON recorded.group_key IS NOT DISTINCT FROM listed.group_key ORDER BY listed.first"
    ).fetchall()
    code = encoding.encode()
    parts: list[Part] = []
    groups: list[str] = []
    numbers: list[int] = []
    members: list[tuple[str, int, int]] = []
    for index, (key, count, row_hash, ends) in enumerate(rows):
        groups.append(key)
        numbers.append(len(parts))
        members.append((key, count, int(row_hash)))
        if ends or index == len(rows) - 1:
            digest = hashlib.blake2b(repr(members).encode(), digest_size=8, key=code[:64])
            parts.append(Part(len(parts), sum(m[1] for m in members), int.from_bytes(digest.digest(), "little")))
            members = []
    cursor.execute(
        "CREATE OR REPLACE TEMP TABLE part_of AS SELECT unnest($groups) AS group_key, unnest($parts) AS part",
        {"groups": groups, "parts": numbers},
    )
    return parts


def previous_parts(previous: PublishedRelease | None, path: str) -> dict[int, np.void]:
    """The parts of ``path`` in ``previous`` by source: none without its index, plain file and gzip copy."""
    if previous is None:
        return {}
    files = [previous.folder / name for name in (path, path + ENCODINGS["gzip"], parts_index_path(path))]
    if not all(file.is_file() for file in files):
        return {}
    try:
        index = np.load(files[2], allow_pickle=False)
    except (OSError, ValueError):
        return {}
    if index.dtype != PART_DTYPE:
        return {}
    return {int(row["source"]): row for row in index}


def write_parted(maker: FileMaker, snapshot: Snapshot, path: str, layout: PartedLayout, key: str) -> list[str]:
    """Write ``path``, its gzip copy, its zstd copy where it saves enough, and its parts' index,
    copying from the previous release each part whose source it holds (and, when it holds the
    same parts in the same order, the zstd copy's body); record them as made from ``key``; the
    paths written."""
    folder, previous = maker.folder, maker.previous
    target = folder / path
    target.parent.mkdir(parents=True, exist_ok=True)
    before = previous_parts(previous, path)
    with contextlib.ExitStack() as stack:
        cursor = snapshot.cursor()
        stack.callback(cursor.close)
        parts = table_parts(cursor, layout, encoding_key(snapshot, layout.table))
        index = np.zeros(len(parts), dtype=PART_DTYPE)
        wanted = [part.number for part in parts if part.source not in before]
        log.info("%s: %d of %d parts encoded, the others taken from the release before", path, len(wanted), len(parts))
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(dir=folder, prefix=".parts-")))
        to_encode = PartsToEncode(snapshot, cursor, layout, wanted, [parts[n].rows for n in wanted], scratch)
        fresh = layout.encode(to_encode)
        plain = stack.enter_context(target.open("wb"))
        gzipped = GzipParts(stack.enter_context((folder / (path + ENCODINGS["gzip"])).open("wb")))
        if before:
            old_plain = stack.enter_context((previous.folder / path).open("rb")).fileno()
            old_gzip = stack.enter_context((previous.folder / (path + ENCODINGS["gzip"])).open("rb")).fileno()

        def piece(data: bytes, deflated: bytes | None = None) -> tuple[int, int, int]:
            at = plain.tell()
            if not data:  # an empty head or separator adds nothing to either
                return at, 0, 0
            plain.write(data)
            return (at, *gzipped.add(data, deflated))

        head_length = len(head := layout.head(snapshot))
        piece(head)
        for part in parts:
            if part.number:
                piece(layout.separator)
            old = before.get(part.source)
            if old is not None:
                data = os.pread(old_plain, int(old["plain_length"]), int(old["plain_at"]))
                placed = piece(data, os.pread(old_gzip, int(old["deflate_length"]), int(old["deflate_at"])))
            else:
                data = next(fresh)
                placed = piece(data)
            index[part.number] = (part.source, placed[0], len(data), placed[1], placed[2])
        piece(layout.tail)
        gzipped.close()
    index_file = folder / parts_index_path(path)
    index_file.parent.mkdir(parents=True, exist_ok=True)
    with index_file.open("wb") as out:  # np.save would add .npy to a name without it
        np.save(out, index, allow_pickle=False)
    if target.stat().st_size < GZIP_MINIMUM_BYTES:  # too small to compress, as any other file
        (folder / (path + ENCODINGS["gzip"])).unlink()
        paths = [path, parts_index_path(path)]
        maker.record(key, paths)
        return paths
    # The same parts in the same order (the index lists them in file order): the same body after the head.
    same_body = bool(parts) and list(before) == [part.source for part in parts]
    zstd = zstd_copy(folder, path, layout.zstd_level, head_length, zstd_body(previous, path) if same_body else None)
    paths = [path, path + ENCODINGS["gzip"], *zstd, parts_index_path(path)]
    maker.record(key, paths, {copy: {"body_at": at} for copy, at in zstd.items()})
    return paths


def zstd_body(previous: PublishedRelease | None, path: str) -> tuple[Path, int] | None:
    """The zstd copy of ``path`` in ``previous`` and where its body begins, when recorded."""
    file = previous.manifest.files.get(path + ENCODINGS["zstd"]) if previous is not None else None
    if file is None or "body_at" not in (file.made_from or {}) or not previous.path_of(file).is_file():
        return None
    return previous.path_of(file), int(file.made_from["body_at"])


def copied_parts(options: str, records: Callable[[Iterable[bytes]], Iterator[bytes]] = iter) -> PartEncoder:
    """The parts as DuckDB's ``COPY`` writes their rows with ``options`` (once for every part
    wanted, in file order), cut apart by ``records``, which finds the rows in the lines written
    (by default a row a line)."""

    def encode(parts: PartsToEncode) -> Iterator[bytes]:
        if not parts.wanted:
            return
        written = parts.scratch / "parts"
        parts.cursor.execute(f"COPY ({parts.query()}) TO {sql_string(str(written))} ({options})")
        with written.open("rb") as lines:
            rows = records(lines)
            for count in parts.rows:
                yield b"".join(itertools.islice(rows, count))

    return encode


# JSON lines: a line per row (DuckDB escapes the line breaks within a value).
json_lines_parts = copied_parts("FORMAT json")


def csv_records(lines: Iterable[bytes]) -> Iterator[bytes]:
    """The records of a CSV file as DuckDB writes it: a record ends at a line break outside quotes
    (a quoted value may hold line breaks, and doubles the quotes within it)."""
    record: list[bytes] = []
    quoted = False
    for line in lines:
        record.append(line)
        quoted ^= line.count(b'"') % 2 == 1
        if not quoted:
            yield b"".join(record)
            record = []


def csv_parts(options: str) -> PartEncoder:
    """The parts of a CSV file that DuckDB's ``COPY`` writes with ``options``, its header left
    out: the header is the file's head (``csv_header``)."""
    return copied_parts(options, lambda lines: itertools.islice(csv_records(lines), 1, None))


def csv_header(table: str, columns: tuple[str, ...], options: str) -> Callable[[Snapshot], bytes]:
    """The head of a CSV file of ``table``'s ``columns``: what DuckDB's ``COPY`` writes with
    ``options`` for no rows (the header line)."""

    def head(snapshot: Snapshot) -> bytes:
        listed = ", ".join(f'"{column}"' for column in columns)
        with tempfile.TemporaryDirectory(prefix="reuse-data-header-") as scratch:
            written = Path(scratch) / "header.csv"
            snapshot.connection.execute(
                f'COPY (SELECT {listed} FROM "{table}" LIMIT 0) TO {sql_string(str(written))} ({options})'
            )
            return written.read_bytes()

    return head


def full_text_parts(parts: PartsToEncode) -> Iterator[bytes]:
    """The parts of llms-full.txt: each part its pages' Markdown, a line of --- between two."""
    if not parts.wanted:
        return
    pages = streamed_rows(parts.cursor, parts.query())
    for count in parts.rows:
        yield documents.FULL_TEXT_SEPARATOR.join(row["document"].encode() for row in itertools.islice(pages, count))


def collection_parts(collection: documents.Collection) -> PartEncoder:
    """The parts of ``collection``'s items, each part its items joined by commas."""

    def encode(parts: PartsToEncode) -> Iterator[bytes]:
        if not parts.wanted:
            return
        hidden, json_columns = collection.drop(parts.snapshot), parts.snapshot.json_columns(parts.table)
        items = streamed_rows(parts.cursor, parts.query())
        for count in parts.rows:
            encoded = (encoded_record(row, drop=hidden, json=json_columns) for row in itertools.islice(items, count))
            yield b",".join(encoded)

    return encode
