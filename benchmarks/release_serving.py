"""Release serving at scale: a server's memory, its start and its pick-up of a new release, beside
the server of the previous design on the same data, in the same run.

For each size (bench readings; one product per ``READINGS_PER_PRODUCT`` of them, as
``benchmarks.pipeline_scale``) the publisher is generated (kept under
``$REUSE_DATA_HOME/bench/pipeline/`` and shared with that benchmark) and built into a fresh
home. Then each of two servers, one uvicorn worker each, serves that build:

- ours: `reuse-data serve` over the home's releases;
- the baseline: the server as of ``BASELINE_COMMIT`` (every document held whole in memory,
  with its gzip copy), checked out in a git worktree and serving the same snapshot file laid
  out as it expects (``<version>.duckdb``).

With ``--previous COMMIT``, a third server: the code as of that commit, over our home's own
releases (the same snapshot files, as that code reads them), to measure a change beside the code
before it.

For each: the seconds from the process's start to its first 200 of ``products.json``; its
resident memory then, after each fixed document and a page were fetched once, and after
``QUESTIONS`` distinct questions (the labelled questions of the inputs, each asked once: the
encoder, its caches and the question log at work); then a new
release is published (ours: the same marts published again, every file written, timed; the
baseline: the same file copied under a new version) and, from the moment ``CURRENT`` switches, the
seconds until the server answers from the new version, the peak growth of its memory
meanwhile (sampled every ``SAMPLE_SECONDS``) and the slowest ``page.json`` it answered meanwhile.

Targets (at 10,000 and at 100,000 products): resident memory under 250 MB at start and after
the questions; no more than +50 MB while a
release is picked up; answering within 3 s of start; a new release served within 3 s of its
publish.

    python -m benchmarks.release_serving [--sizes 1M,10M] [--previous COMMIT] [--no-baseline] [--record]
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from benchmarks import results
from benchmarks.ask_load import distinct_questions
from benchmarks.pipeline_scale import (
    CLI,
    READINGS_PER_PRODUCT,
    generated_inputs,
    inputs_folder,
    parse_sizes,
    size_label,
)
from benchmarks.results import add_record_option, machine, markdown_table
from foundations.settings import PROJECT_ROOT
from publish.new_release import publish_release
from release.local_store import current_version, new_version, snapshot_path
from serve.api.routes_catalogue import FIXED_DOCUMENTS
from tests.support.harness import free_port, home_environment, home_layout, process_tree_rss

# The last commit before releases: every document whole in memory (see RESULTS.md).
BASELINE_COMMIT = "388730b"
SAMPLE_SECONDS = 0.02
PAGE = "/api/public/page.json?path=/guides/start-here"
QUESTIONS = 1000  # distinct questions asked of each server before its memory is read again


@dataclass
class Served:
    start_s: float
    rss_started_mb: float
    rss_warm_mb: float
    rss_asked_mb: float
    publish_s: float
    pickup_s: float
    pickup_growth_mb: float
    slowest_page_ms: float


def fetch(port: int, path: str) -> tuple[int, str, float]:
    """Status, X-Dataset-Version and seconds of one GET (the body read whole)."""
    started = time.perf_counter()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Accept-Encoding": "gzip"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            response.read()
            return response.status, response.headers.get("x-dataset-version", ""), time.perf_counter() - started
    except OSError:
        return 0, "", time.perf_counter() - started


@contextmanager
def server(argv: list[str], cwd: Path, env: dict[str, str], port: int) -> Iterator[tuple[subprocess.Popen, float]]:
    """The server, and the seconds from its start to its first 200 of products.json."""
    with tempfile.TemporaryFile() as output:
        started = time.perf_counter()
        process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT)
        try:
            while fetch(port, "/api/public/products.json")[0] != 200:
                if process.poll() is not None or time.perf_counter() - started > 600:
                    output.seek(0)
                    raise SystemExit(f"{' '.join(argv)} did not start: {output.read()[-2000:]!r}")
                time.sleep(0.01)
            yield process, time.perf_counter() - started
        finally:
            process.terminate()
            process.wait(timeout=60)


def measure(process: subprocess.Popen, start_s: float, port: int, publish: Callable[[], str]) -> Served:
    mb = 1024 * 1024
    rss_started = process_tree_rss(process.pid)
    for path in (*FIXED_DOCUMENTS, PAGE):
        fetch(port, path)
    rss_warm = process_tree_rss(process.pid)
    for question in distinct_questions()[:QUESTIONS]:
        fetch(port, "/api/public/ask.json?" + urllib.parse.urlencode({"q": question}))
    rss_asked = process_tree_rss(process.pid)
    peak, stop = [rss_warm], threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], process_tree_rss(process.pid))
            time.sleep(SAMPLE_SECONDS)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        began = time.perf_counter()
        version = publish()
        switched = time.perf_counter()
        slowest = 0.0
        while True:
            status, served, seconds = fetch(port, PAGE)
            slowest = max(slowest, seconds)
            if status == 200 and served == version:
                break
            if time.perf_counter() - switched > 600:
                raise SystemExit(f"the server never served {version}")
        pickup = time.perf_counter() - switched
    finally:
        stop.set()
        sampler.join()
    growth = (peak[0] - rss_asked) / mb
    return Served(
        start_s, rss_started / mb, rss_warm / mb, rss_asked / mb, switched - began, pickup, growth, slowest * 1000
    )


def measured(label: str, cwd: Path, env: dict[str, str], publish: Callable[[], str]) -> Served:
    """`reuse-data serve` run from ``cwd`` (the code it serves with) on a free port, measured."""
    port = free_port()
    print(f"  {label} …", flush=True)
    with server([*CLI, "serve", "--port", str(port)], cwd, env, port) as (process, start_s):
        return measure(process, start_s, port, publish)


def checkout(work: Path, commit: str) -> Path:
    """A git worktree of ``commit`` (made once)."""
    tree = work / f"baseline-{commit}"
    if not (tree / "serve").exists():
        shutil.rmtree(tree, ignore_errors=True)
        subprocess.run(["git", "worktree", "prune"], cwd=PROJECT_ROOT, check=True)
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), commit], cwd=PROJECT_ROOT, check=True)
    return tree


def run_size(folder: Path, readings: int, previous: str | None, baseline: bool) -> tuple[int, dict[str, Served]]:
    inputs = generated_inputs(folder, readings)
    home = folder / f"release-home-{size_label(readings)}"
    shutil.rmtree(home, ignore_errors=True)
    env = {**home_environment(home, inputs)}
    print(f"building {size_label(readings)} readings into {home} …", flush=True)
    subprocess.run([*CLI, "build"], cwd=PROJECT_ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    layout = home_layout(home)
    store = layout.snapshots_dir

    republish = lambda: publish_release(store, layout.warehouse_path).version  # noqa: E731
    served = {"ours": measured("ours", PROJECT_ROOT, env, republish)}
    if previous is not None:
        tree = checkout(folder, previous)
        served[f"previous {previous}"] = measured(
            f"previous ({previous})", tree, {**env, "PYTHONPATH": str(tree)}, republish
        )

    if baseline:
        old_home = folder / f"baseline-home-{size_label(readings)}"
        shutil.rmtree(old_home, ignore_errors=True)
        old_store = old_home / "snapshots"
        old_store.mkdir(parents=True)
        source = snapshot_path(store, current_version(store))

        def place(version: str) -> str:
            shutil.copyfile(source, old_store / f"{version}.duckdb")
            (old_store / "CURRENT").write_text(version + "\n")
            return version

        place(new_version(dt.datetime.now(dt.UTC)))
        tree = checkout(folder, BASELINE_COMMIT)
        old_env = {**home_environment(old_home), "PYTHONPATH": str(tree)}
        served[f"baseline {BASELINE_COMMIT}"] = measured(
            f"baseline ({BASELINE_COMMIT})", tree, old_env, lambda: place(new_version(dt.datetime.now(dt.UTC)))
        )
    products = max(13, readings // READINGS_PER_PRODUCT)
    return products, served


def report(runs: list[tuple[int, int, dict[str, Served]]]) -> str:
    header = [
        "readings",
        "products",
        "server",
        "start (s)",
        "RSS started (MB)",
        "RSS warm (MB)",
        f"RSS after {QUESTIONS:,} questions (MB)",
        "publish (s)",
        "pick-up (s)",
        "pick-up growth (MB)",
        "slowest page.json during pick-up (ms)",
    ]
    rows = []
    for readings, products, servers in runs:
        for name, served in servers.items():
            rows.append(
                [
                    size_label(readings),
                    products,
                    name,
                    f"{served.start_s:.2f}",
                    f"{served.rss_started_mb:.0f}",
                    f"{served.rss_warm_mb:.0f}",
                    f"{served.rss_asked_mb:.0f}",
                    f"{served.publish_s:.1f}",
                    f"{served.pickup_s:.2f}",
                    f"{served.pickup_growth_mb:+.0f}",
                    f"{served.slowest_page_ms:.0f}",
                ]
            )
    return markdown_table(header, rows, text_columns=3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.release_serving",
        description=__doc__.split("\n\n")[0],
        epilog="Sizes accept k and M suffixes: 1M readings is 10,000 products, 10M is 100,000.",
    )
    parser.add_argument("--sizes", default="1M,10M", help="bench readings per run (default 1M,10M)")
    parser.add_argument(
        "--previous", metavar="COMMIT", help="also serve our releases with the code as of COMMIT (a change's before)"
    )
    parser.add_argument("--no-baseline", action="store_true", help=f"leave out the server as of {BASELINE_COMMIT}")
    add_record_option(parser)
    args = parser.parse_args(argv)
    folder = inputs_folder()
    runs = []
    for readings in parse_sizes(args.sizes):
        products, served = run_size(folder, readings, args.previous, not args.no_baseline)
        runs.append((readings, products, served))
    previous = f" --previous {args.previous}" if args.previous else ""
    previous += " --no-baseline" if args.no_baseline else ""
    body = (
        f"Machine: {machine()}. Command: `python -m benchmarks.release_serving --sizes {args.sizes}{previous}`. "
        f"Baseline: the server as of {BASELINE_COMMIT}, on the same snapshot, in the same run, unless left out.\n\n"
        f"{report(runs)}\n"
    )
    results.report("Release serving", body, args.record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
