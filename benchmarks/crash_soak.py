"""Crash anywhere: SIGKILL `reuse-data build` at random points and check what survives.

    make soak                                  # 20 kills, recorded in RESULTS.md
    python -m benchmarks.crash_soak --kills 3  # a shorter run, printed only

The demo is built once into a fresh home, and a `reuse-data serve` serves that home from
then on. A clean build is timed to learn how long ingest, dbt and publish take. Then each
round edits one bench sheet (so the build has real work), starts a build, waits for the phase
the round targets (ingest, dbt and publish in turn) and SIGKILLs the build's whole process
group (dbt with it) a random part of the way through that phase, as a power cut would. After
each kill:

- the published release is the one before the round or a complete new one: every file its
  manifest lists is there with its sha256, and every published table in its snapshot reads;
- the next build, run to its end, succeeds and publishes;
- once it has, no temporary file (a staging snapshot, a half-written cache, a DuckDB write-ahead
  log or spill folder) is left anywhere in the home.

The server is polled throughout; every request must succeed. The random points come from
``--seed``, so a failing run can be replayed.
"""

from __future__ import annotations

import argparse
import os
import queue
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.results import add_record_option, machine, markdown_table, record
from foundations.settings import PROJECT_ROOT
from release.local_store import SNAPSHOT_FILE, current_version, open_snapshot, release_path, snapshot_tables, versions
from release.manifest import ReleaseError, read_manifest, verify
from tests.support import harness
from tests.support.harness import Server, edit_sheet_readings, home_layout, serving

PHASES = ("ingest", "dbt", "publish")
# The build's progress lines that open each phase (see pipelines/build.py).
PHASE_STARTS = {"ingest": "▸ ", "dbt": "▸ dbt_models", "publish": "▸ published__snapshot"}
EDITED_PRODUCT, EDITED_PROTOCOL = "copperleaf-pouch-1000-ml", "leak-loss"
# What an interrupted write leaves: a staging snapshot or CURRENT, a cache's ".name.staging",
# an upload's ".part", DuckDB's write-ahead log and spill folder.
TEMPORARY = re.compile(r"^\.staging-|^\..+\.(\d+|staging)$|\.part$|\.wal$|\.tmp$")


@dataclass
class Round:
    target: str
    killed_in: str = ""  # the phase the build was in when it died ("" if it ended first)
    seconds_in: float = 0.0
    snapshot_after_kill: str = ""  # "kept" (the one before) or "new" (published before the kill)
    rebuild_seconds: float = 0.0
    leftovers: list[str] = field(default_factory=list)

    def describe(self) -> str:
        killed = f"killed in {self.killed_in} at {self.seconds_in:.1f} s" if self.killed_in else "the build ended first"
        left = f"; LEFT BEHIND {', '.join(self.leftovers)}" if self.leftovers else ""
        return (
            f"aimed at {self.target}, {killed}; snapshot {self.snapshot_after_kill}; "
            f"next build {self.rebuild_seconds:.1f} s{left}"
        )


@dataclass
class Poller:
    """Requests to the server from another thread, counted, until stopped."""

    server: Server
    sent: int = 0
    failures: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        paths = [
            "/api/public/products.json",
            "/api/public/bench.jsonl?limit=100",
            "/api/public/changes.json",
            "/api/public/downloads/bench_measurements.parquet",
            "/api/public/page.json?path=/guides/start-here",
        ]
        while not self.stop.is_set():
            path = paths[self.sent % len(paths)]
            try:
                status = self.server.get(path, timeout=10).status
                if status != 200:
                    self.failures.append(f"{path}: {status}")
            except OSError as error:
                self.failures.append(f"{path}: {error}")
            self.sent += 1
            time.sleep(0.05)


def start_build(home: Path, inputs: Path) -> tuple[subprocess.Popen, queue.Queue]:
    """`reuse-data build` in a process group of its own; its lines arrive on the queue with their time."""
    process = harness.start_build(home, inputs)
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for line in process.stdout:
            lines.put((time.monotonic(), line))
        lines.put((time.monotonic(), None))

    threading.Thread(target=read, daemon=True).start()
    return process, lines


def phase_of(line: str, phase: str) -> str:
    """The phase a progress line opens, or ``phase`` unchanged."""
    for name in reversed(PHASES):
        if PHASE_STARTS[name] in line and (name != "ingest" or phase == ""):
            return name
    return phase


def full_build(home: Path, inputs: Path) -> tuple[float, dict[str, float]]:
    """Run a build to its end: its wall time and when each phase began (seconds from the start)."""
    started = time.monotonic()
    process, lines = start_build(home, inputs)
    began: dict[str, float] = {}
    output, phase = [], ""
    while (item := lines.get())[1] is not None:
        stamp, line = item
        output.append(line)
        new_phase = phase_of(line, phase)
        if new_phase != phase:
            began[new_phase], phase = stamp - started, new_phase
    if process.wait() != 0:
        raise SystemExit("a build after a kill failed:\n" + "".join(output[-40:]))
    return time.monotonic() - started, began


def kill_during(home: Path, inputs: Path, target: str, spans: dict[str, float], rng: random.Random) -> Round:
    """Start a build and SIGKILL its process group a random part of the way into ``target``."""
    this = Round(target)
    started = time.monotonic()
    process, lines = start_build(home, inputs)
    phase, kill_at = "", None
    while kill_at is None or time.monotonic() < kill_at:
        timeout = None if kill_at is None else max(0.0, kill_at - time.monotonic())
        try:
            stamp, line = lines.get(timeout=timeout)
        except queue.Empty:
            break
        if line is None:
            break  # the build ended before the kill
        phase = phase_of(line, phase)
        if kill_at is None and phase == target:
            kill_at = stamp + rng.uniform(0, spans[target])
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        this.killed_in, this.seconds_in = phase, time.monotonic() - started
    process.wait()
    return this


def check_snapshot(home: Path, before: str) -> str:
    """The published release is whole (every file as its manifest lists it) and its snapshot reads:
    "kept" if it is ``before``, "new" if the killed build published first. Raises SystemExit otherwise."""
    store = home_layout(home).snapshots_dir
    current = current_version(store)
    if current is None or current not in versions(store):
        raise SystemExit(f"CURRENT names {current!r}, which is not a complete snapshot in {store}")
    folder = release_path(store, current)
    try:
        verify(folder, read_manifest(folder))
    except ReleaseError as error:
        raise SystemExit(f"CURRENT names a release that is not whole: {error}") from error
    with open_snapshot(folder / SNAPSHOT_FILE) as connection:
        for table in snapshot_tables(connection):
            connection.execute(f'SELECT count(*) FROM "{table}"').fetchall()
    return "kept" if current == before else "new"


def leftovers(home: Path) -> list[str]:
    """Temporary files anywhere in the home (Dagster's own storage aside)."""
    found = []
    for path in home.rglob("*"):
        relative = path.relative_to(home)
        if relative.parts[0] != "dagster" and TEMPORARY.search(path.name):
            found.append(str(relative))
    return sorted(found)


def soak(kills: int, seed: int, work: Path, report=print) -> tuple[list[Round], int, list[str]]:
    """Run the soak in ``work``; the rounds, the requests the server answered, and its failures."""
    rng = random.Random(seed)
    inputs = Path(shutil.copytree(PROJECT_ROOT / "demo", work / "inputs"))
    home = work / "home"
    report("building the demo into a fresh home ...")
    full_build(home, inputs)
    rounds: list[Round] = []
    with serving(home) as server:
        poller = Poller(server)
        polling = threading.Thread(target=poller.run)
        polling.start()
        try:
            edit_sheet_readings(inputs, EDITED_PRODUCT, EDITED_PROTOCOL, 0.1)
            seconds, began = full_build(home, inputs)
            ends = [began["dbt"], began["publish"], seconds]
            spans = {name: end - began[name] for name, end in zip(PHASES, ends, strict=True)}
            report("a clean build: " + ", ".join(f"{name} {span:.1f} s" for name, span in spans.items()))
            landed = 0
            while landed < kills and len(rounds) < 2 * kills:  # a build that ends before its kill is retried
                edit_sheet_readings(inputs, EDITED_PRODUCT, EDITED_PROTOCOL, -0.1 if len(rounds) % 2 == 0 else 0.1)
                before = current_version(home_layout(home).snapshots_dir)
                this = kill_during(home, inputs, PHASES[landed % len(PHASES)], spans, rng)
                this.snapshot_after_kill = check_snapshot(home, before)
                this.rebuild_seconds, _ = full_build(home, inputs)
                this.leftovers = leftovers(home)
                rounds.append(this)
                landed += bool(this.killed_in)
                report(f"round {len(rounds)}, {landed}/{kills} kills: {this.describe()}")
        finally:
            poller.stop.set()
            polling.join()
    return rounds, poller.sent, poller.failures


def summary(rounds: list[Round], requests: int, failures: list[str], seed: int) -> str:
    landed = [r for r in rounds if r.killed_in]
    rows = [
        [
            phase,
            sum(r.killed_in == phase for r in landed),
            sum(r.killed_in == phase and r.snapshot_after_kill == "kept" for r in landed),
            sum(r.killed_in == phase and r.snapshot_after_kill == "new" for r in landed),
        ]
        for phase in PHASES
    ]
    table = markdown_table(["killed during", "kills", "snapshot kept", "new snapshot already published"], rows)
    left = sorted({name for r in rounds for name in r.leftovers})
    rebuilds = [r.rebuild_seconds for r in rounds]
    return "\n\n".join(
        [
            f"Machine: {machine()}. Seed {seed}; {len(rounds)} rounds, {len(landed)} kills landed "
            f"({len(rounds) - len(landed)} builds ended before their kill).",
            table,
            f"Every snapshot read whole after every kill; every next build succeeded "
            f"({min(rebuilds, default=0):.1f} to {max(rebuilds, default=0):.1f} s). "
            f"Temporary files left after the next build: {', '.join(left) if left else 'none'}. "
            f"The server answered {requests} requests during the soak with {len(failures)} failures.",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--kills", type=int, default=20, help="how many builds to kill (default 20; one that ends first is retried)"
    )
    parser.add_argument("--seed", type=int, default=7, help="seed of the random kill points (default 7)")
    add_record_option(parser)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="crash-soak-") as work:
        rounds, requests, failures = soak(args.kills, args.seed, Path(work))
    text = summary(rounds, requests, failures, args.seed)
    print(text)
    if args.record:
        print(f"recorded in {record('Crash soak', text)}")
    broken = failures or any(r.leftovers for r in rounds)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
