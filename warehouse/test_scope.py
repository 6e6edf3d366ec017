"""Which rows a build's dbt tests read: every row, or only the bench slots the build restaged.

A build that re-read only bench sheets (the intake's) changed only the slots those sheets
touch, so the tests of the tables that grow with the lab (a row per reading or per slot,
``slot_scoped_tables`` in ``sql/macros/tests.sql``) look at those slots alone; the others are
tested whole. Any other build (the cold one, the daily one, a full refresh, one that
re-read the editorial export) tests every row. The Dagster asset writes the one-row table
before `dbt build`; the project's ``get_where_subquery`` reads it, at run time, so the scope
changes no parse of the project.
"""

import duckdb

# In DuckDB's default schema, apart from the inputs (raw) and the models (dbt's schemas); handed to
# dbt as var('test_scope').
TEST_SCOPE_TABLE = "main.dbt_test_scope"


def write_test_scope(connection: duckdb.DuckDBPyConnection, every_row: bool) -> None:
    """Tell the coming `dbt build` whether its tests read every row or the restaged slots only."""
    connection.execute(f"CREATE OR REPLACE TABLE {TEST_SCOPE_TABLE} AS SELECT ?::BOOLEAN AS every_row", [every_row])
