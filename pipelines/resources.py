"""Resources: the build warehouse, the raw inputs folder and the dbt CLI."""

from __future__ import annotations

import importlib.metadata
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path

import duckdb
from dagster import ConfigurableResource
from dagster_dbt import DbtCliResource
from packaging.version import Version

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


# dbt-core as installed next to this interpreter, pinned in requirements.lock.
DBT_EXECUTABLE = Path(sys.executable).parent / "dbt"


class InstalledDbtResource(DbtCliResource):
    """dagster-dbt's dbt CLI, running the dbt installed next to this interpreter.

    Its version is that package's: dagster-dbt would otherwise run `dbt --version` in a process
    of its own at every build to find out (1.6 s of each build).
    """

    @cached_property
    def _cli_version(self) -> Version:
        return Version(importlib.metadata.version("dbt-core"))


def build_resources() -> dict[str, object]:
    settings = load_settings()
    return {
        "warehouse": WarehouseResource(path=str(settings.warehouse_path)),
        "inputs": InputsResource(path=str(settings.inputs)),
        "dbt": InstalledDbtResource(project_dir=dbt_project, dbt_executable=str(DBT_EXECUTABLE)),
    }
