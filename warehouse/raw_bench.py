"""The raw bench table, kept in step with the bench sheets without re-reading unchanged ones.

Each row carries the file it came from and that file's sha256. A load compares the sheets
present now with the (file, sha256) pairs the table holds: rows of sheets that vanished or
changed are deleted, sheets not seen before are read (in parallel, a batch at a time, so
memory stays bounded by the batch rather than the lab's history) and appended, and the
withdrawn flag of intake sheets is refreshed. All of it happens in one transaction that is
rolled back if any new sheet has a problem, so the table is never half loaded.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

from foundations.file_digests import file_digests
from foundations.input_problems import RowProblem
from inputs.bench_sheets import SHEET_COLUMNS, SHEET_ROW_SCHEMA, SheetError, check_rows, sheet_file_rows
from warehouse.catalog import RAW_SCHEMA, column_names

BENCH_TABLE = "bench_readings"
QUALIFIED_TABLE = f'{RAW_SCHEMA}."{BENCH_TABLE}"'
READ_BATCH = 64  # sheets read in parallel, then appended together
COLUMNS: dict[str, pl.DataType] = {
    "_source_row": pl.Int64(),
    **{column: pl.String() for column in SHEET_COLUMNS},
    "_source_file": pl.String(),
    "_source_sheet": pl.String(),
    "_source_sha256": pl.String(),
    "_receipt_id": pl.String(),
    "_withdrawn": pl.Boolean(),
    "_ingested_at": pl.Datetime("us"),
}


@dataclass(frozen=True)
class SheetSource:
    """One sheet to hold in the table: a file under ``bench/`` or a sheet uploaded through the intake."""

    path: Path
    name: str  # as reports and the ``_source_file`` column show it
    sha256: str
    receipt_id: str | None = None
    withdrawn: bool = False


@dataclass(frozen=True)
class LoadOutcome:
    sheets: int
    sheets_read: int
    sheets_dropped: int
    rows: int
    rows_added: int


def folder_sources(
    folder: Path, root: Path, suffixes: Sequence[str], digest_cache: Path | None = None
) -> list[SheetSource]:
    """The sheets directly inside ``folder``, named relative to ``root``, with their digests
    (reused from ``digest_cache`` for files unchanged since it saw them)."""
    if not folder.exists():
        return []
    paths = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in suffixes)
    digests = file_digests(paths, digest_cache)
    return [SheetSource(p, str(p.relative_to(root)), d) for p, d in zip(paths, digests, strict=True)]


def _batches(items: Sequence[SheetSource], size: int) -> Iterator[Sequence[SheetSource]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _read(source: SheetSource) -> tuple[pl.DataFrame, list[RowProblem]]:
    """The lines of one sheet, unchecked (check_rows checks a whole batch at once, which is faster)."""
    try:
        lines, problems = sheet_file_rows(source.path, source.name, source.sha256)
    except SheetError as error:
        return pl.DataFrame(schema=SHEET_ROW_SCHEMA), error.problems
    return lines.with_columns(
        pl.lit(source.receipt_id, dtype=pl.String).alias("_receipt_id"),
        pl.lit(source.withdrawn).alias("_withdrawn"),
    ), problems


def load_bench_sheets(
    connection: duckdb.DuckDBPyConnection,
    sources: Sequence[SheetSource],
    progress: Callable[[str], None] = lambda _: None,
) -> LoadOutcome:
    """Bring ``raw.bench_readings`` in step with ``sources``; raise SheetError naming every bad
    cell of the new sheets, leaving the table as it was."""
    ingested_at = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    connection.execute(f"CREATE SCHEMA IF NOT EXISTS {RAW_SCHEMA}")
    # The first load, or a table an older layout left: start it empty with today's columns.
    if column_names(connection, RAW_SCHEMA, BENCH_TABLE) != list(COLUMNS):
        connection.register("empty_bench_table", pl.DataFrame(schema=COLUMNS))
        connection.execute(f"CREATE OR REPLACE TABLE {QUALIFIED_TABLE} AS SELECT * FROM empty_bench_table")
        connection.unregister("empty_bench_table")
    wanted = pl.DataFrame(
        {
            "file": [s.name for s in sources],
            "sha256": [s.sha256 for s in sources],
            "receipt_id": [s.receipt_id for s in sources],
            "withdrawn": [s.withdrawn for s in sources],
        },
        schema={"file": pl.String, "sha256": pl.String, "receipt_id": pl.String, "withdrawn": pl.Boolean},
    )
    connection.register("wanted_sheets", wanted)
    held = {
        (file, sha256)
        for file, sha256 in connection.execute(
            f"SELECT DISTINCT _source_file, _source_sha256 FROM {QUALIFIED_TABLE}"
        ).fetchall()
    }
    to_read = [s for s in sources if (s.name, s.sha256) not in held]
    dropped = len(held - {(s.name, s.sha256) for s in sources})
    connection.execute("BEGIN TRANSACTION")
    try:
        connection.execute(
            f"DELETE FROM {QUALIFIED_TABLE} AS t WHERE NOT EXISTS (SELECT 1 FROM wanted_sheets AS w "
            "WHERE w.file = t._source_file AND w.sha256 = t._source_sha256)"
        )
        connection.execute(
            f"UPDATE {QUALIFIED_TABLE} AS t SET _withdrawn = w.withdrawn FROM wanted_sheets AS w "
            "WHERE w.file = t._source_file AND w.sha256 = t._source_sha256 "
            "AND t._withdrawn IS DISTINCT FROM w.withdrawn"
        )
        problems: list[RowProblem] = []
        rows_added = 0
        done = 0
        with ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:
            for batch in _batches(to_read, READ_BATCH):
                results = list(pool.map(_read, batch))
                lines = pl.concat(
                    [pl.DataFrame(schema=COLUMNS).drop("_ingested_at")] + [r[0] for r in results],
                    how="diagonal_relaxed",
                )
                rows, cell_problems = check_rows(lines)
                problems += [p for _, file_problems in results for p in file_problems] + cell_problems
                if not problems:  # once a sheet is bad, read on only to report every problem
                    connection.register(
                        "incoming_rows",
                        rows.with_columns(pl.lit(ingested_at, dtype=pl.Datetime("us")).alias("_ingested_at")),
                    )
                    connection.execute(f"INSERT INTO {QUALIFIED_TABLE} BY NAME SELECT * FROM incoming_rows")
                    connection.unregister("incoming_rows")
                    rows_added += rows.height
                done += len(batch)
                progress(f"read {done}/{len(to_read)} new or changed sheets ({rows_added} rows)")
        if problems:
            raise SheetError(problems)
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    finally:
        connection.unregister("wanted_sheets")
    [(rows,)] = connection.execute(f"SELECT count(*) FROM {QUALIFIED_TABLE}").fetchall()
    return LoadOutcome(len(sources), len(to_read), dropped, rows, rows_added)
