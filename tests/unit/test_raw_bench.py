"""The raw bench table follows the sheets incrementally, and a bad sheet leaves it untouched."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from inputs.bench_sheets import SHEET_SUFFIXES, SheetError
from warehouse.raw_bench import QUALIFIED_TABLE, folder_sources, load_bench_sheets

HEADER = "product,protocol,sample,reading,unit,tester,date,notes\n"


def sheet(path: Path, *readings: str) -> None:
    lines = [f"p-{n},heat-retention,{n},{r},°C,Eleni Papadaki,2026-05-01," for n, r in enumerate(readings, start=1)]
    path.write_text(HEADER + "\n".join(lines) + "\n", encoding="utf-8")


def held(connection: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str]]:
    return connection.execute(
        f"SELECT _source_file, product, reading FROM {QUALIFIED_TABLE} ORDER BY _source_file, _source_row"
    ).fetchall()


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    (tmp_path / "bench").mkdir()
    sheet(tmp_path / "bench" / "a.csv", "70.1", "70.2")
    sheet(tmp_path / "bench" / "b.csv", "60.0")
    sheet(tmp_path / "bench" / "c.csv", "50.0")
    return tmp_path


def load(inputs: Path, connection: duckdb.DuckDBPyConnection):
    return load_bench_sheets(connection, folder_sources(inputs / "bench", inputs, SHEET_SUFFIXES))


def test_only_new_or_changed_sheets_are_read(inputs: Path, tmp_path: Path):
    connection = duckdb.connect(str(tmp_path / "w.duckdb"))
    first = load(inputs, connection)
    assert (first.sheets_read, first.rows) == (3, 4)
    assert load(inputs, connection).sheets_read == 0

    sheet(inputs / "bench" / "b.csv", "61.0", "62.0")  # corrected and re-exported
    (inputs / "bench" / "c.csv").unlink()  # taken out by the lab
    sheet(inputs / "bench" / "d.csv", "40.0")  # a new session
    outcome = load(inputs, connection)
    assert (outcome.sheets_read, outcome.sheets_dropped, outcome.rows_added) == (2, 2, 3)
    assert held(connection) == [
        ("bench/a.csv", "p-1", "70.1"),
        ("bench/a.csv", "p-2", "70.2"),
        ("bench/b.csv", "p-1", "61.0"),
        ("bench/b.csv", "p-2", "62.0"),
        ("bench/d.csv", "p-1", "40.0"),
    ]


def test_a_bad_new_sheet_changes_nothing_and_every_problem_is_named(inputs: Path, tmp_path: Path):
    connection = duckdb.connect(str(tmp_path / "w.duckdb"))
    load(inputs, connection)
    before = held(connection)
    (inputs / "bench" / "a.csv").unlink()
    sheet(inputs / "bench" / "e.csv", "40.0", "forty")
    sheet(inputs / "bench" / "f.csv", "2026-02-31")
    with pytest.raises(SheetError) as raised:
        load(inputs, connection)
    assert [(p.file, p.row, p.column) for p in raised.value.problems] == [
        ("bench/e.csv", 3, "reading"),
        ("bench/f.csv", 2, "reading"),
    ]
    assert held(connection) == before  # the deletion of a.csv's rows was rolled back too
