"""Load from a separate process on loopback, bounded in time, and what a server does under it.

- ``run_wrk``: wrk (Debian's package) with N connections for S seconds, on one path or a
  rotation of many; requests per second, p50/p99 latency and bytes per second, read from a
  Lua ``done`` hook as JSON.
- ``first_byte_ms``: time from sending a request to the first byte of the body, one at a time.
- ``peak_rss_growth``: how much a server's resident memory grows while many clients stream at once.
- ``wait_until_idle``: until a server has stopped working on requests its clients abandoned.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.harness import process_tree_rss

WRK_REPORT = """
done = function(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "bytes": %d, "socket_errors": %d, "bad_status": %d, '
    .. '"p50_us": %d, "p99_us": %d}\\n',
    summary.requests, summary.duration, summary.bytes,
    errors.connect + errors.read + errors.write + errors.timeout, errors.status,
    latency:percentile(50), latency:percentile(99)))
end
"""


@dataclass(frozen=True)
class Load:
    """What a server sustained under one wrk run."""

    requests_per_second: float
    p50_ms: float
    p99_ms: float
    megabytes_per_second: float
    failures: int  # socket errors, timeouts and 4xx/5xx replies
    error_replies: int  # of which 4xx/5xx replies (ask.json's 503 when it is busy)


def wrk_command() -> str:
    command = shutil.which("wrk")
    if command is None:
        raise SystemExit("wrk is not installed: `make setup` installs it (Debian's wrk), or `apt-get install wrk`.")
    return command


def rotating_requests(paths: list[str]) -> str:
    """A wrk ``request`` hook that asks each of ``paths`` in turn, so no request repeats until all have been made."""
    listed = ",\n".join(json.dumps(path) for path in paths)  # a JSON string is a valid Lua string here (ASCII)
    return f"""
paths = {{{listed}}}
asked = 0
request = function()
  asked = asked + 1
  return wrk.format("GET", paths[(asked - 1) % #paths + 1])
end
"""


def run_wrk(
    url: str,
    seconds: float,
    connections: int,
    headers: dict[str, str] | None = None,
    timeout_s: int = 30,
    paths: list[str] | None = None,
) -> Load:
    """``connections`` keep-alive connections on one wrk thread for ``seconds``; wrk's own measurements.
    With ``paths`` (percent-encoded), the requests go to each path in turn instead of ``url``'s."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(WRK_REPORT + (rotating_requests(paths) if paths else ""))
    try:
        argv = [wrk_command(), "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", f"--timeout={timeout_s}s"]
        argv += ["-s", script.name]
        for name, value in (headers or {}).items():
            argv += ["-H", f"{name}: {value}"]
        completed = subprocess.run([*argv, url], capture_output=True, text=True, check=True)
    finally:
        Path(script.name).unlink()
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    duration = report["duration_us"] / 1e6
    return Load(
        requests_per_second=report["requests"] / duration,
        p50_ms=report["p50_us"] / 1000,
        p99_ms=report["p99_us"] / 1000,
        megabytes_per_second=report["bytes"] / duration / 1e6,
        failures=report["socket_errors"] + report["bad_status"],
        error_replies=report["bad_status"],
    )


def _request(port: int, path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()


def first_byte_ms(port: int, path: str, rounds: int, warm_up: bool = False) -> list[float]:
    """Per request: milliseconds from sending it to the first byte of the body (the rest is drained).

    With ``warm_up``, after one untimed request for the same path: the first request after a
    server starts also pays one-time costs (DuckDB reading the table's blocks from disk).
    """
    if warm_up:
        _drain(port, path)
    timings = []
    for _ in range(rounds):
        with socket.create_connection(("127.0.0.1", port)) as connection:
            started = time.perf_counter()
            connection.sendall(_request(port, path))
            received = b""
            while b"\r\n\r\n" not in received or received.endswith(b"\r\n\r\n"):
                chunk = connection.recv(65536)
                if not chunk:
                    break
                received += chunk
            timings.append((time.perf_counter() - started) * 1000)
            while connection.recv(1 << 20):
                pass
    return timings


def _drain(port: int, path: str, pause: float = 0.0) -> int:
    """Read a whole response, sleeping ``pause`` seconds after each 64 KiB (a slow client); bytes read."""
    received = 0
    with socket.create_connection(("127.0.0.1", port)) as connection:
        connection.sendall(_request(port, path))
        while chunk := connection.recv(1 << 16):
            received += len(chunk)
            if pause:
                time.sleep(pause)
    return received


def download_times(port: int, path: str, rounds: int) -> tuple[int, list[float]]:
    """(bytes of the response, seconds each of ``rounds`` whole downloads of ``path`` took), one
    client downloading one at a time, after one untimed download (first-use costs are not streaming)."""
    size = _drain(port, path)
    seconds = []
    for _ in range(rounds):
        started = time.perf_counter()
        _drain(port, path)
        seconds.append(time.perf_counter() - started)
    return size, seconds


def peak_rss_growth(pid: int, port: int, paths: list[str], clients: int, pause: float = 0.002) -> tuple[int, list[int]]:
    """(peak growth of the server's resident memory in bytes, bytes each client received) while
    ``clients`` slow clients stream at once, client i reading ``paths[i % len(paths)]``; memory is
    sampled every 10 ms from a baseline taken after one warm-up request per path."""
    for path in paths:
        _drain(port, path)  # caches, pools and first-use allocations are not growth
    baseline = process_tree_rss(pid)
    peak, received = baseline, [0] * clients

    def client(index: int) -> None:
        received[index] = _drain(port, paths[index % len(paths)], pause)

    threads = [threading.Thread(target=client, args=(index,)) for index in range(clients)]
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads):
        peak = max(peak, process_tree_rss(pid))
        time.sleep(0.01)
    for thread in threads:
        thread.join()
    return peak - baseline, received


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def wait_until_idle(pid: int, quiet: float = 1.0, timeout: float = 120.0) -> float:
    """Wait until process ``pid`` uses under a tenth of a core over ``quiet`` seconds (a server
    still answering requests wrk abandoned when its run ended); seconds waited, at most ``timeout``."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        before = cpu_seconds(pid)
        time.sleep(quiet)
        if cpu_seconds(pid) - before < 0.1 * quiet:
            break
    return time.monotonic() - started
