"""Fusing dense and lexical evidence: one ranking, and one decision whether anything answers.

Two small models over the features of ``ask.decision.features``, both fitted on the development
split of the labelled questions (``inputs.ask_inputs``) only (``fit``):

- the **ranking**: a conditional logit, a weighted sum of ``FEATURES`` whose softmax over the
  entries is the probability that each is the one the question means. Entries are ranked by it.
- the **decision**: a logistic model over ``DECISION_FEATURES`` (an entry's fused score, its
  margin over the best other entry's, and its own dense and lexical evidence), with a bias per
  language of the question (dialectal Arabic sits further from every entry than Mandarin does),
  giving the probability that the entry is a right answer at all. A question whose best entry is
  below ``threshold`` gets the no-match answer. (Coverage is there so that a word the library
  never uses counts against a match; on the dev split it weighs little, and a near-domain
  question such as "best electric toothbrush" can still pass for a bamboo-toothbrush one.)

The pipeline fits both on the dev split for the encoder a build uses (``pipelines/assets/ask_decision.py``)
and publishes them with the release, so nothing in them can have come from the test split.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from ask.decision.features import DECISION_FEATURES, FEATURES, decision_rows
from foundations.ask_limits import ASK_DEFAULT_LIMIT
from warehouse.reference_data import LANGUAGES

RIDGE = 1e-3  # on standardised weights: keeps a few hundred questions from being overfitted
DECISION_CANDIDATES = ASK_DEFAULT_LIMIT  # per question, the entries the decision model is fitted on: what a reader gets


@dataclass(frozen=True)
class Fusion:
    """The fitted ranking and decision: what a release answers questions with."""

    ranking: dict[str, float]  # weight per FEATURES name
    decision: dict[str, float]  # weight per DECISION_FEATURES name
    decision_bias: dict[str, float]  # per language of the question: some sit closer to everything
    threshold: float  # decision probability below which an entry is no answer
    fitted_on: str  # what the fit saw

    def fused(self, features: np.ndarray) -> np.ndarray:
        """The ranking score of each row of ``features`` (columns in ``FEATURES`` order)."""
        return features @ np.array([self.ranking[name] for name in FEATURES], dtype=np.float32)

    def decision_features(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(fused score, ``DECISION_FEATURES`` columns) per entry."""
        fused = self.fused(features)
        return fused, decision_rows(fused, features)

    def decide(self, features: np.ndarray, language: str) -> tuple[np.ndarray, np.ndarray]:
        """(fused score, probability of being a right answer) per entry, for a question in ``language``."""
        fused, decision = self.decision_features(features)
        weights = np.array([self.decision[name] for name in DECISION_FEATURES], dtype=np.float32)
        return fused, 1.0 / (1.0 + np.exp(-(decision @ weights + self.decision_bias[language])))

    @classmethod
    def unfitted(cls) -> Fusion:
        """A model of zero weights: what an engine carries while its features are gathered to fit one."""
        return cls(
            dict.fromkeys(FEATURES, 0.0),
            dict.fromkeys(DECISION_FEATURES, 0.0),
            dict.fromkeys(LANGUAGES, 0.0),
            0.5,
            "nothing",
        )

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Fusion:
        return cls(**json.loads(text))


@dataclass(frozen=True)
class Question:
    """One labelled question's features for every entry, and which entries are right."""

    language: str
    features: np.ndarray  # (entries, len(FEATURES))
    right: np.ndarray  # bool per entry; all False for a question the library cannot answer


def _newton(
    objective: Callable[[np.ndarray], float],
    gradient_and_curvature: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    size: int,
    iterations: int = 100,
) -> np.ndarray:
    """Maximise a concave objective by Newton steps, halved until the objective does not fall."""
    beta = np.zeros(size)
    for _ in range(iterations):
        gradient, curvature = gradient_and_curvature(beta)
        step = np.linalg.solve(curvature, gradient)
        current, scale = objective(beta), 1.0
        while objective(beta + scale * step) < current and scale > 1e-6:
            scale /= 2
        beta = beta + scale * step
        if np.abs(scale * step).max() < 1e-9:
            break
    return beta


def _standardised(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    return (x - mean) / scale, mean, scale


def conditional_logit(groups: Sequence[tuple[np.ndarray, np.ndarray]], ridge: float = RIDGE) -> np.ndarray:
    """Weights w maximising sum over groups of log P(a right row), P = softmax(x @ w) over the group's rows."""
    stacked, mean, scale = _standardised(np.vstack([x for x, _ in groups]).astype(np.float64))
    standard = [((x - mean) / scale, right) for x, right in groups]
    penalty = ridge * len(groups)

    def objective(w: np.ndarray) -> float:
        total = sum(np.logaddexp.reduce((x @ w)[right]) - np.logaddexp.reduce(x @ w) for x, right in standard)
        return float(total - penalty / 2 * w @ w)

    def gradient_and_curvature(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        gradient, curvature = -penalty * w, penalty * np.eye(len(w))
        for x, right in standard:
            z = x @ w
            p = np.exp(z - z.max())
            p /= p.sum()
            chosen = np.exp(np.where(right, z, -np.inf) - z[right].max())
            chosen /= chosen.sum()
            mean_x = p @ x
            gradient += chosen @ x - mean_x
            curvature += (x.T * p) @ x - np.outer(mean_x, mean_x)  # Fisher's curvature: always positive
        return gradient, curvature

    return _newton(objective, gradient_and_curvature, stacked.shape[1]) / scale


def logistic_regression(x: np.ndarray, y: np.ndarray, ridge: float = RIDGE) -> tuple[np.ndarray, float]:
    """Weights and bias maximising the ridge-penalised likelihood of ``y`` given ``x``."""
    standard, mean, scale = _standardised(x.astype(np.float64))
    design = np.hstack([standard, np.ones((len(x), 1))])
    penalty = np.diag([ridge] * x.shape[1] + [0.0]) * len(x)

    def objective(beta: np.ndarray) -> float:
        z = design @ beta
        return float(y @ z - np.logaddexp(0, z).sum() - beta @ penalty @ beta / 2)

    def gradient_and_curvature(beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = 1 / (1 + np.exp(-(design @ beta)))
        return design.T @ (y - p) - penalty @ beta, (design * (p * (1 - p))[:, None]).T @ design + penalty

    beta = _newton(objective, gradient_and_curvature, design.shape[1])
    weights = beta[:-1] / scale
    return weights, float(beta[-1] - mean @ weights)


@dataclass(frozen=True)
class Verdicts:
    """Each question's best entry under a model: its decision probability, whether it is right, the language."""

    languages: np.ndarray
    best: np.ndarray
    right: np.ndarray
    answerable: np.ndarray

    @classmethod
    def of(cls, model: Fusion, questions: Sequence[Question]) -> Verdicts:
        best, right = [], []
        for question in questions:
            _, probability = model.decide(question.features, question.language)
            top = int(np.argmax(probability))
            best.append(float(probability[top]))
            right.append(bool(question.right[top]))
        return cls(
            np.array([q.language for q in questions]),
            np.array(best),
            np.array(right),
            np.array([bool(q.right.any()) for q in questions]),
        )

    def rates(self, threshold: float, mask: np.ndarray | None = None) -> tuple[float, float, float]:
        """(top-1 accuracy of answerable questions, false-positive rate, false-negative rate)."""
        mask = np.ones(len(self.best), bool) if mask is None else mask
        answered = self.best >= threshold
        answerable, unanswerable = mask & self.answerable, mask & ~self.answerable
        share = lambda hits, of: float(hits[of].sum() / max(of.sum(), 1))  # noqa: E731
        return share(answered & self.right, answerable), share(answered, unanswerable), share(~answered, answerable)


def fit(questions: Sequence[Question], fitted_on: str) -> Fusion:
    """The fusion fitted on the development questions.

    The ranking is fitted on the answerable questions; the decision on every (question, entry)
    pair of each question's ``DECISION_CANDIDATES`` best-ranked entries, right or not; the
    threshold is the one that maximises top-1 accuracy minus the false-positive rate, averaged
    over the languages so that each counts the same.
    """
    ranking_weights = conditional_logit([(q.features, q.right) for q in questions if q.right.any()])
    ranking = {name: round(float(w), 6) for name, w in zip(FEATURES, ranking_weights, strict=True)}
    placeholder = Fusion(ranking, dict.fromkeys(DECISION_FEATURES, 0.0), {}, 0.0, fitted_on)
    rows, labels = [], []
    for question in questions:
        fused, decision = placeholder.decision_features(question.features)
        best = np.argsort(-fused)[:DECISION_CANDIDATES]
        language = np.array([question.language == lang for lang in LANGUAGES], dtype=np.float64)  # one-hot: its bias
        rows.append(np.hstack([decision[best], np.tile(language, (len(best), 1))]))
        labels.append(question.right[best])
    weights, bias = logistic_regression(np.vstack(rows), np.concatenate(labels).astype(np.float64))
    model = Fusion(
        ranking,
        # The weights past DECISION_FEATURES are the languages' one-hot columns: their biases.
        {name: round(float(w), 6) for name, w in zip(DECISION_FEATURES, weights, strict=False)},
        {lang: round(bias + float(w), 6) for lang, w in zip(LANGUAGES, weights[len(DECISION_FEATURES) :], strict=True)},
        0.0,
        fitted_on,
    )
    verdicts = Verdicts.of(model, questions)
    levels = np.unique(verdicts.best)
    candidates = (levels[:-1] + levels[1:]) / 2 if len(levels) > 1 else levels
    languages = np.unique(verdicts.languages)

    def merit(threshold: float) -> float:
        rates = [verdicts.rates(threshold, verdicts.languages == lang) for lang in languages]
        return float(np.mean([top1 - false_positive for top1, false_positive, _ in rates]))

    threshold = max(candidates.tolist(), key=lambda t: (merit(t), -t))
    return Fusion(model.ranking, model.decision, model.decision_bias, round(threshold, 6), fitted_on)
