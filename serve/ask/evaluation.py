"""How well the ask engine answers: the labelled question set of ``tests/ask_eval/`` scored.

Each line of ``tests/ask_eval/<lang>.jsonl`` is ``{"question", "expected", "kind"}``:
``expected`` is the path of the page that should come first, or null for a question the
library cannot answer. Both the regression test and ``make bench-ask`` use these functions.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from serve.ask.index import AskIndex
from serve.ask.language import LANGUAGES

EVAL_DIR = Path(__file__).resolve().parents[2] / "tests" / "ask_eval"
MRR_DEPTH = 5

# The targets of the ask issue, printed by `make bench-ask` beside what the engine reaches.
TARGET_TOP1_OVERALL = 0.90
TARGET_TOP1_PER_LANGUAGE = 0.85
TARGET_FALSE_POSITIVE_RATE = 0.05
# What the engine reaches today, less a margin: the regression test fails below these.
# They sit under the targets until the no-match threshold separates near misses better
# (see benchmarks/RESULTS.md); raise them as the engine improves, never lower them.
FLOOR_TOP1_OVERALL = 0.85
FLOOR_TOP1_PER_LANGUAGE = 0.75
FLOOR_FALSE_POSITIVE_RATE = 0.20


@dataclass(frozen=True)
class LabelledQuestion:
    language: str
    question: str
    expected: str | None  # a page path; None: must not match
    kind: str


@dataclass(frozen=True)
class Outcome:
    item: LabelledQuestion
    paths: tuple[str, ...]  # the paths of the results, best first

    @property
    def rank(self) -> int | None:
        """1-based rank of the expected page within the first ``MRR_DEPTH`` results."""
        depth = self.paths[:MRR_DEPTH]
        return depth.index(self.item.expected) + 1 if self.item.expected in depth else None


@dataclass(frozen=True)
class Scores:
    """Quality figures of one language, or of all of them."""

    label: str
    answerable: int
    unrelated: int
    top1: float
    mrr: float
    false_positive_rate: float  # unrelated questions that got an answer
    false_negative_rate: float  # answerable questions that got none

    @classmethod
    def of(cls, label: str, outcomes: list[Outcome]) -> Scores:
        answerable = [o for o in outcomes if o.item.expected is not None]
        unrelated = [o for o in outcomes if o.item.expected is None]
        share = lambda hits, of: sum(hits) / len(of) if of else 0.0  # noqa: E731
        return cls(
            label=label,
            answerable=len(answerable),
            unrelated=len(unrelated),
            top1=share([o.rank == 1 for o in answerable], answerable),
            mrr=share([1 / o.rank if o.rank else 0.0 for o in answerable], answerable),
            false_positive_rate=share([bool(o.paths) for o in unrelated], unrelated),
            false_negative_rate=share([not o.paths for o in answerable], answerable),
        )


def load_questions(directory: Path = EVAL_DIR, languages: Iterable[str] = LANGUAGES) -> list[LabelledQuestion]:
    """Every labelled question, in language order."""
    questions: list[LabelledQuestion] = []
    for language in languages:
        for line in (directory / f"{language}.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                questions.append(LabelledQuestion(language, item["question"], item["expected"], item["kind"]))
    return questions


def run(index: AskIndex, questions: Iterable[LabelledQuestion]) -> list[Outcome]:
    """Ask the index every question, as the API does (default limit 5)."""
    return [
        Outcome(item, tuple(urlsplit(m.entry.row["url"]).path for m in index.search(item.question, MRR_DEPTH)))
        for item in questions
    ]


def score(outcomes: list[Outcome]) -> list[Scores]:
    """Scores per language (in ``LANGUAGES`` order), then overall."""
    by_language = [Scores.of(lang, [o for o in outcomes if o.item.language == lang]) for lang in LANGUAGES]
    return [s for s in by_language if s.answerable or s.unrelated] + [Scores.of("all", outcomes)]


def latencies_ms(index: AskIndex, questions: list[str], rounds: int) -> list[float]:
    """Wall time of each search, in milliseconds, over ``rounds`` passes of ``questions``."""
    timings: list[float] = []
    for _ in range(rounds):
        for question in questions:
            started = time.perf_counter()
            index.search(question, MRR_DEPTH)
            timings.append((time.perf_counter() - started) * 1000)
    return timings


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]
