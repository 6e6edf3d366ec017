"""The contract of a published snapshot: which mart tables it holds.

The server reads only these tables; the publish step copies exactly these from the build
warehouse's ``marts`` schema, and the Dagster publish asset depends on exactly these models.
"""

MARTS_SCHEMA = "marts"

PUBLISHED_TABLES: tuple[str, ...] = (
    "products",
    "bench_measurements",
    "recommendations",
    "answers",
    "content",
    "pages",
    "changes",
    "claims",
    "corpus_documents",
    "dataset_statistics",
    "categories",
    "protocols",
    "people",
    "publisher",
    "languages",
)

# Tables stored in a fixed row order, so that a plain scan streams them in that order
# (DuckDB preserves insertion order) without sorting at request time.
STORED_ORDER: dict[str, str] = {"bench_measurements": "stream_position"}

SNAPSHOT_INFO_TABLE = "snapshot_info"
