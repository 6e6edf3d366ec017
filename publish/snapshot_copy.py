"""The release's DuckDB snapshot, copied from the build warehouse's published marts.

A publish costs what changed since the release being served. Each published table is keyed by
what it is made from (``table_key``: the statement that copies it, its columns, and what the mart
holds: a table's rows as DuckDB hashes them, a view's query and what it reads,
``RelationContents``), recorded in the snapshot. When the tables the new snapshot can take from
the release's hold most of that snapshot, the new one starts as a copy of it (``write_snapshot``):
an unchanged table is kept as it is, a changed large table is patched by row (``patch_table``:
only the groups of rows that differ, a product's readings or a page, are deleted and inserted
again), and every other table is written again.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import duckdb

from release.local_store import SNAPSHOT_FILE, SnapshotError, open_snapshot, sql_string, table_keys
from release.manifest import PublishedRelease
from release.snapshot import spilling_config
from warehouse.contract import (
    ASK_TABLES,
    MARTS_SCHEMA,
    PATCHED_BY,
    PUBLISH_CHECKS,
    PUBLISHED_MARTS_SQL,
    SNAPSHOT_GROUPS_TABLE,
    SNAPSHOT_INFO_TABLE,
    STORED_ORDER,
    TABLE_ORDER,
)
from warehouse.relation_keys import RelationContents, relation_key

# A new snapshot starts as a copy of the previous one only when the tables it keeps or patches
# hold at least this share of that file's blocks: otherwise copying costs more than it saves.
KEPT_SHARE_TO_COPY = 0.5
# A table is patched only while the groups of rows that changed hold at most this share of its
# rows: past that, deleting and inserting them costs more than writing the table whole.
PATCH_AT_MOST = 0.25


def missing_table(error: duckdb.CatalogException) -> SnapshotError:
    return SnapshotError(f"nothing published: a table is missing ({error}); run `reuse-data build`")


def refuse_incomplete(connection: duckdb.DuckDBPyConnection, marts: str) -> None:
    """Raise SnapshotError naming every ``PUBLISH_CHECKS`` fault of the marts about to be published."""
    faults = []
    for fault, sql in PUBLISH_CHECKS:
        try:
            count = connection.execute(sql.format(marts=marts)).fetchone()[0]
        except duckdb.CatalogException as error:
            raise missing_table(error) from error
        if count:
            faults.append(f"{count} {fault}")
    if faults:
        raise SnapshotError("nothing published: " + "; ".join(faults))


def published_tables(connection: duckdb.DuckDBPyConnection, marts: str) -> tuple[str, ...]:
    """The tables a release of the build ``marts`` publishes: the marts its data dictionary
    lists (every model dbt's manifest gives an enforced contract), then the ask engine's."""
    try:
        listed = connection.execute(PUBLISHED_MARTS_SQL.format(marts=marts)).fetchall()
    except duckdb.CatalogException as error:
        raise missing_table(error) from error
    return (*(row[0] for row in listed), *ASK_TABLES)


def copy_statement(table: str) -> str:
    """How a published table is copied into the snapshot, from the marts attached as ``{marts}``."""
    order = f" ORDER BY {STORED_ORDER[table]}" if table in STORED_ORDER else ""
    return f'SELECT * FROM {{marts}}."{table}"{order}'


def described_columns(connection: duckdb.DuckDBPyConnection, relation: str) -> list[list[str]]:
    """The columns of ``relation`` (quoted), each as its name and type."""
    return [list(column[:2]) for column in connection.execute(f"DESCRIBE {relation}").fetchall()]


def table_columns(contents: RelationContents, table: str) -> list[list[str]]:
    """The columns of the mart ``table``, each as its name and type."""
    try:
        return described_columns(contents.connection, contents.relation(MARTS_SCHEMA, table))
    except duckdb.CatalogException as error:
        raise missing_table(error) from error


def table_key(contents: RelationContents, table: str, columns: list[list[str]]) -> str:
    """What the published ``table`` is made from, as a sha256: the statement that copies it, its
    ``columns`` and types, and what the mart holds (``RelationContents``)."""
    try:
        held = contents.key(MARTS_SCHEMA, table)
    except duckdb.CatalogException as error:
        raise missing_table(error) from error
    return relation_key([copy_statement(table), columns, held])


@dataclasses.dataclass(frozen=True)
class BuildMarts:
    """What a build warehouse publishes, read before anything is written: its tables with their
    columns and keys, and the base URL its marts were built with."""

    tables: tuple[str, ...]
    keys: dict[str, str]
    columns: dict[str, list[list[str]]]
    base_url: str

    def grouped(self, table: str) -> bool:
        """Whether ``table`` is one the snapshot groups (``PATCHED_BY``), with its grouping column."""
        return table in PATCHED_BY and PATCHED_BY[table] in {name for name, _ in self.columns[table]}

    @classmethod
    def read(cls, build_warehouse: Path) -> BuildMarts:
        with duckdb.connect() as connection:
            catalog = attach_build(connection, build_warehouse)
            marts = f"{catalog}.{MARTS_SCHEMA}"
            refuse_incomplete(connection, marts)
            tables = published_tables(connection, marts)
            contents = RelationContents(connection, build_warehouse.stem)
            columns = {table: table_columns(contents, table) for table in tables}
            keys = {table: table_key(contents, table, columns[table]) for table in tables}
            base_url = connection.execute(f"SELECT base_url FROM {marts}.publisher").fetchall()[0][0]
        return cls(tables, keys, columns, base_url)


def attach_build(connection: duckdb.DuckDBPyConnection, build_warehouse: Path) -> str:
    """Attach the build warehouse read-only; its catalog's name, quoted. It is attached under its
    own name (the file's stem), so that a mart kept as a view, whose SQL names that catalog,
    resolves here as it does in the warehouse."""
    build = '"' + build_warehouse.stem.replace('"', '""') + '"'
    connection.execute(f"ATTACH {sql_string(str(build_warehouse))} AS {build} (READ_ONLY)")
    return build


@dataclasses.dataclass(frozen=True)
class Reuse:
    """What a new snapshot takes from the previous one: the tables it keeps as they are, and those
    it may patch by row (``PATCHED_BY``: changed, but with the same columns)."""

    kept: frozenset[str] = frozenset()
    patchable: frozenset[str] = frozenset()


def reusable_tables(previous_snapshot: Path, marts: BuildMarts) -> Reuse:
    """What a new snapshot of ``marts`` may take from ``previous_snapshot``: nothing unless the
    tables it keeps or patches hold at least ``KEPT_SHARE_TO_COPY`` of its blocks (then copying
    it pays)."""
    with open_snapshot(previous_snapshot) as connection:
        recorded = table_keys(connection)
        kept = {table for table, key in marts.keys.items() if recorded.get(table) == key}
        patchable = {
            table
            for table in set(marts.tables) & set(PATCHED_BY) & set(recorded) - kept
            if marts.grouped(table) and described_columns(connection, f'"{table}"') == marts.columns[table]
        }
        if not kept | patchable or (kept == set(recorded) and not patchable):
            return Reuse(frozenset(kept))
        blocks = {
            table: connection.execute(
                "SELECT count(DISTINCT block_id) FROM pragma_storage_info(?) WHERE block_id >= 0", [table]
            ).fetchall()[0][0]
            for table in recorded
        }
        total = connection.execute("SELECT total_blocks FROM pragma_database_size()").fetchall()[0][0]
    if sum(blocks[table] for table in kept | patchable) < KEPT_SHARE_TO_COPY * total:
        return Reuse()
    return Reuse(frozenset(kept), frozenset(patchable))


GROUPS_TABLE_SQL = (
    f"CREATE TABLE IF NOT EXISTS {SNAPSHOT_GROUPS_TABLE} (table_name VARCHAR, group_key VARCHAR, n BIGINT, "
    "h HUGEINT, low VARCHAR, high VARCHAR)"
)


def group_summary(relation: str, table: str) -> str:
    """The rows of ``SNAPSHOT_GROUPS_TABLE`` for ``table``, from ``relation``'s rows."""
    order = TABLE_ORDER.get(table)
    single = order is not None and order.isidentifier()
    bounds = f'min("{order}")::VARCHAR, max("{order}")::VARCHAR' if single else "NULL::VARCHAR, NULL::VARCHAR"
    return (
        f"SELECT '{table}' AS table_name, \"{PATCHED_BY[table]}\"::VARCHAR AS group_key, count(*) AS n, "
        f"sum(hash(row)) AS h, {bounds} FROM {relation} AS row GROUP BY ALL"
    )


def stored_groups(table: str, catalog: str = "main") -> str:
    """The groups of ``table`` as a snapshot (``catalog``) recorded them."""
    return f"SELECT * FROM {catalog}.{SNAPSHOT_GROUPS_TABLE} WHERE table_name = '{table}'"


def record_groups(connection: duckdb.DuckDBPyConnection, table: str, summary: str | None = None) -> None:
    """Record the groups of the snapshot's ``table``: the rows of ``summary`` (a query of
    ``group_summary``'s columns), or of its rows summarised."""
    connection.execute(f"DELETE FROM {SNAPSHOT_GROUPS_TABLE} WHERE table_name = '{table}'")
    summary = summary or group_summary(f'main."{table}"', table)
    connection.execute(f"INSERT INTO {SNAPSHOT_GROUPS_TABLE} {summary}")


def patch_table(connection: duckdb.DuckDBPyConnection, table: str, source: str) -> bool:
    """Bring the snapshot's ``table`` to the rows of the mart ``source`` by deleting and inserting
    the groups of rows (by ``PATCHED_BY[table]``) whose count or row hashes differ from those the
    snapshot recorded (``SNAPSHOT_GROUPS_TABLE``), and record the new groups; False, with the
    table untouched, when those hold more than ``PATCH_AT_MOST`` of its rows."""
    column = f'"{PATCHED_BY[table]}"'
    connection.execute(f"CREATE OR REPLACE TEMP TABLE new_groups AS {group_summary(source, table)}")
    [(recorded,)] = connection.execute(f"SELECT count(*) FROM ({stored_groups(table)})").fetchall()
    # A snapshot from before the record has none: its rows are summarised.
    old = stored_groups(table) if recorded else group_summary(f'main."{table}"', table)
    connection.execute(
        "CREATE OR REPLACE TEMP TABLE changed_groups AS "
        "SELECT group_key, coalesce(new.n, 0) + coalesce(old.n, 0) AS n "
        f"FROM new_groups AS new FULL OUTER JOIN ({old}) AS old USING (group_key) "
        "WHERE new.n IS DISTINCT FROM old.n OR new.h IS DISTINCT FROM old.h"
    )
    [(touched, rows)] = connection.execute(
        f'SELECT (SELECT coalesce(sum(n), 0) FROM changed_groups), (SELECT count(*) FROM main."{table}")'
    ).fetchall()
    if touched > PATCH_AT_MOST * max(rows, 1):
        return False
    # The changed groups' keys as a constant list: DuckDB pushes the filter into the mart's view
    # (the claims' view aggregates every reading: 1.9 s at 10M readings through a semi join, 0.05 s
    # so). A null key, which no published table has, is matched through the join instead.
    keys = [key for (key,) in connection.execute("SELECT group_key FROM changed_groups").fetchall()]
    if None in keys:
        in_changed, parameters = (
            f"EXISTS (SELECT 1 FROM changed_groups WHERE group_key IS NOT DISTINCT FROM row.{column}::VARCHAR)",
            None,
        )
    else:
        in_changed, parameters = f"list_contains($keys, row.{column}::VARCHAR)", {"keys": keys}
    connection.execute(f'DELETE FROM main."{table}" AS row WHERE {in_changed}', parameters)
    connection.execute(f'INSERT INTO main."{table}" SELECT * FROM {source} AS row WHERE {in_changed}', parameters)
    if recorded and parameters is not None:  # the changed groups' record alone (all 100,000: 0.6 s at 10M)
        where = f"table_name = '{table}' AND list_contains($keys, group_key)"
        connection.execute(f"DELETE FROM {SNAPSHOT_GROUPS_TABLE} WHERE {where}", parameters)
        connection.execute(f"INSERT INTO {SNAPSHOT_GROUPS_TABLE} SELECT * FROM new_groups WHERE {where}", parameters)
    else:
        record_groups(connection, table, "SELECT * FROM new_groups")
    connection.execute("DROP TABLE changed_groups")
    connection.execute("DROP TABLE new_groups")
    return True


@dataclasses.dataclass(frozen=True)
class WrittenSnapshot:
    """How a snapshot was written: the tables kept from the previous one, and those patched by row."""

    kept: tuple[str, ...]
    patched: tuple[str, ...]


def write_snapshot(
    snapshot_file: Path,
    build_warehouse: Path,
    marts: BuildMarts,
    previous: PublishedRelease | None,
    info: list[Any],
    memory_limit: str | None = None,
) -> WrittenSnapshot:
    """Copy the published tables of ``build_warehouse`` into ``snapshot_file``, with
    ``SNAPSHOT_INFO_TABLE`` holding ``info`` (version, time, inputs fingerprint) and the keys.
    Starts from a copy of ``previous``'s snapshot when it holds most of what is published
    (``reusable_tables``); its unchanged tables are kept and its large changed ones patched.
    DuckDB spills past ``memory_limit``."""
    previous_snapshot = previous.folder / SNAPSHOT_FILE if previous else None
    reuse = reusable_tables(previous_snapshot, marts) if previous_snapshot and previous_snapshot.is_file() else Reuse()
    if reuse.kept or reuse.patchable:
        shutil.copyfile(previous_snapshot, snapshot_file)
    connection = duckdb.connect(str(snapshot_file), config=spilling_config(memory_limit))
    patched = []
    try:
        present = {row[0] for row in connection.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        for table in sorted(present - reuse.kept - reuse.patchable - {SNAPSHOT_GROUPS_TABLE}):
            connection.execute(f'DROP TABLE "{table}"')
        connection.execute(GROUPS_TABLE_SQL)
        connection.execute(
            f"DELETE FROM {SNAPSHOT_GROUPS_TABLE} WHERE table_name NOT IN (SELECT unnest($tables))",
            {"tables": sorted(reuse.kept | reuse.patchable)},
        )
        connection.execute("CHECKPOINT")  # what was dropped is free for what is written next
        build = attach_build(connection, build_warehouse)
        for table in marts.tables:
            if table in reuse.kept:
                if marts.grouped(table) and not connection.execute(stored_groups(table)).fetchall():
                    record_groups(connection, table)  # kept from a snapshot from before the record
                continue
            source = f'{build}.{MARTS_SCHEMA}."{table}"'
            if table in reuse.patchable:
                if patch_table(connection, table, source):
                    patched.append(table)
                    continue
                connection.execute(f'DROP TABLE "{table}"')
            statement = copy_statement(table).format(marts=f"{build}.{MARTS_SCHEMA}")
            try:
                connection.execute(f'CREATE TABLE "{table}" AS {statement}')
            except duckdb.CatalogException as error:
                raise missing_table(error) from error
            if marts.grouped(table):
                record_groups(connection, table)
        connection.execute(
            f"CREATE TABLE {SNAPSHOT_INFO_TABLE} AS SELECT ? AS version, ?::TIMESTAMPTZ AS published_at, "
            "? AS inputs_fingerprint, ?::VARCHAR[] AS tables, ? AS base_url, "
            "MAP(?::VARCHAR[], ?::VARCHAR[]) AS table_keys",
            [*info, list(marts.tables), marts.base_url, list(marts.keys), list(marts.keys.values())],
        )
        connection.execute(f"DETACH {build}")
        connection.execute("CHECKPOINT")
    finally:
        connection.close()
    os.chmod(snapshot_file, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    return WrittenSnapshot(tuple(sorted(reuse.kept)), tuple(sorted(patched)))
