"""Beyond one machine: replicas behind a balancer, the time a release takes to reach them all,
and what a server's metrics and access log cost.

All on the demo build of ``$REUSE_DATA_HOME`` (`make build`), each figure beside its baseline
measured in the same run:

0. What observing adds to a request, timed in-process: ``serve.operations.observe.Observe`` with the
   metrics, and with the metrics and the access log (to a file), around an ASGI app that
   answers at once, against that app alone; ``IN_PROCESS_REQUESTS`` calls on one event loop,
   the best of ``ROUNDS``. Exact to a fraction of a microsecond, where a server under wrk on
   two cores drifts by more than that between runs.
1. The cost of observing end to end: one `reuse-data serve` (local releases, one worker) under wrk, with
   metrics and the JSON access log off (the baseline), metrics alone, and both (the default).
   Its access lines go to a file, as a process manager would keep them. The server's CPU time
   per request is the figure (throughput on two cores shared with wrk moves by more than the
   cost measured); the three run in turn, in a rotated order, ``ROUNDS`` times, and the median
   of each is kept, so that a drift of the machine falls on all.
2. Throughput of one replica against three behind nginx: the deployment of
   ``tests.support.deployment`` (SeaweedFS, each replica `serve --from s3://…` in a network
   namespace of its own, nginx from ``deploy/nginx.conf.template``). wrk asks one replica
   directly (the baseline), the balancer in front of that one, and the balancer in front of three.
3. Publish to every replica: the seconds from a publish's return (its upload done and the
   store's pointer switched) until every replica's /readyz names the new release, ``PUBLISHES``
   times.

wrk asks two kinds of request, as a browser or a CDN would (``Accept-Encoding: gzip``): a fixed
document sent from the release's files, and ``page.json`` for a rotation of every page of the
release (distinct requests, not one replayed).

    python -m benchmarks.replicas [--seconds 10] [--connections 32] [--record]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from benchmarks import results
from benchmarks.load import Load, cpu_seconds, run_wrk, wait_until_idle
from benchmarks.results import add_record_option, machine, markdown_table
from foundations.settings import load_settings
from release.local_store import current_version, snapshot_path
from tests.support.deployment import deployment
from tests.support.harness import home_layout, serving

ROUNDS = 5
IN_PROCESS_REQUESTS = 100_000
PARTS = ("in-process", "observing", "throughput", "publish")
PUBLISHES = 5
FIXED_DOCUMENT = "/api/public/recommendations.json"
CLIENT_HEADERS = {"Accept-Encoding": "gzip"}
OBSERVING = {
    "metrics off, access log off (baseline)": {"REUSE_DATA_METRICS": "off", "REUSE_DATA_ACCESS_LOG": "off"},
    "metrics on, access log off": {"REUSE_DATA_METRICS": "on", "REUSE_DATA_ACCESS_LOG": "off"},
    "metrics on, JSON access log (default)": {"REUSE_DATA_METRICS": "on", "REUSE_DATA_ACCESS_LOG": "json"},
}


def progress(message: str) -> None:
    print(message, flush=True)


def page_paths(home: Path) -> list[str]:
    """``page.json`` for every page of the home's current release, percent-encoded."""
    import duckdb

    store = home_layout(home).snapshots_dir
    connection = duckdb.connect(str(snapshot_path(store, current_version(store))), read_only=True)
    try:
        pages = [row[0] for row in connection.execute("SELECT path FROM pages ORDER BY path").fetchall()]
    finally:
        connection.close()
    return [f"/api/public/page.json?path={urllib.parse.quote(page, safe='')}" for page in pages]


def requests_of(pages: list[str]) -> dict[str, Callable[[str, float, int], Load]]:
    """The two kinds of request, each as a wrk run against a base URL."""
    return {
        "fixed document": lambda base, seconds, connections: run_wrk(
            base + FIXED_DOCUMENT, seconds, connections, headers=CLIENT_HEADERS
        ),
        f"page.json, {len(pages)} pages in turn": lambda base, seconds, connections: run_wrk(
            base + pages[0], seconds, connections, headers=CLIENT_HEADERS, paths=pages
        ),
    }


def in_process_cost(work: Path) -> str:
    import asyncio
    import os

    from starlette.routing import Route

    from release.snapshot import SnapshotHolder
    from serve.operations.access_log import AccessLog
    from serve.operations.metrics import ServiceMetrics
    from serve.operations.observe import Observe

    headers = [(b"content-type", b"application/json"), (b"x-dataset-version", b"20261124T000000000Z")]

    async def answer(scope, receive, send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"{}"})

    async def receive() -> dict:
        return {"type": "http.request"}

    async def send(message: dict) -> None:
        pass

    route = Route(FIXED_DOCUMENT, answer)
    scope = {
        "type": "http",
        "method": "GET",
        "path": FIXED_DOCUMENT,
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1"), (b"user-agent", b"wrk"), (b"accept-encoding", b"gzip")],
        "client": ("127.0.0.1", 50000),
        "route": route,
    }
    log_fd = os.open(work / "in-process-access.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    metrics = ServiceMetrics(SnapshotHolder(work / "no-releases"))

    async def timed(app) -> float:
        best = float("inf")
        for _ in range(ROUNDS):
            started = time.perf_counter()
            for _ in range(IN_PROCESS_REQUESTS):
                await app(scope, receive, send)
            best = min(best, (time.perf_counter() - started) / IN_PROCESS_REQUESTS * 1e6)
        return best

    async def measure() -> dict[str, float]:
        return {
            "the app alone (baseline)": await timed(answer),
            "with the metrics": await timed(Observe(answer, metrics, None)),
            "with the metrics and the JSON access log": await timed(Observe(answer, metrics, AccessLog(log_fd))),
        }

    try:
        measured = asyncio.run(measure())
    finally:
        os.close(log_fd)
    baseline = measured["the app alone (baseline)"]
    rows = [[label, f"{value:.2f}", f"{value - baseline:+.2f}"] for label, value in measured.items()]
    return markdown_table(["a request through", "µs per request (best of rounds)", "µs added"], rows)


def observing_cost(home: Path, work: Path, seconds: float, connections: int, pages: list[str]) -> str:
    measured: dict[tuple[str, str], list[tuple[Load, float]]] = {}  # (load, server CPU µs per request)
    kinds = requests_of(pages)
    labels = list(OBSERVING)
    for round_number in range(ROUNDS):
        for label in labels[round_number % len(labels) :] + labels[: round_number % len(labels)]:
            log = work / f"observing-{round_number}.log"
            with serving(home, environ=OBSERVING[label], log=log) as server:
                base = f"http://127.0.0.1:{server.port}"
                for kind, load in kinds.items():
                    load(base, 2, connections)  # warm: the replayed answers are made once
                    wait_until_idle(server.process.pid)
                    cpu_before = cpu_seconds(server.process.pid)
                    run = load(base, seconds, connections)
                    wait_until_idle(server.process.pid)  # what it still owed the requests wrk made
                    cpu = cpu_seconds(server.process.pid) - cpu_before
                    requests = run.requests_per_second * max(1, round(seconds))
                    measured.setdefault((label, kind), []).append((run, cpu / requests * 1e6))
        progress(f"round {round_number + 1} of {ROUNDS} done")
    rows = []
    for kind in kinds:
        baseline = statistics.median(cost for _, cost in measured[(labels[0], kind)])
        for label in labels:
            runs = measured[(label, kind)]
            cost = statistics.median(cost for _, cost in runs)
            rate = statistics.median(run.requests_per_second for run, _ in runs)
            failures = sum(run.failures for run, _ in runs)
            rows.append([kind, label, f"{cost:.0f}", f"{cost / baseline:.3f}", f"{rate:,.0f}", failures])
    return markdown_table(
        ["request", "server", "server CPU µs per request (median)", "of baseline", "requests/s (median)", "failed"],
        rows,
        2,
    )


def replica_throughput(warehouse: Path, work: Path, seconds: float, connections: int, pages: list[str]) -> str:
    rows = []
    kinds = requests_of(pages)
    for count in (1, 3):
        with deployment(work / f"deployment-{count}", warehouse, replicas=count) as deployed:
            targets = {f"{count} behind nginx": deployed.balancer_url}
            if count == 1:
                replica = deployed.replicas[0]
                targets = {"1 replica, directly (baseline)": f"http://{replica.host}:{replica.port}", **targets}
            for label, base in targets.items():
                for kind, load in kinds.items():
                    load(base, 2, connections)
                    measured = load(base, seconds, connections)
                    rows.append(
                        [
                            kind,
                            label,
                            f"{measured.requests_per_second:,.0f}",
                            f"{measured.p50_ms:.2f}",
                            f"{measured.p99_ms:.2f}",
                            measured.failures,
                        ]
                    )
                    progress(f"{label}, {kind}: {measured.requests_per_second:,.0f}/s")
    return markdown_table(["request", "served by", "requests/s", "p50 ms", "p99 ms", "failed"], rows, 2)


def publish_to_every_replica(warehouse: Path, work: Path) -> str:
    with deployment(work / "deployment-publish", warehouse, replicas=3) as deployed:
        took = []
        for number in range(1, PUBLISHES + 1):
            version = deployed.publish()
            took.append(deployed.wait_converged(version, seconds=60))
            progress(f"publish {number}: every replica on {version} {took[-1]:.2f} s after it")
    where = "each in a network namespace" if deployed.isolated else "on loopback"
    return markdown_table(
        ["publishes", "replicas", "min s", "median s", "max s"],
        [[PUBLISHES, f"3, {where}", f"{min(took):.2f}", f"{statistics.median(took):.2f}", f"{max(took):.2f}"]],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.replicas",
        description="Throughput of one replica against three behind nginx, publish to every replica, and the "
        "cost of the metrics and the access log, on the demo build (run `make build` first).",
    )
    parser.add_argument("--seconds", type=float, default=10, help="length of each wrk run (default 10)")
    parser.add_argument("--connections", type=int, default=32, help="wrk's keep-alive connections (default 32)")
    parser.add_argument(
        "--parts",
        default=",".join(PARTS),
        help=f"which parts to run, of {', '.join(PARTS)} (default: all)",
    )
    add_record_option(parser)
    args = parser.parse_args(argv)
    parts = [part.strip() for part in args.parts.split(",") if part.strip()]
    if unknown := sorted(set(parts) - set(PARTS)):
        parser.error(f"unknown parts {unknown}: choose among {', '.join(PARTS)}")

    home = load_settings().home
    warehouse = home_layout(home).warehouse_path
    if not warehouse.exists() or current_version(home_layout(home).snapshots_dir) is None:
        parser.error(f"no demo build in {home}: run `make build` first")
    pages = page_paths(home)
    sections = [f"Machine: {machine()}. wrk: 1 thread, {args.connections} connections, {args.seconds:.0f} s a run."]
    with tempfile.TemporaryDirectory(prefix="bench-replicas-") as folder:
        work = Path(folder)
        if "in-process" in parts:
            progress("what observing adds, in-process")
            sections.append(
                f"What observing adds to a request, in-process ({IN_PROCESS_REQUESTS:,} calls, best of {ROUNDS}):"
                f"\n\n{in_process_cost(work)}"
            )
        if "observing" in parts:
            progress("what observing costs a server")
            sections.append(
                f"What observing costs a server (median of {ROUNDS} rounds, one worker, access lines to a file):"
                f"\n\n{observing_cost(home, work, args.seconds, args.connections, pages)}"
            )
        if "throughput" in parts:
            progress("one replica against three behind nginx")
            sections.append(
                "One replica against three behind nginx (each replica one worker):"
                f"\n\n{replica_throughput(warehouse, work, args.seconds, args.connections, pages)}"
            )
        if "publish" in parts:
            progress("publish to every replica")
            sections.append(
                "From a publish's return to every replica serving the release:"
                f"\n\n{publish_to_every_replica(warehouse, work)}"
            )
    results.report("Replicas behind a balancer", "\n\n".join(sections) + "\n", args.record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
