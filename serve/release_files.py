"""The files of a release, written once at publish from its snapshot, so the server only sends them.

- Every fixed document of the API at its URL path: ``api/public/products.json``,
  ``llms-full.txt``, the OpenAPI document and the rest (``DOCUMENTS``).
- Whole-table distributions under ``api/public/downloads/``: Parquet for every public table
  (column types kept, the per-sample readings among them), the bench measurements also as
  CSV and JSON lines (``TEXT_FORMATS``).
- The page.json documents packed end to end with an index (``serve.release.PAGE_PACK``).
- What crawlers and answer engines read first: ``robots.txt``, ``llms.txt``, the sitemap index
  ``sitemap.xml`` and its sitemaps under ``sitemaps/`` (``serve.crawler_files``).
- The distributions described for open-data tools from the data dictionary
  (``serve.table_descriptions``): dataset.json is also Croissant, and ``datapackage.json`` a
  Frictionless data package.

Every text file of ``COMPRESS_MINIMUM_BYTES`` or more gets a gzip copy (``.gz``) and, where
zstd saves a further ``ZSTD_MUST_SAVE``, a zstd copy (``.zst``). The base URL is the one the
marts were built with, read from the snapshot: the whole release speaks of one address.
"""

from __future__ import annotations

import gzip
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from hashlib import sha256
from pathlib import Path
from typing import Any, BinaryIO

import zstandard

from foundations.input_problems import sha256_of
from serve import crawler_files, documents, openapi, table_descriptions
from serve.openapi import BENCH_COLUMNS, OPERATIONS
from serve.release import (
    DOWNLOADS_DIR,
    ENCODINGS,
    PAGE_PACK,
    PAGE_PACK_GZIP,
    RELEASES_PREFIX,
    PageIndex,
)
from serve.snapshot import Snapshot, read_snapshot
from warehouse.contract import STORED_ORDER
from warehouse.reference_data import SECTIONS
from warehouse.snapshots import SnapshotInfo, publish, sql_string

COMPRESS_MINIMUM_BYTES = 1024  # smaller files go as they are: compressing them saves next to nothing
GZIP_LEVEL = 6  # level 9 saves about 1 % more and takes twice as long on claims.jsonl
ZSTD_LEVEL = 9
ZSTD_MUST_SAVE = 0.05  # of the gzip copy's size, or no zstd copy is kept
COPY_BYTES = 1024 * 1024
# Every distributed table goes as Parquet; these also as text, for spreadsheets and line tools.
# (Not the per-sample readings: at 10M readings their CSV is 2.8 GB to the Parquet's 0.3 GB.)
TEXT_FORMATS: dict[str, tuple[str, ...]] = {"bench_measurements": ("csv", "jsonl")}
COPY_OPTIONS = {"parquet": "FORMAT parquet, COMPRESSION zstd", "csv": "FORMAT csv, HEADER", "jsonl": "FORMAT json"}
FORMAT_NAMES = {"parquet": "Parquet", "csv": "CSV", "jsonl": "JSON lines"}

# URL path (no leading slash) of each fixed document -> how it is written from the snapshot.
# The dataset descriptor comes last, as it lists the others' sizes and sha256 (``DATASET``).
Writer = Callable[[BinaryIO, Snapshot], None]


def _whole(build: Callable[[Snapshot], dict[str, Any]]) -> Writer:
    """A writer of a small document built whole."""

    def write(out: BinaryIO, snapshot: Snapshot) -> None:
        out.write(documents.encode(build(snapshot)))

    return write


DOCUMENTS: dict[str, Writer] = {
    **{
        path.lstrip("/"): partial(documents.write_collection, collection=collection)
        for path, collection in documents.COLLECTIONS.items()
    },
    "api/public/capabilities.json": _whole(documents.capabilities),
    "api/public/press-kit.json": _whole(documents.press_kit),
    "api/public/openapi.json": _whole(lambda snapshot: openapi.document(snapshot.base_url, snapshot.dictionary)),
    "api/public/claims.jsonl": documents.write_claims,
    "llms-full.txt": documents.write_full_text,
}
DATASET = "api/public/dataset.json"
DATA_PACKAGE = "api/public/datapackage.json"
# Served at their own address like the documents above, but outside the API's contract: for crawlers.
CRAWLER_DOCUMENTS: dict[str, Writer] = {
    crawler_files.ROBOTS: crawler_files.write_robots,
    crawler_files.LLMS: crawler_files.write_llms_txt,
}


def write_release_files(folder: Path, snapshot_file: Path) -> None:
    """Write every served file of the release ``folder`` from its finished ``snapshot_file``."""
    snapshot = read_snapshot(snapshot_file)
    try:
        downloads, tables = write_distributions(folder, snapshot)
        for path, write in DOCUMENTS.items():
            write_file(folder, path, lambda out, write=write: write(out, snapshot))
        distributions = [describe_file(folder, entry) for entry in downloads]
        record_sets = [
            table_descriptions.croissant_record_set(tables[entry["table"]], entry["@id"])
            for entry in distributions
            if entry.get("table") and entry["@id"].endswith(".parquet")
        ]
        dataset = documents.dataset(snapshot, [public(entry) for entry in distributions], record_sets)
        write_file(folder, DATASET, lambda out: out.write(documents.encode(dataset)))
        package = documents.data_package(snapshot, tables, distributions, DATA_PACKAGE)
        write_file(folder, DATA_PACKAGE, lambda out: out.write(documents.encode(package)))
        write_page_pack(folder, snapshot)
        for path, write in CRAWLER_DOCUMENTS.items():
            write_file(folder, path, lambda out, write=write: write(out, snapshot))
        for path in crawler_files.write_sitemaps(folder, snapshot, SECTIONS):
            compress_copies(folder, path)
    finally:
        snapshot.connection.close()


def write_distributions(
    folder: Path, snapshot: Snapshot
) -> tuple[list[dict[str, Any]], dict[str, table_descriptions.DescribedTable]]:
    """Each public table as Parquet (the bench measurements also as CSV and JSON lines): their
    dataset.json entries, the collections' documents included, and each table as written,
    described by the data dictionary."""
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
            destination = sql_string(str(folder / path))
            snapshot.connection.execute(f"COPY ({select}) TO {destination} ({COPY_OPTIONS[extension]})")
            compress_copies(folder, path)
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


def describe_file(folder: Path, entry: dict[str, Any]) -> dict[str, Any]:
    """A distribution entry with the written file's size and sha256 (a Croissant FileObject)."""
    path = folder / entry["path"]
    size = path.stat().st_size
    return {"@type": "cr:FileObject", **entry, "contentSize": f"{size} B", "sha256": sha256_of(path)}


def public(entry: dict[str, Any]) -> dict[str, Any]:
    """A distribution entry as dataset.json lists it: without the bookkeeping of where it was written."""
    return {k: v for k, v in entry.items() if k not in ("path", "table")}


def write_file(folder: Path, path: str, write: Callable[[BinaryIO], None]) -> None:
    """The file at ``path`` as ``write`` writes it (buffered, never whole in memory), and its copies."""
    target = folder / path
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb", buffering=COPY_BYTES) as out:
        write(out)
    compress_copies(folder, path)


def compress_copies(folder: Path, path: str) -> None:
    """Write the gzip copy of a text file, and its zstd copy where that saves more: both at
    once, on two threads (each library compresses without holding the GIL)."""
    source = folder / path
    if source.suffix == ".parquet" or source.stat().st_size < COMPRESS_MINIMUM_BYTES:
        return
    gzipped, zstd = folder / (path + ENCODINGS["gzip"]), folder / (path + ENCODINGS["zstd"])
    with ThreadPoolExecutor(max_workers=1) as beside:
        zstd_written = beside.submit(_write_zstd, source, zstd)
        with source.open("rb") as plain, gzip.GzipFile(gzipped, "wb", GZIP_LEVEL, mtime=0) as out:
            shutil.copyfileobj(plain, out, COPY_BYTES)
        zstd_written.result()
    if zstd.stat().st_size > gzipped.stat().st_size * (1 - ZSTD_MUST_SAVE):
        zstd.unlink()


def _write_zstd(source: Path, target: Path) -> None:
    with source.open("rb") as plain, target.open("wb") as out:
        # The size in the frame header, so that a client can decode it in one call.
        zstandard.ZstdCompressor(level=ZSTD_LEVEL).copy_stream(plain, out, size=source.stat().st_size)


def write_page_pack(folder: Path, snapshot: Snapshot) -> None:
    """Every page.json document end to end, each also gzipped alone, and the index of both."""
    (folder / PAGE_PACK).parent.mkdir(parents=True, exist_ok=True)
    pages: list[tuple[str, tuple[int, int, int, int, bytes]]] = []
    with (folder / PAGE_PACK).open("wb") as pack, (folder / PAGE_PACK_GZIP).open("wb") as gzip_pack:
        for path, body in documents.page_documents(snapshot):
            compressed = gzip.compress(body, GZIP_LEVEL, mtime=0)
            entry = (pack.tell(), len(body), gzip_pack.tell(), len(compressed), sha256(body).digest())
            pages.append((path, entry))
            pack.write(body)
            gzip_pack.write(compressed)
    PageIndex.write(folder, pages)


def publish_release(store: Path, build_warehouse: Path, **options: Any) -> SnapshotInfo:
    """Publish the marts of ``build_warehouse`` as a release with every file the server sends."""
    return publish(store, build_warehouse, write_files=write_release_files, **options)
