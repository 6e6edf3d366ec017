"""The intake sensor: a sheet accepted (or withdrawn) at the intake starts a build that publishes it.

That build materialises only the bench readings and what depends on them (``intake_build_selection``).
The intake itself has this sensor evaluated through Dagster's webserver the moment it accepts a
sheet, and launches the run it asks for (``intake.build_request``); the sensor's own ticks are
the safety net, and they skip while that run is in flight.

The sensor asks the intake store which receipts the newest published snapshot does not hold
yet in their current status. As long as any remain (a crash after a sheet was accepted, a
daemon restart, a build that died) the next tick requests a build again, unless one is
already running or the last build of exactly these receipts failed: then it waits for a
person (the failure is in the Dagster UI, and `reuse-data build` retries by hand).

A build whose process died (killed, or the machine went down) stays "started" in Dagster's
run storage for ever. A run in flight that has logged no event for
``REUSE_DATA_STALE_BUILD_SECONDS`` (15 minutes by default) is therefore marked failed and
tagged abandoned, and the receipts it held are built again; an abandoned run is not a
failure that waits for a person. (A run waiting for another build to finish logs so every
minute, ``pipelines.build_lock``: it is not silent.)
"""

import time

from dagster import (
    AssetKey,
    AssetSelection,
    DagsterInstance,
    DagsterRun,
    DagsterRunStatus,
    DefaultSensorStatus,
    RepositoryDefinition,
    RunRequest,
    RunsFilter,
    SensorEvaluationContext,
    SkipReason,
    sensor,
)

from foundations.settings import Settings
from intake.build_request import INTAKE_SENSOR, INTAKE_STATE_TAG
from intake.store import IntakeStore, unpublished_state
from pipelines.assets.dbt import warehouse_built_from_project
from pipelines.resources import SettingsResource
from pipelines.schedules import build_and_publish
from warehouse.raw_bench import BENCH_TABLE, RAW_SCHEMA

SCOPE_TAG = "reuse-data/scope"
BENCH_READINGS_AND_DOWNSTREAM = AssetSelection.assets(AssetKey([RAW_SCHEMA, BENCH_TABLE])).downstream()
ABANDONED_TAG = "reuse-data/abandoned"
# A queued run waits for the daemon's queue, however long; a run past it should be logging events.
IN_FLIGHT = [DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED]
MAY_BE_ABANDONED = {DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED}


def intake_state(settings: Settings) -> tuple[str, list[str]]:
    """A digest of the unpublished receipts and their statuses, and a description of them."""
    pending = IntakeStore(settings.home).unpublished()
    return unpublished_state(pending), [f"{r.id} ({r.status})" for r in pending]


def last_sign_of_life(instance: DagsterInstance, run: DagsterRun) -> float:
    """When the run last logged an event (or was created), as a Unix time."""
    newest = instance.get_records_for_run(run.run_id, limit=1, ascending=False).records
    if newest:
        return newest[0].event_log_entry.timestamp
    record = instance.get_run_record_by_id(run.run_id)
    return record.create_timestamp.timestamp() if record else 0.0


def abandon_silent_runs(instance: DagsterInstance, runs: list[DagsterRun], silent_seconds: float) -> list[DagsterRun]:
    """Mark failed (and tag abandoned) each run that has been silent longer than ``silent_seconds``;
    returns the runs still alive."""
    alive = []
    now = time.time()
    for run in runs:
        silent_for = now - last_sign_of_life(instance, run)
        if run.status in MAY_BE_ABANDONED and silent_for > silent_seconds:
            instance.add_run_tags(run.run_id, {ABANDONED_TAG: "true"})
            message = f"No event for {silent_for:.0f} s: the build's process is gone; the intake sensor builds again."
            instance.report_run_failed(run, message=message)
        else:
            alive.append(run)
    return alive


@sensor(
    name=INTAKE_SENSOR,
    job=build_and_publish,
    # dagster-daemon evaluates sensors on a 5 s loop at best; an interval of 5 would skip every
    # other pass (4.99 s since the last tick is under 5), so a sheet could wait 10 s for its build.
    minimum_interval_seconds=1,
    default_status=DefaultSensorStatus.RUNNING,
    description="Builds and publishes when the tester intake has accepted or withdrawn a sheet.",
)
def intake_inbox(context: SensorEvaluationContext, settings: SettingsResource):
    state, pending = intake_state(settings.settings)
    if not pending:
        return SkipReason("every intake receipt is published")
    in_flight = context.instance.get_runs(filters=RunsFilter(job_name=build_and_publish.name, statuses=IN_FLIGHT))
    if abandon_silent_runs(context.instance, in_flight, settings.stale_build_seconds):
        return SkipReason("a build is already running; the next tick looks again")
    last = context.instance.get_runs(filters=RunsFilter(tags={INTAKE_STATE_TAG: state}), limit=1)
    if last and last[0].status == DagsterRunStatus.FAILURE and ABANDONED_TAG not in last[0].tags:
        return SkipReason(f"the last build of these receipts failed (run {last[0].run_id}); see it, then rebuild")
    selection = intake_build_selection(context.repository_def, settings.settings)
    scope = "everything" if selection is None else "bench readings and what depends on them"
    return RunRequest(
        asset_selection=selection,
        tags={INTAKE_STATE_TAG: state, SCOPE_TAG: scope, "reuse-data/receipts": ", ".join(pending)[:1000]},
    )


def intake_build_selection(repository: RepositoryDefinition, settings: Settings) -> list[AssetKey] | None:
    """What an intake build materialises: the bench readings, everything computed from them and
    the publish, with their checks; None (every asset) when the warehouse's models were not all
    built from the dbt project as it is now, since a full refresh must then rebuild them all.

    The editorial export's assets are left as the last full build made them (the daily build
    and `reuse-data build` ingest editorial changes); an uploaded sheet does not touch them.
    """
    if not warehouse_built_from_project(settings):
        return None
    return sorted(BENCH_READINGS_AND_DOWNSTREAM.resolve(repository.asset_graph), key=lambda key: key.to_user_string())
