"""The build lock between processes, and the Dagster instance's configuration each build writes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import astuple
from pathlib import Path

import pytest

from foundations.settings import SettingsError, load_settings
from pipelines.build import DAGSTER_POSTGRES_URL_VARIABLE, DAGSTER_YAML, POSTGRES_URL_SCHEME, prepare_dagster_home
from pipelines.build_lock import BuildAlreadyRunning, BuildHolder, one_build_at_a_time
from tests.conftest import PROJECT_ROOT

HOLDER = BuildHolder("1d7e4b38-9a51-4c59-8d3e-4c1b7a0f2e61", "schedule daily_build", "2026-11-24 04:15:02 UTC")
HOLD_UNTIL_KILLED = f"""
import sys, time
from pathlib import Path
from pipelines.build_lock import BuildHolder, one_build_at_a_time
with one_build_at_a_time(Path(sys.argv[1]), BuildHolder(*{astuple(HOLDER)!r}), 0, print, ""):
    print("held", flush=True)
    time.sleep(600)
"""


def test_a_build_names_the_one_it_waits_for_gives_up_past_the_bound_and_a_killed_holder_frees_it(tmp_path: Path):
    warehouse = tmp_path / "warehouse" / "build.duckdb"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_UNTIL_KILLED, str(warehouse)], cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline() == "held\n"
        said: list[str] = []
        with pytest.raises(BuildAlreadyRunning) as refusal, one_build_at_a_time(warehouse, HOLDER, 1, said.append, "X"):
            pytest.fail("the lock was taken twice")
        running = f"a build (run {HOLDER.run_id}, started by schedule daily_build at 2026-11-24 04:15:02 UTC)"
        assert said == [f"{running} is already running; waiting for it to finish, up to 1 s (X)"]
        assert str(refusal.value) == (
            f"{running} is already running; gave up waiting for it after 1 s (REUSE_DATA_BUILD_WAIT_SECONDS); "
            "run `reuse-data build` again once it has finished"
        )
    finally:
        os.kill(holder.pid, signal.SIGKILL)  # no chance to release it: the kernel does
        holder.wait()
    with one_build_at_a_time(warehouse, HOLDER, 0, pytest.fail, ""):
        pass


def test_the_instance_is_sqlite_unless_a_postgres_url_is_set_and_the_url_is_never_written(tmp_path: Path):
    url = f"{POSTGRES_URL_SCHEME}dagster:s3cret-password@db.internal:5432/dagster"
    embedded = load_settings({"REUSE_DATA_HOME": str(tmp_path)})
    production = load_settings({"REUSE_DATA_HOME": str(tmp_path), DAGSTER_POSTGRES_URL_VARIABLE: url})
    config = embedded.dagster_home / "dagster.yaml"

    prepare_dagster_home(embedded)
    assert config.read_text() == DAGSTER_YAML and "storage:" not in DAGSTER_YAML
    prepare_dagster_home(production)
    written = config.read_text()
    assert written.startswith(DAGSTER_YAML)
    assert f"storage:\n  postgres:\n    postgres_url:\n      env: {DAGSTER_POSTGRES_URL_VARIABLE}\n" in written
    assert "s3cret" not in written and DAGSTER_POSTGRES_URL_VARIABLE not in os.environ  # nor put in the environment
    prepare_dagster_home(embedded)  # back to the embedded instance
    assert config.read_text() == DAGSTER_YAML

    edited = DAGSTER_YAML.split("\n", 1)[1] + "# mine\n"  # the header deleted: the operator's own file
    config.write_text(edited)
    prepare_dagster_home(production)
    assert config.read_text() == edited


def test_a_postgres_url_without_the_installed_driver_is_refused_without_printing_it(tmp_path: Path):
    url = "postgresql://dagster:s3cret-password@db.internal:5432/dagster"
    settings = load_settings({"REUSE_DATA_HOME": str(tmp_path), DAGSTER_POSTGRES_URL_VARIABLE: url})
    with pytest.raises(SettingsError, match=f"{DAGSTER_POSTGRES_URL_VARIABLE} must start with postgresql") as refusal:
        prepare_dagster_home(settings)
    assert "s3cret" not in str(refusal.value)


def test_the_instance_command_writes_the_configuration_a_fresh_host_starts_dagster_on(tmp_path: Path):
    env = {**os.environ, "REUSE_DATA_HOME": str(tmp_path)}
    env.pop(DAGSTER_POSTGRES_URL_VARIABLE, None)
    written = subprocess.run(
        [sys.executable, "-m", "reuse_data.cli", "instance"], env=env, capture_output=True, text=True, cwd=PROJECT_ROOT
    )
    assert written.returncode == 0, written.stderr
    assert (tmp_path / "dagster" / "dagster.yaml").read_text() == DAGSTER_YAML
    assert f"DAGSTER_HOME={tmp_path / 'dagster'} dagster-daemon run" in written.stdout
