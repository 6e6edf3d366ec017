"""The dbt models of ``sql/`` as Dagster assets, their tests as asset checks."""

from collections.abc import Iterator, Mapping
from typing import Any

from dagster import AssetExecutionContext, AssetKey
from dagster_dbt import DagsterDbtTranslator, DagsterDbtTranslatorSettings, DbtCliResource, dbt_assets

from pipelines.assets.ingest import RAW_SCHEMA
from pipelines.project import dbt_project


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


@dbt_assets(manifest=dbt_project.manifest_path, dagster_dbt_translator=translator)
def dbt_models(context: AssetExecutionContext, dbt: DbtCliResource) -> Iterator[Any]:
    """`dbt build`: seeds, snapshots, models and their tests; a failing test fails the run."""
    yield from dbt.cli(["build"], context=context).stream()
