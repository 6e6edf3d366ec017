"""Reading bench sheets (CSV or XLSX) as the lab sends them, and checking their structure.

A sheet is read with every cell as text, exactly as received; normalising units, decimal
commas and whitespace is staging's job. What is checked here is what no later step can
repair: the columns exist, every reading is a number, every sample a positive whole number,
every date a date. Each problem names the file, the sheet, the row as the tester sees it in
a spreadsheet (the header is row 1) and the column.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from reuse_data.input_problems import InputProblems, RowProblem, sha256_of

SHEET_COLUMNS = ["product", "protocol", "sample", "reading", "unit", "tester", "date", "notes"]
REQUIRED_CELLS = ["product", "protocol", "sample", "reading", "unit", "tester", "date"]
SHEET_SUFFIXES = (".csv", ".xlsx")
_NUMBER = re.compile(r"^[+-]?(\d+([.,]\d*)?|[.,]\d+)$")
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})([ T]00:00:00(\.0+)?)?$")


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
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return f"{year:04d}-{month:02d}-{day:02d}"


def _csv_separator(path: Path) -> str:
    with path.open("r", encoding="utf-8-sig", errors="replace") as handle:
        header = handle.readline()
    return ";" if header.count(";") > header.count(",") else ","


def _normalise_header(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.rename({c: c.strip().lower() for c in frame.columns})


def read_sheet_tables(path: Path) -> list[tuple[str | None, pl.DataFrame]]:
    """Every table in a sheet file as (sheet name, all-text frame); CSV files have one."""
    if path.suffix.lower() == ".csv":
        frame = pl.read_csv(
            path, separator=_csv_separator(path), infer_schema=False, encoding="utf8-lossy", truncate_ragged_lines=False
        )
        return [(None, _normalise_header(frame))]
    if path.suffix.lower() == ".xlsx":
        sheets = pl.read_excel(path, sheet_id=0, engine="openpyxl", infer_schema_length=0)
        return [(name, _normalise_header(frame.cast(pl.String))) for name, frame in sheets.items()]
    raise SheetError([RowProblem(path.name, 1, "file", path.suffix, "only .csv and .xlsx sheets are accepted")])


def check_table(frame: pl.DataFrame, file: str, sheet: str | None) -> list[RowProblem]:
    """Structural problems of one table; row numbers count the header as row 1."""
    missing = [c for c in SHEET_COLUMNS if c not in frame.columns]
    if missing:
        return [
            RowProblem(file, 1, column, "", f"missing column; a sheet needs {', '.join(SHEET_COLUMNS)}", sheet)
            for column in missing
        ]
    problems: list[RowProblem] = []
    for index, row in enumerate(frame.select(SHEET_COLUMNS).iter_rows(named=True)):
        row_number = index + 2
        if all((row[c] or "").strip() == "" for c in SHEET_COLUMNS):
            continue  # blank line at the end of a sheet
        for column in REQUIRED_CELLS:
            if (row[column] or "").strip() == "":
                problems.append(RowProblem(file, row_number, column, row[column] or "", "empty cell", sheet))
        if (row["reading"] or "").strip() and parse_reading(row["reading"]) is None:
            problems.append(RowProblem(file, row_number, "reading", row["reading"], "not a number", sheet))
        sample = (row["sample"] or "").strip()
        if sample and not (sample.isdigit() and int(sample) >= 1):
            problems.append(RowProblem(file, row_number, "sample", sample, "not a whole number from 1 up", sheet))
        if (row["date"] or "").strip() and parse_sheet_date(row["date"]) is None:
            problems.append(RowProblem(file, row_number, "date", row["date"], "not a date (use YYYY-MM-DD)", sheet))
    return problems


def read_sheet_rows(path: Path, display_name: str) -> tuple[pl.DataFrame, list[RowProblem]]:
    """Every row of a sheet file with provenance columns, and each structural problem found
    (missing columns, empty cells, readings that are not numbers, bad samples and dates).

    Rows of a table that lacks a column are left out; the other rows come back even when
    some of their cells are bad, so that a caller can check them further and report all at once.
    """
    try:
        tables = read_sheet_tables(path)
    except SheetError:
        raise
    except Exception as error:  # a file polars or openpyxl cannot open at all
        raise SheetError([RowProblem(display_name, 1, "file", path.name, f"unreadable sheet: {error}")]) from error
    digest = sha256_of(path)
    problems: list[RowProblem] = []
    frames = []
    for sheet, frame in tables:
        table_problems = check_table(frame, display_name, sheet)
        problems.extend(table_problems)
        if any(p.row == 1 for p in table_problems):
            continue  # a missing column: no row of this table can be read
        frame = frame.select(SHEET_COLUMNS).with_row_index("_source_row", offset=2)
        frame = frame.filter(~pl.all_horizontal(pl.col(c).fill_null("").str.strip_chars() == "" for c in SHEET_COLUMNS))
        frames.append(
            frame.with_columns(
                pl.lit(display_name).alias("_source_file"),
                pl.lit(sheet, dtype=pl.String).alias("_source_sheet"),
                pl.lit(digest).alias("_source_sha256"),
                pl.col("_source_row").cast(pl.Int64),
            )
        )
    return (pl.concat(frames) if frames else pl.DataFrame()), problems


def read_sheet(path: Path, display_name: str) -> pl.DataFrame:
    """All rows of a sheet file with provenance columns, or SheetError naming every bad cell."""
    frame, problems = read_sheet_rows(path, display_name)
    if problems:
        raise SheetError(problems)
    return frame
