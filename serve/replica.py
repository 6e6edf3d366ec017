"""A replica: serves what an object store's ``current`` names, with no warehouse and no shared disk.

The follower polls the store's pointer. When it names a release the local cache lacks, the
release is downloaded into the cache and checked file by file against its manifest
(``warehouse.release_store``); only then does the cache's ``CURRENT`` move, and the server's
``SnapshotHolder`` (which reads the cache like any local store) verifies and switches to it.
A release that cannot be downloaded whole is never served: the previous one stays, the log
says why, and the follower tries again, backing off to once a minute.

Several worker processes of one replica share its cache: a file lock lets one download while
the others wait and then find the release already there.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from warehouse.release_store import ReleaseStore
from warehouse.snapshots import current_version, prune

log = logging.getLogger("reuse_data.replica")
STORE_POLL_SECONDS = 2.0  # one small GET per replica; a new release is seen within this
MAX_BACKOFF_SECONDS = 60.0
KEPT_RELEASES = 3  # the current one, the one before (still at its /releases/ address) and one more
SYNC_LOCK_FILE = ".sync.lock"


@contextmanager
def _cache_lock(cache: Path) -> Iterator[None]:
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / SYNC_LOCK_FILE).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class ReleaseFollower:
    """Keeps the local ``cache`` on the release the store's pointer names."""

    def __init__(self, store: ReleaseStore, cache: Path, on_switch: Callable[[], object]) -> None:
        self.store = store
        self.cache = cache
        self.on_switch = on_switch  # loads the cache's new CURRENT into the server
        self.failures = 0  # syncs that failed since the server started (a metric)
        self.last_error: str | None = None

    def sync(self) -> str | None:
        """Bring the cache to the store's current release; the version when the cache moved."""
        with _cache_lock(self.cache):
            version = self.store.pointer()
            if version is None or version == current_version(self.cache):
                return None
            self.store.download(version, self.cache, report=log.info)
            prune(self.cache, KEPT_RELEASES)
        return version

    async def follow(self) -> None:
        """Poll the store for ever; a failure keeps the served release and backs off."""
        delay = STORE_POLL_SECONDS
        while True:
            await self.step()
            delay = STORE_POLL_SECONDS if self.last_error is None else min(delay * 2, MAX_BACKOFF_SECONDS)
            await asyncio.sleep(delay)

    async def step(self) -> None:
        """One poll: download and switch to a new release if there is one; errors are logged."""
        try:
            if await asyncio.to_thread(self.sync) is not None:
                await asyncio.to_thread(self.on_switch)
            self.last_error = None
        except Exception as error:
            self.failures += 1
            self.last_error = str(error)
            log.warning(
                "could not take the release %s names (%s); still serving %s",
                self.store.url,
                error,
                current_version(self.cache) or "nothing yet",
            )
