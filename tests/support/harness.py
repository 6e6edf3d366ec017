"""Real servers on loopback and bigger snapshots: what the tests share (and the benchmarks reuse).

``serving`` runs `reuse-data serve` (or `intake`) over a home on a free port; ``Server`` talks
to it with the standard library only; ``copy_home`` and ``inflate_bench`` make a second home
with a larger bench mart to stream.
"""

from __future__ import annotations

import contextlib
import csv
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import duckdb

from foundations.settings import PROJECT_ROOT, Settings, load_settings
from intake.build_request import DagsterUnavailable, sensor_target
from publish.new_release import publish_release
from publish.snapshot_copy import published_tables
from warehouse.contract import CHECKED_TABLES, DATA_DICTIONARY_TABLE, MARTS_SCHEMA


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body)


@dataclass
class Server:
    port: int
    home: Path
    process: subprocess.Popen
    log: Path | None = None  # what the server printed, when started with a log
    host: str = "127.0.0.1"  # where it listens (another host's address, for a replica in a namespace)

    @property
    def store(self) -> Path:
        return home_layout(self.home).snapshots_dir

    @property
    def warehouse(self) -> Path:
        return home_layout(self.home).warehouse_path

    def get(self, path: str, headers: dict[str, str] | None = None, timeout: float = 30) -> Reply:
        return self.send("GET", path, headers=headers, timeout=timeout)

    def send(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None, timeout=30
    ) -> Reply:
        url = f"http://{self.host}:{self.port}{path}"
        request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return Reply(response.status, {k.lower(): v for k, v in response.headers.items()}, response.read())
        except urllib.error.HTTPError as error:
            return Reply(error.code, {k.lower(): v for k, v in error.headers.items()}, error.read())

    def exchange(self, request: bytes, timeout: float = 30) -> Reply:
        """Send ``request`` byte for byte (no client-side checks) and read the one response to it."""
        with socket.create_connection((self.host, self.port), timeout=timeout) as connection:
            # A server that answers and closes before taking it all has still sent its answer.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                connection.sendall(request)
            response = http.client.HTTPResponse(connection, method=request.split(b" ", 1)[0].decode("latin-1"))
            response.begin()
            return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())

    def wait_for_version(self, version: str, consecutive: int = 1, seconds: float = 20) -> None:
        """Until ``consecutive`` replies in a row come from ``version`` (every worker has switched)."""
        deadline, streak = time.monotonic() + seconds, 0
        while streak < consecutive:
            assert time.monotonic() < deadline, f"the server did not switch to {version}"
            reply = self.get("/api/public/products.json")
            streak = streak + 1 if reply.headers["x-dataset-version"] == version else 0
            if not streak:
                time.sleep(0.1)

    def rss_bytes(self) -> int:
        """Resident memory of the server process and its children (uvicorn workers)."""
        return process_tree_rss(self.process.pid)

    def worker_pids(self) -> list[int]:
        """uvicorn's worker processes (with --workers; none with one worker, which serves in-process)."""
        return [pid for pid in _children(self.process.pid) if b"spawn_main" in _cmdline(pid)]


def process_tree_rss(pid: int) -> int:
    """Resident memory, in bytes, of a process and its children."""
    total = 0
    for member in [pid, *_children(pid)]:
        try:
            status = Path(f"/proc/{member}/status").read_text()
        except FileNotFoundError:
            continue
        total += next(int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmRSS:"))
    return total


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return b""


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []


@dataclass(frozen=True)
class MeasuredRun:
    seconds: float
    peak_mb: float  # the largest resident set of the command or any of its children


def measured_run(command: list[str], env: dict[str, str]) -> MeasuredRun:
    """Run ``command`` in a fresh child process; its wall time and the peak RSS of its process tree.

    A probe process runs the command and reads ``RUSAGE_CHILDREN``, which covers the command
    and every descendant it waited for (dbt runs as a child of a build). Raises SystemExit with
    the end of the command's output when it fails.
    """
    probe = [
        sys.executable,
        "-c",
        "import resource, subprocess, sys, json;"
        "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode;"
        "usage = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss;"
        "print(json.dumps({'code': code, 'maxrss_kb': usage}))",
        *command,
    ]
    started = time.perf_counter()
    completed = subprocess.run(probe, env=env, cwd=PROJECT_ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    if result["code"] != 0:
        raise SystemExit(f"`{' '.join(command)}` exited {result['code']}\n{completed.stderr[-2000:]}")
    return MeasuredRun(seconds, result["maxrss_kb"] / 1024)


def home_environment(home: Path, inputs: Path | None = None) -> dict[str, str]:
    """This process's environment for a `reuse-data` command (or dagster-daemon, or a bare `dbt`)
    over ``home`` (and ``inputs``)."""
    layout = home_layout(home)
    env = {
        **os.environ,
        "REUSE_DATA_HOME": str(home),
        "DAGSTER_HOME": str(layout.dagster_home),
    }
    if inputs is not None:
        env["REUSE_DATA_INPUTS"] = str(inputs)
    return env


def start_build(home: Path, inputs: Path) -> subprocess.Popen:
    """`reuse-data build` in a process group of its own (so that dbt under it can be killed with
    it), its output as text lines on ``stdout``."""
    return subprocess.Popen(
        [sys.executable, "-m", "reuse_data.cli", "build"],
        cwd=PROJECT_ROOT,
        env=home_environment(home, inputs),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def request_head(target: str, *fields: bytes) -> bytes:
    """A GET request head as bytes, to send as it is: Host, the header ``fields``, Connection: close."""
    lines = [f"GET {target} HTTP/1.1".encode("latin-1"), b"Host: 127.0.0.1", *fields, b"Connection: close"]
    return b"\r\n".join(lines) + b"\r\n\r\n"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def running(
    argv: list[str],
    port: int,
    ready: str,
    env: dict[str, str] | None = None,
    log: Path | None = None,
    host: str = "127.0.0.1",
) -> Iterator[subprocess.Popen]:
    """A server process started from ``argv``, once ``ready`` answers 200 on ``port``; SIGTERM when
    the block ends, SIGKILL if it has not stopped 30 s later.

    Its output goes to ``log`` or a temporary file, never to a pipe nobody reads (a server that
    logs every request would block once the pipe filled); the end of it explains a server that
    did not start.
    """
    with log.open("w+b") if log else tempfile.TemporaryFile() as output:
        process = subprocess.Popen(argv, cwd=PROJECT_ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
        probe = Server(port, PROJECT_ROOT, process, host=host)
        deadline = time.monotonic() + 60
        while True:
            try:
                if probe.get(ready, timeout=5).status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                process.wait()
                output.seek(0)
                said = output.read().decode(errors="replace")[-2000:]
                raise RuntimeError(f"{' '.join(argv)} did not start: {said}")
            time.sleep(0.2)
        try:
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:  # still busy (Datasette finishing abandoned exports)
                process.kill()
                process.wait()


@contextmanager
def serving(
    home: Path,
    *extra_args: str,
    command: str = "serve",
    ready: str = "/api/public/capabilities.json",
    environ: dict[str, str] | None = None,
    log: Path | None = None,
) -> Iterator[Server]:
    """`reuse-data serve` (or ``command``) over ``home`` on a free port, until the block ends (then
    SIGTERM); what it prints goes to ``log`` when given."""
    port = free_port()
    env = {**home_environment(home), **(environ or {})}
    argv = [sys.executable, "-m", "reuse_data.cli", command, "--port", str(port), *extra_args]
    with running(argv, port, ready, env, log) as process:
        yield Server(port, home, process, log)


T = TypeVar("T")


def wait_for(what: str, condition: Callable[[], T], seconds: float, log: Path, poll: float = 0.5) -> T:
    """What ``condition`` returns once it returns something (polled every ``poll`` s); past
    ``seconds``, RuntimeError with the end of ``log``, what the process that should have done it said."""
    deadline = time.monotonic() + seconds
    while not (outcome := condition()):
        if time.monotonic() > deadline:
            said = log.read_text()[-4000:]
            raise RuntimeError(f"{what} did not happen within {seconds:.0f} s; its log said:\n{said}")
        time.sleep(poll)
    return outcome


@contextmanager
def dagster_process(argv: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    """A Dagster command on the project's workspace with ``env``, its output in ``log``; on exit it
    is stopped with its code server and run workers (one process group, SIGTERM)."""
    command = [str(Path(sys.executable).parent / argv[0]), *argv[1:], "-w", "workspace.yaml"]
    with log.open("w") as output:
        process = subprocess.Popen(
            command, cwd=PROJECT_ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        yield process
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)


@contextmanager
def dagster_daemon(env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    """`dagster-daemon run`: the sensors and the run queue, without the webserver."""
    with dagster_process(["dagster-daemon", "run"], env, log) as daemon:
        yield daemon


@contextmanager
def dagster_webserver(env: dict[str, str], log: Path, daemon: bool = True, seconds: float = 300) -> Iterator[str]:
    """`dagster dev` as `make dev` runs it, the webserver on a free loopback port and the daemon
    beside it (with ``daemon=False``, `dagster-webserver` alone: runs it launches wait on the
    queue); yields the webserver's URL once it answers with the pipeline's code loaded (its
    intake sensor found, as the intake looks for it)."""
    port = free_port()
    address = ["-h", "127.0.0.1", "-p", str(port)]
    command = ["dagster", "dev", *address] if daemon else ["dagster-webserver", *address]
    with dagster_process(command, env, log) as process:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + seconds
        while True:
            try:
                sensor_target(url)
                break
            except DagsterUnavailable:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"{' '.join(command)} did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield url


def home_layout(home: Path) -> Settings:
    """Where a home keeps its warehouse and snapshots: the settings a server over ``home`` reads."""
    return load_settings({"REUSE_DATA_HOME": str(home)})


def copy_home(source: Path, target: Path) -> Path:
    """A second home with the same build warehouse and published snapshots."""
    copied, copy = home_layout(source), home_layout(target)
    shutil.copytree(copied.warehouse_path.parent, copy.warehouse_path.parent)
    shutil.copytree(copied.snapshots_dir, copy.snapshots_dir)
    copy.dagster_home.mkdir(parents=True, exist_ok=True)
    return target


def inflate_bench(home: Path, copies: int) -> int:
    """Replace the home's warehouse with one whose bench mart holds ``copies`` times the demo's
    slots (distinct ids, same stream order within each copy) and publish it; returns the row count."""
    layout = home_layout(home)
    demo = layout.warehouse_path
    inflated = demo.with_name("inflated.duckdb")
    with duckdb.connect(str(inflated)) as connection:
        connection.execute(f"ATTACH '{demo}' AS demo (READ_ONLY)")
        connection.execute(f"CREATE SCHEMA {MARTS_SCHEMA}")
        for table in (*published_tables(connection, f"demo.{MARTS_SCHEMA}"), *CHECKED_TABLES):
            source = f"demo.{MARTS_SCHEMA}.{table}"
            if table == "bench_measurements":
                connection.execute(
                    f"CREATE TABLE {MARTS_SCHEMA}.{table} AS SELECT * EXCLUDE (copy) REPLACE ("
                    "measurement_id || '#' || copy::VARCHAR AS measurement_id, "
                    f"copy * (SELECT max(stream_position) + 1 FROM {source}) + stream_position AS stream_position) "
                    f"FROM {source}, range({copies}) AS copies(copy)"
                )
            else:
                connection.execute(f"CREATE TABLE {MARTS_SCHEMA}.{table} AS SELECT * FROM {source}")
        rows = connection.execute(f"SELECT count(*) FROM {MARTS_SCHEMA}.bench_measurements").fetchone()[0]
    inflated.replace(demo)
    publish_release(layout.snapshots_dir, demo)
    return rows


def edit_sheet_readings(inputs: Path, product: str, protocol: str, delta: float) -> list[Path]:
    """Add ``delta`` to every reading of one product in the sheets of ``protocol`` (in every
    copy of a sheet exported twice, as a lab correcting its records would)."""
    edited = []
    for sheet in sorted((inputs / "bench").glob(f"*_{protocol}_session-*.csv")):
        text = sheet.read_text(encoding="utf-8")
        delimiter = ";" if text.splitlines()[0].count(";") > 1 else ","
        rows = list(csv.reader(text.splitlines(), delimiter=delimiter))
        touched = 0
        for row in rows[1:]:
            if row[0].strip().lower() == product:
                value = float(row[3].replace(",", ".")) + delta
                row[3] = f"{value:.1f}".replace(".", ",") if delimiter == ";" else f"{value:.1f}"
                touched += 1
        if touched:
            with sheet.open("w", encoding="utf-8", newline="") as handle:
                csv.writer(handle, delimiter=delimiter, lineterminator="\r\n").writerows(rows)
            edited.append(sheet)
    if not edited:
        raise ValueError(f"no {protocol} sheet has {product}")
    return edited


def distributed_tables() -> set[str]:
    """The tables a release offers as downloads, by dbt's manifest: every mart with an enforced
    contract but the data dictionary, which describes them."""
    from pipelines.project import dbt_project, published_marts

    # parses the dbt project when its manifest is stale
    return set(published_marts(dbt_project(load_settings()))) - {DATA_DICTIONARY_TABLE}


def without_pytorch(folder: Path, *python_path: Path) -> dict[str, str]:
    """An environment under which `import torch` fails as on an install without PyTorch (``make
    install``'s, a replica's): a package of that name first on PYTHONPATH (then ``python_path``)
    that raises what Python raises for a missing one."""
    package = folder / "no-pytorch" / "torch"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(
        'raise ModuleNotFoundError("No module named \'torch\'", name="torch")\n', encoding="utf-8"
    )
    return {"PYTHONPATH": os.pathsep.join(str(path) for path in (package.parent, *python_path))}
