"""What the library does not cover, as the ask engine sees it: the uncovered topics' questions embedded.

The publisher knows what it does not review, and the seed ``ask_uncovered_topics`` says it once.
The encoder is trained to push those questions away from every entry; the server also refuses a
question that sits closer to one of them than to any entry text (``ask.engine``), so a question
about a product type next to the library's (an electric toothbrush beside the bamboo ones) gets
the no-match answer rather than the nearest entry's.
"""

from dagster import AssetExecutionContext, AssetKey, MaterializeResult, asset

from ask.encoder import DIMENSIONS
from pipelines.assets.ask_vectors import embed_into
from pipelines.resources import SettingsResource, WarehouseResource
from warehouse.contract import (
    ASK_ENCODER_TABLE,
    ASK_UNCOVERED_TOPICS_SEED,
    ASK_UNCOVERED_VECTORS_TABLE,
    MARTS_SCHEMA,
    SEEDS_SCHEMA,
)


@asset(
    key=AssetKey([MARTS_SCHEMA, ASK_UNCOVERED_VECTORS_TABLE]),
    group_name="ask",
    deps=[AssetKey([SEEDS_SCHEMA, ASK_UNCOVERED_TOPICS_SEED]), AssetKey([MARTS_SCHEMA, ASK_ENCODER_TABLE])],
    description="The uncovered topics' questions embedded with the ask encoder: a question closer to one of "
    "them than to any entry gets no answer.",
    kinds={"python", "duckdb"},
)
def ask_uncovered_vectors(
    context: AssetExecutionContext, warehouse: WarehouseResource, settings: SettingsResource
) -> MaterializeResult:
    return embed_into(
        warehouse,
        settings,
        f"SELECT DISTINCT sha256(question), question FROM {SEEDS_SCHEMA}.{ASK_UNCOVERED_TOPICS_SEED} ORDER BY 1",
        f"CREATE OR REPLACE TABLE {MARTS_SCHEMA}.{ASK_UNCOVERED_VECTORS_TABLE} AS "
        f"SELECT seed.topic, seed.kind, seed.language, incoming.sha256 AS question_sha256, "
        f"incoming.vector::FLOAT[{DIMENSIONS}] AS vector, ? AS model "
        f"FROM {SEEDS_SCHEMA}.{ASK_UNCOVERED_TOPICS_SEED} AS seed "
        f"JOIN incoming ON incoming.sha256 = sha256(seed.question) "
        f"ORDER BY seed.topic, seed.language, incoming.sha256",
        context.log.info,
    )
