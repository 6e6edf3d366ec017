"""The access log gathers its lines and writes them whole and in time, through a real pipe."""

from __future__ import annotations

import asyncio
import datetime as dt
import fcntl
import json
import os

from serve.operations.access_log import AccessLog
from serve.operations.batched_lines import ATOMIC_WRITE_BYTES, FLUSH_SECONDS

ROUTE = "/api/public/page.json"
FIELDS = {
    "time",
    "method",
    "path",
    "query",
    "route",
    "status",
    "bytes",
    "duration_ms",
    "dataset_version",
    "client",
    "forwarded_for",
    "user_agent",
}


def request(number: int) -> dict:
    return {
        "type": "http",
        "method": "GET",
        "path": ROUTE,
        "query_string": f"path=/guides/{number}".encode(),
        "headers": [(b"host", b"127.0.0.1"), (b"user-agent", b"access-log-test")],
        "client": ("203.0.113.9", 50000),
    }


def written(read_end: int) -> list[dict]:
    """Every line in the pipe so far (none waiting is not an error)."""
    data = b""
    while True:
        try:
            chunk = os.read(read_end, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        data += chunk
    return [json.loads(line) for line in data.splitlines()]


def test_every_line_is_written_whole_within_the_flush_time():
    read_end, write_end = os.pipe()
    fcntl.fcntl(read_end, fcntl.F_SETFL, os.O_NONBLOCK)
    log = AccessLog(write_end)
    many = 3 * ATOMIC_WRITE_BYTES // 250  # lines of about 250 bytes: several writes' worth

    async def serve() -> list[list[dict]]:
        seen = []
        for number in range(many):  # a burst: written as the batches fill, the rest in time
            log.write(request(number), 200, 0.0012345, 1000 + number, ROUTE, "20261126T000000000Z")
        await asyncio.sleep(FLUSH_SECONDS * 1.5)
        seen.append(written(read_end))
        log.write(request(many), 304, 0.0001, 0, ROUTE, "20261126T000000000Z")  # one alone, later
        await asyncio.sleep(FLUSH_SECONDS * 1.5)
        seen.append(written(read_end))
        return seen

    try:
        burst, alone = asyncio.run(serve())
    finally:
        os.close(read_end)
        os.close(write_end)
    assert [line["query"] for line in burst] == [f"path=/guides/{number}" for number in range(many)]
    assert [line["query"] for line in alone] == [f"path=/guides/{many}"]
    first = burst[0]
    assert set(first) == FIELDS
    assert first["bytes"] == 1000 and first["duration_ms"] == 1.234 and first["status"] == 200
    assert first["client"] == "203.0.113.9" and first["user_agent"] == "access-log-test"
    assert first["forwarded_for"] is None and first["dataset_version"] == "20261126T000000000Z"
    stamped = dt.datetime.strptime(first["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.UTC)
    assert abs((dt.datetime.now(dt.UTC) - stamped).total_seconds()) < 10
    assert len(first["time"]) == len("2026-11-26T14:00:00.123Z")
