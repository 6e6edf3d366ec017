"""Running the whole pipeline in-process, as `reuse-data build` does, with live progress.

The run is a real Dagster run in the instance under ``REUSE_DATA_HOME`` (so it shows in the
Dagster UI's run history): an embedded SQLite instance, or PostgreSQL when
``REUSE_DATA_DAGSTER_POSTGRES_URL`` names a database (``prepare_dagster_home``). While it
executes in a worker thread, this module follows the run's event log and reports each asset
materialised, each failing check and each failed step as it happens.

One build runs at a time (``pipelines.build_lock``): a build started while another runs waits
for it before it even loads the definitions.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from foundations.settings import Settings, SettingsError, variable_name
from pipelines.build_lock import STARTED_BY_TAG, BuildHolder, one_build_at_a_time, started_by

if TYPE_CHECKING:
    from dagster import AssetKey, DagsterInstance

POLL_SECONDS = 0.3
# Dagster's console logger only for warnings: progress comes from the event log instead.
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
DAGSTER_YAML_HEADER = "# Written by reuse-data: local instance under REUSE_DATA_HOME."
DAGSTER_YAML = f"""\
{DAGSTER_YAML_HEADER}
# (Delete this header to keep your own edits: reuse-data then leaves the file alone.)
telemetry:
  enabled: false
# One build at a time, picked up within a second of the intake sensor asking for it.
run_coordinator:
  module: dagster.core.run_coordinator
  class: QueuedRunCoordinator
  config:
    max_concurrent_runs: 1
    dequeue_interval_seconds: 1
"""
DAGSTER_POSTGRES_URL_VARIABLE = variable_name("dagster_postgres_url")
POSTGRES_URL_SCHEME = "postgresql+psycopg2://"
# Every Dagster process (daemon, UI, run workers, `reuse-data build`) reads the URL from its own
# environment, so no password is written to disk.
POSTGRES_STORAGE = f"""\
# Runs, their events, and schedule and sensor state in PostgreSQL, at ${DAGSTER_POSTGRES_URL_VARIABLE}.
storage:
  postgres:
    postgres_url:
      env: {DAGSTER_POSTGRES_URL_VARIABLE}
"""
CLI_HOW_TO_STOP = "Ctrl+C to stop"


@dataclass
class BuildOutcome:
    """What a build did: whether it succeeded, what it published and what failed."""

    success: bool
    run_id: str
    seconds: float
    materialized: list[str] = field(default_factory=list)
    failed_checks: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    published_version: str | None = None


def dagster_yaml(settings: Settings) -> str:
    """The instance's configuration: embedded SQLite under the home, or PostgreSQL storage when
    ``settings.dagster_postgres_url`` is set (the production instance)."""
    return DAGSTER_YAML + (POSTGRES_STORAGE if settings.dagster_postgres_url else "")


def prepare_dagster_home(settings: Settings) -> None:
    """The home's folders and the Dagster instance's configuration (``dagster_yaml``), unless an
    operator made the file their own (removed its first line)."""
    url = settings.dagster_postgres_url
    if url and not url.startswith(POSTGRES_URL_SCHEME):
        # SQLAlchemy would take a bare postgresql:// for psycopg 3, which is not installed.
        raise SettingsError(
            f"{DAGSTER_POSTGRES_URL_VARIABLE} must start with {POSTGRES_URL_SCHEME} (the driver installed), "
            f"got {url.split('://')[0]}://…"
        )
    settings.ensure_dirs()
    config_path = settings.dagster_home / "dagster.yaml"
    config = dagster_yaml(settings)
    written = config_path.read_text(encoding="utf-8") if config_path.exists() else None
    if written is None or (written.startswith(DAGSTER_YAML_HEADER) and written != config):
        config_path.write_text(config, encoding="utf-8")


def dagster_instance(settings: Settings) -> DagsterInstance:
    """The Dagster instance under the home (its storage as ``dagster.yaml`` says, a PostgreSQL URL
    read from the variable the settings read it from)."""
    from dagster import DagsterInstance

    return DagsterInstance.from_config(str(settings.dagster_home))


def _classify(event) -> tuple[str, str] | None:
    """(kind, subject) of a run event worth reporting, or None."""
    from dagster import AssetCheckSeverity, DagsterEventType

    from pipelines.project import DBT_STEP

    dagster_event = event.dagster_event
    if dagster_event is None:
        # What our own assets say (training progress, what was embedded, a stale encoder); dbt's
        # chatter goes to its log file instead.
        if event.step_key and event.step_key != DBT_STEP and event.level >= logging.INFO and event.user_message:
            return "said", f"{event.step_key}: {event.user_message}"
        return None
    kind = dagster_event.event_type
    if kind == DagsterEventType.STEP_START:
        return "step", dagster_event.step_key
    if kind == DagsterEventType.ASSET_MATERIALIZATION:
        return "materialized", dagster_event.asset_key.to_user_string()
    if kind == DagsterEventType.ASSET_CHECK_EVALUATION:
        evaluation = dagster_event.event_specific_data
        if not evaluation.passed:
            subject = f"{evaluation.asset_key.to_user_string()}:{evaluation.check_name}"
            report = evaluation.metadata.get("report")
            subject = f"{subject} ({report.value})" if report is not None else subject
            # A check of warning severity (dbt's severity: warn) is said, and publishes all the same.
            return ("warned_check" if evaluation.severity == AssetCheckSeverity.WARN else "failed_check"), subject
        return None
    if kind == DagsterEventType.STEP_FAILURE:
        error = dagster_event.event_specific_data.error
        return "error", f"step {dagster_event.step_key} failed: {real_cause(error)}"
    return None


def real_cause(error) -> str:
    """What went wrong in a failed step, on one line: the first error of the chain that is not
    Dagster's wrapper of our code's error ("Error occurred while executing op …"), so that what the
    build prints last names the cause, not the machinery."""
    while error is not None and (error.cls_name or "").startswith("Dagster") and error.cause is not None:
        error = error.cause
    lines = [line.strip() for line in (error.message if error is not None else "").strip().splitlines()]
    if not lines:
        return "no error message"
    if len(lines) == 1:
        return lines[0]
    # A heading and its items ("2 problem(s) in bench sheets:" then "- bench/x.csv, row 3, …"): the first item too.
    more = f" (and {len(lines) - 2} more lines above)" if len(lines) > 2 else ""
    return f"{lines[0].rstrip(':')}: {lines[1].removeprefix('- ')}{more}"


PROGRESS_FORMATS = {
    "said": "  {}",
    "step": "▸ {}",
    "materialized": "✓ {}",
    "failed_check": "✗ check failed: {}",
    "warned_check": "! check warns: {}",
    "error": "✗ {}",
}


def run_build(
    settings: Settings,
    report: Callable[[str], None] = print,
    tags: Mapping[str, str] | None = None,
    asset_selection: Sequence[AssetKey] | None = None,
) -> BuildOutcome:
    """Materialise every asset (or those of ``asset_selection``, with their checks) and publish;
    nothing is published unless every step passes.

    While another build runs, this one waits for it first (saying so through ``report``) and
    raises ``BuildAlreadyRunning`` past ``settings.build_wait_seconds``: it holds the build lock
    before it loads the definitions, and its run takes it over.
    """
    prepare_dagster_home(settings)
    run_id = str(uuid.uuid4())
    run_tags = {STARTED_BY_TAG: "cli", **(tags or {})}
    holder = BuildHolder.starting_now(run_id, started_by(run_tags))
    with one_build_at_a_time(settings.warehouse_path, holder, settings.build_wait_seconds, report, CLI_HOW_TO_STOP):
        return _execute(settings, run_id, run_tags, asset_selection, report)


def _execute(
    settings: Settings,
    run_id: str,
    tags: Mapping[str, str],
    asset_selection: Sequence[AssetKey] | None,
    report: Callable[[str], None],
) -> BuildOutcome:
    from pipelines.definitions import build_definitions  # parses the dbt project first when it changed

    job = build_definitions(settings, report).resolve_job_def("build_and_publish")
    instance = dagster_instance(settings)
    started = time.monotonic()
    result_holder: dict[str, object] = {}

    def execute() -> None:
        try:
            result_holder["result"] = job.execute_in_process(
                run_config=QUIET_RUN_CONFIG,
                instance=instance,
                run_id=run_id,
                raise_on_error=False,
                tags=dict(tags),
                asset_selection=asset_selection,
            )
        except BaseException as error:  # reported below; the thread must not die silently
            result_holder["error"] = error

    log_path = settings.home / "logs" / f"build-{run_id}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    report(f"run {run_id}: dbt's own log goes to {log_path}")
    with log_path.open("w", encoding="utf-8") as log, contextlib.redirect_stdout(log):
        outcome = _follow(instance, run_id, execute, report)
    outcome.seconds = time.monotonic() - started
    if "error" in result_holder:
        outcome.errors.append(f"{type(result_holder['error']).__name__}: {result_holder['error']}")
        return outcome
    result = result_holder["result"]
    outcome.success = bool(result.success)
    if outcome.success:
        from release.local_store import current_version

        outcome.published_version = current_version(Path(settings.snapshots_dir))
    return outcome


def _follow(instance, run_id: str, execute: Callable[[], None], report: Callable[[str], None]) -> BuildOutcome:
    """Run ``execute`` in a worker thread and report the run's events until it ends."""
    started = time.monotonic()
    worker = threading.Thread(target=execute, name="reuse-data-build", daemon=True)
    worker.start()
    outcome = BuildOutcome(success=False, run_id=run_id, seconds=0.0)
    cursor = None
    while True:
        finished = not worker.is_alive()
        if instance.get_run_by_id(run_id) is not None:
            while True:
                records = instance.get_records_for_run(run_id, cursor=cursor, limit=500)
                for record in records.records:
                    classified = _classify(record.event_log_entry)
                    if classified is None:
                        continue
                    kind, subject = classified
                    {
                        "materialized": outcome.materialized,
                        "failed_check": outcome.failed_checks,
                        "error": outcome.errors,
                    }.get(kind, []).append(subject)
                    report(f"[{time.monotonic() - started:6.1f}s] " + PROGRESS_FORMATS[kind].format(subject))
                cursor = records.cursor
                if not records.has_more:
                    break
        if finished:
            break
        time.sleep(POLL_SECONDS)
    worker.join()
    return outcome


def latest_materialization_metadata(dagster_home: Path, asset_key: list[str]) -> dict[str, object]:
    """The metadata of an asset's newest materialisation in the Dagster instance at ``dagster_home``
    (values unwrapped), or an empty dict when it was never materialised."""
    from dagster import AssetKey, DagsterInstance

    with DagsterInstance.from_config(str(dagster_home)) as instance:
        event = instance.get_latest_materialization_event(AssetKey(asset_key))
    if event is None or event.asset_materialization is None:
        return {}
    return {name: entry.value for name, entry in event.asset_materialization.metadata.items()}
