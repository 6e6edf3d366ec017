"""The lexical engine alone, as ``make bench-ask``'s baseline: BM25F with fixed thresholds, no
vectors and no fitted decision.

An entry matches on lexical evidence alone with enough coverage of the question and enough
score for the question's language, unless the question is found almost whole (a short query);
a recommendation backed by bench measurements ranks higher. The thresholds were calibrated on
the demo's dev split when this was the whole engine; the served engine decides with the fitted
fusion instead (``ask.decision``), and only this comparison and the analysis tests still ask
the lexical index for a match on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ask.entries import Match
from ask.lexical.analysis import question_slots
from ask.lexical.index import TUNED, AskIndex


@dataclass(frozen=True)
class Thresholds:
    min_coverage: float  # below this share of the question's weight, an entry does not match
    min_score: Mapping[str, float]  # nor below this score, per language of the question...
    sure_coverage: float  # ...unless it covers this share of the question (a short query, fully found)
    bench_evidence_boost: float  # a recommendation backed by bench measurements ranks this much higher


CALIBRATED = Thresholds(min_coverage=0.2, min_score=TUNED.score_scale, sure_coverage=0.8, bench_evidence_boost=1.15)


class LexicalBaseline:
    """The lexical index of a library searched on its own, with ``thresholds``."""

    def __init__(self, index: AskIndex, thresholds: Thresholds = CALIBRATED) -> None:
        self.index = index
        self.thresholds = thresholds
        boosts = [thresholds.bench_evidence_boost if entry.bench_evidence else 1.0 for entry in index.entries]
        self.boost = np.array(boosts, np.float32)

    def search(self, question: str, limit: int) -> list[Match]:
        """The entries that match ``question`` on lexical evidence alone, best first, at most ``limit``."""
        if limit <= 0 or not question_slots(question):
            return []
        index, thresholds = self.index, self.thresholds
        score, coverage = index.evidence(question)
        score *= self.boost
        sure = coverage >= thresholds.sure_coverage
        enough = score >= thresholds.min_score[index.question_language(question)]
        score = np.where((coverage >= thresholds.min_coverage) & (enough | sure), score, 0.0)
        candidates = np.flatnonzero(score > 0)
        if len(candidates) > limit:
            candidates = candidates[np.argpartition(-score[candidates], limit - 1)[:limit]]
        # Best first; equal scores keep the library's order (recommendations come before answers).
        ranked = sorted(candidates.tolist(), key=lambda n: (-float(score[n]), n))
        return [Match(index.entries[n], float(score[n]), float(coverage[n])) for n in ranked]
