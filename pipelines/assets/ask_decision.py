"""The ask engine's decision, fitted on the dev split with the encoder this build embeds with.

Training moves every cosine, so the ranking and the no-match threshold (``ask.decision.fusion``) are
fitted again for each encoder, on the publisher's dev split only. The test split is then
scored, never fitted: its figures are published with the model, so a release says how well its
ask engine answers questions nothing was fitted to.

Fitting embeds every labelled question (about a minute on two busy cores), so the decision is
kept while nothing it depends on changed (``pipelines.ask_keys.decision_key``): the encoder, the lexical index,
the vectors, the entries' tables and both splits; a kept decision loads no engine.
"""

import json
import time
from collections.abc import Callable

import numpy as np
import pyarrow as pa
from dagster import AssetExecutionContext, AssetKey, asset

from ask.decision.fusion import Fusion
from ask.dense.cache import text_key
from ask.dense.embedding import known_vectors
from ask.dense.encoder import Encoder
from ask.engine import AskEngine
from ask.evaluation import fit_on_dev, run, split_figures
from ask.model.store import ModelStore
from foundations.settings import Settings
from inputs.ask_inputs import FITTED_SPLIT, HELD_OUT_SPLIT, LABELLED_SETS, digest_of, load_questions
from pipelines.ask_keys import decision_key, encoder_model_id, held_decision_key, split_digests
from pipelines.kept_work import kept, keyed_result
from pipelines.resources import SettingsResource, WarehouseResource
from release.local_store import rows_of
from warehouse.contract import (
    ASK_DECISION_TABLE,
    ASK_TABLES,
    MARTS_SCHEMA,
    table_query,
)
from warehouse.reference_data import LANGUAGES
from warehouse.relation_keys import RelationContents


class NoDevQuestions(RuntimeError):
    """A library without labelled questions to fit the decision on."""


def question_vectors(
    questions: list[str], encoder: Encoder, config: Settings, log: Callable[[str], None]
) -> dict[str, np.ndarray]:
    """The labelled questions' vectors, by question, through the vector cache and the inputs'
    shipped vectors like the entries' texts: a build whose questions and model did not change
    embeds none of them (they are about 2,600, a minute and a half on two cores)."""
    by_key = {text_key(question): question for question in questions}
    vectors, _ = known_vectors(by_key, encoder, config.inputs, config.embedding_cache, log)
    return {by_key[key]: vector for key, vector in vectors.items()}


@asset(
    key=AssetKey([MARTS_SCHEMA, ASK_DECISION_TABLE]),
    group_name="ask",
    deps=[
        AssetKey([MARTS_SCHEMA, table])
        for table in (*(t for t in ASK_TABLES if t != ASK_DECISION_TABLE), "recommendations", "answers")
    ],
    description="The ask engine's ranking and no-match decision fitted on the dev split with this build's "
    "encoder, and the test split's figures (never fitted on).",
    kinds={"python", "duckdb"},
)
def ask_decision(context: AssetExecutionContext, warehouse: WarehouseResource, settings: SettingsResource):
    started = time.perf_counter()
    config = settings.settings
    dev = load_questions(config.inputs, FITTED_SPLIT, LANGUAGES)
    if not dev:
        dev_folders = [f"{folder}/{FITTED_SPLIT}/" for folder in LABELLED_SETS.values()]
        raise NoDevQuestions(
            f"no labelled dev questions under {config.inputs} ({', '.join(dev_folders)}): the ask engine's decision "
            "is fitted on them; add <language>.jsonl files there (demo/README.md shows the format)"
        )
    splits = split_digests(config.inputs)
    with warehouse.connect() as connection:
        model_id = encoder_model_id(connection)
        inputs_sha256 = decision_key(RelationContents.of_default(connection), model_id, splits)
        if held_decision_key(connection) == inputs_sha256:
            return kept(context.log.info, "the decision", inputs_sha256, {"model": model_id})[0]
        tables = {name: rows_of(connection, table_query(name, MARTS_SCHEMA)) for name in ("recommendations", "answers")}
        engine = AskEngine.from_snapshot(
            tables, connection, ModelStore(config.ask_models), Fusion.unfitted(), schema=MARTS_SCHEMA
        )
    known = {entry.id for entry in engine.entries}
    dev = [q for q in dev if not q.expected or set(q.expected) & known]
    test = [
        q for q in load_questions(config.inputs, HELD_OUT_SPLIT, LANGUAGES) if not q.expected or set(q.expected) & known
    ]
    embedded = question_vectors([q.question for q in dev + test], engine.encoder, config, context.log.info)
    fitted_on = (
        f"{FITTED_SPLIT} split, {len(dev)} questions, sha256 {digest_of(config.inputs, FITTED_SPLIT, LANGUAGES)}"
    )
    decision = fit_on_dev(engine, dev, fitted_on, embedded)
    engine.fusion = decision
    test_figures = split_figures(run(engine.search, test, embedded))
    table = pa.table(
        {
            "model_id": pa.array([engine.encoder.model_id], pa.string()),
            "decision": pa.array([decision.to_json()], pa.string()),
            "test_figures": pa.array([json.dumps(test_figures, sort_keys=True)], pa.string()),
            "test_split_sha256": pa.array([splits[1]], pa.string()),
            "inputs_sha256": pa.array([inputs_sha256], pa.string()),
        }
    )
    with warehouse.connect() as connection:
        connection.register("incoming", table)
        connection.execute(
            f"CREATE OR REPLACE TABLE {MARTS_SCHEMA}.{ASK_DECISION_TABLE} AS SELECT model_id, "
            "decision::JSON AS decision, test_figures::JSON AS test_figures, test_split_sha256, inputs_sha256 "
            "FROM incoming"
        )
    overall = {name: of_set["by_language"]["all"] for name, of_set in test_figures.items()}
    context.log.info(
        f"decision fitted on {len(dev)} dev questions (threshold {decision.threshold:.3f}); test split: "
        + (
            "; ".join(
                f"{name}: "
                + ", ".join(f"{k} {figures[k]}" for k in ("top1", "false_negative_rate", "false_positive_rate"))
                for name, figures in overall.items()
            )
            or "none"
        )
    )
    return keyed_result(
        inputs_sha256,
        False,
        {
            "model": engine.encoder.model_id,
            "threshold": decision.threshold,
            "dev_questions": len(dev),
            "test_questions": len(test),
            **{
                f"test_{name}_{label}_top1": s["top1"]
                for name, of_set in test_figures.items()
                for grouping in ("by_language", "by_kind")
                for label, s in of_set[grouping].items()
            },
            **{f"test_{name}_false_negative_rate": figures["false_negative_rate"] for name, figures in overall.items()},
            **{f"test_{name}_false_positive_rate": figures["false_positive_rate"] for name, figures in overall.items()},
            "seconds": round(time.perf_counter() - started, 2),
        },
    )
