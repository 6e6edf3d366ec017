"""The release's DuckDB snapshot, copied from the build warehouse's published marts.

A publish costs what changed since the release being served. Each published table is keyed by
what it is made from (``table_key``: the statement that copies it, its columns, and what the mart
holds: a table's rows as DuckDB hashes them, a view's query and what it reads,
``RelationContents``), recorded in the snapshot. When the tables kept unchanged hold most of that
release's snapshot, the new one starts as a copy of it and only the changed tables are written
again (``write_snapshot``).
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
from warehouse.contract import (
    ASK_TABLES,
    MARTS_SCHEMA,
    PUBLISH_CHECKS,
    PUBLISHED_MARTS_SQL,
    SNAPSHOT_INFO_TABLE,
    STORED_ORDER,
)
from warehouse.relation_keys import RelationContents, relation_key

# A new snapshot starts as a copy of the previous one only when the tables it keeps hold at
# least this share of that file's blocks: otherwise copying costs more than it saves.
KEPT_SHARE_TO_COPY = 0.5


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


def table_key(contents: RelationContents, table: str) -> str:
    """What the published ``table`` is made from, as a sha256: the statement that copies it, its
    columns and types, and what the mart holds (``RelationContents``)."""
    relation = contents.relation(MARTS_SCHEMA, table)
    try:
        columns = [column[:2] for column in contents.connection.execute(f"DESCRIBE {relation}").fetchall()]
        held = contents.key(MARTS_SCHEMA, table)
    except duckdb.CatalogException as error:
        raise missing_table(error) from error
    return relation_key([copy_statement(table), columns, held])


@dataclasses.dataclass(frozen=True)
class BuildMarts:
    """What a build warehouse publishes, read before anything is written: its tables with their
    keys, and the base URL its marts were built with."""

    tables: tuple[str, ...]
    keys: dict[str, str]
    base_url: str

    @classmethod
    def read(cls, build_warehouse: Path) -> BuildMarts:
        with duckdb.connect() as connection:
            catalog = attach_build(connection, build_warehouse)
            marts = f"{catalog}.{MARTS_SCHEMA}"
            refuse_incomplete(connection, marts)
            tables = published_tables(connection, marts)
            contents = RelationContents(connection, build_warehouse.stem)
            keys = {table: table_key(contents, table) for table in tables}
            base_url = connection.execute(f"SELECT base_url FROM {marts}.publisher").fetchall()[0][0]
        return cls(tables, keys, base_url)


def attach_build(connection: duckdb.DuckDBPyConnection, build_warehouse: Path) -> str:
    """Attach the build warehouse read-only; its catalog's name, quoted. It is attached under its
    own name (the file's stem), so that a mart kept as a view, whose SQL names that catalog,
    resolves here as it does in the warehouse."""
    build = '"' + build_warehouse.stem.replace('"', '""') + '"'
    connection.execute(f"ATTACH {sql_string(str(build_warehouse))} AS {build} (READ_ONLY)")
    return build


def reusable_tables(previous_snapshot: Path, marts: BuildMarts) -> set[str]:
    """The tables of ``previous_snapshot`` a new snapshot of ``marts`` may keep as they are: empty
    unless they hold at least ``KEPT_SHARE_TO_COPY`` of its blocks (then copying it pays)."""
    with open_snapshot(previous_snapshot) as connection:
        recorded = table_keys(connection)
        kept = {table for table, key in marts.keys.items() if recorded.get(table) == key}
        if not kept or kept == set(recorded):
            return kept
        blocks = {
            table: connection.execute(
                "SELECT count(DISTINCT block_id) FROM pragma_storage_info(?) WHERE block_id >= 0", [table]
            ).fetchall()[0][0]
            for table in recorded
        }
        total = connection.execute("SELECT total_blocks FROM pragma_database_size()").fetchall()[0][0]
    return kept if sum(blocks[table] for table in kept) >= KEPT_SHARE_TO_COPY * total else set()


def write_snapshot(
    snapshot_file: Path, build_warehouse: Path, marts: BuildMarts, previous: PublishedRelease | None, info: list[Any]
) -> tuple[str, ...]:
    """Copy the published tables of ``build_warehouse`` into ``snapshot_file``, with
    ``SNAPSHOT_INFO_TABLE`` holding ``info`` (version, time, inputs fingerprint) and the keys.
    Starts from a copy of ``previous``'s snapshot when it holds most of what is published
    unchanged (``reusable_tables``); the tables kept from it."""
    previous_snapshot = previous.folder / SNAPSHOT_FILE if previous else None
    kept = reusable_tables(previous_snapshot, marts) if previous_snapshot and previous_snapshot.is_file() else set()
    if kept:
        shutil.copyfile(previous_snapshot, snapshot_file)
    connection = duckdb.connect(str(snapshot_file))
    try:
        present = {row[0] for row in connection.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        for table in sorted(present - kept):
            connection.execute(f'DROP TABLE "{table}"')
        connection.execute("CHECKPOINT")  # what was dropped is free for what is written next
        build = attach_build(connection, build_warehouse)
        for table in marts.tables:
            if table not in kept:
                statement = copy_statement(table).format(marts=f"{build}.{MARTS_SCHEMA}")
                try:
                    connection.execute(f'CREATE TABLE "{table}" AS {statement}')
                except duckdb.CatalogException as error:
                    raise missing_table(error) from error
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
    return tuple(sorted(kept))
