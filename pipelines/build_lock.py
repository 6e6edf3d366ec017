"""One build at a time, whoever starts it: `reuse-data build`, the intake sensor or the daily schedule.

DuckDB lets one process write the build warehouse at a time, so a second build running beside
a first would fail its first step on DuckDB's lock and seem to blame its inputs. Every build
therefore holds an OS file lock (``fcntl.flock``) on a file beside the warehouse for its whole
run; the kernel releases it when the holding process ends, however it ends, so it is never stale.

The holder writes who it is (run id, who started it, when) into the lock file, so that a build
that finds the lock taken names the build it waits for. It waits up to a bound
(``REUSE_DATA_BUILD_WAIT_SECONDS``), saying so at once and every minute, then gives up with
``BuildAlreadyRunning``.

Nothing here imports Dagster: `reuse-data build` waits before it loads the definitions.
"""

import datetime as dt
import fcntl
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass
from pathlib import Path

POLL_SECONDS = 0.5
REMIND_SECONDS = 60  # well under REUSE_DATA_STALE_BUILD_SECONDS: a waiting run is not a silent one
# How long a build that finds the lock taken gives the holder to write who it is, before naming no one.
HOLDER_WRITE_SECONDS = 2.0
STARTED_BY_TAG = "reuse-data/started-by"
# The tags Dagster's scheduler and sensor daemon put on the runs they start.
SCHEDULE_NAME_TAG = "dagster/schedule_name"
SENSOR_NAME_TAG = "dagster/sensor_name"

# Locks this process holds: a run it executes while holding one (`reuse-data build` takes the lock
# before it launches its run in-process) proceeds without waiting for itself.
_held_here: set[Path] = set()
_held_here_guard = threading.Lock()


class BuildAlreadyRunning(RuntimeError):
    """Another build held the lock for longer than this one would wait."""


@dataclass(frozen=True)
class BuildHolder:
    """The build holding the lock, as written into the lock file."""

    run_id: str
    started_by: str
    started_at: str  # UTC, to the second

    @classmethod
    def starting_now(cls, run_id: str, started_by: str) -> "BuildHolder":
        return cls(run_id, started_by, dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"))

    def describe(self) -> str:
        return f"a build (run {self.run_id}, started by {self.started_by} at {self.started_at})"


def started_by(tags: Mapping[str, str]) -> str:
    """Who started a run, from its tags: `cli` (``pipelines.build.run_build``), the schedule or
    sensor that asked for it, else the Dagster UI."""
    if STARTED_BY_TAG in tags:
        return tags[STARTED_BY_TAG]
    if SCHEDULE_NAME_TAG in tags:
        return f"schedule {tags[SCHEDULE_NAME_TAG]}"
    if SENSOR_NAME_TAG in tags:
        return f"sensor {tags[SENSOR_NAME_TAG]}"
    return "the Dagster UI"


def build_lock_path(warehouse_path: Path) -> Path:
    """The lock file beside the warehouse it guards."""
    return warehouse_path.with_name(f"{warehouse_path.name}.build-lock")


def duration(seconds: float) -> str:
    return f"{seconds / 60:.3g} min" if seconds >= 60 else f"{seconds:.0f} s"


@contextmanager
def one_build_at_a_time(
    warehouse_path: Path,
    holder: BuildHolder,
    wait_seconds: float,
    say: Callable[[str], None],
    how_to_stop: str,
) -> Iterator[None]:
    """Hold the build lock of ``warehouse_path`` as ``holder`` for the block.

    While another build holds it, wait for it up to ``wait_seconds``, telling ``say`` so at once
    (with ``how_to_stop``) and every minute after; past that, raise ``BuildAlreadyRunning``.
    """
    path = build_lock_path(warehouse_path.resolve())
    with _held_here_guard:
        already_held = path in _held_here
    if already_held:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _wait_for_lock(descriptor, wait_seconds, say, how_to_stop)
        _write_holder(descriptor, holder)
        with _held_here_guard:
            _held_here.add(path)
        try:
            yield
        finally:
            with _held_here_guard:
                _held_here.discard(path)
            os.ftruncate(descriptor, 0)  # nobody holds it now; the kernel releases the lock below
    finally:
        os.close(descriptor)


def _wait_for_lock(descriptor: int, wait_seconds: float, say: Callable[[str], None], how_to_stop: str) -> None:
    started = time.monotonic()
    bound = duration(wait_seconds)
    said_at: float | None = None
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        waited = time.monotonic() - started
        holder = _read_holder(descriptor)
        running = holder.describe() if holder else "a build (it has not written which yet)"
        if waited >= wait_seconds:
            raise BuildAlreadyRunning(
                f"{running} is already running; gave up waiting for it after {bound} "
                "(REUSE_DATA_BUILD_WAIT_SECONDS); run `reuse-data build` again once it has finished"
            )
        if said_at is None and (holder or waited >= HOLDER_WRITE_SECONDS):
            say(f"{running} is already running; waiting for it to finish, up to {bound} ({how_to_stop})")
            said_at = waited
        elif said_at is not None and waited - said_at >= REMIND_SECONDS:
            say(f"still waiting for {running} to finish ({duration(waited)} so far, up to {bound})")
            said_at = waited
        time.sleep(min(POLL_SECONDS, max(wait_seconds - waited, 0.01)))


def _write_holder(descriptor: int, holder: BuildHolder) -> None:
    # In place: the lock belongs to this file (its inode), which must never be replaced.
    record = json.dumps(asdict(holder)).encode()
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, record, 0)


def _read_holder(descriptor: int) -> BuildHolder | None:
    """The holder the lock file names, or None while it is being written (or was cleared)."""
    with suppress(ValueError, TypeError):
        return BuildHolder(**json.loads(os.pread(descriptor, 4096, 0)))
    return None
