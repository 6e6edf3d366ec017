"""Publishing one release, start to finish: the snapshot, the files served from it, the manifest,
and only then the switch of ``CURRENT``.

Everything is written into a staging folder of the local store (``release.local_store``), which
becomes a release only once it is whole and sealed; what the release being served already holds
is kept (snapshot tables, ``publish.snapshot_copy``) or linked (files, ``publish.release_files``)
rather than written again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from publish.release_files import write_release_files
from publish.snapshot_copy import BuildMarts, write_snapshot
from release.local_store import (
    DEFAULT_KEEP,
    SNAPSHOT_FILE,
    SnapshotInfo,
    describe,
    link_unchanged,
    new_version,
    point_current,
    previous_release,
    prune,
    release_path,
    remove_stale_staging_files,
    remove_tree,
    staged_release,
)
from release.manifest import PublishedRelease, describe_files, write_manifest

# Writes the release's served files into its staging folder, from the finished snapshot file and
# the release being served, DuckDB spilling past the memory limit; what each file was made from,
# by path, for the manifest (``ReleaseFile.made_from``). ``write_release_files`` writes every file the server sends.
ReleaseWriter = Callable[[Path, Path, PublishedRelease | None, str | None], Mapping[str, Mapping[str, Any]] | None]
# Runs once the release folder is complete and sealed, before CURRENT switches to it (e.g. the
# upload to an object store): if it raises, nothing is published.
BeforeSwitch = Callable[[Path], None]


def publish_release(
    store: Path,
    build_warehouse: Path,
    *,
    keep: int = DEFAULT_KEEP,
    now: dt.datetime | None = None,
    inputs_fingerprint: str = "",
    before_switch: BeforeSwitch | None = None,
    write_files: ReleaseWriter = write_release_files,
    memory_limit: str | None = None,
) -> SnapshotInfo:
    """Publish the marts of ``build_warehouse`` as a new release of ``store`` with every file the
    server sends, and make it current.

    The base URL the marts were built with (the ``publisher`` mart's ``base_url``) is recorded in
    the snapshot and the manifest. ``before_switch(folder)`` runs on the finished release before
    ``CURRENT`` names it; a release it refuses is removed, and nothing is published.
    ``write_files`` is the server's files unless a caller publishes a snapshot alone. DuckDB
    spills past ``memory_limit`` while it writes the snapshot and the files.
    """
    store.mkdir(parents=True, exist_ok=True)
    remove_stale_staging_files(store)
    published_at = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    version = new_version(published_at)
    while release_path(store, version).exists():  # two publishes within one millisecond
        published_at += dt.timedelta(milliseconds=1)
        version = new_version(published_at)
    final = release_path(store, version)
    timer = StageTimer()
    with timer("keys"):  # what each published mart holds, to keep or patch what the release before holds
        marts = BuildMarts.read(build_warehouse)
        previous = previous_release(store)
    with staged_release(store, version) as staging:
        with timer("snapshot"):
            written = write_snapshot(
                staging / SNAPSHOT_FILE,
                build_warehouse,
                marts,
                previous,
                [version, published_at, inputs_fingerprint],
                memory_limit,
            )
        with timer("files"):
            made_from = write_files(staging, staging / SNAPSHOT_FILE, previous, memory_limit)
        with timer("hashing"):
            files = describe_files(staging, previous, made_from)
        with timer("manifest"):
            shared = link_unchanged(staging, files, previous)
            write_manifest(staging, version, marts.base_url, published_at.isoformat(), files)
        timer.start("sealing")  # staged_release makes the folder read-only and moves it into place
    timer.stop()
    if before_switch is not None:
        try:
            with timer("upload"):
                before_switch(final)
        except BaseException:
            remove_tree(final)
            raise
    point_current(store, version)
    prune(store, keep)
    return dataclasses.replace(
        describe(store, version),
        kept_tables=written.kept,
        patched_tables=written.patched,
        shared_files=shared,
        stage_seconds=timer.seconds,
    )


class StageTimer:
    """Seconds by stage of one publish, for its log: what a slow publish spent its time on."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._running: tuple[str, float] | None = None

    def start(self, stage: str) -> None:
        self.stop()
        self._running = (stage, time.perf_counter())

    def stop(self) -> None:
        if self._running is not None:
            stage, started = self._running
            self.seconds[stage] = round(self.seconds.get(stage, 0.0) + time.perf_counter() - started, 2)
            self._running = None

    @contextlib.contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        self.start(stage)
        try:
            yield
        finally:
            self.stop()
