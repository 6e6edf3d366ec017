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
import hashlib
import json
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


def digest(made_of: Any) -> str:
    """The sha256 of ``made_of`` (JSON-encodable), with DuckDB's version: its hash and storage may change."""
    return hashlib.sha256(json.dumps([duckdb.__version__, made_of]).encode()).hexdigest()


class RelationContents:
    """What each relation of one attached catalog holds, as a sha256 (``key``), each worked out once.

    A table's is its columns and its rows: their count and the sum of their 64-bit DuckDB hashes
    (the order of rows counts for nothing, a repeated row counts each time), one pass on every
    core. A view's is its query and what each relation it reads holds, as DuckDB's own parser
    finds them (``json_serialize_sql``): a view that joins ten million readings costs the
    hashing of the table it reads them from, not the join. A view whose rows could differ with
    the same inputs (it calls a function ``duckdb_functions`` does not call consistent, or reads
    a table function) or whose inputs cannot be told is hashed by its rows, like a table.
    """

    def __init__(self, connection: duckdb.DuckDBPyConnection, catalog: str) -> None:
        self.connection = connection
        self.catalog = catalog  # unquoted
        self.known: dict[tuple[str, str], str] = {}
        self.varying = {
            name
            for (name,) in connection.execute(
                "SELECT DISTINCT function_name FROM duckdb_functions() WHERE stability <> 'CONSISTENT'"
            ).fetchall()
        }

    def relation(self, schema: str, name: str) -> str:
        quoted = (self.catalog, schema, name)
        return ".".join('"' + part.replace('"', '""') + '"' for part in quoted)

    def key(self, schema: str, name: str) -> str:
        if (schema, name) not in self.known:
            views = self.connection.execute(
                "SELECT sql FROM duckdb_views() WHERE database_name = ? AND schema_name = ? AND view_name = ?",
                [self.catalog, schema, name],
            ).fetchall()
            view_key = self.view_key(schema, views[0][0]) if views else None
            self.known[(schema, name)] = view_key or self.rows_key(schema, name)
        return self.known[(schema, name)]

    def rows_key(self, schema: str, name: str) -> str:
        relation = self.relation(schema, name)
        try:
            columns = [column[:2] for column in self.connection.execute(f"DESCRIBE {relation}").fetchall()]
            [(count, hash_sum)] = self.connection.execute(
                f"SELECT count(*), sum(hash(row)) FROM {relation} AS row"
            ).fetchall()
        except duckdb.CatalogException as error:
            raise missing_table(error) from error
        return digest(["rows", columns, count, str(hash_sum)])

    def view_key(self, schema: str, sql: str) -> str | None:
        """The key of the view ``sql`` defines, from what it reads; None when it cannot be told so."""
        definition, separator, query = sql.partition(" AS ")
        if not separator or '"' in definition or "(" in definition:  # a name or column list to parse
            return None
        query = query.strip().rstrip(";")
        [(tree,)] = self.connection.execute("SELECT json_serialize_sql(?)", [query]).fetchall()
        parsed = json.loads(tree)
        if parsed.get("error"):
            return None
        reads: set[tuple[str, str, str]] = set()
        calls: set[str] = set()
        named: set[str] = set()  # common table expressions
        if not self._walk(parsed, reads, calls, named) or calls & self.varying:
            return None
        inputs = []
        for catalog, read_schema, name in sorted(reads):
            if not catalog and not read_schema and name in named:
                continue
            if catalog not in ("", self.catalog) or not read_schema or not self._exists(read_schema, name):
                return None
            inputs.append([read_schema, name, self.key(read_schema, name)])
        return digest(["view", query, inputs])

    def _walk(self, node: Any, reads: set, calls: set, named: set) -> bool:
        """Gather the relations, functions and CTE names of a parsed query; False at a table function."""
        if isinstance(node, list):
            return all(self._walk(item, reads, calls, named) for item in node)
        if not isinstance(node, dict):
            return True
        if node.get("type") == "TABLE_FUNCTION":
            return False
        if node.get("type") == "BASE_TABLE":
            reads.add((node["catalog_name"], node["schema_name"], node["table_name"]))
        if node.get("class") == "FUNCTION":
            calls.add(node["function_name"])
        if "cte_map" in node:
            named.update(entry["key"] for entry in node["cte_map"]["map"])
        return all(self._walk(value, reads, calls, named) for value in node.values())

    def _exists(self, schema: str, name: str) -> bool:
        found = self.connection.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = $1 AND schema_name = $2 AND table_name = $3 "
            "UNION ALL SELECT count(*) FROM duckdb_views() WHERE database_name = $1 AND schema_name = $2 "
            "AND view_name = $3",
            [self.catalog, schema, name],
        ).fetchall()
        return any(count for (count,) in found)


def table_key(contents: RelationContents, table: str) -> str:
    """What the published ``table`` is made from, as a sha256: the statement that copies it, its
    columns and types, and what the mart holds (``RelationContents``)."""
    relation = contents.relation(MARTS_SCHEMA, table)
    try:
        columns = [column[:2] for column in contents.connection.execute(f"DESCRIBE {relation}").fetchall()]
    except duckdb.CatalogException as error:
        raise missing_table(error) from error
    return digest([copy_statement(table), columns, contents.key(MARTS_SCHEMA, table)])


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
