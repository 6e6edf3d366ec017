"""Shared fixtures: an isolated REUSE_DATA_HOME, copies of the demo inputs, real CLI runs."""

from __future__ import annotations

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


def copy_demo(target: Path) -> Path:
    shutil.copytree(DEMO, target)
    return target


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_SESSION_HOME, ignore_errors=True)
