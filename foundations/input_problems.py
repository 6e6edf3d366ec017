"""What is wrong with a raw input file, cell by cell."""

from __future__ import annotations

from dataclasses import dataclass

SHOWN_PROBLEMS = 25


@dataclass(frozen=True)
class RowProblem:
    """One thing wrong with one cell (or field) of an input file."""

    file: str
    row: int
    column: str
    value: str
    message: str
    sheet: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}" + (f" [sheet {self.sheet}]" if self.sheet else "")
        return f"{where}, row {self.row}, column '{self.column}': {self.message} (got {self.value!r})"


class InputProblems(ValueError):
    """Input that cannot be ingested; ``problems`` lists every bad cell, the message the first 25."""

    subject = "input files"

    def __init__(self, problems: list[RowProblem]):
        self.problems = problems
        shown = "\n".join(f"  - {p}" for p in problems[:SHOWN_PROBLEMS])
        more = f"\n  … and {len(problems) - SHOWN_PROBLEMS} more" if len(problems) > SHOWN_PROBLEMS else ""
        super().__init__(f"{len(problems)} problem(s) in {self.subject}:\n{shown}{more}")
