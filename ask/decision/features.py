"""What the decision sees of an entry for a question: each feature named and computed here, once.

For every entry it weighs, the engine gathers the lexical index's and the vectors' evidence
(``Evidence``) and turns it into one row of ``FEATURES``:

    dense            the best cosine between the question and the entry's texts
    dense_over_mean  that cosine above the question's mean cosine to every entry's centroid
                     (some questions, and some languages, sit closer to everything)
    dense_margin     that cosine above the best other entry's (the margin over the runner-up)
    lexical          log(1 + BM25F score / the language's score scale): names, brands, numbers
    coverage         the IDF-weighted share of the question's words found in the entry

The decision adds two of its own, made from the ranking's fused score (``DECISION_FEATURES``):
``fused`` and ``fused_margin``, its margin over the best other entry's.

A new feature is one more entry in ``FEATURE_COLUMNS`` (or ``DECISION_COLUMNS``): the fit
(``ask.decision.fusion.fit``) gives it a weight at the next build, which fits the decision again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ask.dense.vectors import EntryVectors
from ask.lexical.index import AskIndex

LEXICAL_CANDIDATES = 32  # the lexical index's best entries are always scored exactly by the dense side too


@dataclass(frozen=True)
class Evidence:
    """What the lexical index and the vectors say of the entries weighed for one question (every
    entry of a small library; of a large one, the dense and lexical candidates)."""

    entries: np.ndarray  # the entries weighed: numbers into the library, ascending
    dense: np.ndarray  # the best cosine over the entry's texts
    centroid_mean: float  # the question's mean cosine to every entry's centroid
    score: np.ndarray  # BM25F
    coverage: np.ndarray  # the IDF-weighted share of the question's words found in the entry
    scale: float  # the score scale of the question's language (``ask.lexical.index.Tuning.score_scale``)

    @classmethod
    def of(
        cls, lexical: AskIndex, vectors: EntryVectors, question: str, question_vector: np.ndarray, language: str
    ) -> Evidence:
        """The evidence for ``question`` (embedded as ``question_vector``, read as ``language``)."""
        score, coverage = lexical.evidence(question)
        lexical_best = np.argpartition(-score, min(LEXICAL_CANDIDATES, len(score) - 1))[:LEXICAL_CANDIDATES]
        near = vectors.similarities(question_vector, also=lexical_best)
        weighed = near.entries
        return cls(
            weighed,
            near.best,
            near.centroid_mean,
            score[weighed],
            coverage[weighed],
            lexical.tuning.score_scale[language],
        )


def margins(values: np.ndarray) -> np.ndarray:
    """Each value minus the largest of the others."""
    if len(values) < 2:
        return values.copy()
    second, first = np.partition(values, -2)[-2:]
    return values - np.where(values == first, second, first)


FEATURE_COLUMNS: dict[str, Callable[[Evidence], np.ndarray]] = {
    "dense": lambda evidence: evidence.dense,
    "dense_over_mean": lambda evidence: evidence.dense - evidence.centroid_mean,
    "dense_margin": lambda evidence: margins(evidence.dense),
    "lexical": lambda evidence: np.log1p(evidence.score / evidence.scale),
    "coverage": lambda evidence: evidence.coverage,
}
FEATURES = tuple(FEATURE_COLUMNS)


def feature_rows(evidence: Evidence) -> np.ndarray:
    """One row of ``FEATURES`` per entry weighed (``evidence.entries``)."""
    return np.column_stack([compute(evidence) for compute in FEATURE_COLUMNS.values()]).astype(np.float32)


def feature_of(rows: np.ndarray, name: str) -> np.ndarray:
    """The feature ``name`` of every entry, from rows of ``FEATURES``."""
    return rows[:, FEATURES.index(name)]


# The decision's own: the ranking's fused score and its margin, then the entry's own evidence.
DECISION_COLUMNS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "fused": lambda fused, rows: fused,
    "fused_margin": lambda fused, rows: margins(fused),
    "dense": lambda fused, rows: feature_of(rows, "dense"),
    "dense_over_mean": lambda fused, rows: feature_of(rows, "dense_over_mean"),
    "lexical": lambda fused, rows: feature_of(rows, "lexical"),
    "coverage": lambda fused, rows: feature_of(rows, "coverage"),
}
DECISION_FEATURES = tuple(DECISION_COLUMNS)


def decision_rows(fused: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """One row of ``DECISION_FEATURES`` per entry, from its fused score and its row of ``FEATURES``."""
    return np.column_stack([compute(fused, rows) for compute in DECISION_COLUMNS.values()])
