"""Serving: every operation of the public API under load, beside the floor of this stack and Datasette.

For each operation, wrk (a separate process on loopback, one thread, 32 connections, bounded
in time) measures requests per second and p50/p99 latency against three servers on the same
snapshot, each on one uvicorn worker; ours and the floor run ``--rounds`` times each in
alternating order and the median run of each is kept (the machine drifts during a run), and a
second table gives ours/floor of each round, the two runs of a round made one after the other:

- ours: `reuse-data serve`, its access log on unless ``REUSE_DATA_ACCESS_LOG`` or ``--access-log``
  says off (its lines go to a file, as a process manager keeps them);
- the floor: ``benchmarks.floor_app``, a bare Starlette app replaying the responses ours gave,
  from memory (a 304 with our 304's headers when If-None-Match matches), and for the bench exports a bare route
  streaming the same rows from DuckDB through pyarrow's own CSV writer;
- Datasette serving the same tables from SQLite (its own pinned virtualenv, made on first use).

A process can stay 10 to 20 % faster or slower than an identical one for its whole life (four
servers of the same code took 74 to 89 µs of CPU per 304 under the same load): with
``--processes N``, N processes of ours and N of the floor take the loads, each round on the
next of each, so that the median is not one process's luck.

The ratio ours/floor is the figure that counts (absolute rates drift on shared machines) and
each has a target: the JSON operations and ``page.json`` 0.8, ``ask.json`` 0.5, a 304
revalidation 0.9, ``bench.csv`` 0.8 and ``bench.jsonl`` 0.6 of the CSV floor in MB/s. Before
the loads: the time to the first byte of a bench export (one request at a time, after one
untimed request; target under 10 ms) and the growth of our server's memory while
``--clients`` clients stream ``--rows`` rows each at once (target under 50 MB); and each
export as one client downloads it whole, from ours, the floor and Datasette (median of
``STREAM_ROUNDS`` downloads; against Datasette in rows per second, since its files are
larger). Datasette's exports are compared there only: under wrk's 32 connections none of them
finishes within a run. Datasette's wrk runs come last, each once it has gone idle again.

The snapshot is the demo's (the one CURRENT names under REUSE_DATA_HOME), copied to
``$REUSE_DATA_HOME/bench/serving/`` with its bench mart repeated to at least ``--rows`` rows.

    python -m benchmarks.serving [--seconds 5] [--rounds 3] [--processes 1] [--connections 32]
        [--rows 20000] [--operations products,page] [--access-log off] [--record]
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import shutil
import statistics
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import duckdb

from benchmarks import datasette_site
from benchmarks.load import (
    Load,
    download_times,
    first_byte_ms,
    peak_rss_growth,
    run_wrk,
    wait_until_idle,
    wrk_command,
)
from benchmarks.results import add_record_option, machine, markdown_table, record
from foundations.settings import load_settings
from inputs.ask_inputs import Split, load_questions
from public.openapi import OPERATIONS
from release.local_store import current_version, snapshot_path
from tests.support.harness import Server, copy_home, free_port, home_layout, inflate_bench, running, serving
from warehouse.contract import MARTS_SCHEMA
from warehouse.reference_data import LANGUAGES

JSON_TARGET, ASK_TARGET, REVALIDATION_TARGET = 0.8, 0.5, 0.9
DISTINCT_ASK_TARGET = 50.0  # distinct questions answered per second by one worker
CSV_TARGET, JSONL_TARGET = 0.8, 0.6
FIRST_BYTE_TARGET_MS, RSS_GROWTH_TARGET_MB = 10.0, 50.0
FIRST_BYTE_ROUNDS = 50
STREAM_ROUNDS = 5  # whole downloads per server and export, one client at a time (median kept)
BENCH_OPERATIONS = {"benchJsonl", "benchCsv"}
# Response headers that differ per response or per connection: not part of what is replayed.
UNREPLAYED_HEADERS = {"date", "server", "content-length", "transfer-encoding", "connection"}


@dataclass(frozen=True)
class Case:
    """One row of the table: a request to each server, and what ours must reach of the floor."""

    label: str
    ours: str  # path?query
    floor: str
    datasette: str | None
    target: float
    per_byte: bool = False  # compared in MB/s (streamed exports), not requests per second
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Row:
    case: Case
    ours: Load
    floor: Load
    datasette: Load | None
    rounds: list[tuple[Load, Load]] = field(default_factory=list)  # (ours, floor) of each round, as run

    def rate(self, load: Load) -> float:
        return load.megabytes_per_second if self.case.per_byte else load.requests_per_second

    def ratio_of(self, ours: Load, floor: Load) -> float:
        return self.rate(ours) / self.rate(floor) if self.rate(floor) else 0.0

    @property
    def ratio(self) -> float:
        return self.ratio_of(self.ours, self.floor)


ALL_OPERATIONS = [o.operation_id for o in OPERATIONS]


def operation_list(text: str) -> list[str]:
    """``--operations``: known operation ids, comma-separated."""
    chosen = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [name for name in chosen if name not in ALL_OPERATIONS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"unknown {unknown or 'none given'}; choose from {','.join(ALL_OPERATIONS)}")
    return chosen


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def example_request(operation_id: str, rows: int) -> str:
    """The request each operation is measured with: its documented example, the full export for bench."""
    operation = next(o for o in OPERATIONS if o.operation_id == operation_id)
    query = f"limit={rows}" if operation_id in BENCH_OPERATIONS else operation.example
    return operation.path + (f"?{query}" if query else "")


def floor_csv_request(rows: int) -> str:
    """The floor of the bench exports: the same rows from DuckDB through pyarrow's CSV writer."""
    return f"/floor/bench.csv?limit={rows}"


def prepare_home(source: Path, work: Path, rows: int) -> Path:
    """A copy of ``source``'s warehouse and snapshots whose bench mart holds at least ``rows`` rows."""
    if work.exists():
        shutil.rmtree(work)
    home = copy_home(source, work / "home")
    with duckdb.connect(str(home_layout(home).warehouse_path), read_only=True) as connection:
        demo_rows = connection.execute(f"SELECT count(*) FROM {MARTS_SCHEMA}.bench_measurements").fetchone()[0]
    if demo_rows == 0:
        raise SystemExit("the demo's bench mart is empty: nothing to stream")
    total = inflate_bench(home, max(1, math.ceil(rows / demo_rows)))
    progress(f"bench mart: {demo_rows} demo rows repeated to {total}")
    return home


def replayed_headers(headers: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k not in UNREPLAYED_HEADERS}


def record_responses(server: Server, paths: list[str], target: Path) -> dict[str, dict[str, str]]:
    """GET each path from our server and save status, headers and body for the floor to replay,
    and for an answer with an ETag, the headers of its 304 (the validator and caching headers
    the API's contract repeats there), so that the floor's 304 is the same bytes as ours."""
    recorded: dict[str, dict] = {}
    for path in paths:
        reply = server.get(path, timeout=120)
        if reply.status != 200:
            raise SystemExit(f"{path} answered {reply.status}: {reply.body[:300]!r}")
        headers = replayed_headers(reply.headers)
        recorded[path] = {"status": reply.status, "headers": headers, "body": base64.b64encode(reply.body).decode()}
        if "etag" in headers:
            again = server.get(path, headers={"If-None-Match": headers["etag"]}, timeout=120)
            if again.status != 304:
                raise SystemExit(f"{path} answered its own ETag with {again.status}, not 304")
            recorded[path]["not_modified"] = replayed_headers(again.headers)
    target.write_text(json.dumps(recorded), encoding="utf-8")
    return {path: r["headers"] for path, r in recorded.items()}


def plan(operation_ids: list[str], rows: int, recorded_headers: dict[str, dict[str, str]]) -> list[Case]:
    """Each operation once, the bench exports against the CSV floor in MB/s; with products, a 304."""
    floor_csv = floor_csv_request(rows)
    cases = []
    for operation in (o for o in OPERATIONS if o.operation_id in operation_ids):
        request = example_request(operation.operation_id, rows)
        equivalent = datasette_site.EQUIVALENTS.get(operation.operation_id)
        label = request.removeprefix("/api/public/")
        if operation.operation_id in BENCH_OPERATIONS:
            # Datasette's exports are compared one client at a time (``single_streams``) instead.
            target = CSV_TARGET if operation.operation_id == "benchCsv" else JSONL_TARGET
            cases.append(Case(label, request, floor_csv, None, target, per_byte=True))
        else:
            target = ASK_TARGET if operation.operation_id == "ask" else JSON_TARGET
            cases.append(Case(label, request, request, equivalent, target))
    if "products" in operation_ids:
        products = example_request("products", rows)
        revalidate = {"If-None-Match": recorded_headers[products]["etag"]}
        cases.append(Case("products.json, 304", products, products, None, REVALIDATION_TARGET, headers=revalidate))
    return cases


@contextmanager
def floor_server(recorded: Path, snapshot: Path) -> Iterator[int]:
    port = free_port()
    argv = [sys.executable, "-m", "benchmarks.floor_app", "--port", str(port)]
    argv += ["--recorded", str(recorded), "--snapshot", str(snapshot)]
    with running(argv, port, "/api/public/capabilities.json"):
        yield port


@contextmanager
def datasette_server(work: Path, venv: Path, snapshot: Path, rows: int) -> Iterator[tuple[int, int] | None]:
    """Datasette on a SQLite copy of the snapshot's tables, as (port, pid); None (and why) when it
    cannot be installed."""
    try:
        command = datasette_site.ensure_datasette(venv, report=progress)
    except (OSError, subprocess.CalledProcessError) as error:
        progress(f"warning: Datasette could not be installed ({error}); its columns stay empty")
        yield None
        return
    database = work / f"{datasette_site.DATABASE}.db"
    datasette_site.export_to_sqlite(snapshot, database, datasette_site.tables())
    port = free_port()
    argv = datasette_site.datasette_command(command, database, port, rows)
    with running(argv, port, "/-/versions.json") as process:
        yield port, process.pid


def median_load(loads: list[Load], per_byte: bool) -> Load:
    """The run whose rate is the median of ``loads`` (its latencies come with it)."""
    ranked = sorted(loads, key=lambda load: load.megabytes_per_second if per_byte else load.requests_per_second)
    return ranked[(len(ranked) - 1) // 2]


def measure(
    cases: list[Case],
    ports: dict[str, int | None],
    seconds: float,
    connections: int,
    rounds: int,
    datasette_pid: int | None = None,
    processes: dict[str, list[int]] | None = None,
) -> list[Row]:
    """wrk against each server, operation by operation: ours and the floor ``rounds`` times each,
    alternating which goes first, so that a machine slowing down or speeding up during the run
    weighs on both sides alike; the median run of each is kept. With ``processes`` (the ports of
    several processes of ours and of the floor), each round goes to the next process of each: a
    process can stay 10 to 20 % faster or slower than an identical one for its whole life.

    Datasette runs once per operation, after every run of ours and the floor, each run once it
    has gone idle: it goes on answering the requests wrk abandons for many seconds after a run
    (20,000-row exports at a few MB/s), and took the cores from whichever run came next."""

    def load(port: int | None, request: str, case: Case) -> Load:
        return run_wrk(f"http://127.0.0.1:{port}{request}", seconds, connections, case.headers)

    every = processes or {server: [port] for server, port in ports.items() if port is not None}

    rows = []
    for number, case in enumerate(cases, 1):
        progress(f"[{number}/{len(cases)}] {case.label}")
        runs: dict[str, list[Load]] = {"ours": [], "floor": []}
        for round_number in range(rounds):
            order = ("ours", "floor") if round_number % 2 == 0 else ("floor", "ours")
            for server in order:
                port = every[server][round_number % len(every[server])]
                runs[server].append(load(port, case.ours if server == "ours" else case.floor, case))
        ours, floor = (median_load(runs[server], case.per_byte) for server in ("ours", "floor"))
        rows.append(Row(case, ours, floor, None, list(zip(runs["ours"], runs["floor"], strict=True))))
    for row in rows:
        if ports.get("datasette") and row.case.datasette:
            waited = wait_until_idle(datasette_pid) if datasette_pid else 0.0
            progress(f"Datasette: {row.case.label} (after {waited:.0f} s for it to go idle)")
            row.datasette = load(ports["datasette"], row.case.datasette, row.case)
    return rows


def _rate(row: Row, load: Load | None) -> str:
    if load is None:
        return "n/a"
    unit = "MB/s" if row.case.per_byte else "req/s"
    return f"{row.rate(load):,.0f} {unit}" if row.rate(load) >= 100 else f"{row.rate(load):.1f} {unit}"


def _latency(load: Load | None) -> str:
    return "n/a" if load is None else f"{load.p50_ms:.1f} / {load.p99_ms:.1f}"


def throughput_table(rows: list[Row]) -> str:
    header = [
        "request",
        "ours",
        "p50 / p99 ms",
        "floor",
        "p50 / p99 ms",
        "ours / floor",
        "target",
        "Datasette",
        "p50 / p99 ms",
        "ours / Datasette",
    ]
    body = []
    for row in rows:
        versus_datasette = "n/a"
        if row.datasette is not None and row.rate(row.datasette):
            versus_datasette = f"{row.rate(row.ours) / row.rate(row.datasette):.1f}x"
        verdict = "met" if row.ratio >= row.case.target else "**missed**"
        failures = sum(load.failures for load in (row.ours, row.floor, row.datasette) if load is not None)
        body.append(
            [
                f"`{row.case.label}`" + (f" ({failures} failed)" if failures else ""),
                _rate(row, row.ours),
                _latency(row.ours),
                _rate(row, row.floor),
                _latency(row.floor),
                f"{row.ratio:.2f}",
                f"{row.case.target} ({verdict})",
                _rate(row, row.datasette),
                _latency(row.datasette),
                versus_datasette,
            ]
        )
    return markdown_table(header, body)


def round_table(rows: list[Row]) -> str:
    """ours / floor of each round: the two runs of a round follow each other, so each ratio is
    measured under one state of the machine, and the spread shows how far one run can be trusted."""
    rounds = max(len(row.rounds) for row in rows)
    body = []
    for row in rows:
        ratios = [row.ratio_of(ours, floor) for ours, floor in row.rounds]
        met = f"{row.case.target} ({sum(ratio >= row.case.target for ratio in ratios)} of {len(ratios)})"
        body.append([f"`{row.case.label}`", *(f"{ratio:.2f}" for ratio in ratios), met])
    header = ["ours / floor, by round", *(f"round {number}" for number in range(1, rounds + 1)), "target (rounds met)"]
    return markdown_table(header, body)


def first_byte_table(measured: dict[str, list[float]]) -> str:
    body = []
    for label, timings in measured.items():
        ordered = sorted(timings)
        p99 = ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]
        verdict = "met" if p99 < FIRST_BYTE_TARGET_MS else "**missed**"
        body.append([label, f"{statistics.median(ordered):.2f}", f"{p99:.2f}", f"< {FIRST_BYTE_TARGET_MS} ({verdict})"])
    return markdown_table(["first byte of", "p50 ms", "p99 ms", "target"], body)


def memory_table(measured: dict[str, tuple[int, list[int]]], clients: int) -> str:
    body = []
    for label, (growth, received) in measured.items():
        megabytes = growth / 2**20
        verdict = "met" if megabytes < RSS_GROWTH_TARGET_MB else "**missed**"
        target = f"< {RSS_GROWTH_TARGET_MB:g} ({verdict})"
        body.append([label, clients, f"{min(received) / 1e6:.1f}", f"{megabytes:.1f}", target])
    return markdown_table(["server, export", "clients at once", "MB each", "RSS growth MB", "target"], body, 1)


@dataclass(frozen=True)
class Download:
    """One client downloading a whole export: its size and the median time of ``STREAM_ROUNDS`` downloads."""

    megabytes: float
    seconds: float

    @property
    def megabytes_per_second(self) -> float:
        return self.megabytes / self.seconds


def timed_download(port: int, path: str) -> Download:
    size, seconds = download_times(port, path, STREAM_ROUNDS)
    return Download(size / 1e6, statistics.median(seconds))


def single_streams(
    export_ids: list[str], ports: dict[str, int | None], rows: int, datasette_pid: int | None
) -> dict[str, tuple[Download, Download, Download | None]]:
    """Each export as one client downloads it whole from ours, the CSV floor and Datasette's
    equivalent: {label: (ours, floor, Datasette or None)}.

    This is how Datasette's exports are compared: under wrk's 32 connections none of its
    20,000-row exports finishes within a run (wrk's MB/s read 0), so wrk leaves them out."""
    floor = timed_download(ports["floor"], floor_csv_request(rows))
    measured = {}
    for operation_id in export_ids:
        path = example_request(operation_id, rows)
        equivalent = datasette_site.EQUIVALENTS[operation_id]
        datasette = None
        if ports.get("datasette") and equivalent:
            if datasette_pid:
                wait_until_idle(datasette_pid)
            datasette = timed_download(ports["datasette"], equivalent)
        measured[_ours(path)] = (timed_download(ports["ours"], path), floor, datasette)
    return measured


def single_stream_table(measured: dict[str, tuple[Download, Download, Download | None]]) -> str:
    """MB/s of each server, ours against the floor in MB/s (the targets' unit) and against Datasette
    in rows per second: the same rows, but Datasette's CSV and JSON are larger than ours."""
    body = []
    for label, (ours, floor, datasette) in measured.items():
        row = [label, f"{ours.megabytes:.1f}", f"{ours.megabytes_per_second:.0f}", f"{floor.megabytes_per_second:.0f}"]
        row.append(f"{ours.megabytes_per_second / floor.megabytes_per_second:.2f}")
        if datasette is None:
            row += ["n/a", "n/a", "n/a"]
        else:
            row += [f"{datasette.megabytes:.1f}", f"{datasette.megabytes_per_second:.1f}"]
            row.append(f"{datasette.seconds / ours.seconds:.1f}x")
        body.append(row)
    header = ["one client, whole export", "ours MB", "ours MB/s", "floor CSV MB/s", "ours / floor"]
    header += ["Datasette MB", "Datasette MB/s", "ours / Datasette, rows/s"]
    return markdown_table(header, body)


def _ours(path: str) -> str:
    return f"ours, `{path.removeprefix('/api/public/')}`"


def distinct_questions(port: int, seconds: float, connections: int) -> str:
    """``ask.json`` asked every labelled question in turn (each distinct, so none is answered from
    the per-snapshot memo within a run): what one worker sustains when every question is new.

    More connections than the worker answers within its admission bound get an immediate 503
    (``ask-busy``) and ask again at once: the rate counted is of answers, with the refusals beside
    it, and wrk's percentiles cover both."""
    labelled = (q for split in Split for q in load_questions(load_settings().inputs, split, LANGUAGES))
    questions = list(dict.fromkeys(q.question for q in labelled))
    paths = [f"/api/public/ask.json?q={quote(question)}" for question in questions]
    progress(f"ask.json with {len(paths)} distinct questions in turn")
    duration = max(1, round(seconds))
    load = run_wrk(f"http://127.0.0.1:{port}/", seconds, connections, paths=paths)
    asked = round(load.requests_per_second * duration)
    answered_per_second = load.requests_per_second - load.error_replies / duration
    repeats = "none twice" if asked <= len(paths) else "the rotation wrapped, so some came from the memo"
    verdict = "met" if answered_per_second >= DISTINCT_ASK_TARGET else "**missed**"
    return (
        f"`ask.json` with distinct questions: {len(paths)} labelled questions asked in turn ({asked} asked in the run, "
        f"{repeats}), {answered_per_second:.0f} answered a second; {load.error_replies} refused at once "
        f"(503, the admission bound), {load.failures - load.error_replies} other failures; p50 {load.p50_ms:.1f} ms, "
        f"p99 {load.p99_ms:.1f} ms over answers and refusals; target at least {DISTINCT_ASK_TARGET:g} answered "
        f"a second on one worker ({verdict})."
    )


def run(args: argparse.Namespace) -> str:
    """The whole benchmark; returns the report (Markdown)."""
    wrk_command()  # fail early, with what to do, when wrk is missing
    settings = load_settings()
    if current_version(settings.snapshots_dir) is None:
        raise SystemExit(f"no published snapshot under {settings.snapshots_dir}: run `make build` first")
    logged = args.access_log == "json" if args.access_log else settings.access_log
    work = settings.home / "bench" / "serving"
    home = prepare_home(settings.home, work, args.rows)
    store = home_layout(home).snapshots_dir
    snapshot = snapshot_path(store, current_version(store))
    recorded = work / "recorded.json"
    with ExitStack() as servers:
        environ = {"REUSE_DATA_ACCESS_LOG": "json" if logged else "off"}
        ours = servers.enter_context(serving(home, environ=environ))
        # Every operation is recorded: the floor answers its readiness probe from capabilities.json.
        replayed = [o.operation_id for o in OPERATIONS if o.operation_id not in BENCH_OPERATIONS]
        paths = [example_request(operation_id, args.rows) for operation_id in replayed]
        headers = record_responses(ours, paths, recorded)
        progress(f"recorded {len(paths)} responses of ours for the floor to replay")
        ports: dict[str, int | None] = {
            "ours": ours.port,
            "floor": servers.enter_context(floor_server(recorded, snapshot)),
            "datasette": None,
        }
        datasette_pid = None
        if not args.no_datasette:
            venv = settings.home / "bench" / "datasette-venv"
            datasette = servers.enter_context(datasette_server(work, venv, snapshot, args.rows))
            if datasette is not None:
                ports["datasette"], datasette_pid = datasette
        # First byte, memory and single streams before the loads: Datasette stays busy for a while after its own.
        export_ids = sorted(BENCH_OPERATIONS.intersection(args.operations))
        exports = [example_request(operation_id, args.rows) for operation_id in export_ids]
        progress("first byte of the bench exports, one request at a time, after one untimed request each")
        first_bytes = {_ours(path): first_byte_ms(ours.port, path, FIRST_BYTE_ROUNDS, warm_up=True) for path in exports}
        if exports:
            floor_csv = floor_csv_request(args.rows)
            first_bytes["floor, CSV"] = first_byte_ms(ports["floor"], floor_csv, FIRST_BYTE_ROUNDS, warm_up=True)
        progress(f"memory while {args.clients} clients stream {args.rows} rows each")
        memory = {_ours(path): peak_rss_growth(ours.process.pid, ours.port, [path], args.clients) for path in exports}
        progress(f"one client at a time streaming each whole export, {STREAM_ROUNDS} downloads per server")
        streams = single_streams(export_ids, ports, args.rows, datasette_pid) if exports else {}
        cases = plan(args.operations, args.rows, headers)
        # More processes of each, for the loads only: what one process measures alone is its own luck.
        processes = {"ours": [ours.port], "floor": [ports["floor"]]}
        for _ in range(args.processes - 1):
            processes["ours"].append(servers.enter_context(serving(home, environ=environ)).port)
            processes["floor"].append(servers.enter_context(floor_server(recorded, snapshot)))
        rows = measure(cases, ports, args.seconds, args.connections, args.rounds, datasette_pid, processes)
        distinct = distinct_questions(ours.port, args.seconds, args.connections) if "ask" in args.operations else None

    command = (
        f"python -m benchmarks.serving --seconds {args.seconds:g} --rounds {args.rounds} "
        f"--connections {args.connections} --rows {args.rows} --clients {args.clients}"
    ) + (f" --operations {','.join(args.operations)}" if args.operations != ALL_OPERATIONS else "")
    command += f" --processes {args.processes}" if args.processes > 1 else ""
    command += f" --access-log {args.access_log}" if args.access_log else ""
    return "\n\n".join(
        [
            f"Machine: {machine()}. Command: `{command}`. wrk {args.connections} connections on one thread, "
            f"{args.seconds:g} s per server and request, ours and the floor {args.rounds} times each in alternating "
            "order, the median run of each kept"
            + (f", each run on the next of {args.processes} processes of each" if args.processes > 1 else "")
            + "; each server one uvicorn worker (uvloop, httptools); "
            f"ours with its access log {'on (JSON lines to a file)' if logged else 'off'}; "
            "wrk and the server share the machine's cores.",
            throughput_table(rows),
            round_table(rows),
            *([distinct] if distinct else []),
            *(
                [first_byte_table(first_bytes), memory_table(memory, args.clients), single_stream_table(streams)]
                if exports
                else []
            ),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.serving", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5, help="wrk's run per server and request (default 5)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="runs of ours and of the floor per request, median kept (default 3)"
    )
    parser.add_argument("--connections", type=int, default=32, help="wrk's open connections (default 32)")
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="processes of ours and of the floor under load, each round on the next (default 1)",
    )
    parser.add_argument("--rows", type=int, default=20_000, help="rows per bench export (default 20000)")
    parser.add_argument("--clients", type=int, default=20, help="clients streaming at once, for memory (default 20)")
    parser.add_argument(
        "--operations",
        type=operation_list,
        default=ALL_OPERATIONS,
        help="comma-separated operation ids to measure (default all: " + ",".join(ALL_OPERATIONS) + ")",
    )
    parser.add_argument(
        "--access-log",
        choices=("json", "off"),
        help="our server's access log (default: as REUSE_DATA_ACCESS_LOG says, on unless set off)",
    )
    parser.add_argument("--no-datasette", action="store_true", help="leave Datasette out (no install, no columns)")
    add_record_option(parser)
    args = parser.parse_args()
    if args.seconds <= 0 or min(args.connections, args.rows, args.clients, args.rounds, args.processes) < 1:
        parser.error("--seconds, --rounds, --processes, --connections, --rows and --clients must be positive")
    report = run(args)
    print(report)
    if args.record:
        progress(f"appended to {record('Serving: ours, the floor and Datasette', report)}")


if __name__ == "__main__":
    main()
