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
    home, built = shared / "demo-build" / "home", built_marker(shared / "demo-build" / "home")
    with (shared / "demo-build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not built.exists():
            if home.exists():  # a build another process began and failed: start again
                shutil.rmtree(home)
            result = run_cli("build", home=home)
            assert result.returncode == 0, result.output[-3000:]
            built.write_text(result.output, encoding="utf-8")
    return home


def built_marker(home: Path) -> Path:
    """Beside the shared demo home: written once its build has succeeded, with what it printed."""
    return home.parent / "built"


def demo_build_output(demo_home: Path) -> str:
    """What the `reuse-data build` of ``demo_home`` printed (a first build, into an empty home)."""
    return built_marker(demo_home).read_text(encoding="utf-8")


def copy_demo(target: Path) -> Path:
    shutil.copytree(DEMO, target)
    return target


# The slowest modules and about how long each takes, in seconds, on the 2-core machine the suite's
# budget is set for (its module-scoped builds included; the shared demo build not). With
# `make test` each module runs whole on one of the test processes (pytest-xdist --dist loadfile),
# which take them in the order of the collection: the slowest go first, so that the last ones
# handed out are short and no process is left finishing a long module while the other idles.
# Unlisted modules follow in their usual order. Refresh from a full run (`--durations`, or the
# modules' wall times) when a module gains or loses a minute or more.
MODULE_SECONDS = {  # from a full run on 2 processes, 2026-11-27, the ask vector cache empty
    "tests/pipeline/test_build.py": 600,  # before its history started from the demo build
    "tests/pipeline/test_benchmark_plumbing.py": 490,
    "tests/pipeline/test_ask_training.py": 200,  # a two-category library, built and embedded whole
    "tests/api/test_intake.py": 315,
    "tests/api/test_question_loop.py": 240,
    "tests/pipeline/test_dagster_postgres.py": 200,
    "tests/api/test_snapshot_switch.py": 160,
    "tests/api/test_ask.py": 105,
    "tests/api/test_object_store.py": 95,
    "tests/api/test_replicas_behind_balancer.py": 85,  # two builds of the questions alone
    "tests/api/test_hostile_input.py": 80,
    "tests/pipeline/test_one_build_at_a_time.py": 75,
    "tests/api/test_streaming.py": 60,
    "tests/unit/test_ask_training.py": 50,
    "tests/api/test_mcp.py": 45,
    "tests/api/test_trusted_hosts.py": 25,  # a server of its own, and the intake
    "tests/api/test_serving_benchmark.py": 35,
    "tests/pipeline/test_definitions.py": 25,
}
for _listed in MODULE_SECONDS:  # a module renamed or removed must not be forgotten here
    assert (PROJECT_ROOT / _listed).is_file(), f"MODULE_SECONDS names {_listed}, which is not there"


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist hands out the modules with the most tests first unless told to keep the order
    # of the collection, which ``pytest_collection_modifyitems`` sets (the option exists only
    # where pytest-xdist is installed; it is read by the controlling process).
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules, slowest first (``MODULE_SECONDS``), the tests of each in their own order.

    The modules that read the shared demo build (``demo_home``) cannot start before it is built,
    and the first of them to start builds it: so the slowest of them goes first, and the slowest
    of the others second, for the second process to run while the first builds the demo.
    """
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    ranked = sorted(modules, key=lambda module: -MODULE_SECONDS.get(module, 0))

    def needs_demo(module: str) -> bool:
        return any("demo_home" in getattr(item, "fixturenames", ()) for item in modules[module])

    first = next((module for module in ranked if needs_demo(module)), None)
    second = next((module for module in ranked if not needs_demo(module)), None)
    order = [module for module in (first, second) if module is not None]
    order += [module for module in ranked if module not in order]
    items[:] = [item for module in order for item in modules[module]]


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_SESSION_HOME, ignore_errors=True)
