"""The bench sheet a tester starts from: the sheet's columns and one example row, as CSV or XLSX.

The header is ``SHEET_COLUMNS`` itself, and the example row is made from the reference the
intake validates against (a real product, a protocol run on its category, that protocol's unit,
a reading inside its plausible range, a known tester), so the template uploaded unchanged is
accepted. Its note says it is an example, for the tester to replace it with their readings.
"""

from __future__ import annotations

import csv
import datetime as dt
import io

from openpyxl import Workbook
from openpyxl.comments import Comment
from openpyxl.styles import Font

from inputs.bench_sheets import SHEET_COLUMN_MEANINGS, SHEET_COLUMNS
from intake.sheet_validation import Protocol, Reference

TEMPLATE_STEM = "bench-sheet-template"
EXAMPLE_NOTE = "example row: replace it with your own readings"
TEXT_FORMAT = "@"  # a spreadsheet keeps what is typed in such a cell as text (no date or number guessing)


class NoExample(LookupError):
    """The reference has no product with a protocol, or no tester, to make an example row of."""


def plausible_reading(protocol: Protocol) -> float:
    """A reading the protocol's plausible range holds: its middle, or the one bound it has."""
    low, high = protocol.plausible_min, protocol.plausible_max
    if low is not None and high is not None:
        return (low + high) / 2
    return low if low is not None else high if high is not None else 1.0


def example_row(reference: Reference, today: dt.date) -> dict[str, str]:
    """A row the validator accepts: the first product (by slug) that has a protocol, tested today."""
    product = next((slug for slug in sorted(reference.product_categories) if reference.protocols_for(slug)), None)
    if product is None or not reference.testers:
        raise NoExample("the published release has no product with a protocol, or no tester")
    protocol_slug = reference.protocols_for(product)[0]
    protocol = reference.protocols[protocol_slug]
    row = {
        "product": product,
        "protocol": protocol_slug,
        "sample": "1",
        "reading": f"{plausible_reading(protocol):g}",
        "unit": protocol.unit,
        "tester": sorted(reference.testers.values())[0],
        "date": today.isoformat(),
        "notes": EXAMPLE_NOTE,
    }
    return {column: row[column] for column in SHEET_COLUMNS}


def template_csv(reference: Reference, today: dt.date) -> bytes:
    """The template as CSV, UTF-8 with a byte order mark so that a spreadsheet shows °C as °C."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=SHEET_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerow(example_row(reference, today))
    return text.getvalue().encode("utf-8-sig")


def template_xlsx(reference: Reference, today: dt.date) -> bytes:
    """The template as a workbook: the header in bold with each column's meaning as its comment
    shown on hover, and every cell formatted as text, so that a sample or a date stays as typed."""

    workbook = Workbook()
    sheet = workbook.active
    sheet.title = "readings"
    sheet.append(SHEET_COLUMNS)
    sheet.append(list(example_row(reference, today).values()))
    for index, column in enumerate(SHEET_COLUMNS, start=1):
        header = sheet.cell(row=1, column=index)
        header.font = Font(bold=True)
        header.comment = Comment(SHEET_COLUMN_MEANINGS[column], "reuse-data")
        sheet.cell(row=2, column=index).number_format = TEXT_FORMAT
        letter = header.column_letter
        sheet.column_dimensions[letter].number_format = TEXT_FORMAT
        sheet.column_dimensions[letter].width = max(12, len(str(sheet.cell(row=2, column=index).value)) + 2)
    sheet.freeze_panes = "A2"
    content = io.BytesIO()
    workbook.save(content)
    return content.getvalue()
