"""The dbt models of ``sql/`` as Dagster assets, their tests as asset checks."""

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from dagster import AssetExecutionContext, AssetKey
from dagster_dbt import DagsterDbtTranslator, DagsterDbtTranslatorSettings, DbtCliResource, dbt_assets

from pipelines.assets.ingest import RAW_SCHEMA
from pipelines.project import dbt_project, project_fingerprint
from reuse_data.settings import load_settings


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


def built_from_path() -> Path:
    """Where the fingerprint of the dbt project the warehouse was last built from is kept."""
    warehouse = load_settings().warehouse_path
    return warehouse.with_name(f"{warehouse.name}.dbt-project-sha256")


@dbt_assets(manifest=dbt_project.manifest_path, dagster_dbt_translator=translator)
def dbt_models(context: AssetExecutionContext, dbt: DbtCliResource) -> Iterator[Any]:
    """`dbt build`: seeds, snapshots, models and their tests; a failing test fails the run.

    Incremental models (the bench readings) recompute only what new sheets touch, which holds
    only while their SQL is the SQL that built them: after any change to the dbt project the
    build runs with --full-refresh, once, and then records the project it was built from.
    """
    fingerprint = project_fingerprint(dbt_project.project_dir)
    marker = built_from_path()
    args = ["build"]
    if not marker.exists() or marker.read_text(encoding="utf-8").strip() != fingerprint:
        context.log.info("the dbt project changed since the warehouse was last built: full refresh")
        args.append("--full-refresh")
    yield from dbt.cli(args, context=context).stream()
    marker.write_text(fingerprint + "\n", encoding="utf-8")
