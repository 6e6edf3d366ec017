"""/explore in a visitor's browser (issue 55): how long DuckDB-WASM takes to start and to answer a
first query, and how much of a release it fetches to do so, beside what the visitor would fetch
without range reads and what Python DuckDB takes over the same files on local disk.

For the demo release (``$REUSE_DATA_HOME``, which `make build` fills) and for each generated size
(bench readings; one product per ``READINGS_PER_PRODUCT`` of them, the inputs shared with
``benchmarks.pipeline_scale`` and the home built as ``benchmarks.release_serving`` builds it),
`reuse-data serve` serves the release on a free loopback port and Debian's headless Chromium
(Playwright) opens ``/explore``, ``--rounds`` times:

- cold: a fresh browser context (nothing cached): from navigation to ``#status[data-state=ready]``
  (the engine started, one view per table), then one example query clicked: from the click to
  ``#status[data-state=done]``;
- warm: the same context, the page reloaded (the wasm and scripts from the browser's cache), both
  timed again.

Bytes are what the server sent: the body bytes of its JSON access log, one line per request (the
worker's range reads included), read after each phase. The cross-check is one cold visit more,
counted also by Playwright's response body sizes (which see the worker's requests, but late and in
batches, and count cache hits as nothing, so they cannot split phases or count warm visits). For the
Parquet files the query reads (the tables after FROM or JOIN in its SQL): the bytes of their range
responses, from the engine's start to the first answer, against the files' size; the issue's target
is under a quarter at 10,000 products.

Outside requests are refused by the browser: every host but the server's origin goes through a proxy
on a closed port (checked at start). Playwright's ``route`` would abort them too, but routing turns
the browser's HTTP cache off, and the warm figures need it.

Baselines in the same run: the whole files of the tables the query reads, downloaded from the same
server (the bytes a visitor fetches without range reads, and the seconds), and the same SQL in
Python DuckDB over views of the same files on local disk (a fresh connection each round, the query
alone timed).

    python -m benchmarks.explore [--sizes 1M] [--example TITLE] [--rounds 3] [--reuse-build] [--record]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import duckdb

from benchmarks import results
from benchmarks.pipeline_scale import CLI, generated_inputs, inputs_folder, parse_sizes, size_label
from benchmarks.results import add_record_option, machine, markdown_table
from foundations.settings import PROJECT_ROOT, load_settings
from release.folder import DATA_PACKAGE, RELEASES_PREFIX
from release.local_store import current_version
from serve.explore.examples import EXAMPLES
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.harness import free_port, home_environment, home_layout, serving

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Request

DEFAULT_EXAMPLE = "Readings per protocol and tester"  # the largest table, 3 of its 14 columns
TARGET_SHARE = 0.25  # of the files' size, at 10,000 products (issue 55)
TARGET_PRODUCTS = 10_000
WAIT_MS = 180_000  # for the engine or a query, on a busy machine
SETTLE_MS = 600  # after a phase: the access log writes its lines within 0.25 s
SERVER_ENV = {"REUSE_DATA_QUESTION_LOG": "off", "REUSE_DATA_ACCESS_LOG": "json"}
# Runs in every document before its own scripts: when #status's data-state changes (first time each
# state) and when a click happens, on the page's clock (milliseconds since the navigation began).
MARKS = """
window.__marks = {};
addEventListener("click", () => { window.__marks.click ??= performance.now(); }, true);
new MutationObserver((changes) => {
  for (const change of changes) {
    const state = change.target.id === "status" && change.target.dataset.state;
    if (state && !(state in window.__marks)) window.__marks[state] = performance.now();
  }
}).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-state"] });
"""


@dataclass(frozen=True)
class Sent:
    """One response, as the server's access log has it."""

    method: str
    path: str
    status: int
    bytes: int


@dataclass
class Phase:
    seconds: float
    sent: list[Sent]

    @property
    def total(self) -> int:
        return sum(s.bytes for s in self.sent)

    def ranged(self, paths: tuple[str, ...]) -> list[Sent]:
        """The range responses (206) for ``paths``."""
        return [s for s in self.sent if s.path.endswith(paths) and s.status == 206]

    def whole(self, paths: tuple[str, ...]) -> list[Sent]:
        """Full GETs (200) of ``paths``: what a read without ranges looks like."""
        return [s for s in self.sent if s.path.endswith(paths) and s.status == 200 and s.method == "GET"]


@dataclass
class Round:
    cold_ready: Phase
    cold_query: Phase
    warm_ready: Phase
    warm_query: Phase
    rows: int  # the first query's answer, as the page counts it


@dataclass
class ReleaseRun:
    label: str
    products: int
    version: str
    files: dict[str, Path]  # table -> its Parquet file on disk
    folder: Path  # the release's folder: the files' paths under it are their paths under /releases/<version>/
    read: list[str]  # the tables the query reads
    row_groups: dict[str, int]
    needed_chunks: list[int]  # the compressed sizes of the column chunks of the columns the SQL names
    rounds: list[Round] = field(default_factory=list)
    local_s: list[float] = field(default_factory=list)
    local_rows: int = 0
    download_s: list[float] = field(default_factory=list)
    wasm_encoding: str = ""
    checked: str = ""  # the cross-check of the byte counts, from a visit of its own
    range_lengths: Counter[int] = field(default_factory=Counter)  # of the file's ranges in that visit

    @property
    def needed_bytes(self) -> int:
        return sum(self.needed_chunks)

    @property
    def read_paths(self) -> tuple[str, ...]:
        """The server paths of the files the query reads (under the base URL's path, if it has one)."""
        return tuple(self.url_path(table) for table in self.read)

    @property
    def read_size(self) -> int:
        return sum(self.files[table].stat().st_size for table in self.read)

    def url_path(self, table: str) -> str:
        return f"{RELEASES_PREFIX}{self.version}/{self.files[table].relative_to(self.folder).as_posix()}"


class AccessLog:
    """The server's access log, read a phase at a time (the lines written since the last read)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0

    def since(self) -> list[Sent]:
        with self.path.open("rb") as log:
            log.seek(self.offset)
            text = log.read()
        end = text.rfind(b"\n") + 1
        self.offset += end
        sent = []
        for line in text[:end].splitlines():
            if line.startswith(b"{"):
                entry = json.loads(line)
                sent.append(Sent(entry["method"], entry["path"], entry["status"], entry["bytes"]))
        return sent


def release_tables(store: Path, version: str) -> dict[str, Path]:
    """Every table the release publishes as Parquet -> its file, as its data package lists them
    (the views the page makes)."""
    package = store / version / DATA_PACKAGE
    described = json.loads(package.read_text())
    return {r["name"]: package.parent / r["path"] for r in described["resources"] if r["format"] == "parquet"}


def tables_read(sql: str, tables: dict[str, Path]) -> list[str]:
    """The tables named after FROM or JOIN in ``sql``."""
    named = re.findall(r"\b(?:FROM|JOIN)\s+\"?(\w+)", sql, flags=re.IGNORECASE)
    return sorted({name for name in named if name in tables})


def file_layout(files: list[Path], sql: str) -> tuple[dict[str, int], list[int]]:
    """Each file's row groups, and the compressed sizes of the column chunks of the columns ``sql``
    names: about what a reader of only the needed columns must fetch."""
    groups, needed = {}, []
    with duckdb.connect() as connection:
        for path in files:
            chunks = connection.execute(
                "SELECT row_group_id, path_in_schema, total_compressed_size FROM parquet_metadata(?)", [str(path)]
            ).fetchall()
            groups[path.stem] = len({group for group, _, _ in chunks})
            needed += [size for _, column, size in chunks if re.search(rf"\b{re.escape(column)}\b", sql)]
    return groups, needed


def products_in(store: Path, version: str) -> int:
    package = json.loads((store / version / DATA_PACKAGE).read_text())
    return next(r.get("rows") or 0 for r in package["resources"] if r["name"] == "products")


def built_home(readings: int, reuse: bool) -> Path:
    """A home with a release of ``readings`` generated readings, built as `reuse-data build` builds
    it (``--reuse-build``: the one a previous run left, if it has a release)."""
    folder = inputs_folder()
    inputs = generated_inputs(folder, readings)
    home = folder / f"explore-home-{size_label(readings)}"
    if reuse and (home_layout(home).snapshots_dir / "CURRENT").exists():
        print(f"reusing the release in {home}", flush=True)
        return home
    shutil.rmtree(home, ignore_errors=True)
    print(f"building {size_label(readings)} readings into {home} …", flush=True)
    env = home_environment(home, inputs)
    subprocess.run([*CLI, "build"], cwd=PROJECT_ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    return home


@contextmanager
def chromium(origin: str) -> Iterator[Browser]:
    """Headless Chromium that reaches ``origin`` and nothing else: every other host and port goes
    to a proxy on a closed port (``<-loopback>`` sends the other loopback ports there too)."""
    from playwright.sync_api import sync_playwright

    port = origin.rsplit(":", 1)[1]
    refused = [f"--proxy-server=http://127.0.0.1:{free_port()}", f"--proxy-bypass-list=<-loopback>;127.0.0.1:{port}"]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *refused])
        try:
            context = browser.new_context()
            page = context.new_page()
            for outside in ("http://example.com/", f"http://127.0.0.1:{free_port()}/"):
                try:
                    page.goto(outside, timeout=15_000)
                except Exception as error:  # Playwright's Error: the refusal expected
                    if "ERR_PROXY_CONNECTION_FAILED" not in str(error):
                        raise SystemExit(f"{outside} failed otherwise than refused: {error}") from error
                else:
                    raise SystemExit(f"{outside} was reached: the browser is not closed to other origins")
            context.close()
            yield browser
        finally:
            browser.close()


class Visit:
    """One browser context on ``/explore``: its phases, each timed on the page's clock and counted
    from the server's access log and Playwright's responses."""

    def __init__(self, browser: Browser, origin: str, log: AccessLog, title: str) -> None:
        self.origin, self.log, self.title = origin, log, title
        self.context = browser.new_context()
        self.context.add_init_script(MARKS)
        self.seen: Counter[tuple[str, str]] = Counter()  # Playwright's body bytes by (method, path)
        self.reported = 0  # the requests Playwright has reported the end of
        self.ranges: list[tuple[str, str]] = []  # (path, Range header) of each GET that asked for one
        self.outside: list[str] = []
        self.encodings: dict[str, str] = {}
        self.context.on("request", self.asked)
        self.context.on("requestfinished", self.finished)
        self.page = self.context.new_page()

    def asked(self, request: Request) -> None:
        if request.method == "GET" and "range" in request.headers:
            self.ranges.append((urlsplit(request.url).path, request.headers["range"]))
        if not request.url.startswith(self.origin + "/"):
            self.outside.append(request.url)

    def finished(self, request: Request) -> None:
        self.reported += 1
        # Cache hits count as nothing or less: only a cold visit compares with the server's log.
        # The size first: sizes() waits on Playwright, which meanwhile runs this handler for other requests.
        size = max(0, request.sizes()["responseBodySize"])
        self.seen[request.method, urlsplit(request.url).path] += size
        response = request.response()
        if response is not None and request.url.endswith(".wasm"):
            self.encodings[request.url] = response.headers.get("content-encoding", "identity")

    def phase(self, seconds: float) -> Phase:
        """The phase that just ended, once its lines are in the server's log."""
        self.page.wait_for_timeout(SETTLE_MS)
        return Phase(seconds, self.log.since())

    def settled(self) -> Counter[tuple[str, str]]:
        """Playwright's counts once it has reported nothing new for a second: the worker's requests
        are reported late, in batches, some after the page is ready."""
        quiet_since, reported = time.monotonic(), self.reported
        deadline = quiet_since + 20
        while time.monotonic() - quiet_since < 1 and time.monotonic() < deadline:
            self.page.wait_for_timeout(200)
            if self.reported != reported:
                quiet_since, reported = time.monotonic(), self.reported
        return self.seen

    def ready(self, reload: bool) -> Phase:
        self.log.since()
        if reload:
            self.page.reload()
        else:
            self.page.goto(self.origin + "/explore")
        self.page.wait_for_selector("#status[data-state=ready]", timeout=WAIT_MS)
        return self.phase(self.page.evaluate("window.__marks.ready") / 1000)

    def query(self) -> tuple[Phase, int]:
        self.page.locator("button[data-sql]", has_text=self.title).click()
        self.page.wait_for_selector("#status[data-state=done], #status[data-state=error]", timeout=WAIT_MS)
        if self.page.get_attribute("#status", "data-state") == "error":
            raise SystemExit(f"the query failed in the browser: {self.page.text_content('#error')}")
        marks = self.page.evaluate("window.__marks")
        rows = int(re.match(r"([\d,]+) rows", self.page.text_content("#status")).group(1).replace(",", ""))
        return self.phase((marks["done"] - marks["click"]) / 1000), rows

    def close(self) -> None:
        self.context.close()


def checked_visit(
    browser: Browser, origin: str, log: AccessLog, title: str, paths: tuple[str, ...]
) -> tuple[str, Counter[int]]:
    """One more cold visit (load and query), its bytes counted by the server's log and by Playwright,
    once Playwright has reported every response; and the lengths of the ranges asked of ``paths``."""
    visit = Visit(browser, origin, log, title)
    try:
        ready = visit.ready(reload=False)
        query, _ = visit.query()
        seen = visit.settled()
    finally:
        visit.close()
    lengths = Counter(range_length(header) for path, header in visit.ranges if path.endswith(paths))
    asked = ", ".join(f"{count} of {length:,}" for length, count in lengths.most_common())
    checked = f"{cross_check(ready.sent + query.sent, seen, paths)}; the ranges the worker asked of it (bytes): {asked}"
    return checked, lengths


def range_length(header: str) -> int:
    """The bytes ``bytes=FIRST-LAST`` asks for (DuckDB-WASM always names both ends)."""
    first, last = re.fullmatch(r"bytes=(\d+)-(\d+)", header).groups()
    return int(last) - int(first) + 1


def local_duckdb(files: dict[str, Path], sql: str) -> tuple[float, int]:
    """Seconds of ``sql`` in Python DuckDB on a fresh connection with a view per table over its
    file on local disk (as the page makes them), and the rows it answers."""
    with duckdb.connect() as connection:
        for name, path in files.items():
            connection.execute(f"CREATE VIEW \"{name}\" AS SELECT * FROM read_parquet('{path}')")
        started = time.perf_counter()
        rows = connection.execute(sql).fetchall()
        return time.perf_counter() - started, len(rows)


def download_seconds(origin: str, paths: tuple[str, ...]) -> float:
    """Seconds to GET the whole of each of ``paths`` from the server, one after another."""
    started = time.perf_counter()
    for path in sorted(paths):
        with urllib.request.urlopen(origin + path, timeout=120) as response:
            response.read()
    return time.perf_counter() - started


def measure(label: str, home: Path, title: str, sql: str, rounds: int) -> ReleaseRun:
    """The release in ``home`` served and visited ``rounds`` times, with the baselines beside."""
    store = home_layout(home).snapshots_dir
    version = current_version(store)
    files = release_tables(store, version)
    read = tables_read(sql, files)
    if not read:
        raise SystemExit(f"no published table named after FROM or JOIN in the query {title!r}")
    groups, needed = file_layout([files[t] for t in read], sql)
    run = ReleaseRun(label, products_in(store, version), version, files, store / version, read, groups, needed)
    print(f"{label}: release {version}, {run.products:,} products, the query reads {', '.join(read)} …", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        log_path = Path(scratch) / "server.log"
        with serving(home, "--host", "127.0.0.1", environ=SERVER_ENV, log=log_path, ready="/explore") as server:
            origin = f"http://127.0.0.1:{server.port}"
            log = AccessLog(log_path)
            with chromium(origin) as browser:
                for number in range(rounds):
                    visit = Visit(browser, origin, log, title)
                    try:
                        cold_ready = visit.ready(reload=False)
                        cold_query, rows = visit.query()
                        warm_ready = visit.ready(reload=True)
                        warm_query, _ = visit.query()
                    finally:
                        visit.close()
                    if visit.outside:
                        raise SystemExit(f"the page asked for other origins: {visit.outside[:5]}")
                    run.wasm_encoding = ", ".join(sorted(set(visit.encodings.values())))
                    run.rounds.append(Round(cold_ready, cold_query, warm_ready, warm_query, rows))
                    print(
                        f"  round {number + 1}: ready {cold_ready.seconds:.2f} s cold, {warm_ready.seconds:.2f} s warm;"
                        f" query {cold_query.seconds:.2f} s cold, {warm_query.seconds:.2f} s warm",
                        flush=True,
                    )
                run.checked, run.range_lengths = checked_visit(browser, origin, log, title, run.read_paths)
            log.since()
            first = run.rounds[0]
            paths = {s.path for s in first.cold_ready.sent + first.cold_query.sent if s.path.endswith(run.read_paths)}
            run.download_s = [download_seconds(origin, tuple(paths)) for _ in range(rounds)]
            time.sleep(SETTLE_MS / 1000)
            downloaded = sum(s.bytes for s in log.since() if s.status == 200)
            if downloaded != rounds * run.read_size:
                raise SystemExit(
                    f"{rounds} whole-file downloads sent {downloaded} bytes, the files hold {run.read_size}"
                )
    for _ in range(rounds):
        seconds, run.local_rows = local_duckdb(files, sql)
        run.local_s.append(seconds)
    if run.local_rows != run.rounds[0].rows:
        raise SystemExit(f"the browser answered {run.rounds[0].rows} rows, Python DuckDB {run.local_rows}")
    return run


def kb(count: float) -> str:
    return f"{count / 1000:,.0f} kB" if count >= 10_000 else f"{count / 1000:,.1f} kB"


def figure(value: float) -> str:
    return f"{value:.2f}" if value >= 1 else f"{value:.3f}"


def seconds(values: list[float]) -> str:
    """The median, and the range where there are several."""
    middle = statistics.median(values)
    return figure(middle) if len(values) == 1 else f"{figure(middle)} ({figure(min(values))}–{figure(max(values))})"


def started_to_answer(run: ReleaseRun, round_: Round) -> list[Sent]:
    """The range responses of the files the query reads, from the engine's start to the answer."""
    return round_.cold_ready.ranged(run.read_paths) + round_.cold_query.ranged(run.read_paths)


def share_fetched(run: ReleaseRun) -> float:
    """What the first visit fetched of the query's files, from the engine's start to the answer, as
    a share of their size."""
    return sum(s.bytes for s in started_to_answer(run, run.rounds[0])) / run.read_size


def cross_check(sent: list[Sent], seen: Counter[tuple[str, str]], paths: tuple[str, ...]) -> str:
    """The query's files' bytes and the visit's total as the server's log and Playwright count them,
    and every response on which they differ."""
    logged: Counter[tuple[str, str]] = Counter()
    for response in sent:
        logged[response.method, response.path] += response.bytes
    differ = [
        f"{path.rsplit('/', 1)[-1]} ({logged[method, path]:,} against {seen[method, path]:,})"
        for method, path in sorted(set(logged) | set(seen))
        if logged[method, path] != seen[method, path]
    ]
    in_log = sum(s.bytes for s in sent if s.path.endswith(paths))
    in_browser = sum(size for (_, path), size in seen.items() if path.endswith(paths))
    return (
        f"the query's file(s) {in_log:,} bytes in the server's log, {in_browser:,} in Playwright's responses (the "
        f"worker's included); the whole visit {sum(logged.values()):,} and {sum(seen.values()):,}"
        + (f", differing on {'; '.join(differ)}" if differ else ", the same")
    )


def report(runs: list[ReleaseRun], title: str, sql: str, rounds: int) -> str:
    """The times beside their baselines, the bytes beside theirs, and a note per release."""
    times = [
        [
            run.label,
            f"{run.products:,}",
            seconds([r.cold_ready.seconds for r in run.rounds]),
            seconds([r.warm_ready.seconds for r in run.rounds]),
            seconds([r.cold_query.seconds for r in run.rounds]),
            seconds([r.warm_query.seconds for r in run.rounds]),
            seconds(run.local_s),
            seconds(run.download_s),
        ]
        for run in runs
    ]
    time_table = markdown_table(
        [
            "release",
            "products",
            "load to engine ready, cold (s)",
            "load to engine ready, warm (s)",
            "first query, cold (s)",
            "first query, warm (s)",
            "baseline: Python DuckDB, local files (s)",
            "baseline: whole-file download (s)",
        ],
        times,
    )
    sizes, notes = [], []
    for run in runs:
        first = run.rounds[0]
        ranged = started_to_answer(run, first)
        share = share_fetched(run)
        files = " + ".join(f"{t}.parquet" for t in run.read)
        target = ""
        if run.products >= TARGET_PRODUCTS:
            target = " (target under 25%: " + ("holds)" if share < TARGET_SHARE else "does not hold)")
        sizes.append(
            [
                run.label,
                kb(first.cold_ready.total),
                kb(first.cold_query.total),
                kb(first.cold_ready.total + first.cold_query.total),
                kb(first.warm_ready.total),
                kb(first.warm_query.total),
                f"{kb(sum(s.bytes for s in ranged))} in {len(ranged)} ranges",
                kb(run.read_size),
                f"{share:.1%}{target}",
                kb(run.needed_bytes),
            ]
        )
        file_bytes = {sum(s.bytes for s in started_to_answer(run, r)) for r in run.rounds}
        totals = [r.cold_ready.total + r.cold_query.total for r in run.rounds]
        whole = first.cold_ready.whole(run.read_paths) + first.cold_query.whole(run.read_paths)
        in_query = first.cold_query.ranged(run.read_paths)
        warm = first.warm_ready.ranged(run.read_paths) + first.warm_query.ranged(run.read_paths)
        notes.append(
            f"- {run.label} (release {run.version}): {files}, "
            + ", ".join(f"{run.row_groups[t]} row group(s)" for t in run.read)
            + f"; {len(in_query)} range response(s) ({kb(sum(s.bytes for s in in_query))}) in the query itself "
            f"({len(first.cold_query.sent)} requests in all, one after another: the worker's XHRs are synchronous), "
            f"the rest at the engine's start; {len(whole)} whole-file GET(s); {kb(sum(s.bytes for s in warm))} of it "
            f"sent again for the warm visit. The file's bytes "
            f"{'the same in every round' if len(file_bytes) == 1 else 'differing between rounds (round 1 shown)'}, "
            f"the cold visit's total within {max(totals) - min(totals):,} bytes. Cross-check, a cold visit more: "
            f"{run.checked}. The wasm "
            f"came with Content-Encoding {run.wasm_encoding or 'unknown (cached)'}; both engines answered "
            f"{run.local_rows:,} rows."
        )
    size_table = markdown_table(
        [
            "release",
            "fetched to ready, cold",
            "first query, cold",
            "cold visit in all",
            "fetched to ready, warm",
            "first query, warm",
            f"{' + '.join(f'{t}.parquet' for t in runs[0].read)} by range, engine start to answer",
            "baseline: the whole file",
            "share of the file",
            "chunks of the columns the SQL names",
        ],
        sizes,
    )
    query = " ".join(sql.split())
    return (
        f"Query: the example {title!r} (`{query}`), clicked on the page. Times: the median of {rounds} rounds "
        "(the range in brackets), each a fresh browser context (cold) then the page reloaded (warm), on the "
        "page's clock: from navigation to `#status[data-state=ready]`, from the click to `data-state=done`. "
        "Bytes: round 1, the body bytes of the server's access log.\n\n"
        f"{time_table}\n\n{size_table}\n\n" + "\n".join(notes) + "\n"
    )


def verdict(runs: list[ReleaseRun]) -> str:
    """The issue's target, where a release is large enough for it."""
    lines = []
    for run in runs:
        if run.products < TARGET_PRODUCTS:
            continue
        share = share_fetched(run)
        fetched = sum(s.bytes for s in started_to_answer(run, run.rounds[0]))
        page, _ = run.range_lengths.most_common(1)[0]
        lines.append(
            f"- Target (issue 55), at {run.products:,} products: the first query fetches under a quarter of its "
            f"table's file: {'holds' if share < TARGET_SHARE else 'does not hold'} ({share:.1%} of "
            f"{kb(run.read_size)}, the footer reads at the engine's start included). It read by range "
            f"({', '.join(f'{run.row_groups[t]} row groups' for t in run.read)}), {fetched / run.needed_bytes:.1f} "
            f"times the {len(run.needed_chunks)} column chunks of the columns it names ({kb(run.needed_bytes)}, "
            f"a median chunk of {kb(statistics.median(run.needed_chunks))}): the worker reads whole pages, most "
            f"often {page:,} bytes, so a small chunk costs a page."
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.explore",
        description=__doc__.split("\n\n")[0],
        epilog="Sizes accept k and M suffixes: 1M readings is 10,000 products. Examples: "
        + "; ".join(repr(e.title) for e in EXAMPLES)
        + ".",
    )
    parser.add_argument(
        "--sizes",
        default="1M",
        help="bench readings of the generated releases measured after the demo's (default 1M: 10,000 products; "
        "'' for the demo alone)",
    )
    parser.add_argument(
        "--example",
        default=DEFAULT_EXAMPLE,
        metavar="TITLE",
        help=f"the example query clicked (default {DEFAULT_EXAMPLE!r})",
    )
    parser.add_argument("--rounds", type=int, default=3, help="cold and warm visits per release (default 3)")
    parser.add_argument(
        "--reuse-build",
        action="store_true",
        help="serve the generated release a previous run built, where there is one, instead of building it again",
    )
    add_record_option(parser)
    args = parser.parse_args(argv)
    chosen = {e.title: e.sql for e in EXAMPLES}
    if args.example not in chosen:
        parser.error(f"no example titled {args.example!r}; the examples: {', '.join(chosen)}")
    sql = chosen[args.example]
    if CHROMIUM is None:
        raise SystemExit("Debian's chromium is not installed: make tools installs it")
    load = os.getloadavg()[0]
    homes = [("demo", load_settings().home)]
    sizes = parse_sizes(args.sizes) if args.sizes else []
    homes += [(f"{size_label(r)} readings", built_home(r, args.reuse_build)) for r in sizes]
    runs = [measure(label, home, args.example, sql, args.rounds) for label, home in homes]
    browser = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout.split(" built on")[0]
    command = f"python -m benchmarks.explore --sizes {args.sizes or repr('')} --rounds {args.rounds}"
    if args.example != DEFAULT_EXAMPLE:
        command += f" --example {args.example!r}"
    if args.reuse_build:
        command += " --reuse-build"
    body = (
        f"Machine: {machine()}; load average {load:.1f} at the start. {browser.strip()} headless, "
        f"DuckDB-WASM 1.28.0 in its worker; Python DuckDB {duckdb.__version__}; server and browser on the same "
        f"machine, over loopback. Command: `{command}`.\n\n"
        f"{report(runs, args.example, sql, args.rounds)}\n{verdict(runs)}\n"
    )
    results.report("Explore in the browser (issue 55)", body, args.record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
