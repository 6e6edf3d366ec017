"""What a relation holds, as a key (``warehouse.relation_keys``): a table by the key it holds
when it holds one, else by its rows; a view by what it reads."""

from __future__ import annotations

import duckdb

from warehouse.relation_keys import RelationContents, hold_key


def keys(connection: duckdb.DuckDBPyConnection) -> dict[str, str]:
    contents = RelationContents.of_default(connection)
    return {name: contents.key("main", name) for name in ("held", "hashed", "over_held")}


def test_a_table_holding_a_key_is_keyed_by_it_and_any_other_by_its_rows():
    with duckdb.connect() as connection:
        connection.execute("CREATE TABLE held AS SELECT range AS n FROM range(10)")
        connection.execute("CREATE TABLE hashed AS SELECT range AS n FROM range(10)")
        connection.execute("CREATE VIEW over_held AS SELECT n * 2 AS twice FROM main.held")
        hold_key(connection, "main", "held", "first")
        first = keys(connection)
        assert first["held"] != first["hashed"], "a held key is not a hash of the rows"

        # Rows changed under the same held key: the key claims them, so nothing moves but the hashed table.
        connection.execute("UPDATE held SET n = n + 1")
        connection.execute("UPDATE hashed SET n = n + 1")
        second = keys(connection)
        assert second["held"] == first["held"] and second["over_held"] == first["over_held"]
        assert second["hashed"] != first["hashed"]

        # Another held key moves the table and the view over it; without one, its rows are hashed.
        hold_key(connection, "main", "held", "second")
        third = keys(connection)
        assert third["held"] != first["held"] and third["over_held"] != first["over_held"]
        connection.execute("COMMENT ON TABLE held IS NULL")
        assert keys(connection)["held"] == third["hashed"], "the same columns and rows, keyed alike"
