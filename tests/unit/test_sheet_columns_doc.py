"""docs/intake.md tells testers what each sheet column holds in the words the intake's page and
template use: its table is ``SHEET_COLUMN_MEANINGS``, row for row, in the sheet's order."""

from __future__ import annotations

from foundations.settings import PROJECT_ROOT
from inputs.bench_sheets import SHEET_COLUMN_MEANINGS


def test_the_testers_column_table_is_the_declared_one():
    text = (PROJECT_ROOT / "docs" / "intake.md").read_text(encoding="utf-8")
    section = text.split("### What each column holds", 1)[1].split("\n### ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert rows == [f"| `{column}` | {meaning} |" for column, meaning in SHEET_COLUMN_MEANINGS.items()]
