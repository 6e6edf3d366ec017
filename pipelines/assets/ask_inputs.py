"""The ask gate: whether any ask step has work to do, worked out before one runs.

Every ask step follows ``ask/work``. When each holds the key it would make its tables from now
(``pipelines.ask_keys.ask_work``), as after a tester's sheet that moves no text or figure an entry
quotes, the gate says which tables are kept, with their keys, and leaves ``ask/work`` alone: Dagster
then skips every ask step. Otherwise ``ask/work`` materialises, and each step keeps or makes its own
tables.

``ask/inputs``, the keys as this build found them, materialises every time: the publish waits for
it among the ask tables (``pipelines/assets/publish.py``), so that it runs, and publishes the tables
the ask steps made before, when they are all skipped.
"""

from collections.abc import Iterator

from dagster import AssetExecutionContext, AssetKey, AssetSpec, MaterializeResult, multi_asset

from pipelines.ask_keys import ASK_INPUTS, ASK_SOURCES, ASK_WORK, ask_work
from pipelines.kept_work import SHOWN_KEY, say_kept
from pipelines.resources import SettingsResource, WarehouseResource

SOURCES = [AssetKey(list(source)) for source in ASK_SOURCES]


@multi_asset(
    specs=[
        AssetSpec(
            ASK_INPUTS,
            deps=SOURCES,
            description="The key of what each ask table is made from, as this build found it, up to the first "
            "that moved.",
            group_name="ask",
            kinds={"python"},
        ),
        AssetSpec(
            ASK_WORK,
            deps=SOURCES,
            skippable=True,
            description="The ask steps' work: materialised only when an ask table's key moved (every ask step "
            "then runs, each keeping what it can); otherwise every ask step is skipped.",
            group_name="ask",
            kinds={"python"},
        ),
    ],
)
def ask_inputs(
    context: AssetExecutionContext, warehouse: WarehouseResource, settings: SettingsResource
) -> Iterator[MaterializeResult]:
    with warehouse.connect() as connection:
        work = ask_work(connection, settings.settings)
    kept = {what: key[:SHOWN_KEY] for what, key in work.kept}
    yield MaterializeResult(asset_key=ASK_INPUTS, metadata={"kept": kept, "moved": work.moved or "nothing"})
    if work.moved is None:
        for what, key in work.kept:
            say_kept(context.log.info, what, key)
        context.log.info("no ask step has work to do: every one is skipped, and the release keeps their tables")
        return
    context.log.info(f"{work.moved} has new inputs: the ask steps run, each keeping what it can")
    yield MaterializeResult(asset_key=ASK_WORK, metadata={"moved": work.moved})
