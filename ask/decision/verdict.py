"""The verdict on one question: which of the weighed entries answer it, in what order, and, when
none does, why. Everything the engine decides after the features are computed happens here: the
fusion's probability, the bench-evidence boost, the threshold and the uncovered-topic refusal.

The refusal's value is what the question log keeps (``serve.operations.question_log``), so that
an editor sees beside an unanswered question why the entry that came closest did not answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from ask.decision.features import feature_of
from ask.decision.fusion import Fusion

BENCH_EVIDENCE_BOOST = 1.05  # a bench-backed recommendation outranks an equally likely library answer


class Refusal(StrEnum):
    """Why the most probable entry did not answer a question."""

    BELOW_THRESHOLD = "below_threshold"  # its probability fell short of the fusion's threshold
    UNCOVERED_TOPIC = "uncovered_topic"  # the question lies closer to a topic the library does not cover


def evidence_boosts(bench_evidence: list[bool]) -> np.ndarray:
    """Each entry's factor on its probability: ``BENCH_EVIDENCE_BOOST`` for a bench-backed one."""
    return np.where(bench_evidence, BENCH_EVIDENCE_BOOST, 1.0)


@dataclass(frozen=True)
class Verdict:
    """Over the weighed entries (rows of the features): ``ranked``, the rows that answer, best
    first (empty when refused); ``best`` and ``probability``, the most probable row and its
    probability, answered or not; ``score``, each row's boosted probability; ``refusal``, why none
    answers."""

    ranked: list[int]
    best: int
    probability: float
    score: np.ndarray
    refusal: Refusal | None = None


def closest_uncovered(uncovered: np.ndarray, question_vector: np.ndarray) -> float:
    """The cosine of the uncovered-topic question nearest the question (-1 when there are none)."""
    return float((uncovered @ question_vector).max()) if len(uncovered) else -1.0


def judge(
    fusion: Fusion,
    features: np.ndarray,
    language: str,
    boosts: np.ndarray,
    uncovered_cosine: float,
    limit: int,
) -> Verdict:
    """The verdict for a question in ``language`` whose weighed entries have ``features`` and
    ``boosts``, and whose nearest uncovered-topic question is at ``uncovered_cosine``: at most
    ``limit`` entries, by boosted probability (ties: the library's order), none when even the most
    probable is below the threshold, or when the question is closer to an uncovered topic than to
    every entry text. Below the first come the next most probable, whatever their probability."""
    _, probability = fusion.decide(features, language)
    score = probability * boosts
    best = int(np.argmax(score))
    best_probability = float(probability[best])
    if best_probability < fusion.threshold:
        return Verdict([], best, best_probability, score, Refusal.BELOW_THRESHOLD)
    if uncovered_cosine > float(feature_of(features, "dense").max()):
        return Verdict([], best, best_probability, score, Refusal.UNCOVERED_TOPIC)
    kept = np.argpartition(-score, limit - 1)[:limit] if len(score) > limit else np.arange(len(score))
    ranked = sorted(kept.tolist(), key=lambda n: (-float(score[n]), n))
    return Verdict(ranked, best, best_probability, score)
