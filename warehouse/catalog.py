"""What the warehouse holds, read from DuckDB's ``information_schema``: the tables of a schema
and the columns of a table, in their order.

The loads use it to tell a table laid out as today's code writes it from one an older layout
left behind; the publish asset uses it to find every raw input the build read.
"""

from __future__ import annotations

import duckdb

RAW_SCHEMA = "raw"  # where the build loads its inputs as they came, before dbt reads them


def table_names(connection: duckdb.DuckDBPyConnection, schema: str) -> list[str]:
    """The tables and views of ``schema``, by name."""
    found = connection.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name", [schema]
    ).fetchall()
    return [name for (name,) in found]


def column_names(connection: duckdb.DuckDBPyConnection, schema: str, table: str) -> list[str]:
    """The columns of ``schema.table`` in their order; empty when there is no such table."""
    found = connection.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND table_name = ? "
        "ORDER BY ordinal_position",
        [schema, table],
    ).fetchall()  # fetched to the end: DuckDB refuses register() while a result is open
    return [name for (name,) in found]
