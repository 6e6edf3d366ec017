"""Published releases: immutable, versioned folders, each a read-only DuckDB snapshot of the marts
plus the files served from it, and the ``CURRENT`` pointer.

Publishing fills a hidden staging folder (the snapshot, then the release's files, then the
manifest that lists them all with their sha256), makes it read-only, renames it into place
and only then replaces ``CURRENT`` (itself written to a temporary file and renamed), so a
reader sees either the old release or the new one, never half of one. A publish that dies
half-way leaves at most a ``.staging-*`` folder, which no reader takes for a release and the
next publish removes. The last ``keep`` releases are kept, and always the current one.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from foundations.durable_files import fsync_directory, replace_durably
from warehouse.contract import (
    ASK_TABLES,
    MARTS_SCHEMA,
    PUBLISH_CHECKS,
    PUBLISHED_MARTS_SQL,
    SNAPSHOT_INFO_TABLE,
    STORED_ORDER,
)
from warehouse.manifest import MANIFEST_FILE, write_manifest

CURRENT_FILE = "CURRENT"
STAGING_PREFIX = ".staging-"
SNAPSHOT_FILE = "snapshot.duckdb"  # inside the release folder
LEGACY_SUFFIX = ".duckdb"  # a snapshot file of its own in the store, before releases were folders
DEFAULT_KEEP = 5
_VERSION = re.compile(r"^\d{8}T\d{6}\d{3}Z$")


class SnapshotError(RuntimeError):
    """A snapshot operation that cannot be done, with what to do about it."""


# Writes the release's served files into its staging folder, from the finished snapshot file.
ReleaseWriter = Callable[[Path, Path], None]
# Runs once the release folder is complete and sealed, before CURRENT switches to it (e.g. the
# upload to an object store): if it raises, nothing is published.
BeforeSwitch = Callable[[Path], None]


@dataclass(frozen=True)
class SnapshotInfo:
    version: str
    path: Path  # the release folder
    published_at: dt.datetime
    size_bytes: int
    is_current: bool
    row_counts: dict[str, int]  # of the tables it holds
    tables: tuple[str, ...]  # the tables it was published with


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


def current_path(store: Path) -> Path | None:
    version = current_version(store)
    return snapshot_path(store, version) if version else None


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


def missing_table(error: duckdb.CatalogException) -> SnapshotError:
    return SnapshotError(f"nothing published: a table is missing ({error}); run `reuse-data build`")


def refuse_incomplete(connection: duckdb.DuckDBPyConnection, marts: str) -> None:
    """Raise SnapshotError naming every ``PUBLISH_CHECKS`` fault of the marts about to be published."""
    faults = []
    for fault, sql in PUBLISH_CHECKS:
        try:
            count = connection.execute(sql.format(marts=marts)).fetchone()[0]
        except duckdb.CatalogException as error:
            raise missing_table(error) from error
        if count:
            faults.append(f"{count} {fault}")
    if faults:
        raise SnapshotError("nothing published: " + "; ".join(faults))


def published_tables(connection: duckdb.DuckDBPyConnection, marts: str) -> tuple[str, ...]:
    """The tables a release of the build ``marts`` publishes: the marts its data dictionary
    lists (every model dbt's manifest gives an enforced contract), then the ask engine's."""
    try:
        listed = connection.execute(PUBLISHED_MARTS_SQL.format(marts=marts)).fetchall()
    except duckdb.CatalogException as error:
        raise missing_table(error) from error
    return (*(row[0] for row in listed), *ASK_TABLES)


def snapshot_tables(connection: duckdb.DuckDBPyConnection) -> tuple[str, ...]:
    """The tables a published snapshot holds, as it recorded them when it was published."""
    return tuple(connection.execute(f"SELECT tables FROM {SNAPSHOT_INFO_TABLE}").fetchone()[0])


def publish(
    store: Path,
    build_warehouse: Path,
    *,
    keep: int = DEFAULT_KEEP,
    now: dt.datetime | None = None,
    inputs_fingerprint: str = "",
    write_files: ReleaseWriter | None = None,
    before_switch: BeforeSwitch | None = None,
) -> SnapshotInfo:
    """Copy the published marts of ``build_warehouse`` into a new release and make it current.

    ``write_files(folder, snapshot_file)`` adds the files served from the snapshot; the
    manifest then lists every file of the folder. The base URL the marts were built with
    (the ``publisher`` mart's ``base_url``) is recorded in the snapshot and the manifest.
    ``before_switch(folder)`` runs on the finished release before ``CURRENT`` names it; a
    release it refuses is removed, and nothing is published.
    """
    store.mkdir(parents=True, exist_ok=True)
    remove_stale_staging_files(store)
    published_at = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    version = new_version(published_at)
    while release_path(store, version).exists():  # two publishes within one millisecond
        published_at += dt.timedelta(milliseconds=1)
        version = new_version(published_at)
    final = release_path(store, version)
    with staged_release(store, version) as staging:
        snapshot_file = staging / SNAPSHOT_FILE
        connection = duckdb.connect(str(snapshot_file))
        try:
            # Attached under its own catalog name (the file's stem), so that a mart kept as a
            # view, whose SQL names that catalog, resolves here as it does in the warehouse.
            build = '"' + build_warehouse.stem.replace('"', '""') + '"'
            connection.execute(f"ATTACH {sql_string(str(build_warehouse))} AS {build} (READ_ONLY)")
            refuse_incomplete(connection, f"{build}.{MARTS_SCHEMA}")
            tables = published_tables(connection, f"{build}.{MARTS_SCHEMA}")
            base_url = connection.execute(f"SELECT base_url FROM {build}.{MARTS_SCHEMA}.publisher").fetchone()[0]
            for table in tables:
                order = f" ORDER BY {STORED_ORDER[table]}" if table in STORED_ORDER else ""
                try:
                    connection.execute(
                        f'CREATE TABLE "{table}" AS SELECT * FROM {build}.{MARTS_SCHEMA}."{table}"{order}'
                    )
                except duckdb.CatalogException as error:
                    raise missing_table(error) from error
            connection.execute(
                f"CREATE TABLE {SNAPSHOT_INFO_TABLE} AS SELECT ? AS version, ?::TIMESTAMPTZ AS published_at, "
                "? AS inputs_fingerprint, ?::VARCHAR[] AS tables, ? AS base_url",
                [version, published_at, inputs_fingerprint, list(tables), base_url],
            )
            connection.execute(f"DETACH {build}")
            connection.execute("CHECKPOINT")
        finally:
            connection.close()
        os.chmod(snapshot_file, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        if write_files is not None:
            write_files(staging, snapshot_file)
        write_manifest(staging, version, base_url, published_at.isoformat())
    if before_switch is not None:
        try:
            before_switch(final)
        except BaseException:
            remove_tree(final)
            raise
    point_current(store, version)
    prune(store, keep)
    return describe(store, version)


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
    (with ``dry_run``, only the check)."""
    info = describe(store, version)
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
