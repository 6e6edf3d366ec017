"""Datasette's side of the serving benchmark: the same tables, copied into SQLite."""

import json
import sqlite3
from pathlib import Path

import duckdb

from benchmarks import datasette_site
from foundations.settings import load_settings
from pipelines.project import dbt_project, published_marts


def test_every_equivalent_reads_a_published_table():
    published = published_marts(dbt_project(load_settings()))
    assert datasette_site.tables() and set(datasette_site.tables()) <= set(published)


def test_export_copies_rows_with_nested_values_as_json_text(tmp_path: Path):
    source = tmp_path / "snapshot.duckdb"
    with duckdb.connect(str(source)) as connection:
        connection.execute(
            "CREATE TABLE products AS SELECT * FROM (VALUES "
            "('a', 91.5, ['x', 'y'], {'k': 1}, DATE '2026-11-01'), ('b', NULL, [], NULL, NULL)"
            ") AS t(slug, score, tags, extra, tested_on)"
        )
    target = tmp_path / "snapshot.db"
    datasette_site.export_to_sqlite(source, target, ["products"])
    with sqlite3.connect(target) as sink:
        rows = sink.execute("SELECT slug, score, tags, extra, tested_on FROM products ORDER BY slug").fetchall()
    assert rows[0][:2] == ("a", 91.5) and json.loads(rows[0][2]) == ["x", "y"] and json.loads(rows[0][3]) == {"k": 1}
    assert rows[0][4] == "2026-11-01"
    assert rows[1] == ("b", None, "[]", None, None)
