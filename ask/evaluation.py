"""How well the ask engine answers: the publisher's labelled questions (``inputs.ask_inputs``) scored.

The dev split is what the encoder is trained on and the decision fitted on (``fit``); the test
split is only ever scored here: a build records its figures with the release, ``make bench-ask``
reports them against the targets, and the regression test holds them to their floors.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from ask.engine import AskEngine
from ask.fusion import FusionModel, Question, fit
from ask.index import Match
from ask.language import LANGUAGES
from inputs.ask_inputs import LabelledQuestion

MRR_DEPTH = 5

# The quality the engine must reach on the test split; ``make bench-ask`` prints them beside what it reaches.
TARGET_TOP1_OVERALL = 0.90
TARGET_TOP1_PER_LANGUAGE = 0.85
TARGET_FALSE_NEGATIVE_RATE = 0.05
TARGET_FALSE_POSITIVE_RATE = 0.05

# The regression test fails below these: the test split's figures of the engine as shipped with
# the encoder trained on the demo's library (2026-11-26: top-1 0.780 overall, 0.720 in the lowest
# language, false negatives 0.175, false positives 0.036; the frozen encoder's were 0.686, 0.634,
# 0.226 and 0.036), less a little for arithmetic that differs between machines. They sit under the
# targets, which the engine does not reach yet (benchmarks/RESULTS.md): raise them as it improves,
# never lower them.
FLOOR_TOP1_OVERALL = 0.76
FLOOR_TOP1_PER_LANGUAGE = 0.70
FLOOR_FALSE_NEGATIVE_RATE = 0.19
FLOOR_FALSE_POSITIVE_RATE = 0.05

# A labelled question may not copy this many consecutive words of an entry (Han: characters).
COPIED_RUN = {language: 7 if language == "zh" else 4 for language in LANGUAGES}
_WORD = re.compile(r"[\w\u0300-\u036f\u064b-\u065f\u0670\u06d6-\u06ed\u0a00-\u0a7f]+")

Search = Callable[[str, int], list[Match]]


@dataclass(frozen=True)
class Outcome:
    item: LabelledQuestion
    ids: tuple[str, ...]  # the entries returned, best first

    @property
    def rank(self) -> int | None:
        """1-based rank of the first right entry within the first ``MRR_DEPTH`` results."""
        ranks = [n for n, entry in enumerate(self.ids[:MRR_DEPTH], 1) if entry in self.item.expected]
        return ranks[0] if ranks else None


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
    def of(cls, label: str, outcomes: Sequence[Outcome]) -> Scores:
        answerable = [o for o in outcomes if o.item.expected]
        unrelated = [o for o in outcomes if not o.item.expected]
        share = lambda hits, of: sum(hits) / len(of) if of else 0.0  # noqa: E731
        return cls(
            label=label,
            answerable=len(answerable),
            unrelated=len(unrelated),
            top1=share([o.rank == 1 for o in answerable], answerable),
            mrr=share([1 / o.rank if o.rank else 0.0 for o in answerable], answerable),
            false_positive_rate=share([bool(o.ids) for o in unrelated], unrelated),
            false_negative_rate=share([not o.ids for o in answerable], answerable),
        )


def run(search: Search, questions: Iterable[LabelledQuestion]) -> list[Outcome]:
    """Ask every question, as the API does (default limit 5)."""
    return [Outcome(item, tuple(m.entry.id for m in search(item.question, MRR_DEPTH))) for item in questions]


def score(outcomes: Sequence[Outcome]) -> list[Scores]:
    """Scores per language (in ``LANGUAGES`` order), then overall."""
    by_language = [Scores.of(lang, [o for o in outcomes if o.item.language == lang]) for lang in LANGUAGES]
    return [s for s in by_language if s.answerable or s.unrelated] + [Scores.of("all", outcomes)]


def fusion_questions(engine: AskEngine, questions: Sequence[LabelledQuestion]) -> list[Question]:
    """The fusion features of every labelled question, to fit the model on (the dev split only)."""
    ids = np.array([entry.id for entry in engine.entries])
    vectors = engine.encoder.texts([item.question for item in questions])
    questions_read = []
    for item, vector in zip(questions, vectors, strict=True):
        # The language the engine itself reads from the question (Greeklish reads as Latin), as when serving.
        language = engine.lexical.question_language(item.question)
        features = engine.features(item.question, vector, language)
        questions_read.append(Question(language, features, np.isin(ids, item.expected)))
    return questions_read


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def fit_on_dev(engine: AskEngine, dev: Sequence[LabelledQuestion], fitted_on: str) -> FusionModel:
    """The fusion model fitted on the dev split (``dev``), the only split anything is fitted on."""
    if any(question.split != "dev" for question in dev):
        raise ValueError("the fusion model is fitted on the dev split only")
    return fit(fusion_questions(engine, dev), fitted_on)


def figures(scores: Sequence[Scores]) -> dict[str, dict[str, float | int]]:
    """Scores by label (each language, then ``all``), as a release records them."""
    return {s.label: {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(s).items()} for s in scores}


def words(text: str, language: str) -> list[str]:
    """The words of ``text`` as the copy rule counts them: Han characters one by one."""
    text = unicodedata.normalize("NFC", text).lower()
    if language == "zh":
        return [character for character in text if character.isalnum()]
    return _WORD.findall(text)


def runs(sequence: list[str], length: int) -> set[tuple[str, ...]]:
    """Every run of ``length`` consecutive words of ``sequence``."""
    return {tuple(sequence[i : i + length]) for i in range(len(sequence) - length + 1)}
