"""Reading bench sheets: dirty but valid sheets pass as typed, broken ones name every bad cell."""

import itertools
from pathlib import Path

import polars as pl
import pytest
from openpyxl import Workbook

from inputs.bench_sheets import (
    SHEET_COLUMNS,
    SHEET_ROW_SCHEMA,
    SheetError,
    check_row,
    check_rows,
    parse_reading,
    parse_sheet_date,
    read_sheet,
)

HEADER = "product,protocol,sample,reading,unit,tester,date,notes\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("71.4", 71.4),
        (" 71,4 ", 71.4),
        ("71", 71.0),
        ("-0.5", -0.5),
        (",5", 0.5),
        ("abc", None),
        ("", None),
        ("7 1", None),
        ("1.2.3", None),
        (None, None),
    ],
)
def test_parse_reading(text, expected):
    assert parse_reading(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-05-01", "2026-05-01"),
        ("2026-05-01 00:00:00", "2026-05-01"),
        (" 2026-05-01", "2026-05-01"),
        ("01/05/2026", None),
        ("2026-13-01", None),
        ("2026-02-29", None),
        ("2028-02-29", "2028-02-29"),
        ("yesterday", None),
    ],
)
def test_parse_sheet_date(text, expected):
    assert parse_sheet_date(text) == expected


def test_semicolon_sheet_with_decimal_commas_is_read_as_typed(tmp_path: Path):
    sheet = tmp_path / "s.csv"
    sheet.write_text(
        "product;protocol;sample;reading;unit;tester;date;notes\n"
        " tideline-summit-750-ml ;heat-retention;1;71,4; °C;Eleni Papadaki  ;2026-05-01;\n",
        encoding="utf-8",
    )
    frame = read_sheet(sheet, "bench/s.csv")
    row = frame.row(0, named=True)
    assert row["reading"] == "71,4"  # raw as received; staging reads the comma
    assert row["product"] == " tideline-summit-750-ml "
    assert row["_source_row"] == 2
    assert row["_source_file"] == "bench/s.csv"
    assert len(row["_source_sha256"]) == 64


def test_every_bad_cell_is_named_with_the_row_a_tester_sees(tmp_path: Path):
    sheet = tmp_path / "bad.csv"
    sheet.write_text(
        HEADER
        + "a,heat-retention,1,71.4,°C,Eleni Papadaki,2026-05-01,\n"
        + "a,heat-retention,two,7x,°C,Eleni Papadaki,05/01/2026,\n"
        + ",heat-retention,3,70,°C,Eleni Papadaki,2026-05-01,\n",
        encoding="utf-8",
    )
    with pytest.raises(SheetError) as caught:
        read_sheet(sheet, "bench/bad.csv")
    problems = {(p.row, p.column) for p in caught.value.problems}
    assert problems == {(3, "sample"), (3, "reading"), (3, "date"), (4, "product")}
    assert "bench/bad.csv, row 3, column 'reading': not a number (got '7x')" in str(caught.value)


def test_missing_column_is_reported_on_the_header_row(tmp_path: Path):
    sheet = tmp_path / "short.csv"
    sheet.write_text("product,protocol,sample,reading\nx,y,1,2\n", encoding="utf-8")
    with pytest.raises(SheetError) as caught:
        read_sheet(sheet, "short.csv")
    assert {p.column for p in caught.value.problems} == {"unit", "tester", "date", "notes"}
    assert all(p.row == 1 for p in caught.value.problems)


def test_workbook_sheets_are_read_with_typed_cells_as_text(tmp_path: Path):
    import datetime as dt

    path = tmp_path / "book.xlsx"
    workbook = Workbook()
    sheet = workbook.active
    sheet.title = "session-1"
    sheet.append(["product", "protocol", "sample", "reading", "unit", "tester", "date", "notes"])
    sheet.append(["a", "bar-lifespan", 1, 43.5, "washes", "Nguyen Thi Lan", dt.datetime(2026, 9, 1), None])
    workbook.save(path)
    frame = read_sheet(path, "bench/book.xlsx")
    row = frame.row(0, named=True)
    assert row["_source_sheet"] == "session-1"
    assert parse_reading(row["reading"]) == 43.5
    assert parse_sheet_date(row["date"]) == "2026-09-01"


def test_a_file_that_is_not_a_spreadsheet_is_reported(tmp_path: Path):
    path = tmp_path / "fake.xlsx"
    path.write_bytes(b"not a zip file")
    with pytest.raises(SheetError, match="unreadable sheet"):
        read_sheet(path, "bench/fake.xlsx")


def test_the_vectorised_check_finds_exactly_what_the_row_check_finds():
    """check_rows skips rows its patterns call clean; none of them may hide a problem."""
    readings = [
        "\x1c",
        "\u2003",
        "71.4",
        " 71,4 ",
        "71",
        "-0.5",
        ",5",
        "5.",
        "+3",
        "7\u00a01",
        "٣",
        "1e3",
        "abc",
        "",
        None,
    ]
    samples = ["1", "007", "0", "-1", "²", "1.0", " 2 ", ""]
    dates = ["2026-05-01", "2026-05-01 00:00:00", "2026-05-01T00:00:00.000", "2026-02-31", "2026-13-01", "01/05/2026"]
    rows = [
        {
            "product": "p",
            "protocol": "q",
            "sample": sample,
            "reading": reading,
            "unit": "°C",
            "tester": "t",
            "date": date,
            "notes": None,
        }
        for reading, sample, date in itertools.product(readings, samples, dates)
    ]
    rows.append(dict.fromkeys(SHEET_COLUMNS, " "))  # blank lines, which are skipped
    rows.append(dict.fromkeys(SHEET_COLUMNS, "\x1c"))
    rows.append({**rows[0], "tester": "  "})
    provenance = {"_source_file": "f.csv", "_source_sheet": None, "_source_sha256": "0" * 64}
    lines = [{"_source_row": index + 2, **row, **provenance} for index, row in enumerate(rows)]
    expected = [problem for line in lines for problem in check_row(line, line["_source_row"], "f.csv", None)]
    kept, found = check_rows(pl.DataFrame(lines, schema=SHEET_ROW_SCHEMA))
    assert found == expected
    assert kept.height == len(rows) - 2
    assert len(expected) > len(rows) // 2  # the grid is mostly broken rows, so the test has teeth
