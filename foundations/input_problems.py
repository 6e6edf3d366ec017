"""What is wrong with a raw input file, cell by cell, and the fingerprint every input row keeps."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

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


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
