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

SNAPSHOT_INFO_TABLE = "snapshot_info"
