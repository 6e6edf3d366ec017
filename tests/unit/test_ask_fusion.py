"""The fusion of dense and lexical evidence: its fitting, its ranking and its no-match rule."""

from __future__ import annotations

import numpy as np
import pytest

from ask.decision.features import DECISION_FEATURES, FEATURES, margins
from ask.decision.fusion import (
    Fusion,
    Question,
    Verdicts,
    conditional_logit,
    fit,
    logistic_regression,
)
from ask.decision.verdict import BENCH_EVIDENCE_BOOST
from ask.dense.encoder import DIMENSIONS, Encoder
from ask.dense.vectors import CANDIDATES, EntryVectors, VectorsError
from ask.engine import AskEngine
from ask.lexical.index import AskIndex
from ask.model.store import ModelStore
from foundations.settings import load_settings
from warehouse.reference_data import LANGUAGES

RNG = np.random.default_rng(7)


def translated(text: str) -> dict[str, str]:
    return dict.fromkeys(LANGUAGES, text)


def recommendation(slug: str, question: str, figure: float | None) -> dict:
    return {
        "scenario_slug": slug,
        "question": translated(question),
        "scenario": translated(question),
        "answer": translated("Our pick."),
        "evidence": translated("Measured."),
        "brand": "Brand",
        "product_name": "Model",
        "category_name": translated("Things"),
        "figure_value": figure,
    }


def answer(answer_id: str, question: str) -> dict:
    return {
        "answer_id": answer_id,
        "question": translated(question),
        "answer": translated("Because."),
        "category_slug": None,
    }


def test_margins_are_each_value_above_the_best_other():
    assert margins(np.array([0.9, 0.7, 0.8])).round(3).tolist() == [0.1, -0.2, -0.1]


def test_the_conditional_logit_learns_which_feature_picks_the_right_entry():
    groups = []
    for _ in range(200):
        x = RNG.normal(size=(10, 2))
        right = np.zeros(10, bool)
        right[np.argmax(x[:, 0] + 0.3 * RNG.normal(size=10))] = True  # feature 0 decides; feature 1 is noise
        groups.append((x, right))
    weights = conditional_logit(groups)
    assert weights[0] > 1 and abs(weights[1]) < weights[0] / 5


def test_logistic_regression_separates_what_a_feature_separates():
    x = RNG.normal(size=(400, 1))
    y = (x[:, 0] + 0.2 * RNG.normal(size=400) > 0.5).astype(float)
    weights, bias = logistic_regression(x, y)
    p = 1 / (1 + np.exp(-(x @ weights + bias)))
    assert ((p > 0.5) == (y == 1)).mean() > 0.9


def labelled(language: str, features: np.ndarray, right: int | None) -> Question:
    marks = np.zeros(len(features), bool)
    if right is not None:
        marks[right] = True
    return Question(language, features.astype(np.float32), marks)


def test_fit_ranks_by_the_evidence_and_sets_a_threshold_between_answerable_and_not():
    questions = []
    for n in range(120):
        features = RNG.uniform(0.0, 0.3, size=(8, len(FEATURES)))
        answerable = n % 3 != 0
        if answerable:
            features[n % 8] += 0.6  # the right entry stands out on every feature
        questions.append(labelled("en" if n % 2 else "zh", features, n % 8 if answerable else None))
    model = fit(questions, "synthetic")
    assert set(model.ranking) == set(FEATURES) and set(model.decision) == set(DECISION_FEATURES)
    top1, false_positives, false_negatives = Verdicts.of(model, questions).rates(model.threshold)
    assert top1 > 0.95 and false_positives < 0.05 and false_negatives < 0.05
    assert 0 < model.threshold < 1


def engine_of(recommendations: list[dict], answers: list[dict], vectors: np.ndarray, fusion: Fusion) -> AskEngine:
    lexical = AskIndex.from_tables(recommendations, answers, [])
    entry_of_text = np.arange(len(vectors), dtype=np.int32)
    return AskEngine(
        lexical,
        EntryVectors(entry_of_text, vectors, len(vectors)),
        Encoder.base(ModelStore(load_settings().ask_models)),
        fusion,
    )


DENSE_ONLY = Fusion(
    ranking={"dense": 10.0, "dense_over_mean": 0.0, "dense_margin": 0.0, "lexical": 0.0, "coverage": 0.0},
    decision={"fused": 1.0, "fused_margin": 0.0, "dense": 0.0, "dense_over_mean": 0.0, "lexical": 0.0, "coverage": 0.0},
    decision_bias=dict.fromkeys(LANGUAGES, -5.0),
    threshold=0.5,
    fitted_on="by hand",
)


def unit(vector: np.ndarray) -> np.ndarray:
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def test_a_bench_backed_recommendation_outranks_an_equally_likely_library_answer():
    shared = unit(RNG.normal(size=DIMENSIONS))
    engine = engine_of(
        [recommendation("kettle-pick", "which kettle", figure=12.0)],
        [answer("kettle-care", "which kettle")],
        np.stack([shared, shared]),
        DENSE_ONLY,
    )
    matches = engine.search("which kettle", 5, question_vector=shared)
    assert [m.entry.id for m in matches] == ["kettle-pick", "kettle-care"]
    assert matches[0].score == pytest.approx(matches[1].score * BENCH_EVIDENCE_BOOST)


def test_a_question_whose_best_entry_is_below_the_threshold_gets_no_match():
    near, far = unit(RNG.normal(size=DIMENSIONS)), unit(RNG.normal(size=DIMENSIONS))
    engine = engine_of([], [answer("a", "first"), answer("b", "second")], np.stack([near, far]), DENSE_ONLY)
    matches = engine.search("first", 5, question_vector=near)
    assert [m.entry.id for m in matches] == ["a", "b"] and matches[0].score > 0.5 > matches[1].score
    assert engine.search("something else", 5, question_vector=-near) == []


def test_vectors_must_cover_every_entry():
    with pytest.raises(VectorsError, match="1 of 2 ask entries have no vector"):
        EntryVectors(np.zeros(1, np.int32), np.ones((1, DIMENSIONS), np.float32), 2)


def test_a_large_library_scores_its_candidates_exactly_and_the_rest_by_centroid():
    entries = 600
    texts = np.stack([unit(RNG.normal(size=DIMENSIONS)) for _ in range(entries * 2)])
    vectors = EntryVectors(np.repeat(np.arange(entries, dtype=np.int32), 2), texts, entries)
    question = texts[2 * 417 + 1]  # the second text of entry 417
    near = vectors.similarities(question)
    assert len(near.entries) == CANDIDATES and np.all(np.diff(near.entries) > 0)
    assert int(near.entries[np.argmax(near.best)]) == 417 and near.best.max() == pytest.approx(1.0, abs=1e-3)
    exact = np.maximum(texts[0::2] @ question, texts[1::2] @ question)
    assert near.entries[np.argsort(-near.best)[:5]].tolist() == np.argsort(-exact)[:5].tolist()
    assert near.centroid_mean == pytest.approx(float((vectors.centroids @ question).mean()), abs=1e-6)
    named = vectors.similarities(question, also=np.array([3, 599]))
    assert {3, 599} <= set(named.entries.tolist())  # the lexical candidates are weighed whatever their centroid


def test_a_large_library_keeps_its_texts_in_a_quarter_of_the_memory_and_its_cosines_within_a_few_thousandths():
    entries = 600
    texts = np.stack([unit(RNG.normal(size=DIMENSIONS)) for _ in range(entries * 3)]).astype(np.float32)
    order = RNG.permutation(entries * 3)  # rows in any order: the scales follow their rows
    entry_of_text = np.repeat(np.arange(entries, dtype=np.int32), 3)[order]
    vectors = EntryVectors(entry_of_text, texts[order], entries)
    assert vectors.texts.dtype == np.int8 and vectors.texts.nbytes == texts.nbytes // 4
    question = unit(RNG.normal(size=DIMENSIONS)).astype(np.float32)
    candidates = np.arange(entries)  # every entry named: all scored from their texts
    best = vectors.similarities(question, also=candidates).best
    exact = (texts @ question).reshape(entries, 3).max(axis=1)
    assert np.abs(best - exact).max() < 3e-3 and np.abs(best - exact).mean() < 1e-3
