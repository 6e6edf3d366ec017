"""The crash soak's own plumbing (benchmarks/crash_soak.py): reading the build's phases, finding
temporary files, judging the snapshot left after a kill. `make soak` runs the soak itself."""

from pathlib import Path

import pytest

from benchmarks.crash_soak import Round, check_snapshot, leftovers, phase_of, summary
from release.local_store import CURRENT_FILE
from tests.support.build_warehouses import make_build_warehouse, publish_snapshot_alone
from tests.support.harness import home_layout


def test_the_phase_follows_the_builds_progress_lines():
    lines = [
        "building from demo into var",
        "[   2.3s] ▸ raw__answers",
        "[   2.6s] ✓ raw/answers",
        "[   3.3s] ▸ raw__bench_readings",
        "[   4.0s] ▸ dbt_models",
        "[  15.5s] ✓ staging/stg_answers",
        "[  22.5s] ▸ marts__answers_translations_complete",
        "[  22.5s] ▸ published__snapshot.publish",
        "[  22.9s] ✓ published/snapshot",
    ]
    phases, phase = [], ""
    for line in lines:
        phase = phase_of(line, phase)
        phases.append(phase)
    assert phases == ["", "ingest", "ingest", "ingest", "dbt", "dbt", "dbt", "publish", "publish"]


def test_leftovers_are_the_temporary_files_outside_dagsters_storage(tmp_path: Path):
    home = tmp_path / "home"
    left = [
        "snapshots/.staging-20261123T170037320Z",
        "snapshots/.staging-CURRENT.4242",
        "warehouse/.bench-sheet-digests.json.staging",
        "warehouse/build.duckdb.wal",
        "warehouse/build.duckdb.tmp",
        "intake/sheets/.3f2a.9c1d.part",
    ]
    kept = ["snapshots/20261123T170037320Z/snapshot.duckdb", "snapshots/CURRENT", "warehouse/build.duckdb"]
    kept += ["dagster/x.db-wal"]
    kept += ["dagster/storage/.run.1234", "intake/sheets/3f2a.csv", "warehouse/bench-sheet-digests.json"]
    for name in left + kept:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text("x")
    assert leftovers(home) == sorted(left)


def test_the_snapshot_after_a_kill_is_kept_new_or_an_error(tmp_path: Path):
    home = tmp_path / "home"
    store = home_layout(home).snapshots_dir
    before = publish_snapshot_alone(store, make_build_warehouse(tmp_path / "build.duckdb", 1)).version
    assert check_snapshot(home, before) == "kept"
    publish_snapshot_alone(store, make_build_warehouse(tmp_path / "build.duckdb", 2))
    assert check_snapshot(home, before) == "new"
    (store / CURRENT_FILE).write_text("20991231T000000000Z\n")
    with pytest.raises(SystemExit, match="not a complete snapshot"):
        check_snapshot(home, before)
    (store / CURRENT_FILE).write_text(before + "\n")
    (store / before / "manifest.json").chmod(0o644)
    manifest = (store / before / "manifest.json").read_text()
    (store / before / "manifest.json").write_text(manifest.replace('"size": ', '"size": 1', 1))
    with pytest.raises(SystemExit, match=r"not whole: release .* snapshot.duckdb has"):
        check_snapshot(home, before)


def test_the_summary_counts_kills_by_phase_and_says_what_failed():
    rounds = [
        Round("ingest", "ingest", 3.0, "kept", 20.0),
        Round("dbt", "dbt", 9.0, "kept", 21.0),
        Round("publish", "", 0.0, "new", 22.0),
        Round("publish", "publish", 23.0, "new", 20.5, ["snapshots/.staging-x"]),
    ]
    text = summary(rounds, requests=900, failures=["/api/public/products.json: 500"], seed=7)
    assert "4 rounds, 3 kills landed (1 builds ended before their kill)" in text
    assert "| publish | 1 | 0 | 1 |" in text
    assert "snapshots/.staging-x" in text and "900 requests during the soak with 1 failures" in text
