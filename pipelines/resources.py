"""Resources: the build warehouse (which holds the build lock for a run), the raw inputs folder and the dbt CLI."""

from __future__ import annotations

import importlib.metadata
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path

import duckdb
from dagster import ConfigurableResource, InitResourceContext
from dagster_dbt import DbtCliResource
from packaging.version import Version

from pipelines.build_lock import BuildAlreadyRunning, BuildHolder, one_build_at_a_time, started_by
from pipelines.project import dbt_project
from reuse_data.settings import load_settings

TERMINATE_TO_STOP = "terminate this run in the Dagster UI to stop"


class WarehouseResource(ConfigurableResource):
    """The DuckDB build warehouse the ingest assets and dbt write to.

    DuckDB takes one writer at a time, so a run that uses the warehouse (every asset and check
    does; ``dbt_models`` asks for it) holds the build lock (``pipelines.build_lock``) from the
    moment this resource is set up until the run ends: the in-process executor sets it up once
    per run, before the first step. A run launched while another build holds the lock waits
    here, saying so in the run's log (the Dagster UI) every minute, and fails with the reason
    past REUSE_DATA_BUILD_WAIT_SECONDS.
    """

    path: str

    @contextmanager
    def yield_for_execution(self, context: InitResourceContext) -> Iterator[WarehouseResource]:
        run = context.dagster_run
        if run is None:  # built outside a run: no build to keep apart from another
            yield self
            return
        holder = BuildHolder.starting_now(run.run_id, started_by(run.tags))
        wait_seconds = load_settings().build_wait_seconds
        try:
            with one_build_at_a_time(Path(self.path), holder, wait_seconds, context.log.info, TERMINATE_TO_STOP):
                yield self
        except BuildAlreadyRunning as refusal:
            context.log.error(str(refusal))  # the sentence itself, above Dagster's "resource failed"
            raise

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
