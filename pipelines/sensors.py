"""The intake sensor: a sheet accepted (or withdrawn) at the intake starts a build that publishes it.

The sensor asks the intake store which receipts the newest published snapshot does not hold
yet in their current status. As long as any remain (a crash after a sheet was accepted, a
daemon restart, a build that died) the next tick requests a build again, unless one is
already running or the last build of exactly these receipts failed: then it waits for a
person (the failure is in the Dagster UI, and `reuse-data build` retries by hand).
"""

import hashlib

from dagster import (
    DagsterRunStatus,
    DefaultSensorStatus,
    RunRequest,
    RunsFilter,
    SensorEvaluationContext,
    SkipReason,
    sensor,
)

from pipelines.schedules import build_and_publish
from reuse_data.intake_store import IntakeStore
from reuse_data.settings import load_settings

INTAKE_STATE_TAG = "reuse-data/intake-state"
IN_FLIGHT = [DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTING, DagsterRunStatus.STARTED]


def intake_state() -> tuple[str, list[str]]:
    """A digest of the unpublished receipts and their statuses, and a description of them."""
    pending = IntakeStore(load_settings().home).unpublished()
    described = [f"{r.id} ({r.status})" for r in pending]
    return hashlib.sha256("\n".join(sorted(described)).encode()).hexdigest()[:16], described


@sensor(
    job=build_and_publish,
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.RUNNING,
    description="Builds and publishes when the tester intake has accepted or withdrawn a sheet.",
)
def intake_inbox(context: SensorEvaluationContext):
    state, pending = intake_state()
    if not pending:
        return SkipReason("every intake receipt is published")
    job_runs = RunsFilter(job_name=build_and_publish.name, statuses=IN_FLIGHT)
    if context.instance.get_runs(filters=job_runs, limit=1):
        return SkipReason("a build is already running; the next tick looks again")
    last = context.instance.get_runs(filters=RunsFilter(tags={INTAKE_STATE_TAG: state}), limit=1)
    if last and last[0].status == DagsterRunStatus.FAILURE:
        return SkipReason(f"the last build of these receipts failed (run {last[0].run_id}); see it, then rebuild")
    return RunRequest(tags={INTAKE_STATE_TAG: state, "reuse-data/receipts": ", ".join(pending)[:1000]})
