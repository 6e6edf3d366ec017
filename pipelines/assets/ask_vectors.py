"""The ask engine's entry vectors: every text of ``marts.ask_texts`` embedded, for the snapshot.

The server embeds only the incoming question; everything it compares that question with is
computed here, once per text, with the encoder ``marts.ask_encoder`` chose. A text whose sha256
the vector cache already holds for that model, or whose vector the inputs ship beside that model
(``reuse-data ask train`` writes them), is not embedded again, so a build that changed no entry
text embeds nothing, and a changed answer costs only its own texts.
"""

import time
from collections.abc import Callable, Mapping

import numpy as np
import pyarrow as pa
from dagster import AssetExecutionContext, AssetKey, AssetsDefinition, MaterializeResult, asset

from ask.dense.cache import SHIPPED_VECTORS_FILE, VectorCache, read_shipped
from ask.dense.encoder import DIMENSIONS, Encoder
from ask.engine import encoder_of
from ask.model.store import ModelStore
from foundations.settings import Settings
from inputs.ask_inputs import SHIPPED_ENCODER_FOLDER
from pipelines.resources import SettingsResource, WarehouseResource
from warehouse.contract import (
    ASK_ENCODER_TABLE,
    ASK_TEXTS_TABLE,
    ASK_UNCOVERED_TOPICS_SEED,
    ASK_VECTORS_TABLE,
    MARTS_SCHEMA,
    SEEDS_SCHEMA,
)


def entry_vectors(
    texts: dict[str, str],
    encoder: Encoder,
    cache: VectorCache,
    log: Callable[[str], None],
    shipped: Mapping[str, np.ndarray] | None = None,
) -> tuple[dict[str, np.ndarray], int]:
    """A vector for each text (sha256 -> text): shipped with the inputs' model, from the cache, or
    embedded now; and how many were embedded."""
    vectors = {sha: vector for sha, vector in (shipped or {}).items() if sha in texts}
    vectors.update(cache.get(encoder.model_id, [sha for sha in texts if sha not in vectors]))
    missing = [sha for sha in texts if sha not in vectors]
    if missing:
        log(f"embedding {len(missing)} new texts of {len(texts)} ({len(vectors)} cached)")
        started = time.perf_counter()

        def progress(done: int, total: int) -> None:
            rate = done / max(time.perf_counter() - started, 1e-9)
            log(f"embedded {done}/{total} texts ({rate:.0f}/s, about {(total - done) / rate:.0f} s left)")

        embedded = encoder.texts([texts[sha] for sha in missing], progress)
        fresh = dict(zip(missing, embedded, strict=True))
        cache.put(encoder.model_id, fresh)
        vectors.update(fresh)
    return vectors, len(missing)


def known_vectors(
    texts: dict[str, str], encoder: Encoder, settings: Settings, log: Callable[[str], None]
) -> tuple[dict[str, np.ndarray], int]:
    """``entry_vectors`` with what a build already knows: the vectors the inputs ship beside their
    model and the machine's vector cache."""
    shipped_file = settings.inputs / SHIPPED_ENCODER_FOLDER / SHIPPED_VECTORS_FILE
    shipped = read_shipped(shipped_file, encoder.model_id)
    return entry_vectors(texts, encoder, VectorCache(settings.embedding_cache), log, shipped)


# The (sha256, text) rows each embedding asset reads: what `reuse-data ask train` embeds with a new model too.
ENTRY_TEXTS_SQL = f"SELECT DISTINCT text_sha256, text FROM {MARTS_SCHEMA}.{ASK_TEXTS_TABLE} ORDER BY text_sha256"
UNCOVERED_TEXTS_SQL = (
    f"SELECT DISTINCT sha256(question), question FROM {SEEDS_SCHEMA}.{ASK_UNCOVERED_TOPICS_SEED} ORDER BY 1"
)


def embed_into(
    warehouse: WarehouseResource,
    settings: SettingsResource,
    texts_sql: str,
    table_sql: str,
    log: Callable[[str], None],
) -> MaterializeResult:
    """Embed the (sha256, text) rows ``texts_sql`` reads with the encoder ``marts.ask_encoder`` names
    (through the vector cache), then run ``table_sql``, which reads them as ``incoming`` (sha256,
    vector) and takes the model's id as its one parameter. The asset's result: the model, how many
    distinct texts there were, how many were embedded now and how many came from the cache."""
    started = time.perf_counter()
    with warehouse.connect() as connection:
        texts = dict(connection.execute(texts_sql).fetchall())
        encoder = encoder_of(connection, ModelStore(settings.settings.ask_models), MARTS_SCHEMA)
    vectors, embedded = known_vectors(texts, encoder, settings.settings, log)
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
    seconds = time.perf_counter() - started
    log(f"{len(hashes)} distinct texts: {embedded} embedded, {len(hashes) - embedded} cached ({seconds:.1f} s)")
    return MaterializeResult(
        metadata={
            "dagster/row_count": len(hashes),
            "model": encoder.model_id,
            "embedded": embedded,
            "cached": len(hashes) - embedded,
            "seconds": round(seconds, 2),
        }
    )


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
        return embed_into(warehouse, settings, texts_sql, table_sql, context.log.info)

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
