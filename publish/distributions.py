"""Whole-table distributions under ``api/public/downloads/``: Parquet for every public table (column
types kept, the per-sample readings among them), the bench measurements also as CSV and JSON lines
(``TEXT_FORMATS``), and their entries in dataset.json and the data package.
"""

from __future__ import annotations

from typing import Any

from public import table_descriptions
from public.openapi import BENCH_COLUMNS, OPERATIONS
from publish.catalogue import DOCUMENTS
from publish.file_keys import FileMaker, key_of
from publish.parquet_parts import write_table_parquet
from release.codecs import compress_copies
from release.folder import DOWNLOADS_DIR, RELEASES_PREFIX
from release.local_store import SNAPSHOT_FILE, sql_string
from release.snapshot import Snapshot
from warehouse.contract import STORED_ORDER, TABLE_ORDER

# Every distributed table goes as Parquet; these also as text, for spreadsheets and line tools.
# (Not the per-sample readings: at 10M readings their CSV is 2.8 GB to the Parquet's 0.3 GB.)
TEXT_FORMATS: dict[str, tuple[str, ...]] = {"bench_measurements": ("csv", "jsonl")}
# (The Parquet files' row group size is ``publish.parquet_parts.PARQUET_ROW_GROUP_ROWS``.)
COPY_OPTIONS = {"parquet": "FORMAT parquet, COMPRESSION zstd", "csv": "FORMAT csv, HEADER", "jsonl": "FORMAT json"}
FORMAT_NAMES = {"parquet": "Parquet", "csv": "CSV", "jsonl": "JSON lines"}


def write_distributions(
    maker: FileMaker, snapshot: Snapshot, keys: dict[str, str], previous_keys: dict[str, str]
) -> tuple[list[dict[str, Any]], dict[str, table_descriptions.DescribedTable]]:
    """Each public table as Parquet (the bench measurements also as CSV and JSON lines): their
    dataset.json entries, the collections' documents included, and each table as written,
    described by the data dictionary. A large patched table's Parquet keeps the row groups of
    the release before that still hold (``publish.parquet_parts``; ``previous_keys``: the keys
    of that release's tables)."""
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
        rows = f'SELECT {columns} FROM "{table}"'
        tables[table] = table_descriptions.describe_table(snapshot.connection, table, rows, snapshot.dictionary[table])
        order = STORED_ORDER.get(table) or TABLE_ORDER.get(table)  # the same rows however they lie
        select = rows + (f" ORDER BY {order}" if order else "")
        for extension in ("parquet", *TEXT_FORMATS.get(table, ())):
            path = f"{DOWNLOADS_DIR}/{table}.{extension}"

            def key(table_key: str | None, select: str = select, options: str = COPY_OPTIONS[extension]) -> str:
                """The key of this file made from the table keyed ``table_key``."""
                return key_of("copy", select, options, table_key)

            def copy(path: str = path, select: str = select, options: str = COPY_OPTIONS[extension]) -> list[str]:
                destination = sql_string(str(folder / path))
                snapshot.connection.execute(f"COPY ({select}) TO {destination} ({options})")
                return [path, *compress_copies(folder, path)]

            def parquet(path: str = path, table: str = table, rows: str = rows, order=order, key=key) -> list[str]:
                before = None
                if made_before := maker.previous_files(key(previous_keys.get(table))):  # by this code, from that table
                    before = (maker.previous.path_of(made_before[0]), maker.previous.folder / SNAPSHOT_FILE)
                options = COPY_OPTIONS["parquet"]
                write_table_parquet(snapshot.connection, folder / path, table, rows, order, options, before)
                return [path]

            maker.make(key(keys[table]), parquet if extension == "parquet" else copy)
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
