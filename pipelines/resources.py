"""Resources: reuse-data's settings, the build warehouse (which holds the build lock for a run), the raw
inputs folder and the dbt CLI.

They are made from one ``Settings`` (``build_resources``), which the definitions are given: the
assets and sensors receive what it says as resources and read no environment variable of their own."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
from dagster import ConfigurableResource, InitResourceContext
from dagster_dbt import DbtProject

from foundations.settings import Settings
from pipelines.build_lock import BuildAlreadyRunning, BuildHolder, one_build_at_a_time, started_by
from pipelines.project import installed_dbt

TERMINATE_TO_STOP = "terminate this run in the Dagster UI to stop"


PATH_FIELDS = ("home", "inputs", "embedding_cache", "ask_models")  # of SettingsResource: Paths in Settings


class SettingsResource(ConfigurableResource):
    """The settings the assets and sensors act on: where the home and inputs are, the public base
    URL, the object store a publish uploads to, how long builds may wait or stay silent, where trained
    ask encoders are kept and how a build trains one, how long the questions asked are kept."""

    home: str
    inputs: str
    base_url: str
    embedding_cache: str
    publish_to: str | None = None
    stale_build_seconds: int
    ask_models: str
    ask_training: str
    question_retention_days: int

    @classmethod
    def of(cls, settings: Settings) -> SettingsResource:
        """The resource of ``settings``: its fields by name, paths as text (what Dagster's config holds)."""
        values = {name: getattr(settings, name) for name in cls.model_fields}
        return cls(**{name: str(value) if isinstance(value, Path) else value for name, value in values.items()})

    @property
    def settings(self) -> Settings:
        """As ``Settings``, with the paths derived from the home (warehouse, snapshots, dbt target)."""
        values = {name: getattr(self, name) for name in type(self).model_fields}
        return Settings(**{name: Path(values[name]) if name in PATH_FIELDS else values[name] for name in values})


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
    build_wait_seconds: int  # how long a run waits for another build to finish before it fails

    @contextmanager
    def yield_for_execution(self, context: InitResourceContext) -> Iterator[WarehouseResource]:
        run = context.dagster_run
        if run is None:  # built outside a run: no build to keep apart from another
            yield self
            return
        holder = BuildHolder.starting_now(run.run_id, started_by(run.tags))
        try:
            with one_build_at_a_time(
                Path(self.path), holder, self.build_wait_seconds, context.log.info, TERMINATE_TO_STOP
            ):
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


def build_resources(settings: Settings, project: DbtProject) -> dict[str, object]:
    return {
        "settings": SettingsResource.of(settings),
        "warehouse": WarehouseResource(
            path=str(settings.warehouse_path), build_wait_seconds=settings.build_wait_seconds
        ),
        "inputs": InputsResource(path=str(settings.inputs)),
        "dbt": installed_dbt(project),
    }
