"""The dbt models of ``sql/`` as Dagster assets, their tests as asset checks."""

import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from dagster import AssetExecutionContext, AssetKey, AssetsDefinition
from dagster_dbt import DagsterDbtTranslator, DagsterDbtTranslatorSettings, DbtCliResource, DbtProject, dbt_assets

from foundations.content_keys import KeyFile
from foundations.settings import Settings
from pipelines.project import DBT_STEP, project_key
from pipelines.resources import SettingsResource, WarehouseResource
from warehouse.catalog import RAW_SCHEMA
from warehouse.raw_bench import BENCH_TABLE
from warehouse.reference_data import dbt_vars
from warehouse.test_scope import write_test_scope


class ReuseDataTranslator(DagsterDbtTranslator):
    """Maps dbt sources onto the ingest assets and groups models by their layer."""

    def get_asset_key(self, dbt_resource_props: Mapping[str, Any]) -> AssetKey:
        resource_type = dbt_resource_props["resource_type"]
        if resource_type == "source":
            return AssetKey([RAW_SCHEMA, dbt_resource_props["name"]])
        return AssetKey([self._layer(dbt_resource_props), dbt_resource_props["name"]])

    def get_group_name(self, dbt_resource_props: Mapping[str, Any]) -> str | None:
        if dbt_resource_props["resource_type"] == "source":
            return "raw"
        return self._layer(dbt_resource_props)

    @staticmethod
    def _layer(dbt_resource_props: Mapping[str, Any]) -> str:
        """staging, intermediate, marts, seeds or snapshots."""
        resource_type = dbt_resource_props["resource_type"]
        if resource_type in ("seed", "snapshot"):
            return f"{resource_type}s"
        fqn = dbt_resource_props.get("fqn", [])
        return fqn[1] if len(fqn) > 2 else "models"


translator = ReuseDataTranslator(settings=DagsterDbtTranslatorSettings(enable_asset_checks=True))


def built_from(settings: Settings) -> KeyFile:
    """Where the key of the dbt project the warehouse was last built from is kept, beside it (a
    sensor reads it while a build holds the warehouse)."""
    return KeyFile(settings.warehouse_path, "dbt-project-key")


def warehouse_built_from_project(settings: Settings) -> bool:
    """Whether every model of the warehouse was last built from the dbt project as it is now."""
    return built_from(settings).read() == project_key()


RUN_TARGETS_KEPT = 20
PARSE_STATE = "partial_parse.msgpack"  # dbt's parsed project, reused by the next invocation


def shared_parse_state(settings: Settings) -> Path:
    """The parse state the last dbt run left, for the next run to start from."""
    return settings.dbt_target_dir / PARSE_STATE


def run_target_path(settings: Settings, run_id: str) -> Path:
    """A dbt target folder of this run's own under the home (two runs' artefacts never mix), seeded
    with the project's partial-parse state so that dbt does not parse the whole project again.

    The newest ``RUN_TARGETS_KEPT`` folders are kept, for their run_results.json and dbt.log.
    """
    runs = settings.dbt_target_dir / "runs"
    target = runs / run_id
    target.mkdir(parents=True, exist_ok=True)
    if (parse_state := shared_parse_state(settings)).exists():
        shutil.copy2(parse_state, target / PARSE_STATE)
    for stale in sorted(runs.iterdir(), key=lambda folder: folder.stat().st_mtime)[:-RUN_TARGETS_KEPT]:
        shutil.rmtree(stale, ignore_errors=True)
    return target


def tests_read_every_row(context: AssetExecutionContext, full_refresh: bool) -> bool:
    """Whether this build's dbt tests read every row (``warehouse.test_scope``): always, unless
    the run re-reads the bench sheets and no other input (the intake's build), and is no full
    refresh. A run of dbt alone tests every row too: it cannot know what an earlier run ingested."""
    selection = context.run.asset_selection
    if full_refresh or selection is None:
        return True
    return {key for key in selection if key.path[0] == RAW_SCHEMA} != {AssetKey([RAW_SCHEMA, BENCH_TABLE])}


def dbt_models_asset(project: DbtProject) -> AssetsDefinition:
    """The dbt models of ``project`` (its manifest parsed), as one multi-asset run by `dbt build`."""

    @dbt_assets(manifest=project.manifest_path, dagster_dbt_translator=translator, name=DBT_STEP)
    def dbt_models(
        context: AssetExecutionContext, dbt: DbtCliResource, warehouse: WarehouseResource, settings: SettingsResource
    ) -> Iterator[Any]:
        """`dbt build`: seeds, snapshots, models and their tests; a failing test fails the run.

        dbt writes the warehouse itself (its profile, ``pipelines.project.dbt_profile``); asking for
        the warehouse resource makes a run of dbt alone hold the build lock too (``WarehouseResource``).

        Incremental models (the bench readings) recompute only what new sheets touch, which holds
        only while their SQL is the SQL that built them: after any change to the dbt project the
        build runs with --full-refresh, and a build of every model then records the project it was
        built from (a build of some models leaves the record alone: the others still need it).
        """
        # Taken once, before the build: what is recorded is the project this build ran, even if
        # the project is edited while it runs.
        key = project_key(project.project_dir)
        paths = settings.settings
        args = ["build", *dbt_vars(paths.base_url)]
        full_refresh = built_from(paths).read() != key
        if full_refresh:
            context.log.info("the dbt project changed since the warehouse was last built: full refresh")
            args.append("--full-refresh")
        every_row = tests_read_every_row(context, full_refresh)
        with warehouse.connect() as connection:
            write_test_scope(connection, every_row)
        if not every_row:
            context.log.info("only bench sheets were re-read: the bench tables' tests read the restaged slots")
        target = run_target_path(paths, context.run_id)
        try:
            yield from dbt.cli(args, context=context, target_path=target).stream()
        finally:
            if not every_row:  # dbt run by hand afterwards tests every row again
                with warehouse.connect() as connection:
                    write_test_scope(connection, every_row=True)
        if (target / PARSE_STATE).exists():  # the next run starts from this one's parse state
            shutil.copy2(target / PARSE_STATE, shared_parse_state(paths))
        if not context.is_subset:
            built_from(paths).write(key)

    return dbt_models
