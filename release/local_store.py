"""Releases in a local folder (the home's, or a replica's cache): immutable, versioned folders,
each a read-only DuckDB snapshot of the marts plus the files served from it, and the ``CURRENT``
pointer naming the one served.

A release is filled in a hidden staging folder (``staged_release``), made read-only, renamed into
place whole, and only then named by ``CURRENT`` (itself written to a temporary file and renamed,
``point_current``), so a reader sees either the old release or the new one, never half of one. A
publish or download that dies half-way leaves at most a ``.staging-*`` folder, which no reader
takes for a release and the next one removes. The last ``keep`` releases are kept, and always the
current one (``prune``). A file whose content the current release already holds becomes a hard
link to it (``link_unchanged``): a link's content outlives the folder it was linked from, so
pruning older releases leaves the newer ones whole.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import re
import shutil
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from foundations.durable_files import fsync_directory, replace_durably
from release.manifest import MANIFEST_FILE, PublishedRelease, ReleaseError, ReleaseFile, read_manifest
from warehouse.contract import SNAPSHOT_INFO_TABLE

CURRENT_FILE = "CURRENT"
STAGING_PREFIX = ".staging-"
SNAPSHOT_FILE = "snapshot.duckdb"  # inside the release folder
LEGACY_SUFFIX = ".duckdb"  # a snapshot file of its own in the store, before releases were folders
DEFAULT_KEEP = 5
_VERSION = re.compile(r"^\d{8}T\d{6}\d{3}Z$")


class SnapshotError(RuntimeError):
    """A snapshot operation that cannot be done, with what to do about it."""


@dataclasses.dataclass(frozen=True)
class SnapshotInfo:
    version: str
    path: Path  # the release folder
    published_at: dt.datetime
    size_bytes: int
    is_current: bool
    row_counts: dict[str, int]  # of the tables it holds
    tables: tuple[str, ...]  # the tables it was published with
    # What its publish took from the release before it: the tables kept in the snapshot, those
    # patched by row, and the files that are links to that release's (empty when only described).
    kept_tables: tuple[str, ...] = ()
    patched_tables: tuple[str, ...] = ()
    shared_files: tuple[str, ...] = ()
    # Where its publish spent its time, stage by stage, in seconds (empty when only described).
    stage_seconds: dict[str, float] = dataclasses.field(default_factory=dict)


def new_version(now: dt.datetime) -> str:
    """A sortable version string: UTC time to the millisecond, e.g. 20261122T081502123Z."""
    now = now.astimezone(dt.UTC)
    return now.strftime("%Y%m%dT%H%M%S") + f"{now.microsecond // 1000:03d}Z"


def is_version(name: str) -> bool:
    """Whether ``name`` is a release version (``new_version``'s form)."""
    return _VERSION.match(name) is not None


def release_path(store: Path, version: str) -> Path:
    """The folder of the release ``version``."""
    if not is_version(version):
        raise SnapshotError(f"'{version}' is not a snapshot version (run `reuse-data snapshots list` to see them)")
    return store / version


def snapshot_path(store: Path, version: str) -> Path:
    """The DuckDB snapshot file of the release ``version``."""
    return release_path(store, version) / SNAPSHOT_FILE


def point_current(store: Path, version: str) -> None:
    """Make ``CURRENT`` name ``version``: written whole to a staging file and renamed over it."""
    target = store / CURRENT_FILE
    replace_durably(target, f"{version}\n".encode(), target.with_name(f"{STAGING_PREFIX}{CURRENT_FILE}.{os.getpid()}"))


def current_version(store: Path) -> str | None:
    """The version ``CURRENT`` points at, or None before the first publish."""
    try:
        version = (store / CURRENT_FILE).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return version or None


def previous_release(store: Path) -> PublishedRelease | None:
    """The release ``CURRENT`` names, which a new publish takes its unchanged files from; None
    before the first publish or when that release cannot be read (then everything is written)."""
    version = current_version(store)
    if version is None or not is_version(version):
        return None
    try:
        return PublishedRelease.read(release_path(store, version))
    except ReleaseError:
        return None


def link_unchanged(
    folder: Path, files: Mapping[str, ReleaseFile], previous: PublishedRelease | None
) -> tuple[str, ...]:
    """Make each file of ``folder`` whose content ``previous`` already holds a hard link to that
    file (if it is not one already), so that an unchanged file takes no more disk; the paths of
    every file shared with ``previous``."""
    if previous is None:
        return ()
    shared = []
    for file in files.values():
        same = previous.by_content.get((file.sha256, file.size))
        if same is None:
            continue
        path, source = folder / file.path, previous.path_of(same)
        if path.stat().st_ino != source.stat().st_ino:
            path.unlink()
            os.link(source, path)
        shared.append(file.path)
    return tuple(shared)


def versions(store: Path) -> list[str]:
    """Every complete release in the store (a version folder with its manifest), oldest first."""
    if not store.exists():
        return []
    return sorted(p.name for p in store.iterdir() if is_version(p.name) and (p / MANIFEST_FILE).is_file())


def remove_tree(path: Path) -> None:
    """Delete a release or staging folder, whose files and folders are read-only."""
    for folder in [path, *(p for p in path.rglob("*") if p.is_dir())]:
        os.chmod(folder, stat.S_IRWXU)
    shutil.rmtree(path)


def remove_stale_staging_files(store: Path) -> list[Path]:
    """Delete what an interrupted publish left behind."""
    stale = [p for p in store.glob(f"{STAGING_PREFIX}*")] if store.exists() else []
    for path in stale:
        if path.is_dir():
            remove_tree(path)
        else:
            path.unlink(missing_ok=True)
    return stale


def seal(folder: Path) -> None:
    """Make every file and folder of a finished release read-only, and sync it to disk."""
    for path in sorted(folder.rglob("*"), reverse=True):  # files before the folders holding them
        if path.is_file():
            os.chmod(path, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
            with path.open("rb") as handle:
                os.fsync(handle.fileno())
        else:
            fsync_directory(path)
            os.chmod(path, stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    fsync_directory(folder)
    os.chmod(folder, stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)


@contextmanager
def staged_release(store: Path, version: str) -> Iterator[Path]:
    """A staging folder for release ``version``, to fill in the block; then sealed read-only and
    renamed into place whole, or removed if the block fails (publish, and a replica's download)."""
    staging = store / f"{STAGING_PREFIX}{version}"
    if staging.exists():  # left by a process killed while filling it
        remove_tree(staging)
    staging.mkdir(parents=True)
    try:
        yield staging
        seal(staging)
        os.replace(staging, release_path(store, version))
        fsync_directory(store)
    except BaseException:
        if staging.exists():
            remove_tree(staging)
        raise


@contextmanager
def open_snapshot(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to a published snapshot."""
    connection = duckdb.connect(str(path), read_only=True)
    try:
        yield connection
    finally:
        connection.close()


def rows_of(
    connection: duckdb.DuckDBPyConnection, sql: str, parameters: list[Any] | dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The rows of ``sql`` as dicts by column name."""
    cursor = connection.execute(sql, parameters or [])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def read_tables(path: Path, queries: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    """{name: rows as dicts} of each query, run on the snapshot file at ``path`` (read-only)."""
    with open_snapshot(path) as connection:
        return {name: rows_of(connection, sql) for name, sql in queries.items()}


def sql_string(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def snapshot_tables(connection: duckdb.DuckDBPyConnection) -> tuple[str, ...]:
    """The tables a published snapshot holds, as it recorded them when it was published."""
    return tuple(connection.execute(f"SELECT tables FROM {SNAPSHOT_INFO_TABLE}").fetchone()[0])


def table_keys(connection: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """What each table of a published snapshot was made from (``table_key``), as it recorded it;
    empty for a snapshot published before keys were recorded."""
    try:
        return dict(connection.execute(f"SELECT table_keys FROM {SNAPSHOT_INFO_TABLE}").fetchall()[0][0])
    except duckdb.BinderException:
        return {}


def prune(store: Path, keep: int = DEFAULT_KEEP) -> list[str]:
    """Delete all but the newest ``keep`` releases, never the current one, and every snapshot
    file of the layout before releases (``<version>.duckdb``), which no server reads any more."""
    current = current_version(store)
    removed = []
    for version in versions(store)[:-keep] if keep > 0 else versions(store):
        if version != current:
            remove_tree(release_path(store, version))
            removed.append(version)
    for legacy in store.glob(f"*{LEGACY_SUFFIX}"):
        if is_version(legacy.stem) and legacy.stem != current:
            os.chmod(legacy, stat.S_IRUSR | stat.S_IWUSR)
            legacy.unlink()
            removed.append(legacy.stem)
    return removed


def describe(store: Path, version: str) -> SnapshotInfo:
    folder = release_path(store, version)
    if version not in versions(store):
        known = ", ".join(versions(store)) or "none"
        raise SnapshotError(f"no snapshot {version} in {store} (snapshots there: {known})")
    with open_snapshot(folder / SNAPSHOT_FILE) as connection:
        published_at = connection.execute(f"SELECT published_at FROM {SNAPSHOT_INFO_TABLE}").fetchone()[0]
        tables = snapshot_tables(connection)
        held = {row[0] for row in connection.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        counts = {t: connection.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables if t in held}
    return SnapshotInfo(
        version=version,
        path=folder,
        published_at=published_at,
        size_bytes=sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()),
        is_current=current_version(store) == version,
        row_counts=counts,
        tables=tables,
    )


def list_snapshots(store: Path) -> list[SnapshotInfo]:
    """Every snapshot in the store, newest first."""
    return [describe(store, v) for v in reversed(versions(store))]


def rollback(store: Path, version: str, dry_run: bool = False) -> SnapshotInfo:
    """Point ``CURRENT`` back at an earlier snapshot after checking it opens and is complete
    and that its manifest is one this code reads (with ``dry_run``, only the check): a server
    refuses a release it cannot verify, so ``CURRENT`` must never name one."""
    info = describe(store, version)
    try:
        read_manifest(release_path(store, version))
    except ReleaseError as error:
        raise SnapshotError(
            f"snapshot {version} cannot be served by this reuse-data ({error}); choose another version, "
            "or roll the code back to the version that published it"
        ) from error
    current = current_version(store)
    # The tables it was published with, and those of the current one: a snapshot published
    # before a table joined the contract lacks one the server reads.
    expected = (*info.tables, *(describe(store, current).tables if current in versions(store) else ()))
    missing = sorted({t for t in expected if t not in info.row_counts})
    if missing:
        raise SnapshotError(
            f"snapshot {version} lacks tables {missing} (published by an older reuse-data?); choose another version"
        )
    if dry_run:
        return info
    point_current(store, version)
    return describe(store, version)
