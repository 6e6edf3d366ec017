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

from ask.dense.embedding import ENTRY_TEXTS_SQL, known_vectors
from ask.dense.encoder import DIMENSIONS
from ask.engine import encoder_of
from ask.model.store import ModelStore
from foundations.content_keys import value_key
from pipelines.kept_work import kept, keyed_result
from pipelines.resources import SettingsResource, WarehouseResource
from warehouse.contract import ASK_ENCODER_TABLE, ASK_TEXTS_TABLE, ASK_VECTORS_TABLE, MARTS_SCHEMA
from warehouse.relation_keys import RelationContents, held_key, hold_key


def embed_into(
    warehouse: WarehouseResource,
    settings: SettingsResource,
    texts_sql: str,
    table_sql: str,
    log: Callable[[str], None],
    source: AssetKey,
    table: str,
) -> MaterializeResult:
    """Embed the (sha256, text) rows ``texts_sql`` reads (from ``source``) with the encoder
    ``marts.ask_encoder`` names (through the vector cache), then run ``table_sql``, which writes
    ``marts.<table>`` from them as ``incoming`` (sha256, vector) and takes the model's id as its one
    parameter. The asset's result: the model, how many distinct texts there were, how many were
    embedded now and how many came from the cache. Kept as it is when the model and ``source``'s
    rows are those it was made from (a tester's sheet that changes no text)."""
    started = time.perf_counter()
    with warehouse.connect() as connection:
        [(model_id,)] = connection.execute(f"SELECT model_id FROM {MARTS_SCHEMA}.{ASK_ENCODER_TABLE}").fetchall()
        contents = RelationContents.of_default(connection)
        key = value_key({"model": model_id, "texts": contents.key(*source.path), "table": table_sql})
        if held_key(connection, MARTS_SCHEMA, table) == key:
            [(rows,)] = connection.execute(f"SELECT count(*) FROM ({texts_sql})").fetchall()  # distinct texts
            metadata = {"dagster/row_count": rows, "model": model_id, "embedded": 0, "cached": rows}  # as before
            return kept(log, f"{MARTS_SCHEMA}.{table}", key, metadata)[0]
        texts = dict(connection.execute(texts_sql).fetchall())
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
        connection.execute(table_sql, [encoder.model_id])
        hold_key(connection, MARTS_SCHEMA, table, key)
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


def embedded_texts_asset(
    *, table: str, source: AssetKey, description: str, texts_sql: str, table_sql: str
) -> AssetsDefinition:
    """The asset that writes ``marts.<table>`` from the texts ``source`` holds, embedded with the
    ask encoder (``embed_into`` says what the two queries do). The entry texts and the uncovered
    topics' questions are embedded the same way; only what is read and what is written differ."""

    @asset(
        key=AssetKey([MARTS_SCHEMA, table]),
        group_name="ask",
        deps=[source, AssetKey([MARTS_SCHEMA, ASK_ENCODER_TABLE])],
        description=description,
        kinds={"python", "duckdb"},
    )
    def embedded_texts(
        context: AssetExecutionContext, warehouse: WarehouseResource, settings: SettingsResource
    ) -> MaterializeResult:
        return embed_into(warehouse, settings, texts_sql, table_sql, context.log.info, source, table)

    return embedded_texts


ask_entry_vectors = embedded_texts_asset(
    table=ASK_VECTORS_TABLE,
    source=AssetKey([MARTS_SCHEMA, ASK_TEXTS_TABLE]),
    description="Every ask text embedded with the ask encoder (only texts new to the vector cache are "
    "embedded), written beside the marts for the snapshot.",
    texts_sql=ENTRY_TEXTS_SQL,
    table_sql=f"CREATE OR REPLACE TABLE {MARTS_SCHEMA}.{ASK_VECTORS_TABLE} AS "
    f"SELECT texts.entry_id, texts.entry_kind, texts.field, texts.language, texts.text_sha256, "
    f"incoming.vector::FLOAT[{DIMENSIONS}] AS vector, ? AS model "
    f"FROM {MARTS_SCHEMA}.{ASK_TEXTS_TABLE} AS texts JOIN incoming ON incoming.sha256 = texts.text_sha256 "
    f"ORDER BY texts.entry_kind DESC, texts.entry_id, texts.field, texts.language",
)
