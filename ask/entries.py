"""What the ask engine answers with: the library's entries, and an entry matched to a question.

The library is a snapshot's recommendations, then its answer-library entries, in that order:
the order the lexical postings and the entry vectors count entries in (``library_entries``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Entry:
    """A recommendation or a library answer, as the API returns it."""

    kind: str  # "recommendation" or "answer-library"
    row: Mapping[str, Any]
    bench_evidence: bool

    @property
    def id(self) -> str:
        """A recommendation's scenario_slug, a library answer's answer_id: what labels and vectors name."""
        return self.row["scenario_slug"] if self.kind == "recommendation" else self.row["answer_id"]


@dataclass(frozen=True)
class Match:
    """An entry that answers a question: its score (what ranks it) and the share of the question's
    words it holds (``coverage``)."""

    entry: Entry
    score: float
    coverage: float


def library_entries(recommendations: Iterable[Mapping[str, Any]], answers: Iterable[Mapping[str, Any]]) -> list[Entry]:
    """A snapshot's recommendations, then its library answers, as entries: the order postings count in."""
    return [
        *(Entry("recommendation", row, bench_evidence=row.get("figure_value") is not None) for row in recommendations),
        *(Entry("answer-library", row, bench_evidence=False) for row in answers),
    ]
