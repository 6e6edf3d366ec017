"""What a relation of a DuckDB catalog holds, as a key: equal contents, equal keys, without
reading the rows into Python (``RelationContents``).

Publish keys each published table by it, to keep what the release being served already holds
(``publish.snapshot_copy``); the ask decision keys what it is fitted on by it, to keep the one
fitted before (``pipelines/assets/ask_decision.py``).

A table a build makes in Python holds the key of what it was made from in its own comment
(``hold_key``, ``held_key``): replaced or dropped, the table takes its key with it, so a key can
never claim a table that is not there (``pipelines.kept_work``). The tables dbt changes in
place, the staged readings and the slots aggregated from them, hold one too, forgotten before
each change and held again after it (``sql/macros/held_keys.sql``). A table that holds a key
is keyed by it, not by hashing its rows: ten million readings cost 2.3 s to hash, their held
key nothing.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb

from foundations.content_keys import value_key

KEY_COMMENT = "made from "  # a table's comment: this, then the key of what it was made from


def hold_key(connection: duckdb.DuckDBPyConnection, schema: str, table: str, key: str) -> None:
    """Keep in ``schema.table``'s comment the key of what it was just made from."""
    connection.execute(f'COMMENT ON TABLE "{schema}"."{table}" IS \'{KEY_COMMENT}{key}\'')


def held_key(connection: duckdb.DuckDBPyConnection, schema: str, table: str, catalog: str | None = None) -> str | None:
    """The key ``hold_key`` kept in ``schema.table``'s comment (of ``catalog``, unquoted; the
    default one when None); None for a table without one, or no table."""
    rows = connection.execute(
        "SELECT comment FROM duckdb_tables() WHERE database_name = coalesce(?, current_database()) "
        "AND schema_name = ? AND table_name = ?",
        [catalog, schema, table],
    ).fetchall()
    comment = rows[0][0] if rows else None
    return comment.removeprefix(KEY_COMMENT) if comment and comment.startswith(KEY_COMMENT) else None


def relation_key(made_of: Any) -> str:
    """The key of ``made_of`` (JSON-encodable) with DuckDB's version: its hash and storage may change."""
    return value_key([duckdb.__version__, made_of])


class RelationContents:
    """What each relation of one attached catalog holds, as a sha256 (``key``), each worked out once.

    A table's is its columns and the key it holds (``held_key``), or else its rows: their count and
    the sum of their 64-bit DuckDB hashes (the order of rows counts for nothing, a repeated row
    counts each time), one pass on every core. A view's is its query and what each relation it
    reads holds, as DuckDB's own parser finds them (``json_serialize_sql``): a view that joins ten
    million readings costs the key of the table it reads them from, not the join. A view whose rows could differ with
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

    @classmethod
    def of_default(cls, connection: duckdb.DuckDBPyConnection) -> RelationContents:
        """What the relations of ``connection``'s default catalog (the warehouse it opened) hold."""
        [(catalog,)] = connection.execute("SELECT current_database()").fetchall()
        return cls(connection, catalog)

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
        columns = [column[:2] for column in self.connection.execute(f"DESCRIBE {relation}").fetchall()]
        if (held := held_key(self.connection, schema, name, self.catalog)) is not None:
            return relation_key(["held", columns, held])
        rows = f"SELECT count(*), sum(hash(row)) FROM {relation} AS row"
        [(count, hash_sum)] = self.connection.execute(rows).fetchall()
        return relation_key(["rows", columns, count, str(hash_sum)])

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
        return relation_key(["view", query, inputs])

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
