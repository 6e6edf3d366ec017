"""ask.json under more questions than it can answer in time: refused at once, never left to time out.

A real server (one worker) gets hundreds of distinct questions at the same moment, more than
it admits; meanwhile a question it already answered for this release is asked again. Also: the
workers of ``serve --workers 2`` answer on ONNX Runtime, whose threads the project sets, and load
no OpenMP runtime whose environment could make them spin.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import orjson
import pytest

from foundations.media_types import PROBLEM_JSON
from tests.support.harness import Server, serving
from tests.support.openmp import HOSTILE, displayed_settings

FLOOD = 400  # distinct questions sent at once: several times what one worker admits
REMEMBERED = "Which insulated bottle keeps tea hot all day?"


def ask_path(question: str) -> str:
    return f"/api/public/ask.json?q={quote(question)}"


async def _get(port: int, path: str) -> tuple[int, dict[str, str], bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    response = await reader.read()
    writer.close()
    head, _, body = response.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value for name, _, value in (line.partition(": ") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def all_at_once(port: int, paths: list[str]) -> list[tuple[int, dict[str, str], bytes]]:
    """Every path asked on a connection of its own, all sent together; each one's whole answer."""

    async def run() -> list[tuple[int, dict[str, str], bytes]]:
        return await asyncio.wait_for(asyncio.gather(*(_get(port, path) for path in paths)), timeout=120)

    return asyncio.run(run())


@pytest.fixture(scope="module")
def one_worker(demo_home: Path) -> Iterator[Server]:
    with serving(demo_home) as server:
        yield server


def test_an_overloaded_server_refuses_at_once_and_still_answers_what_it_remembers(one_worker: Server):
    remembered = one_worker.get(ask_path(REMEMBERED))
    assert remembered.status == 200
    flood = [ask_path(f"Which bottle keeps tea hot for {hours} hours on a hike?") for hours in range(FLOOD)]
    replies = all_at_once(one_worker.port, [*flood, *[ask_path(REMEMBERED)] * 5])
    asked, again = replies[:FLOOD], replies[FLOOD:]

    statuses = [status for status, _, _ in asked]
    assert set(statuses) <= {200, 503}, sorted(set(statuses))  # answered or refused: nothing timed out
    refused = [(headers, orjson.loads(body)) for status, headers, body in asked if status == 503]
    assert refused, "a flood several times the bound must be refused in part"
    assert 200 in statuses, "the questions admitted are answered"
    for headers, problem in refused:
        assert headers["content-type"].startswith(PROBLEM_JSON)
        assert int(headers["retry-after"]) >= 1
        assert headers["cache-control"] == "no-store"
        assert problem["status"] == 503 and problem["type"].endswith("/ask-busy")
        assert "ask again in" in problem["detail"]
    # The answer remembered for this release comes whatever the queue holds, and is the same.
    assert [status for status, _, _ in again] == [200] * 5
    assert {orjson.loads(body)["cite"] for _, _, body in again} == {orjson.loads(remembered.body)["cite"]}

    # Each refusal is counted by its reason, and the queue drains: a new question is answered.
    metrics = one_worker.get("/metrics").body.decode()
    counted = re.findall(r'reuse_data_http_refused_requests_total\{reason="(\w+)",route="([^"]+)"\} (\S+)', metrics)
    assert sum(float(count) for _, route, count in counted if route == "/api/public/ask.json") == len(refused)
    assert {reason for reason, _, _ in counted} <= {"wait", "count"}
    assert one_worker.get(ask_path("Is a glass bottle safe in a dishwasher?")).status == 200


def test_two_workers_embed_on_onnx_runtime_whatever_the_environment_says(demo_home: Path, tmp_path: Path):
    log = tmp_path / "serve.log"
    with serving(demo_home, "--workers", "2", environ=HOSTILE, log=log) as server:
        for n in range(8):  # whichever worker takes each, both have loaded their encoder by the end
            assert server.get(ask_path(f"Which lunch box fits {n} sandwiches?")).status == 200
        loaded = displayed_settings(log.read_text())
    # An OpenMP runtime prints its settings when it loads (OMP_DISPLAY_ENV): none did, so none can spin.
    assert loaded == [], "a worker loaded an OpenMP runtime: the release's encoder should run on ONNX Runtime"
