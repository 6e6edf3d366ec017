"""bench.jsonl and bench.csv stream: batch by batch, in stream order, in bounded memory, and a
stream in flight finishes on its own snapshot when a new one is published.

The server here serves a snapshot whose bench mart holds 120 copies of the demo's slots
(over 25,000 rows), published through the ordinary publish step.
"""

from __future__ import annotations

import json
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.load import peak_rss_growth
from public.openapi import BENCH_DEFAULT_LIMIT, BENCH_MAX_LIMIT
from publish.new_release import publish_release
from serve.api.routes_bench import MAX_PAGE_ROWS, SEND_BYTES
from tests.support.harness import Server, copy_home, inflate_bench, serving

COPIES = 120
CLIENTS = 20
RSS_GROWTH_LIMIT = 50 * 1024 * 1024


@pytest.fixture(scope="module")
def big_server(demo_home: Path, tmp_path_factory) -> Iterator[Server]:
    home = copy_home(demo_home, tmp_path_factory.mktemp("big") / "home")
    assert inflate_bench(home, COPIES) > BENCH_MAX_LIMIT
    with serving(home) as server:
        yield server


def raw_get(port: int, path: str, read_size: int = 1 << 16, pause: float = 0.0) -> tuple[str, list[bytes]]:
    """GET over a plain socket: the status line and headers, and the body's HTTP chunks as sent."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        connection.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        received = bytearray()
        while block := connection.recv(read_size):
            received += block
            if pause:
                time.sleep(pause)
    head, _, body = bytes(received).partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head.lower(), head
    chunks = []
    while True:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            break
        chunks.append(body[:size])
        body = body[size + 2 :]
    return head.decode(), chunks


@pytest.mark.parametrize("export", ["bench.jsonl", "bench.csv"])
def test_a_large_export_leaves_batch_by_batch(big_server: Server, export: str):
    head, chunks = raw_get(big_server.port, f"/api/public/{export}?limit={BENCH_MAX_LIMIT}")
    assert head.startswith("HTTP/1.1 200")
    body = b"".join(chunks)
    lines = body.decode().splitlines()
    assert len(lines) == BENCH_MAX_LIMIT + (1 if export == "bench.csv" else 0)
    # Page by page, in small pieces: the first left before the last was read from DuckDB.
    assert len(chunks) >= BENCH_MAX_LIMIT // MAX_PAGE_ROWS
    assert max(len(chunk) for chunk in chunks) <= SEND_BYTES
    assert chunks[0].endswith(b"\n") and len(chunks[0]) < len(body) / 10


def test_limit_defaults_and_clamps_and_rows_keep_stream_order(big_server: Server):
    default = big_server.get("/api/public/bench.jsonl").body.decode().splitlines()
    clamped = big_server.get("/api/public/bench.jsonl?limit=1000000").body.decode().splitlines()
    assert (len(default), len(clamped)) == (BENCH_DEFAULT_LIMIT, BENCH_MAX_LIMIT)
    assert clamped[:BENCH_DEFAULT_LIMIT] == default
    copies = [int(json.loads(line)["measurement_id"].rsplit("#", 1)[1]) for line in clamped]
    assert copies == sorted(copies), "rows leave in stream order, copy after copy"


def test_memory_stays_bounded_while_many_clients_stream(big_server: Server):
    """20 slow clients each stream 20,000 rows at once; the server grows by less than 50 MB."""
    exports = [f"/api/public/{export}?limit={BENCH_MAX_LIMIT}" for export in ("bench.jsonl", "bench.csv")]
    growth, received = peak_rss_growth(big_server.process.pid, big_server.port, exports, CLIENTS)
    assert min(received) > 1_000_000
    assert growth < RSS_GROWTH_LIMIT, f"server grew by {growth / 2**20:.1f} MB while {CLIENTS} clients streamed"


def test_a_stream_in_flight_finishes_on_its_own_snapshot_across_switches(big_server: Server):
    started_on = big_server.get("/api/public/products.json").headers["x-dataset-version"]
    outcome: dict[str, object] = {}

    def slow_reader() -> None:
        outcome["reply"] = raw_get(big_server.port, f"/api/public/bench.jsonl?limit={BENCH_MAX_LIMIT}", 4096, 0.005)

    reader = threading.Thread(target=slow_reader)
    reader.start()
    published = [publish_release(big_server.store, big_server.warehouse).version for _ in range(3)]
    deadline = time.monotonic() + 20
    while big_server.get("/api/public/products.json").headers["x-dataset-version"] != published[-1]:
        assert time.monotonic() < deadline, "the server did not pick up the new snapshot"
        time.sleep(0.2)
    assert reader.is_alive(), "the slow stream should still be in flight after the switches"
    reader.join()
    head, chunks = outcome["reply"]
    lines = b"".join(chunks).decode().splitlines()
    headers = dict(line.lower().split(": ", 1) for line in head.splitlines()[1:])
    assert head.startswith("HTTP/1.1 200") and headers["x-dataset-version"] == started_on.lower()
    assert len(lines) == BENCH_MAX_LIMIT and all(json.loads(line)["status"] for line in lines)


def test_a_client_that_stops_reading_a_large_export_holds_up_no_one(big_server: Server):
    stalled = socket.socket()
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: a small window
    with stalled:
        stalled.connect(("127.0.0.1", big_server.port))
        target = f"/api/public/bench.jsonl?limit={BENCH_MAX_LIMIT}"
        stalled.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        assert stalled.recv(1024).startswith(b"HTTP/1.1 200")
        # It reads no more: the server's writes to it wait while everyone else is served.
        others = ["/api/public/products.json", "/api/public/bench.csv?limit=2000", "/api/public/ask.json?q=bottle"]
        for path in others * 3:
            assert big_server.get(path, timeout=10).status == 200
        stalled.settimeout(60)
        rest = bytearray()
        while not rest.endswith(b"\r\n0\r\n\r\n"):
            block = stalled.recv(1 << 16)
            assert block, "the stalled stream was closed before its end"
            rest += block
    assert rest.count(b"\n") > BENCH_MAX_LIMIT  # and it still gets every row once it reads again


def test_sigterm_finishes_the_responses_in_flight_and_takes_no_new_ones(big_server: Server):
    with serving(big_server.home) as server:
        outcome: dict[str, object] = {}

        def slow_reader() -> None:
            outcome["reply"] = raw_get(server.port, f"/api/public/bench.jsonl?limit={BENCH_MAX_LIMIT}", 8192, 0.002)

        reader = threading.Thread(target=slow_reader)
        reader.start()
        time.sleep(0.5)
        server.process.terminate()
        assert reader.is_alive(), "the stream should still be in flight when SIGTERM arrives"
        time.sleep(0.5)
        with pytest.raises(OSError):  # the listening socket closes at once
            server.get("/api/public/products.json", timeout=5)
        reader.join(timeout=30)
        assert not reader.is_alive()
        # uvicorn shuts down, then re-raises the signal it caught: the exit status is SIGTERM's.
        assert server.process.wait(timeout=30) == -signal.SIGTERM
    head, chunks = outcome["reply"]
    assert head.startswith("HTTP/1.1 200")
    assert len(b"".join(chunks).decode().splitlines()) == BENCH_MAX_LIMIT
