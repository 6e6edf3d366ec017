"""A replica: serves what an object store's ``current`` names, with no warehouse and no shared disk.

The follower polls the store's pointer. When it names a release the local cache lacks, the
release is downloaded into the cache and checked file by file against its manifest
(``release.object_store``); only then does the cache's ``CURRENT`` move, and the server's
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
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from release.local_store import current_version, prune

if TYPE_CHECKING:
    from release.object_store import ReleaseStore

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
    """Keeps the local ``cache`` on the release the store's pointer names.

    The pointer is read every ``STORE_POLL_SECONDS``. A release that could not be taken is tried
    again only after a backoff that doubles up to ``MAX_BACKOFF_SECONDS`` (a new pointer is still
    seen at the next poll); a store that cannot be read is asked again after the same backoff.
    """

    def __init__(self, store: ReleaseStore, cache: Path, on_switch: Callable[[], object]) -> None:
        self.store = store
        self.cache = cache
        self.on_switch = on_switch  # loads the cache's new CURRENT into the server
        self.failures = 0  # polls that failed since the server started (a metric)
        self.last_error: str | None = None
        self._backoff = STORE_POLL_SECONDS
        self._retry_at = 0.0
        self._refused: str | None = None  # the release that failed (None: the store itself failed)
        self._attempted: str | None = None

    def sync(self) -> str | None:
        """Bring the cache to the store's current release; the version when the cache moved, None
        when there was nothing to do or the release is one refused and not yet due again."""
        with _cache_lock(self.cache):
            version = self.store.pointer()
            if version is None or version == current_version(self.cache):
                self._refused = None
                return None
            if version == self._refused and time.monotonic() < self._retry_at:
                return None
            self._attempted = version
            self.store.download(version, self.cache, report=log.info)
            prune(self.cache, KEPT_RELEASES)
        self._refused = None
        return version

    async def follow(self) -> None:
        """Poll the store for ever."""
        while True:
            await self.step()
            await asyncio.sleep(STORE_POLL_SECONDS)

    async def step(self) -> None:
        """One poll: download and switch to a new release if there is one; errors are logged."""
        if self.last_error is not None and self._refused is None and time.monotonic() < self._retry_at:
            return  # the store itself failed last time: wait out the backoff
        self._attempted = None
        try:
            if await asyncio.to_thread(self.sync) is not None:
                await asyncio.to_thread(self.on_switch)
        except Exception as error:
            self.failures += 1
            self.last_error = str(error)
            self._refused = self._attempted
            self._backoff = min(self._backoff * 2, MAX_BACKOFF_SECONDS)
            self._retry_at = time.monotonic() + self._backoff
            log.warning(
                "could not take the release %s names (%s); still serving %s; trying again in %.0f s",
                self.store.url,
                error,
                current_version(self.cache) or "nothing yet",
                self._backoff,
            )
            return
        if self._refused is None:
            self.last_error = None
            self._backoff = STORE_POLL_SECONDS
