"""Resources: the build warehouse, the raw inputs folder and the dbt CLI."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
from dagster import ConfigurableResource
from dagster_dbt import DbtCliResource

from pipelines.project import dbt_project
from reuse_data.settings import load_settings


class WarehouseResource(ConfigurableResource):
    """The DuckDB build warehouse the ingest assets and dbt write to."""

    path: str

    @contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        connection = duckdb.connect(self.path)
        try:
            yield connection
        finally:
            connection.close()


class InputsResource(ConfigurableResource):
    """The folder of raw inputs: ``bench/`` sheets and the ``editorial/`` export."""

    path: str

    @property
    def root(self) -> Path:
        return Path(self.path)


def build_resources() -> dict[str, object]:
    settings = load_settings()
    return {
        "warehouse": WarehouseResource(path=str(settings.warehouse_path)),
        "inputs": InputsResource(path=str(settings.inputs)),
        "dbt": DbtCliResource(project_dir=dbt_project),
    }
