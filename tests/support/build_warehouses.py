"""Build warehouses made by hand for the publish tests: every published mart with one row tagged
by a marker, so that a test can tell which build a snapshot was published from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from publish.new_release import publish_release
from release.local_store import SnapshotInfo
from warehouse.contract import (
    ASK_ENTRY_ORDER_TABLE,
    ASK_TABLES,
    ASK_TEXTS_TABLE,
    ASK_VECTORS_TABLE,
    DATA_DICTIONARY_TABLE,
    STORED_ORDER,
)

# The columns the publish checks read, beside the marker: one recommendation and one library
# answer, whose ask texts each have a vector.
ENTRY_COLUMNS = {
    "recommendations": ", 'scenario' AS scenario_slug",
    "answers": ", 'answer' AS answer_id",
    "publisher": ", 'https://data.example.org' AS base_url",
}
ASK_ROWS = "SELECT * FROM (VALUES ('scenario', 'question', 'en', 'sha-1'), ('answer', 'question', 'en', 'sha-2')) "
ASK_COLUMNS = "AS t(entry_id, field, language, text_sha256)"


# The marts of the build warehouses below, as their data dictionary lists them (a real build's
# lists every mart with an enforced contract); publish copies these and the ask engine's tables.
MARTS = ("answers", "bench_measurements", "claims", "products", "publisher", "recommendations", DATA_DICTIONARY_TABLE)
PUBLISHED = (*MARTS, *ASK_TABLES)


def make_build_warehouse(path: Path, marker: int, tables=PUBLISHED, vectors: bool = True) -> Path:
    """A build warehouse with every published mart holding one row tagged ``marker`` (the ask
    vectors and the ask entry order one per entry: two; the data dictionary one per mart), or
    none of the vectors when ``vectors`` is false.

    Tables stored in a fixed order also carry their ordering column, as the real marts do.
    """
    connection = duckdb.connect(str(path))
    connection.execute("CREATE SCHEMA IF NOT EXISTS marts")
    connection.execute(f"CREATE OR REPLACE TABLE marts.{ASK_TEXTS_TABLE} AS {ASK_ROWS}{ASK_COLUMNS}")
    for table in tables:
        if table == DATA_DICTIONARY_TABLE:
            connection.execute(
                f"CREATE OR REPLACE TABLE marts.{table} AS SELECT {marker} AS marker, unnest(?) AS table_name",
                [list(MARTS)],
            )
            continue
        if table == ASK_ENTRY_ORDER_TABLE:
            order = "SELECT * FROM (VALUES (0, 'scenario'), (1, 'answer')) AS t(entry_number, entry_id)"
            connection.execute(f"CREATE OR REPLACE TABLE marts.{table} AS SELECT {marker} AS marker, * FROM ({order})")
            continue
        if table == ASK_VECTORS_TABLE:
            rows = f"SELECT {marker} AS marker, * FROM ({ASK_ROWS}{ASK_COLUMNS})" + ("" if vectors else " LIMIT 0")
            connection.execute(f"CREATE OR REPLACE TABLE marts.{table} AS {rows}")
            continue
        extra = ENTRY_COLUMNS.get(table, "") + (f", 1 AS {STORED_ORDER[table]}" if table in STORED_ORDER else "")
        connection.execute(f'CREATE OR REPLACE TABLE marts."{table}" AS SELECT {marker} AS marker{extra}')
    connection.close()
    return path


def publish_snapshot_alone(store: Path, build_warehouse: Path, **options: Any) -> SnapshotInfo:
    """``publish_release`` of a small build warehouse, without the server's files unless
    ``write_files`` is given: its marts hold too little for them, and these checks are of the
    snapshot, the staging and the switch."""
    options.setdefault("write_files", lambda folder, snapshot_file, previous, memory_limit: None)
    return publish_release(store, build_warehouse, **options)
