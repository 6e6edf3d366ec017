"""How well the ask engine answers: the publisher's labelled questions (``inputs.ask_inputs``) scored.

It asks the engine, so it stands above it, beside ``ask.engine``: the decision (``ask.decision``)
is beneath the engine and imports nothing above it.

The dev split is what the encoder is trained on and the fusion fitted on (``fit_on_dev``); the
test split is only ever scored here: a build records its figures with the release, ``make
bench-ask`` reports them against the targets, and the regression test holds them to their floors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from ask.decision.fusion import Fusion, Question, fit
from ask.engine import AskEngine
from ask.entries import Match
from foundations.ask_limits import ASK_DEFAULT_LIMIT
from inputs.ask_inputs import FITTED_SPLIT, LabelledQuestion
from warehouse.reference_data import LANGUAGES

MRR_DEPTH = ASK_DEFAULT_LIMIT  # what a reader gets by default: a right entry further down scores nothing

Search = Callable[..., list[Match]]  # (question, limit[, question vector]) -> matches


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


def run(
    search: Search, questions: Iterable[LabelledQuestion], embedded: Mapping[str, np.ndarray] | None = None
) -> list[Outcome]:
    """Ask every question, as the API does (its default limit, ``MRR_DEPTH``); with the question's vector when
    ``embedded`` holds it (made by the searching engine's encoder), so it is not embedded again."""
    embedded = embedded or {}

    def ask(question: str) -> tuple[str, ...]:
        vector = embedded.get(question)
        matches = search(question, MRR_DEPTH) if vector is None else search(question, MRR_DEPTH, vector)
        return tuple(match.entry.id for match in matches)

    return [Outcome(item, ask(item.question)) for item in questions]


def score(outcomes: Sequence[Outcome]) -> list[Scores]:
    """Scores per language (in ``LANGUAGES`` order), then overall."""
    by_language = [Scores.of(lang, [o for o in outcomes if o.item.language == lang]) for lang in LANGUAGES]
    return [s for s in by_language if s.answerable or s.unrelated] + [Scores.of("all", outcomes)]


def score_by_kind(outcomes: Sequence[Outcome]) -> list[Scores]:
    """Scores per kind of question (in the order they first come), then overall."""
    kinds = list(dict.fromkeys(o.item.kind for o in outcomes))
    return [Scores.of(kind, [o for o in outcomes if o.item.kind == kind]) for kind in kinds] + [
        Scores.of("all", outcomes)
    ]


def split_figures(outcomes: Sequence[Outcome]) -> dict[str, dict[str, dict[str, dict[str, float | int]]]]:
    """A split's figures as a release records them: per labelled set, by language and by kind."""
    sets = list(dict.fromkeys(o.item.labelled_set for o in outcomes))
    return {
        name: {
            "by_language": figures(score(of_set)),
            "by_kind": figures(score_by_kind(of_set)),
        }
        for name in sets
        if (of_set := [o for o in outcomes if o.item.labelled_set == name])
    }


def fusion_questions(
    engine: AskEngine, questions: Sequence[LabelledQuestion], embedded: Mapping[str, np.ndarray] | None = None
) -> list[Question]:
    """The fusion features of every labelled question, to fit the model on (the dev split only);
    ``embedded`` holds question vectors already made by the engine's encoder (the rest are embedded)."""
    ids = np.array([entry.id for entry in engine.entries])
    embedded = embedded or {}
    missing = [item.question for item in questions if item.question not in embedded]
    made = dict(zip(missing, engine.encoder.texts(missing), strict=True)) if missing else {}
    vectors = [embedded.get(item.question, made.get(item.question)) for item in questions]
    questions_read = []
    for item, vector in zip(questions, vectors, strict=True):
        # The language the engine itself reads from the question (Greeklish reads as Latin), as when serving.
        language = engine.lexical.question_language(item.question)
        weighed, features = engine.features(item.question, vector, language)
        questions_read.append(Question(language, features, np.isin(ids[weighed], item.expected)))
    return questions_read


def fit_on_dev(
    engine: AskEngine,
    dev: Sequence[LabelledQuestion],
    fitted_on: str,
    embedded: Mapping[str, np.ndarray] | None = None,
) -> Fusion:
    """The fusion fitted on the dev split (``dev``), the only split anything is fitted on."""
    if any(question.split != FITTED_SPLIT for question in dev):
        raise ValueError(f"the fusion is fitted on the {FITTED_SPLIT} split only")
    return fit(fusion_questions(engine, dev, embedded), fitted_on)


def figures(scores: Sequence[Scores]) -> dict[str, dict[str, float | int]]:
    """Scores by label (each language, then ``all``), as a release records them."""
    return {s.label: {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(s).items()} for s in scores}
