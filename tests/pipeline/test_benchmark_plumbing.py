"""The pipeline benchmarks still work: a tiny run of each, end to end.

No timed assertion: only that every figure comes back. `benchmarks.pipeline_scale` generates a
publisher, builds it, serves it, and publishes one sheet uploaded through a real intake while
`dagster dev` runs; `benchmarks/build_demo.py` measures the bare dbt baseline and the builds.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from foundations.settings import PROJECT_ROOT
from tests.support.harness import home_environment

NUMBER = r"[\d.]+"


def test_a_tiny_pipeline_scale_run_reports_every_figure(tmp_path: Path):
    argv = [sys.executable, "-m", "benchmarks.pipeline_scale", "--sizes", "2k"]
    completed = subprocess.run(
        argv, cwd=PROJECT_ROOT, env=home_environment(tmp_path), capture_output=True, text=True, timeout=600
    )
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-3000:]
    row = next((line for line in completed.stdout.splitlines() if line.startswith("| 2k |")), None)
    assert row is not None, completed.stdout
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    # readings, products, floor, build, build/floor, growth (none: one size), peak, snapshot,
    # release, first byte, the sheet's share of the cold build, its run launched / started,
    # sheets re-read, its ask steps and the ask gate, its dbt and publish beside the cold build's,
    # the release against a whole rewrite, nothing changed
    assert cells[:2] == ["2k", "20"] and cells[5] == "—", row
    assert all(re.fullmatch(NUMBER, cell) for cell in [*cells[2:5], *cells[6:9], *cells[13:15]]), row
    assert re.fullmatch(rf"{NUMBER} / {NUMBER}", cells[9]), row
    share = rf"{NUMBER} \({NUMBER} / {NUMBER}\)"
    assert all(re.fullmatch(share, cells[index]) for index in (10, 15, 16)), row
    assert re.fullmatch(rf"-?{NUMBER} / {NUMBER} \((intake|sensor)\)", cells[11]), row
    assert cells[12] == "1", row  # the build after the upload read only the uploaded sheet
    assert re.fullmatch(rf"{NUMBER} same bytes, {NUMBER} same rows", cells[17]), row  # none differs
    assert re.fullmatch(rf"{share}, {NUMBER} with Dagster", cells[18]), row
    assert "- met: 2k: the sheet's release is a whole rewrite's" in completed.stdout
    assert "2k: one uploaded sheet published in" in completed.stdout
    assert "the run started" in completed.stdout and "ask steps" in completed.stdout


def test_a_tiny_build_benchmark_measures_the_baseline_and_each_build(tmp_path: Path):
    # No synthetic run (--scale 0): generating and building one is test_a_tiny_pipeline_scale_run's.
    argv = [sys.executable, "benchmarks/build_demo.py", "--scale", "0"]
    completed = subprocess.run(
        argv, cwd=PROJECT_ROOT, env=home_environment(tmp_path), capture_output=True, text=True, timeout=600
    )
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-3000:]
    labels = ("baseline: dbt build alone, demo", "reuse-data build, demo (first)", "reuse-data build, demo (unchanged)")
    for label in labels:
        row = next((line for line in completed.stdout.splitlines() if line.startswith(f"| {label} |")), None)
        assert row is not None, completed.stdout
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert re.fullmatch(NUMBER, cells[1]) and re.fullmatch(rf"{NUMBER}x", cells[2]), row
