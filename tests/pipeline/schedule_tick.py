"""The daily_build schedule's latest tick, submitted as the Dagster daemon's scheduler submits it
(run in its own process, for the tests).

    python -m tests.pipeline.schedule_tick [--on-cue]

It loads ``workspace.yaml`` as the daemon does and hands the scheduler's own
``launch_scheduled_runs_for_schedule`` a schedule state that last ran just before the schedule's
latest tick (today's or yesterday's 04:15 UTC): the code server evaluates the schedule for that
time, and its run request is created with the scheduler's tags and submitted to the instance's
run coordinator. Under the QueuedRunCoordinator the run waits in the queue for a running
dagster-daemon to launch it. Prints the tick's status and run ids as one JSON line.

With --on-cue it loads the workspace first, prints ``ready``, and submits the tick when a line
arrives on its standard input: a test decides when, without waiting for the loading.
"""

from __future__ import annotations

import json
import logging
import sys
import time

from foundations.settings import PROJECT_ROOT, load_settings

SCHEDULE = "daily_build"


def main() -> None:
    from pipelines.build import prepare_dagster_home

    prepare_dagster_home(load_settings())
    import dagster._daemon  # noqa: F401  (before dagster._scheduler, which imports it circularly)
    from dagster import DagsterInstance
    from dagster._core.definitions.run_request import InstigatorType
    from dagster._core.scheduler.instigation import InstigatorState, InstigatorStatus, ScheduleInstigatorData
    from dagster._core.workspace.context import WorkspaceProcessContext
    from dagster._core.workspace.load_target import WorkspaceFileTarget
    from dagster._scheduler.scheduler import launch_scheduled_runs_for_schedule

    target = WorkspaceFileTarget(paths=[str(PROJECT_ROOT / "workspace.yaml")])
    with DagsterInstance.get() as instance, WorkspaceProcessContext(instance, target) as workspace:
        (location,) = [
            entry.code_location for entry in workspace.create_request_context().get_code_location_entries().values()
        ]
        (repository,) = location.get_repositories().values()
        schedule = repository.get_schedule(SCHEDULE)
        if "--on-cue" in sys.argv:
            print("ready", flush=True)
            sys.stdin.readline()
        tick_time = next(schedule.execution_time_iterator(time.time(), ascending=False))
        last_run_just_before = ScheduleInstigatorData(schedule.cron_schedule, start_timestamp=tick_time.timestamp() - 1)
        stored = instance.get_instigator_state(schedule.get_remote_origin_id(), schedule.selector_id)
        if stored is None:  # no daemon has seen the schedule yet
            stored = instance.add_instigator_state(
                InstigatorState(
                    schedule.get_remote_origin(),
                    InstigatorType.SCHEDULE,
                    InstigatorStatus.DECLARED_IN_CODE,
                    last_run_just_before,
                )
            )
        launch_scheduled_runs_for_schedule(
            workspace,
            logging.getLogger("schedule_tick"),
            schedule,
            stored.with_data(last_run_just_before),
            end_datetime_utc=tick_time,
            max_catchup_runs=1,
            max_tick_retries=0,
            tick_retention_settings=instance.get_tick_retention_settings(InstigatorType.SCHEDULE),
            schedule_debug_crash_flags=None,
            submit_threadpool_executor=None,
            in_memory_last_iteration_timestamp=None,
        )
        (tick,) = instance.get_ticks(schedule.get_remote_origin_id(), schedule.selector_id, limit=1)
    print(json.dumps({"tick": tick.status.value, "tick_time": tick_time.isoformat(), "run_ids": list(tick.run_ids)}))


if __name__ == "__main__":
    main()
