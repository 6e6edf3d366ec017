"""One build at a time: two `reuse-data build` started at once on one home, and a third, allowed to
wait only a moment (REUSE_DATA_BUILD_WAIT_SECONDS=2), started while they run.

The first to take the build lock builds; the second says that it waits, for which build and for
how long at most, and builds once the first has finished; the third gives up with a sentence and
exit code 2. None of them reports a failed step or blames the inputs.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from dagster import DagsterInstance

from release.local_store import versions
from tests.conftest import PROJECT_ROOT
from tests.support.harness import copy_home, home_environment, home_layout

WAITING = "is already running; waiting for it to finish"
RUNNING_BUILD = r"a build \(run (?P<run>[0-9a-f-]{36}), started by cli at [0-9: -]+ UTC\)"
NOT_AN_INPUT_PROBLEM = ("failed", "fix the inputs")


@dataclass
class Build:
    """A `reuse-data build` process and the lines it has printed so far."""

    process: subprocess.Popen
    lines: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None

    @classmethod
    def start(cls, home: Path, **environ: str) -> Build:
        process = subprocess.Popen(
            [sys.executable, "-m", "reuse_data.cli", "build"],
            cwd=PROJECT_ROOT,
            env={**home_environment(home), **environ},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        build = cls(process)
        build.reader = threading.Thread(target=lambda: build.lines.extend(process.stdout), daemon=True)
        build.reader.start()
        return build

    def finish(self) -> None:
        self.process.wait(timeout=600)
        self.reader.join()

    @property
    def output(self) -> str:
        return "".join(self.lines)

    @property
    def run_id(self) -> str:
        return re.findall(r"\(run ([0-9a-f-]{36})\)", self.output)[-1]


@dataclass
class Contest:
    home: Path
    winner: Build
    waiter: Build
    impatient: Build


@pytest.fixture(scope="module")
def contest(tmp_path_factory, demo_home: Path) -> Contest:
    # From a built home: what is contested is the warehouse, not a first build's work.
    home = copy_home(demo_home, tmp_path_factory.mktemp("one-build-at-a-time") / "home")
    builds = [Build.start(home), Build.start(home)]
    deadline = time.monotonic() + 60
    while not any(WAITING in build.output for build in builds):
        assert time.monotonic() < deadline, "neither build said it waits:\n" + "\n".join(b.output for b in builds)
        time.sleep(0.2)
    impatient = Build.start(home, REUSE_DATA_BUILD_WAIT_SECONDS="2")
    impatient.finish()
    for build in builds:
        build.finish()
    waiter, winner = sorted(builds, key=lambda build: WAITING not in build.output)
    return Contest(home, winner, waiter, impatient)


def test_two_builds_started_at_once_both_publish_one_after_the_other(contest: Contest):
    for build in (contest.winner, contest.waiter):
        assert build.process.returncode == 0, build.output[-3000:]
        assert not any(word in build.output for word in NOT_AN_INPUT_PROBLEM), build.output[-3000:]
    waiting = next(line for line in contest.waiter.lines if WAITING in line)
    said = re.fullmatch(f"{RUNNING_BUILD} {WAITING}, up to 30 min \\(Ctrl\\+C to stop\\)\n", waiting)
    assert said and said["run"] == contest.winner.run_id, waiting
    assert len(versions(home_layout(contest.home).snapshots_dir)) == 1 + 2  # the copied release, then one each
    with DagsterInstance.from_config(str(home_layout(contest.home).dagster_home)) as instance:
        first = instance.get_run_record_by_id(contest.winner.run_id)
        second = instance.get_run_record_by_id(contest.waiter.run_id)
    assert first.end_time <= second.start_time


def test_a_build_that_may_not_wait_long_enough_refuses_with_a_sentence(contest: Contest):
    output = contest.impatient.output
    assert contest.impatient.process.returncode == 2, output
    assert not any(word in output for word in NOT_AN_INPUT_PROBLEM), output
    waiting, refusal = contest.impatient.lines[-2:]
    assert re.fullmatch(f"{RUNNING_BUILD} {WAITING}, up to 2 s \\(Ctrl\\+C to stop\\)\n", waiting), output
    said = re.fullmatch(
        f"error: {RUNNING_BUILD} is already running; gave up waiting for it after 2 s "
        "\\(REUSE_DATA_BUILD_WAIT_SECONDS\\); run `reuse-data build` again once it has finished\n",
        refusal,
    )
    assert said and said["run"] == contest.winner.run_id, output
