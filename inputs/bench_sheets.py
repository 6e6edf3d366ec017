"""Reading bench sheets (CSV or XLSX) as the lab sends them, and checking their structure.

A sheet is read with every cell as text, exactly as received; normalising units, decimal
commas and whitespace is staging's job. What is checked here is what no later step can
repair: the columns exist, every reading is a number, every sample a positive whole number,
every date a date. Each problem names the file, the sheet, the row as the tester sees it in
a spreadsheet (the header is row 1) and the column.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import polars as pl

from foundations.content_keys import sha256_of
from foundations.input_problems import InputProblems, RowProblem

# A sheet's columns, in order, and what a tester writes in each: told on the intake's page and
# in its template, so that no list of them can fall behind this one.
SHEET_COLUMN_MEANINGS = {
    "product": "the product's slug, as at the end of its address on the site (/products/<slug>)",
    "protocol": "the slug of the bench protocol the reading comes from; only protocols run on the product's category",
    "sample": "which sample of the product this reading is of: a whole number from 1 up, one row per sample",
    "reading": "the measured value, a number; a decimal comma is fine",
    "unit": "the unit the reading is in: the protocol's own, or one that converts to it (°F for °C, say)",
    "tester": "who ran the test, as the site's team page writes the name",
    "date": "the day of the test, YYYY-MM-DD; not in the future",
    "notes": "anything worth knowing about this reading (may be empty)",
}
SHEET_COLUMNS = list(SHEET_COLUMN_MEANINGS)
REQUIRED_CELLS = ["product", "protocol", "sample", "reading", "unit", "tester", "date"]
SHEET_SUFFIXES = (".csv", ".xlsx")
# ASCII digits only: staging casts these cells in DuckDB, which reads no other digits.
_NUMBER = re.compile(r"^[+-]?(\d+([.,]\d*)?|[.,]\d+)$", re.ASCII)
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})([ T]00:00:00(\.0+)?)?$", re.ASCII)


class SheetError(InputProblems):
    """A bench sheet that cannot be ingested."""

    subject = "bench sheets"


def parse_reading(text: str | None) -> float | None:
    """A reading as a number: '71.4', ' 71,4 ' and '71' parse; anything else is None."""
    if text is None:
        return None
    cleaned = text.strip().replace("\u00a0", "")
    if not _NUMBER.match(cleaned):
        return None
    return float(cleaned.replace(",", "."))


def parse_sheet_date(text: str | None) -> str | None:
    """An ISO date (as typed, or as a spreadsheet's midnight timestamp) or None."""
    match = _DATE.match((text or "").strip())
    if not match:
        return None
    year, month, day = (int(g) for g in match.groups()[:3])
    try:
        return dt.date(year, month, day).isoformat()
    except ValueError:  # 2026-02-31: staging could not cast it
        return None


def csv_separator(path: Path) -> str:
    """The delimiter of a CSV sheet: ';' when its header has more of them than commas."""
    with path.open("r", encoding="utf-8-sig", errors="replace") as handle:
        header = handle.readline()
    return ";" if header.count(";") > header.count(",") else ","


def _normalise_header(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.rename({c: c.strip().lower() for c in frame.columns})


def read_sheet_tables(path: Path) -> list[tuple[str | None, pl.DataFrame]]:
    """Every table in a sheet file as (sheet name, all-text frame); CSV files have one."""
    if path.suffix.lower() == ".csv":
        frame = pl.read_csv(
            path, separator=csv_separator(path), infer_schema=False, encoding="utf8-lossy", truncate_ragged_lines=False
        )
        return [(None, _normalise_header(frame))]
    if path.suffix.lower() == ".xlsx":
        sheets = pl.read_excel(path, sheet_id=0, engine="calamine", infer_schema_length=0)
        return [(name, _normalise_header(frame.cast(pl.String))) for name, frame in sheets.items()]
    raise SheetError([RowProblem(path.name, 1, "file", path.suffix, "only .csv and .xlsx sheets are accepted")])


# Rows these patterns accept have no problem check_row could find, so a sheet of a million
# clean rows is checked in one vectorised pass; the few other rows go through check_row,
# the one place that words a problem. The patterns are stricter than check_row (ASCII digits,
# no non-breaking spaces inside a reading), never looser: a row they doubt is merely checked in full.
_SPACE = r"[\s\x1c-\x1f]"  # what Python's str.strip() removes: Unicode White_Space and \x1c-\x1f
_CLEAN_CELLS = {
    "reading": r"[+-]?([0-9]+([.,][0-9]*)?|[.,][0-9]+)",
    "sample": r"0*[1-9][0-9]*",
    "date": r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])([ T]00:00:00(\.0+)?)?",
}


def _has_text(column: str) -> pl.Expr:
    return pl.col(column).str.contains(r"[^\s\x1c-\x1f]").fill_null(False)


def _blank_row() -> pl.Expr:
    """True for a line with no text in any cell (sheets often end with some)."""
    return ~pl.any_horizontal(_has_text(c) for c in SHEET_COLUMNS)


def _clean_row() -> pl.Expr:
    """True for a row whose required cells are all present and well formed."""
    well_formed = [
        pl.col(c).str.contains(f"^{_SPACE}*(?:{_CLEAN_CELLS[c]}){_SPACE}*$").fill_null(False)
        if c in _CLEAN_CELLS
        else _has_text(c)
        for c in REQUIRED_CELLS
    ]
    real_date = pl.col("date").str.strip_chars().str.slice(0, 10).str.to_date("%Y-%m-%d", strict=False).is_not_null()
    return pl.all_horizontal(*well_formed, real_date)


def check_row(row: dict[str, str | None], row_number: int, file: str, sheet: str | None) -> list[RowProblem]:
    """The problems of one row (none for a blank line, which sheets often end with)."""
    if all((row[c] or "").strip() == "" for c in SHEET_COLUMNS):
        return []
    problems = [
        RowProblem(file, row_number, column, row[column] or "", "empty cell", sheet)
        for column in REQUIRED_CELLS
        if (row[column] or "").strip() == ""
    ]
    if (row["reading"] or "").strip() and parse_reading(row["reading"]) is None:
        problems.append(RowProblem(file, row_number, "reading", row["reading"], "not a number", sheet))
    sample = (row["sample"] or "").strip()
    if sample and not (sample.isascii() and sample.isdigit() and int(sample) >= 1):
        problems.append(RowProblem(file, row_number, "sample", sample, "not a whole number from 1 up", sheet))
    if (row["date"] or "").strip() and parse_sheet_date(row["date"]) is None:
        problems.append(RowProblem(file, row_number, "date", row["date"], "not a date (use YYYY-MM-DD)", sheet))
    return problems


SHEET_ROW_SCHEMA = {  # the columns sheet_file_rows returns
    "_source_row": pl.Int64,
    **dict.fromkeys(SHEET_COLUMNS, pl.String),
    "_source_file": pl.String,
    "_source_sheet": pl.String,
    "_source_sha256": pl.String,
}


def sheet_file_rows(path: Path, display_name: str, sha256: str | None = None) -> tuple[pl.DataFrame, list[RowProblem]]:
    """Every line of a sheet file, unchecked, numbered as a spreadsheet shows it (``_source_row``;
    the header is row 1) with provenance columns, and the problems that stop a table from being
    read at all (an unreadable file, a missing column). A table missing a column has no rows."""
    try:
        tables = read_sheet_tables(path)
    except SheetError:
        raise
    except Exception as error:  # a file polars or calamine cannot open at all
        raise SheetError([RowProblem(display_name, 1, "file", path.name, f"unreadable sheet: {error}")]) from error
    digest = sha256 or sha256_of(path)
    problems: list[RowProblem] = []
    frames = []
    for sheet, frame in tables:
        missing = [c for c in SHEET_COLUMNS if c not in frame.columns]
        problems += [
            RowProblem(display_name, 1, column, "", f"missing column; a sheet needs {', '.join(SHEET_COLUMNS)}", sheet)
            for column in missing
        ]
        if not missing:
            frames.append(
                frame.select(SHEET_COLUMNS)
                .with_row_index("_source_row", offset=2)
                .with_columns(
                    pl.col("_source_row").cast(pl.Int64),
                    pl.lit(display_name).alias("_source_file"),
                    pl.lit(sheet, dtype=pl.String).alias("_source_sheet"),
                    pl.lit(digest).alias("_source_sha256"),
                )
            )
    return (pl.concat(frames) if frames else pl.DataFrame(schema=SHEET_ROW_SCHEMA)), problems


def check_rows(rows: pl.DataFrame) -> tuple[pl.DataFrame, list[RowProblem]]:
    """The non-blank rows of ``sheet_file_rows`` output (one sheet's or many sheets' at once, which
    is faster), and every problem of their cells."""
    marked = rows.lazy().filter(~_blank_row()).with_columns(_clean_row().alias("_clean")).collect()
    problems = [
        problem
        for row in marked.filter(~pl.col("_clean")).iter_rows(named=True)
        for problem in check_row(row, row["_source_row"], row["_source_file"], row["_source_sheet"])
    ]
    return marked.drop("_clean"), problems


def read_sheet_rows(path: Path, display_name: str, sha256: str | None = None) -> tuple[pl.DataFrame, list[RowProblem]]:
    """Every non-blank row of a sheet file with provenance columns, and each structural problem
    found (missing columns, empty cells, readings that are not numbers, bad samples and dates).

    Rows of a table that lacks a column are left out; the other rows come back even when
    some of their cells are bad, so that a caller can check them further and report all at once.
    """
    lines, problems = sheet_file_rows(path, display_name, sha256)
    rows, cell_problems = check_rows(lines)
    return rows, problems + cell_problems


def read_sheet(path: Path, display_name: str, sha256: str | None = None) -> pl.DataFrame:
    """All rows of a sheet file with provenance columns (``sha256``: its digest, when already
    known), or SheetError naming every bad cell."""
    frame, problems = read_sheet_rows(path, display_name, sha256)
    if problems:
        raise SheetError(problems)
    return frame
