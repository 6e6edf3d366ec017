"""The Parquet file of a large patched table, made from the row groups of the release before that still hold.

The readings' and the claims' Parquet files list their rows by a unique key (``TABLE_ORDER``:
``reading_id``, ``claim_id``), which begins with the product the row belongs to; each row group
of the file holds a run of keys, exactly as its statistics say (minimum and maximum, marked
exact). A publish compares each product's rows (``PATCHED_BY``) with the snapshot before: their
count, the sum of their hashes and their first and last keys, as each snapshot recorded them
(``SNAPSHOT_GROUPS_TABLE``). A row group of the file before whose run of keys no changed, new
or removed product reaches, before or after its change, holds exactly the rows the new file
needs there: its bytes are copied (``release.parquet_footer``). The rows between the row groups
kept are written by DuckDB, a run of keys at a time, and the file is put
together in key order.

The file so made holds the rows a whole rewrite would, in the same order, with the same schema
and encodings; its row groups may be cut elsewhere. It is written whole when there is no file
before made by this code from the snapshot before, when more than ``PATCH_AT_MOST`` of the
products changed, or when the kept and written row groups number more than
``FRAGMENTED_GROUPS`` times as many as a whole rewrite would make.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import duckdb

from publish.snapshot_copy import PATCH_AT_MOST, stored_groups
from release.local_store import sql_string
from release.parquet_footer import (
    CHUNK_META,
    GROUP_COLUMNS,
    FileFooter,
    ParquetLayoutError,
    RowGroupBytes,
    encode_struct,
    write_parquet,
)
from warehouse.contract import PATCHED_BY, TABLE_ORDER

log = logging.getLogger(__name__)

# The rows of one row group, as DuckDB writes them by default; named in every COPY, so that a
# file of kept and written row groups is cut as a whole rewrite would be wherever it can.
PARQUET_ROW_GROUP_ROWS = 122_880
# Tables whose rows are ten times a reading's or more (a claim lists its readings, a page holds its
# body) in fewer rows a group, about a megabyte or two of Parquet: at 10M readings the claims'
# 245,000 rows made two row groups, and one sheet re-encoded half the file (3.4 s); in groups of
# 16,384 it re-encodes one of fifteen. (DuckDB's ROW_GROUP_SIZE_BYTES counts bytes in memory, and
# would cut the readings into 2,245 groups.)
ROW_GROUP_ROWS = {"claims": 16_384, "pages": 16_384}
FRAGMENTED_GROUPS = 2  # past this many times the row groups of a whole rewrite, write it whole


def row_group_rows(table: str) -> int:
    """The rows of one row group of ``table``'s Parquet file."""
    return ROW_GROUP_ROWS.get(table, PARQUET_ROW_GROUP_ROWS)


# ColumnMetaData's fields of parquet.thrift: the column's physical type, path, and statistics;
# Statistics': max_value, min_value, is_max_value_exact, is_min_value_exact.
META_TYPE, META_PATH, META_STATISTICS = 1, 3, 12
BYTE_ARRAY = 6
STATS_MAX, STATS_MIN, STATS_MAX_EXACT, STATS_MIN_EXACT = 5, 6, 7, 8


def reusable(connection: duckdb.DuckDBPyConnection, table: str) -> bool:
    """Whether ``table``'s Parquet file can be made from the row groups of the one before: a
    patched table listed by one column, a unique key of text (the readings', the claims', the
    pages'). A row group holds the rows of its run of keys; were two rows to share a key across
    a cut, the rows would not add up, and the file is written whole."""
    order = TABLE_ORDER.get(table)
    if table not in PATCHED_BY or order is None or not order.isidentifier():
        return False
    types = dict(row[:2] for row in connection.execute(f'DESCRIBE "{table}"').fetchall())
    return types.get(order) == "VARCHAR"


@dataclasses.dataclass(frozen=True)
class KeyRun:
    """Keys from ``low`` to ``high`` (either None: without bound), both excluded or both included."""

    low: str | None
    high: str | None

    def overlaps(self, low: str, high: str) -> bool:
        return (self.low is None or self.low <= high) and (self.high is None or low <= self.high)


def key_runs(footer: FileFooter, key: str) -> list[KeyRun]:
    """Each row group's first and last key, from its exact statistics."""
    runs = []
    for group in footer.metadata.get(4)[1]:
        for chunk in group.get(GROUP_COLUMNS)[1]:
            meta = chunk.get(CHUNK_META)
            if meta.get(META_PATH)[1] != [key.encode()]:
                continue
            if meta.get(META_TYPE) != BYTE_ARRAY:  # text, compared as DuckDB compares it (by UTF-8 bytes)
                raise ParquetLayoutError(f"a key {key} that is not text")
            stats = meta.get(META_STATISTICS)
            if stats is None or not (stats.get(STATS_MIN_EXACT) and stats.get(STATS_MAX_EXACT)):
                raise ParquetLayoutError(f"a row group without exact statistics of {key}")
            runs.append(KeyRun(stats.get(STATS_MIN).decode(), stats.get(STATS_MAX).decode()))
            break
        else:
            raise ParquetLayoutError(f"no column {key}")
    return runs


CHANGED_GROUPS_SQL = """
    SELECT least(new.low, old.low), greatest(new.high, old.high)
    FROM ({new}) AS new FULL OUTER JOIN ({old}) AS old USING (group_key)
    WHERE new.n IS DISTINCT FROM old.n OR new.h IS DISTINCT FROM old.h
"""


def changed_key_runs(cursor: duckdb.DuckDBPyConnection, table: str) -> tuple[list[tuple[str, str]], int]:
    """The runs of keys of the products whose rows differ from the snapshot attached as
    ``previous`` (before or after the change, whichever is wider), and how many products there
    are: from the groups each snapshot recorded (``SNAPSHOT_GROUPS_TABLE``)."""
    new, old = stored_groups(table), stored_groups(table, "previous")
    try:
        changed = cursor.execute(CHANGED_GROUPS_SQL.format(new=new, old=old)).fetchall()
        [(groups,)] = cursor.execute(f"SELECT count(*) FROM ({new})").fetchall()
    except duckdb.CatalogException as error:
        raise ParquetLayoutError(f"a snapshot without the record of its groups ({error})") from error
    if any(low is None for low, _ in changed):
        raise ParquetLayoutError("groups recorded without their keys")
    return changed, groups


def write_table_parquet(
    connection: duckdb.DuckDBPyConnection,
    target: Path,
    table: str,
    select: str,
    order: str | None,
    options: str,
    before: tuple[Path, Path] | None,
) -> int:
    """Write ``table`` as the Parquet file ``target``: the rows of ``select`` (its columns, from
    it, with no condition) listed by ``order``, with ``options``. ``before``: a Parquet file the
    same statement made from the snapshot file given beside it, whose row groups that still hold
    are kept (``reusable`` tables, listed by their ``TABLE_ORDER``). How many row groups were kept."""
    options = f"{options}, ROW_GROUP_SIZE {row_group_rows(table)}"

    def copy(destination: Path, condition: str = "true") -> None:
        rows = f"{select} WHERE {condition}" + (f" ORDER BY {order}" if order else "")
        connection.execute(f"COPY ({rows}) TO {sql_string(str(destination))} ({options})")

    if before is not None and reusable(connection, table):
        try:
            with tempfile.TemporaryDirectory(dir=target.parent, prefix=".row-groups-") as scratch:
                if kept := _reuse(connection, target, table, select, before, copy, Path(scratch)):
                    log.info("%s: %d row groups kept from the release before", target.name, kept)
                    return kept
        except ParquetLayoutError as error:
            log.warning("%s written whole: %s", target.name, error)
    copy(target)
    return 0


def _reuse(
    connection: duckdb.DuckDBPyConnection,
    target: Path,
    table: str,
    select: str,
    before: tuple[Path, Path],
    copy: Callable[[Path, str], None],
    scratch: Path,
) -> int:
    """Write ``target`` from the row groups of the file before that still hold and the rows
    between them; how many were kept (none: nothing written, as too much changed)."""
    previous_file, previous_snapshot = before
    key = TABLE_ORDER[table]
    footer = FileFooter.read(previous_file)
    groups, runs = footer.row_groups(), key_runs(footer, key)
    with contextlib.closing(connection.cursor()) as cursor:
        cursor.execute(f"ATTACH {sql_string(str(previous_snapshot))} AS previous (READ_ONLY)")
        try:
            changed, products = changed_key_runs(cursor, table)
        finally:
            cursor.execute("DETACH previous")
    if len(changed) > PATCH_AT_MOST * max(products, 1):
        return 0
    kept = [not any(run.overlaps(low, high) for low, high in changed) for run in runs]
    if not any(kept):
        return 0
    # The pieces of the new file in key order: a kept row group (its number), or the rows
    # between two kept ones (keys excluded), written where a row group was dropped or a changed
    # product lies.
    pieces: list[int | KeyRun] = []
    below: str | None = None
    dropped = False
    for number, run in enumerate([*runs, None]):
        gap = KeyRun(below, None if run is None else run.low)
        if dropped or any(gap.overlaps(low, high) for low, high in changed):
            pieces.append(gap)
        if run is None:
            break
        if kept[number]:
            pieces.append(number)
            below, dropped = run.high, False
        else:
            dropped = True
    with contextlib.ExitStack() as stack:
        old = stack.enter_context(previous_file.open("rb"))
        sources: list[tuple[BinaryIO, RowGroupBytes]] = []
        for number, piece in enumerate(pieces):
            if isinstance(piece, int):
                sources.append((old, groups[piece]))
                continue
            written = scratch / f"run-{number}.parquet"
            bounds = []
            if piece.low is not None:
                bounds.append(f"{key} > {sql_string(piece.low)}")
            if piece.high is not None:
                bounds.append(f"{key} < {sql_string(piece.high)}")
            copy(written, " AND ".join(bounds) or "true")
            part = FileFooter.read(written)
            if _schema(part) != _schema(footer):
                raise ParquetLayoutError("the rows written have another schema than the file before")
            handle = stack.enter_context(written.open("rb"))
            sources += [(handle, group) for group in part.row_groups()]
        [(rows,)] = connection.execute(f'SELECT count(*) FROM "{table}"').fetchall()
        if len(sources) > FRAGMENTED_GROUPS * math.ceil(rows / row_group_rows(table)) + 1:
            return 0
        with target.open("wb") as out:
            if write_parquet(out, footer, sources) != rows:
                raise ParquetLayoutError("the row groups kept and written do not add up to the table")
    return sum(kept)


def _schema(footer: FileFooter) -> list[bytes]:
    return [encode_struct(element) for element in footer.schema]
