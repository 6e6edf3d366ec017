"""Shared fixtures: an isolated REUSE_DATA_HOME, copies of the demo inputs, real CLI runs."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.harness import home_environment

# Fixtures of real servers the tests start (tests/support): SeaweedFS for the object store.
pytest_plugins = ["tests.support.seaweedfs", "tests.support.release_store"]

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEMO = PROJECT_ROOT / "demo"

# Nothing a test does may touch var/ or ~: every test session gets its own home.
_SESSION_HOME = Path(tempfile.mkdtemp(prefix="reuse-data-tests-"))
os.environ["REUSE_DATA_HOME"] = str(_SESSION_HOME / "home")
os.environ["DAGSTER_HOME"] = str(_SESSION_HOME / "home" / "dagster")
(_SESSION_HOME / "home" / "dagster").mkdir(parents=True, exist_ok=True)
# A build on a library the demo's shipped encoder was not trained on trains the short recipe:
# the whole machinery, in seconds rather than the full recipe's minutes.
os.environ["REUSE_DATA_ASK_TRAINING"] = "short"


@dataclass
class CliResult:
    returncode: int
    output: str


def run_cli(
    *args: str, home: Path, inputs: Path | None = None, timeout: int = 600, environ: dict[str, str] | None = None
) -> CliResult:
    """Run `reuse-data ARGS` in a fresh process with its own REUSE_DATA_HOME (and ``environ``)."""
    env = {**home_environment(home, inputs), **(environ or {})}
    completed = subprocess.run(
        [sys.executable, "-m", "reuse_data.cli", *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return CliResult(completed.returncode, completed.stdout + completed.stderr)


@pytest.fixture(scope="session")
def session_dir() -> Path:
    return _SESSION_HOME


@pytest.fixture(scope="session")
def demo_home(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The demo built by a real `reuse-data build`, once per test run: with the suite spread over
    processes (pytest-xdist), the first to ask builds it under a lock and the others wait for it
    and share it. Read it, never write it: a test that builds or publishes works on a copy
    (``tests.support.harness.copy_home``)."""
    run_dir = tmp_path_factory.getbasetemp()
    shared = run_dir if worker_id == "master" else run_dir.parent  # the run's folder, above each process's
    home, built = shared / "demo-build" / "home", shared / "demo-build" / "built"
    with (shared / "demo-build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not built.exists():
            if home.exists():  # a build another process began and failed: start again
                shutil.rmtree(home)
            result = run_cli("build", home=home)
            assert result.returncode == 0, result.output[-3000:]
            built.write_text(result.output, encoding="utf-8")
    return home


def copy_demo(target: Path) -> Path:
    shutil.copytree(DEMO, target)
    return target


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_SESSION_HOME, ignore_errors=True)
