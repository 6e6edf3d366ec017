"""The ask engine's entry vectors: every text of ``marts.ask_texts`` embedded, for the snapshot.

The server embeds only the incoming question; everything it compares that question with is
computed here, once per text, with the encoder ``marts.ask_encoder`` chose, by
``ask.dense.embedding`` (shipped or cached vectors are not embedded again).
"""

import time
from collections.abc import Callable

import numpy as np
import pyarrow as pa
from dagster import AssetExecutionContext, AssetKey, AssetsDefinition, MaterializeResult, asset

from ask.dense.embedding import known_vectors
from ask.dense.encoder import DIMENSIONS
from ask.engine import encoder_of
from ask.model.store import ModelStore
from pipelines.ask_keys import ENTRY_VECTORS, EmbeddedTexts, encoder_model_id
from pipelines.kept_work import kept, keyed_result
from pipelines.resources import SettingsResource, WarehouseResource
from warehouse.contract import ASK_ENCODER_TABLE, MARTS_SCHEMA
from warehouse.relation_keys import RelationContents, held_key, hold_key


def embed_into(
    warehouse: WarehouseResource, settings: SettingsResource, made: EmbeddedTexts, log: Callable[[str], None]
) -> MaterializeResult:
    """Embed the texts ``made`` reads with the encoder ``marts.ask_encoder`` names (through the
    vector cache) and write its table of them. The asset's result: the model, how many distinct
    texts there were, how many were embedded now and how many came from the cache. Kept as it is
    when the model and the source's rows are those it was made from (a tester's sheet that changes
    no text)."""
    started = time.perf_counter()
    with warehouse.connect() as connection:
        model_id = encoder_model_id(connection)
        key = made.key(RelationContents.of_default(connection), model_id)
        if held_key(connection, MARTS_SCHEMA, made.table) == key:
            [(rows,)] = connection.execute(f"SELECT count(*) FROM ({made.texts_sql})").fetchall()  # distinct texts
            metadata = {"dagster/row_count": rows, "model": model_id, "embedded": 0, "cached": rows}  # as before
            return kept(log, f"{MARTS_SCHEMA}.{made.table}", key, metadata)[0]
        texts = dict(connection.execute(made.texts_sql).fetchall())
        encoder = encoder_of(connection, ModelStore(settings.settings.ask_models), MARTS_SCHEMA)
    config = settings.settings
    vectors, embedded = known_vectors(texts, encoder, config.inputs, config.embedding_cache, log)
    hashes = sorted(texts)
    matrix = np.stack([vectors[sha] for sha in hashes]) if hashes else np.empty((0, DIMENSIONS), np.float32)
    incoming = pa.table(
        {
            "sha256": pa.array(hashes, pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1), pa.float32()), DIMENSIONS),
        }
    )
    with warehouse.connect() as connection:
        connection.register("incoming", incoming)
        connection.execute(made.table_sql, [encoder.model_id])
        hold_key(connection, MARTS_SCHEMA, made.table, key)
    seconds = time.perf_counter() - started
    log(f"{len(hashes)} distinct texts: {embedded} embedded, {len(hashes) - embedded} cached ({seconds:.1f} s)")
    metadata = {
        "dagster/row_count": len(hashes),
        "model": encoder.model_id,
        "embedded": embedded,
        "cached": len(hashes) - embedded,
        "seconds": round(seconds, 2),
    }
    return keyed_result(key, False, metadata)


def embedded_texts_asset(made: EmbeddedTexts, description: str) -> AssetsDefinition:
    """The asset that writes ``made``'s table from the texts its source holds, embedded with the ask
    encoder. The entry texts and the uncovered topics' questions are embedded the same way; only
    what is read and what is written differ."""

    @asset(
        key=AssetKey([MARTS_SCHEMA, made.table]),
        group_name="ask",
        deps=[AssetKey(list(made.source)), AssetKey([MARTS_SCHEMA, ASK_ENCODER_TABLE])],
        description=description,
        kinds={"python", "duckdb"},
    )
    def embedded_texts(
        context: AssetExecutionContext, warehouse: WarehouseResource, settings: SettingsResource
    ) -> MaterializeResult:
        return embed_into(warehouse, settings, made, context.log.info)

    return embedded_texts


ask_entry_vectors = embedded_texts_asset(
    ENTRY_VECTORS,
    "Every ask text embedded with the ask encoder (only texts new to the vector cache are embedded), written "
    "beside the marts for the snapshot.",
)
