"""The production Dagster instance: run, event-log and schedule storage in a real PostgreSQL 15.

One home, one dagster-daemon, three builds, each started the way it is in production:

1. `reuse-data build` publishes the first release (in-process, recorded in PostgreSQL);
2. a sheet uploaded at the intake makes the daemon's intake sensor ask for a build, which the
   daemon's run coordinator launches;
3. the daily_build schedule's latest tick is submitted to the run queue as the scheduler submits
   it (``tests.pipeline.schedule_tick``), while this test holds the build lock as another build
   would: the daemon launches the run, which waits for the lock, saying so in its log, and
   builds once the lock is free.

The tests then read every run and its events back from PostgreSQL, as the Dagster UI does.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from dagster import AssetKey, DagsterEventType, DagsterInstance, DagsterRunStatus, RunsFilter

from intake.store import IntakeStore
from pipelines.build import DAGSTER_POSTGRES_URL_VARIABLE
from pipelines.build_lock import BuildHolder, one_build_at_a_time
from tests.conftest import PROJECT_ROOT
from tests.support.harness import copy_home, dagster_daemon, home_environment, home_layout, serving, wait_for
from tests.support.intake_sheets import TESTER, good_row, sheet, upload

PUBLISHED = AssetKey(["published", "snapshot"])
FINISHED = {DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED}
THIS_TEST = BuildHolder.starting_now("held-by-the-test", "the test")
WAITING = "is already running; waiting for it to finish"


@dataclass
class Deployment:
    home: Path
    instance: DagsterInstance
    password: str
    run_ids: dict[str, str]  # how the build was started -> its run
    daemon_log: Path


def log_messages(instance: DagsterInstance, run_id: str) -> list[str]:
    """What the run logged, as the Dagster UI lists it."""
    return [record.event_log_entry.user_message for record in instance.get_records_for_run(run_id).records]


@pytest.fixture(scope="module")
def deployment(postgres_url: str, tmp_path_factory, demo_home: Path) -> Iterator[Deployment]:
    root = tmp_path_factory.mktemp("postgres")
    # A built warehouse and release, and a Dagster instance of its own: every run here is the instance's.
    home, daemon_log = copy_home(demo_home, root / "home"), root / "daemon.log"
    env = {**home_environment(home), DAGSTER_POSTGRES_URL_VARIABLE: postgres_url}
    run_ids: dict[str, str] = {}

    built = subprocess.run(
        [sys.executable, "-m", "reuse_data.cli", "build"], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    run_ids["cli"] = re.findall(r"\(run ([0-9a-f-]{36})\)", built.stdout)[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(DAGSTER_POSTGRES_URL_VARIABLE, postgres_url)  # what the instance's dagster.yaml reads
        instance = DagsterInstance.from_config(str(home_layout(home).dagster_home))

        def sensor_run_waiting_for_the_lock() -> str | None:
            runs = instance.get_runs(RunsFilter(tags={"dagster/sensor_name": "intake_inbox"}))
            return next((run.run_id for run in runs if WAITING in "".join(log_messages(instance, run.run_id))), None)

        def finished(*run_ids: str) -> bool:
            return all(instance.get_run_by_id(run_id).status in FINISHED for run_id in run_ids)

        token = IntakeStore(home).add_tester(TESTER)
        with serving(home, command="intake", ready="/") as intake:
            receipt = upload(intake, sheet(good_row(reading="9.5")), token).json()["id"]
        # The scheduler's tick, loaded meanwhile and submitted once the sensor's run is launched: a daily
        # build in flight first would build the sheet itself, and the sensor would ask for nothing.
        tick = subprocess.Popen(
            [sys.executable, "-m", "tests.pipeline.schedule_tick", "--on-cue"],
            cwd=PROJECT_ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        with dagster_daemon(env, daemon_log):
            with one_build_at_a_time(home_layout(home).warehouse_path, THIS_TEST, 0, print, "the test ends it"):
                run_ids["sensor"] = wait_for("the sensor run", sensor_run_waiting_for_the_lock, 180, daemon_log)
            while tick.stdout.readline() not in ("ready\n", ""):
                pass  # its code server's log, until it is ready
            printed, complaints = tick.communicate("go\n", timeout=180)
            assert tick.returncode == 0, complaints[-3000:]
            (outcome,) = [line for line in printed.splitlines() if line.startswith('{"tick"')]
            (run_ids["schedule"],) = json.loads(outcome)["run_ids"]
            wait_for("the end of both runs", lambda: finished(run_ids["sensor"], run_ids["schedule"]), 300, daemon_log)
        assert IntakeStore(home).receipt(receipt).published
        try:
            yield Deployment(home, instance, urlsplit(postgres_url).password, run_ids, daemon_log)
        finally:
            instance.dispose()


def test_the_instance_keeps_runs_events_and_schedules_in_postgres(deployment: Deployment):
    from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage, PostgresScheduleStorage

    instance = deployment.instance
    assert isinstance(instance.run_storage, PostgresRunStorage)
    assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
    assert isinstance(instance.schedule_storage, PostgresScheduleStorage)
    dagster_home = home_layout(deployment.home).dagster_home
    assert not (dagster_home / "history").exists() and not (dagster_home / "schedules").exists()  # no SQLite
    config = (dagster_home / "dagster.yaml").read_text(encoding="utf-8")
    assert f"env: {DAGSTER_POSTGRES_URL_VARIABLE}" in config and deployment.password not in config


def test_every_build_is_a_successful_run_with_its_events_and_its_own_release(deployment: Deployment):
    instance = deployment.instance
    releases = set()
    for started_by, run_id in deployment.run_ids.items():
        run = instance.get_run_by_id(run_id)
        assert run.status == DagsterRunStatus.SUCCESS, (started_by, log_messages(instance, run_id)[-20:])
        events = [record.event_log_entry for record in instance.get_records_for_run(run_id).records]
        kinds = {event.dagster_event_type for event in events}
        assert {DagsterEventType.RUN_START, DagsterEventType.STEP_SUCCESS, DagsterEventType.RUN_SUCCESS} <= kinds
        (published,) = [e for e in events if e.asset_materialization and e.asset_materialization.asset_key == PUBLISHED]
        version = published.asset_materialization.metadata["version"].value
        assert (home_layout(deployment.home).snapshots_dir / version).is_dir(), started_by
        releases.add(version)
    assert len(releases) == 3
    tags = {started_by: instance.get_run_by_id(run_id).tags for started_by, run_id in deployment.run_ids.items()}
    assert tags["cli"]["reuse-data/started-by"] == "cli"
    assert tags["sensor"]["dagster/sensor_name"] == "intake_inbox"
    assert tags["schedule"]["dagster/schedule_name"] == "daily_build"


def test_a_run_the_daemon_launches_while_another_build_runs_waits_for_it_saying_so(deployment: Deployment):
    instance = deployment.instance
    sensor, schedule = (instance.get_run_record_by_id(deployment.run_ids[by]) for by in ("sensor", "schedule"))
    assert [m for m in log_messages(instance, sensor.dagster_run.run_id) if WAITING in m] == [
        f"{THIS_TEST.describe()} {WAITING}, up to 30 min (terminate this run in the Dagster UI to stop)"
    ]
    # The scheduled run stayed in the queue until the sensor's had finished: it waited for no lock.
    assert sensor.end_time <= schedule.start_time
    assert not [m for m in log_messages(instance, schedule.dagster_run.run_id) if WAITING in m]
