"""What the library does not cover, as the ask engine sees it: the uncovered topics' questions embedded.

The publisher knows what it does not review, and the seed ``ask_uncovered_topics`` says it once.
The encoder is trained to push those questions away from every entry; the server also refuses a
question that sits closer to one of them than to any entry text (``ask.engine``), so a question
about a product type next to the library's (an electric toothbrush beside the bamboo ones) gets
the no-match answer rather than the nearest entry's.
"""

from dagster import AssetKey

from ask.dense.embedding import UNCOVERED_TEXTS_SQL
from ask.dense.encoder import DIMENSIONS
from pipelines.assets.ask_vectors import embedded_texts_asset
from warehouse.contract import ASK_UNCOVERED_TOPICS_SEED, ASK_UNCOVERED_VECTORS_TABLE, MARTS_SCHEMA, SEEDS_SCHEMA

ask_uncovered_vectors = embedded_texts_asset(
    table=ASK_UNCOVERED_VECTORS_TABLE,
    source=AssetKey([SEEDS_SCHEMA, ASK_UNCOVERED_TOPICS_SEED]),
    description="The uncovered topics' questions embedded with the ask encoder: a question closer to one of "
    "them than to any entry gets no answer.",
    texts_sql=UNCOVERED_TEXTS_SQL,
    table_sql=f"CREATE OR REPLACE TABLE {MARTS_SCHEMA}.{ASK_UNCOVERED_VECTORS_TABLE} AS "
    f"SELECT seed.topic, seed.kind, seed.language, incoming.sha256 AS question_sha256, "
    f"incoming.vector::FLOAT[{DIMENSIONS}] AS vector, ? AS model "
    f"FROM {SEEDS_SCHEMA}.{ASK_UNCOVERED_TOPICS_SEED} AS seed "
    f"JOIN incoming ON incoming.sha256 = sha256(seed.question) "
    f"ORDER BY seed.topic, seed.language, incoming.sha256",
)
