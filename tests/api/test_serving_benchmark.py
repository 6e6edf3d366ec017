"""The serving benchmark still works: a tiny run end to end through wrk, our server and the floor.

No timed assertion: only that every requested measurement comes back with figures and no failed
request. (Datasette is left out here: installing it needs the package index.)
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from foundations.settings import PROJECT_ROOT
from tests.support.harness import copy_home, home_environment

pytestmark = pytest.mark.skipif(
    shutil.which("wrk") is None, reason="wrk is not installed: `make setup` installs Debian's wrk"
)
RATE = r"[\d,.]+ (req/s|MB/s)"


def test_a_tiny_serving_benchmark_measures_every_requested_operation(demo_home: Path, tmp_path: Path):
    home = copy_home(demo_home, tmp_path / "home")
    argv = [sys.executable, "-m", "benchmarks.serving", "--seconds", "1", "--rounds", "2", "--connections", "4"]
    argv += ["--processes", "2"]  # each round on a process of its own
    argv += ["--rows", "600"]
    argv += ["--clients", "3", "--no-datasette", "--operations", "products,page,benchCsv,benchJsonl"]
    environment = home_environment(home)
    completed = subprocess.run(argv, cwd=PROJECT_ROOT, env=environment, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    report = completed.stdout
    labels = ["products.json", "page.json?path=/guides/start-here", "bench.jsonl?limit=600", "bench.csv?limit=600"]
    for label in [*labels, "products.json, 304"]:
        row = next((line for line in report.splitlines() if line.startswith(f"| `{label}` |")), None)
        assert row is not None, f"no row for {label} in:\n{report}"
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert re.fullmatch(RATE, cells[1]) and re.fullmatch(RATE, cells[3]), row
        assert float(cells[5]) > 0 and cells[7] == "n/a", row
    assert "[5/5] products.json, 304" in completed.stderr
    # ours / floor of each of the 2 rounds, and how many met the target
    assert re.search(r"\| `products.json, 304` \| [\d.]+ \| [\d.]+ \| 0.9 \([012] of 2\) \|", report), report
    assert "each run on the next of 2 processes of each" in report
    for export in labels[2:]:
        assert re.search(rf"\| ours, `{re.escape(export)}` \| [\d.]+ \| [\d.]+ \|", report), report
        assert re.search(rf"\| ours, `{re.escape(export)}` \| 3 \| [\d.]+ \| -?[\d.]+ \|", report), report
        single = rf"\| ours, `{re.escape(export)}` \| [\d.]+ \| \d+ \| \d+ \| [\d.]+ \| n/a \| n/a \| n/a \|"
        assert re.search(single, report), report
    assert "| floor, CSV |" in report
    recorded = json.loads((home / "bench" / "serving" / "recorded.json").read_text(encoding="utf-8"))
    # The floor's 304 repeats what ours repeats: the same bytes, not a bare ETag.
    not_modified = recorded["/api/public/products.json"]["not_modified"]
    assert {"etag", "cache-control", "x-dataset-version", "vary"} <= set(not_modified), not_modified


def test_a_wrong_operation_is_refused_with_the_valid_ones():
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.serving", "--operations", "products,nope"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 2
    assert "unknown ['nope']" in completed.stderr and "benchJsonl" in completed.stderr
