"""Whole-table distributions under ``api/public/downloads/``: Parquet for every public table (column
types kept, the per-sample readings among them), the bench measurements also as CSV and JSON lines
(``TEXT_FORMATS``), and their entries in dataset.json and the data package.

A text file holds what DuckDB's ``COPY`` of the whole table writes (``COPY_OPTIONS``), made of
parts that a later release copies where their rows did not change (``publish.parted_files``):
one sheet re-encodes the runs of measurements its product lies in, not every row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from public import table_descriptions
from public.openapi import BENCH_COLUMNS, OPERATIONS
from publish.catalogue import DOCUMENTS
from publish.file_keys import FileMaker, key_of
from publish.parquet_parts import write_table_parquet
from publish.parted_files import PartedLayout, copied_parts, csv_header, csv_parts, write_parted
from release.codecs import ZSTD_LEVEL
from release.folder import DOWNLOADS_DIR, RELEASES_PREFIX
from release.local_store import SNAPSHOT_FILE
from release.snapshot import Snapshot
from warehouse.contract import listed_order


@dataclass(frozen=True)
class TextFiles:
    """A table distributed as text too: in which ``formats``, of which ``columns``, and the column
    that tells its rows apart (``group``: the parts are runs of its values in the stored order)."""

    formats: tuple[str, ...]
    columns: tuple[str, ...]
    group: str

    def layout(self, table: str, extension: str) -> PartedLayout:
        """How its file in ``extension`` is made of parts: DuckDB's ``COPY`` of their rows with the
        file's options, a CSV's header line its head. Its zstd copy at the usual level: at the fast
        one it saves nothing over the gzip copy."""
        options, csv = COPY_OPTIONS[extension], extension == "csv"
        encode = csv_parts(options) if csv else copied_parts(options)
        head = {"head": csv_header(table, self.columns, options)} if csv else {}
        return PartedLayout(table, encode, **head, zstd_level=ZSTD_LEVEL, columns=self.columns, group=self.group)


# Every distributed table goes as Parquet; these also as text, for spreadsheets and line tools.
# (Not the per-sample readings: at 10M readings their CSV is 2.8 GB to the Parquet's 0.3 GB.)
TEXT_FORMATS: dict[str, TextFiles] = {
    "bench_measurements": TextFiles(("csv", "jsonl"), BENCH_COLUMNS, group="measurement_id"),
}
# What DuckDB's COPY of the whole table writes is each file (a text file is put together from
# parts written the same way). (The Parquet files' row group size is
# ``publish.parquet_parts.row_group_rows``.)
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
        text = TEXT_FORMATS.get(table)
        columns = ", ".join(f'"{c}"' for c in text.columns) if text else snapshot.public_columns(table)
        rows = f'SELECT {columns} FROM "{table}"'
        tables[table] = table_descriptions.describe_table(snapshot.connection, table, rows, snapshot.dictionary[table])
        order = listed_order(table)
        select = rows + (f" ORDER BY {order}" if order else "")
        for extension in ("parquet", *(text.formats if text else ())):
            path = f"{DOWNLOADS_DIR}/{table}.{extension}"

            def key(table_key: str | None, select: str = select, options: str = COPY_OPTIONS[extension]) -> str:
                """The key of this file made from the table keyed ``table_key``."""
                return key_of("copy", select, options, table_key)

            def parts(path: str = path, table: str = table, extension: str = extension, key=key) -> list[str]:
                layout = TEXT_FORMATS[table].layout(table, extension)
                return write_parted(maker, snapshot, path, layout, key(keys[table]))

            def parquet(path: str = path, table: str = table, rows: str = rows, order=order, key=key) -> list[str]:
                before = None
                if made_before := maker.previous_files(key(previous_keys.get(table))):  # by this code, from that table
                    before = (maker.previous.path_of(made_before[0]), maker.previous.folder / SNAPSHOT_FILE)
                options = COPY_OPTIONS["parquet"]
                write_table_parquet(snapshot.connection, folder / path, table, rows, order, options, before)
                return [path]

            maker.make(key(keys[table]), parquet if extension == "parquet" else parts)
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
