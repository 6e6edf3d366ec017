"""The ask engine's lexical index, analysed at build time and stored beside the marts.

A server then loads postings instead of analysing every entry's texts in six languages when a
snapshot lands (``ask.lexical.stored``): a 20,000-entry library's engine loads in about
2 s instead of 40. A build whose entries and lexical code did not change (a tester's sheet that
moves no figure an entry quotes) keeps the index it made before (``pipelines.kept_work``).
"""

import time

from dagster import AssetExecutionContext, AssetKey, AssetSpec, multi_asset

from ask.lexical.index import AskIndex
from ask.lexical.stored import index_tables
from pipelines.ask_keys import ASK_WORK, LEXICAL_SOURCES, LEXICAL_TABLES, lexical_index_key
from pipelines.kept_work import kept, keyed_result
from pipelines.resources import WarehouseResource
from release.local_store import rows_of
from warehouse.contract import (
    ASK_ENTRY_ORDER_TABLE,
    ASK_LEXICON_TABLE,
    ASK_NEIGHBOURS_TABLE,
    MARTS_SCHEMA,
    table_query,
)
from warehouse.relation_keys import RelationContents, held_key, hold_key

DESCRIPTIONS = {
    ASK_LEXICON_TABLE: "The ask engine's lexical index: one row per term with its IDF and BM25F postings.",
    ASK_NEIGHBOURS_TABLE: "Typo correction for the ask engine: each term under every spelling one deletion away.",
    ASK_ENTRY_ORDER_TABLE: "The order of the ask entries the lexical index's postings count in.",
}


@multi_asset(
    specs=[
        AssetSpec(
            AssetKey([MARTS_SCHEMA, table]),
            deps=[ASK_WORK, *(AssetKey([MARTS_SCHEMA, source]) for source in LEXICAL_SOURCES)],
            description=DESCRIPTIONS[table],
            group_name="ask",
            kinds={"python", "duckdb"},
        )
        for table in LEXICAL_TABLES
    ],
)
def ask_lexical_index(context: AssetExecutionContext, warehouse: WarehouseResource):
    started = time.perf_counter()
    outputs = [AssetKey([MARTS_SCHEMA, name]) for name in LEXICAL_TABLES]
    with warehouse.connect() as connection:
        key = lexical_index_key(RelationContents.of_default(connection))
        if all(held_key(connection, MARTS_SCHEMA, name) == key for name in LEXICAL_TABLES):
            yield from kept(context.log.info, "the lexical index", key, asset_keys=outputs)
            return
        tables = {name: rows_of(connection, table_query(name, MARTS_SCHEMA)) for name in LEXICAL_SOURCES}
    index = AskIndex.from_tables(tables["recommendations"], tables["answers"], tables["categories"])
    stored = index_tables(index)
    with warehouse.connect() as connection:
        for name, table in stored.items():
            connection.register("incoming", table)
            connection.execute(f"CREATE OR REPLACE TABLE {MARTS_SCHEMA}.{name} AS SELECT * FROM incoming")
            connection.unregister("incoming")
            hold_key(connection, MARTS_SCHEMA, name, key)
    seconds = time.perf_counter() - started
    context.log.info(f"indexed {len(index.entries)} entries, {len(index.postings)} terms ({seconds:.1f} s)")
    for name, table in stored.items():
        metadata = {"dagster/row_count": table.num_rows, "entries": len(index.entries), "seconds": round(seconds, 2)}
        yield keyed_result(key, False, metadata, AssetKey([MARTS_SCHEMA, name]))
