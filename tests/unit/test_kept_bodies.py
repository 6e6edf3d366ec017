"""A small release file sent whole is read once per release and its bytes sent again after."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from serve.api.release_responses import KEPT_FILE_BYTES, send_slice


class CountingRelease:
    """The part of a Release that ``send_slice`` reads: its manifest's sizes and ``read``."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.manifest = SimpleNamespace(files={path: SimpleNamespace(size=len(data)) for path, data in files.items()})
        self.kept_bodies = None
        self.reads = 0

    def read(self, path: str, offset: int, length: int) -> bytes:
        self.reads += 1
        return self.files[path][offset : offset + length]


def sent_body(release: CountingRelease, path: str, offset: int, length: int) -> bytes:
    messages: list[dict] = []

    async def send(message: dict) -> None:
        messages.append(message)

    scope = {"type": "http", "method": "GET"}
    asyncio.run(send_slice(release, path, offset, length, scope, send, 200, []))  # type: ignore[arg-type]
    return b"".join(message.get("body", b"") for message in messages[1:])


def test_a_small_file_is_read_once_and_sent_the_same_each_time():
    data = bytes(range(256)) * 700  # 179,200 bytes, about products.json at the demo's size
    release = CountingRelease({"api/public/products.json": data})
    assert len(data) <= KEPT_FILE_BYTES
    assert [sent_body(release, "api/public/products.json", 0, len(data)) for _ in range(3)] == [data] * 3
    assert release.reads == 1
    assert sent_body(release, "api/public/products.json", 10, 20) == data[10:30]  # a range is read as asked
    assert release.reads == 2


def test_a_larger_file_is_read_for_each_request():
    data = b"x" * (KEPT_FILE_BYTES + 1)
    release = CountingRelease({"big.csv": data})
    assert sent_body(release, "big.csv", 0, len(data)) == data
    assert sent_body(release, "big.csv", 0, len(data)) == data
    assert release.reads == 2 and release.kept_bodies is None


def test_a_file_shorter_than_its_manifest_says_is_refused_and_not_kept():
    release = CountingRelease({"api/public/products.json": b"0123456789"})
    release.manifest.files["api/public/products.json"].size = 20
    with pytest.raises(RuntimeError, match="ended at byte 10, before 20"):
        sent_body(release, "api/public/products.json", 0, 20)
    assert len(release.kept_bodies) == 0
