"""The object store's fixtures and helpers that several test modules share: an empty prefix of
the session's SeaweedFS (``store``), a replica serving from it alone (``replica``), publishing
the demo's warehouse into it, and waiting until a replica serves a version."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from publish.new_release import publish_release
from release.object_store import ReleaseStore
from tests.support.harness import Server, home_layout, serving
from tests.support.seaweedfs import SeaweedFS

CONVERGE_SECONDS = 15  # the store is polled every 2 s; downloading and checking the demo takes < 1 s


@pytest.fixture
def store(seaweedfs: SeaweedFS, monkeypatch: pytest.MonkeyPatch) -> ReleaseStore:
    """An empty prefix of the session's SeaweedFS, with its credentials in this process's environment."""
    for name, value in seaweedfs.environment().items():
        monkeypatch.setenv(name, value)
    return ReleaseStore.open(seaweedfs.url(f"t-{uuid.uuid4().hex[:8]}"))


def publish_to(store: ReleaseStore, local: Path, demo_home: Path) -> str:
    """Publish the demo warehouse as a new release into ``local`` and the store; its version."""
    info = publish_release(local, home_layout(demo_home).warehouse_path, before_switch=store.publish)
    return info.version


@pytest.fixture
def replica(store: ReleaseStore, seaweedfs: SeaweedFS, tmp_path: Path) -> Iterator[Server]:
    """`reuse-data serve --from` the store, with an empty home (no warehouse, no snapshots)."""
    with serving(
        tmp_path / "replica-home",
        "--from",
        store.url,
        ready="/healthz",
        environ=seaweedfs.environment(),
        log=tmp_path / "replica.log",
    ) as server:
        yield server


def wait_until_serving(server: Server, version: str) -> float:
    started = time.monotonic()
    while time.monotonic() - started < CONVERGE_SECONDS:
        reply = server.get("/readyz")
        if reply.status == 200 and reply.json()["dataset_version"] == version:
            return time.monotonic() - started
        time.sleep(0.1)
    raise AssertionError(f"the replica did not serve {version} within {CONVERGE_SECONDS} s: {reply.body[:300]!r}")
