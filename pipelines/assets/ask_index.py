"""The ask engine's lexical index, analysed at build time and stored beside the marts.

A server then loads postings instead of analysing every entry's texts in six languages when a
snapshot lands (``ask.lexical.stored``): a 20,000-entry library's engine loads in about
2 s instead of 40.
"""

import time

from dagster import AssetExecutionContext, AssetKey, AssetSpec, MaterializeResult, multi_asset

from ask.lexical.index import AskIndex
from ask.lexical.stored import index_tables
from pipelines.resources import WarehouseResource
from release.local_store import rows_of
from warehouse.contract import (
    ASK_ENTRY_ORDER_TABLE,
    ASK_LEXICON_TABLE,
    ASK_NEIGHBOURS_TABLE,
    MARTS_SCHEMA,
    table_query,
)

SOURCES = ("recommendations", "answers", "categories")
DESCRIPTIONS = {
    ASK_LEXICON_TABLE: "The ask engine's lexical index: one row per term with its IDF and BM25F postings.",
    ASK_NEIGHBOURS_TABLE: "Typo correction for the ask engine: each term under every spelling one deletion away.",
    ASK_ENTRY_ORDER_TABLE: "The order of the ask entries the lexical index's postings count in.",
}


@multi_asset(
    specs=[
        AssetSpec(
            AssetKey([MARTS_SCHEMA, table]),
            deps=[AssetKey([MARTS_SCHEMA, source]) for source in SOURCES],
            description=description,
            group_name="ask",
            kinds={"python", "duckdb"},
        )
        for table, description in DESCRIPTIONS.items()
    ],
)
def ask_lexical_index(context: AssetExecutionContext, warehouse: WarehouseResource):
    started = time.perf_counter()
    with warehouse.connect() as connection:
        tables = {name: rows_of(connection, table_query(name, MARTS_SCHEMA)) for name in SOURCES}
    index = AskIndex.from_tables(tables["recommendations"], tables["answers"], tables["categories"])
    stored = index_tables(index)
    with warehouse.connect() as connection:
        for name, table in stored.items():
            connection.register("incoming", table)
            connection.execute(f"CREATE OR REPLACE TABLE {MARTS_SCHEMA}.{name} AS SELECT * FROM incoming")
            connection.unregister("incoming")
    seconds = time.perf_counter() - started
    context.log.info(f"indexed {len(index.entries)} entries, {len(index.postings)} terms ({seconds:.1f} s)")
    for name, table in stored.items():
        yield MaterializeResult(
            asset_key=AssetKey([MARTS_SCHEMA, name]),
            metadata={"dagster/row_count": table.num_rows, "entries": len(index.entries), "seconds": round(seconds, 2)},
        )
