"""New snapshots are picked up while serving: no restart, no failed request, no mixed response,
with one worker and with several.

Each test serves a copy of the demo home, so publishing here disturbs no other test.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from benchmarks.harness import Reply, Server, copy_home, serving
from warehouse.snapshots import current_version, publish

HAMMERED = [
    "/api/public/products.json",
    "/api/public/page.json?path=/guides/start-here",
    "/api/public/changes.json?since=2026-06-01",
    "/api/public/ask.json?q=" + quote("Which insulated bottle keeps tea hot?"),
    "/api/public/capabilities.json",
    "/api/public/bench.jsonl?limit=50",
]
SWITCHES = 4


@pytest.fixture
def own_server(demo_home: Path, tmp_path: Path) -> Iterator[Server]:
    with serving(copy_home(demo_home, tmp_path / "home")) as server:
        yield server


def test_switches_under_load_fail_no_request_and_mix_no_response(own_server: Server):
    replies: list[tuple[str, Reply]] = []
    errors: list[str] = []
    stop = threading.Event()

    def hammer(offset: int) -> None:
        index = offset
        while not stop.is_set():
            path = HAMMERED[index % len(HAMMERED)]
            index += 1
            try:
                replies.append((path, own_server.get(path)))
            except OSError as error:
                errors.append(f"{path}: {error}")

    clients = [threading.Thread(target=hammer, args=(i,)) for i in range(4)]
    for client in clients:
        client.start()
    published = [current_version(own_server.store)]
    try:
        for _ in range(SWITCHES):
            published.append(publish(own_server.store, own_server.warehouse).version)
            own_server.wait_for_version(published[-1])
    finally:
        stop.set()
        for client in clients:
            client.join()
    assert not errors
    assert len(replies) > 50
    assert all(reply.status == 200 for _, reply in replies), {r.status for _, r in replies}
    served = set()
    for path, reply in replies:
        version = reply.headers["x-dataset-version"]
        served.add(version)
        if reply.headers["content-type"].startswith("application/json"):
            assert reply.json()["dataset_version"] == version, path  # body and header from one snapshot
    assert served <= set(published) and len(served) >= SWITCHES  # every switch was seen under load


def test_several_workers_serve_one_snapshot_and_all_switch(demo_home: Path, tmp_path: Path):
    with serving(copy_home(demo_home, tmp_path / "home"), "--workers", "2") as server:
        assert len(server.worker_pids()) == 2
        before = current_version(server.store)
        assert {server.get(HAMMERED[0]).headers["x-dataset-version"] for _ in range(20)} == {before}
        after = publish(server.store, server.warehouse).version
        server.wait_for_version(after, consecutive=20)
