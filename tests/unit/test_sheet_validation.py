"""Checking a bench sheet against reference data: every problem at once, each cell once, in sheet order."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from inputs.bench_sheets import SheetError
from intake.sheet_validation import Protocol, Reference, read_conversions, validate_sheet

REFERENCE = Reference(
    product_categories={"steel-flask": "drinkware", "canvas-tote": "bags"},
    protocols={"heat-retention": Protocol("°C", 0.0, 100.0, frozenset({"drinkware"}))},
    testers={"eleni papadaki": "Eleni Papadaki"},
    conversions=read_conversions(),  # the seed dbt converts with
)
TODAY = dt.date(2026, 11, 23)
HEADER = "product,protocol,sample,reading,unit,tester,date,notes\n"


def check(tmp_path: Path, *rows: str):
    path = tmp_path / "upload.csv"
    path.write_text(HEADER + "".join(f"{row}\n" for row in rows), encoding="utf-8")
    return validate_sheet(path, "session.csv", REFERENCE, today=TODAY)


def problems(tmp_path: Path, *rows: str) -> list[tuple[int, str, str]]:
    with pytest.raises(SheetError) as raised:
        check(tmp_path, *rows)
    return [(p.row, p.column, p.message) for p in raised.value.problems]


def test_a_good_sheet_names_the_slots_it_fills(tmp_path):
    checked = check(
        tmp_path,
        "steel-flask,heat-retention,1,71.5,°C,Eleni Papadaki,2026-11-20,",
        "Steel-Flask,heat-retention,2,160.7,°F,eleni papadaki,2026-11-20,",  # 71.5 °C once converted
    )
    assert checked.slots == ["steel-flask:heat-retention"] and checked.rows.height == 2


def test_structural_and_reference_problems_are_reported_together_in_sheet_order(tmp_path):
    found = problems(
        tmp_path,
        "steel-flask,heat-retention,1,171.5,°C,Eleni Papadaki,2026-11-20,",  # row 2: out of range
        "no-such-thing,heat-retention,1,abc,°C,,2026-11-20,",  # row 3: unknown product, bad reading, no tester
        "canvas-tote,heat-retention,1,50,kg,Someone Else,2027-01-02,",  # row 4: four problems
    )
    assert [(row, column) for row, column, _ in found] == [
        (2, "reading"),
        (3, "product"),
        (3, "reading"),
        (3, "tester"),
        (4, "protocol"),
        (4, "unit"),
        (4, "tester"),
        (4, "date"),
    ]
    messages = {(row, column): message for row, column, message in found}
    assert messages[(3, "reading")] == "not a number" and messages[(3, "tester")] == "empty cell"  # reported once
    assert "not run on bags" in messages[(4, "protocol")] and "future" in messages[(4, "date")]


def test_a_repeated_sample_names_the_row_it_repeats(tmp_path):
    row = "steel-flask,heat-retention,1,71.5,°C,Eleni Papadaki,2026-11-20,"
    assert problems(tmp_path, row, row.replace("71.5", "70.0")) == [
        (3, "sample", "the same sample as row 2 (product, protocol, sample, date and tester)")
    ]


def test_a_sheet_without_readings_or_columns_is_refused(tmp_path):
    assert [column for _, column, _ in problems(tmp_path)] == ["product"]
    path = tmp_path / "short.csv"
    path.write_text("product,reading\nsteel-flask,71\n", encoding="utf-8")
    with pytest.raises(SheetError) as raised:
        validate_sheet(path, "short.csv", REFERENCE, today=TODAY)
    assert {p.column for p in raised.value.problems} == {"protocol", "sample", "unit", "tester", "date", "notes"}
