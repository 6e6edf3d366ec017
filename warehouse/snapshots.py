"""Published releases: immutable, versioned folders, each a read-only DuckDB snapshot of the marts
plus the files served from it, and the ``CURRENT`` pointer.

Publishing fills a hidden staging folder (the snapshot, then the release's files, then the
manifest that lists them all with their sha256), makes it read-only, renames it into place
and only then replaces ``CURRENT`` (itself written to a temporary file and renamed), so a
reader sees either the old release or the new one, never half of one. A publish that dies
half-way leaves at most a ``.staging-*`` folder, which no reader takes for a release and the
next publish removes. The last ``keep`` releases are kept, and always the current one.

A publish costs what changed since the release being served (``previous_release``). Each
published table is keyed by what it is made from (``table_key``: the statement that copies it,
its columns, and what the mart holds: a table's rows as DuckDB hashes them, a view's query and
what it reads, ``RelationContents``), recorded in the snapshot. When the tables kept unchanged
hold most of that release's snapshot, the new one starts as a copy of it and only the changed
tables are written again (``write_snapshot``).
Every other file whose content that release holds becomes a hard link to it
(``link_unchanged``): a link's content outlives the folder it was linked from, so pruning
older releases leaves the newer ones whole.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import stat
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
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
from warehouse.manifest import (
    MANIFEST_FILE,
    PublishedRelease,
    ReleaseError,
    ReleaseFile,
    describe_files,
    write_manifest,
)

CURRENT_FILE = "CURRENT"
STAGING_PREFIX = ".staging-"
SNAPSHOT_FILE = "snapshot.duckdb"  # inside the release folder
LEGACY_SUFFIX = ".duckdb"  # a snapshot file of its own in the store, before releases were folders
DEFAULT_KEEP = 5
# A new snapshot starts as a copy of the previous one only when the tables it keeps hold at
# least this share of that file's blocks: otherwise copying costs more than it saves.
KEPT_SHARE_TO_COPY = 0.5
_VERSION = re.compile(r"^\d{8}T\d{6}\d{3}Z$")


class SnapshotError(RuntimeError):
    """A snapshot operation that cannot be done, with what to do about it."""


# Writes the release's served files into its staging folder, from the finished snapshot file;
# may return what each file was made from, by path, for the manifest (``ReleaseFile.made_from``).
ReleaseWriter = Callable[[Path, Path], Mapping[str, Mapping[str, Any]] | None]
# Runs once the release folder is complete and sealed, before CURRENT switches to it (e.g. the
# upload to an object store): if it raises, nothing is published.
BeforeSwitch = Callable[[Path], None]


@dataclasses.dataclass(frozen=True)
class SnapshotInfo:
    version: str
    path: Path  # the release folder
    published_at: dt.datetime
    size_bytes: int
    is_current: bool
    row_counts: dict[str, int]  # of the tables it holds
    tables: tuple[str, ...]  # the tables it was published with
    # What its publish took from the release before it: the tables kept in the snapshot, and the
    # files that are links to that release's (empty when only described).
    kept_tables: tuple[str, ...] = ()
    shared_files: tuple[str, ...] = ()


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


def table_keys(connection: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """What each table of a published snapshot was made from (``table_key``), as it recorded it;
    empty for a snapshot published before keys were recorded."""
    try:
        return dict(connection.execute(f"SELECT table_keys FROM {SNAPSHOT_INFO_TABLE}").fetchall()[0][0])
    except duckdb.BinderException:
        return {}


def copy_statement(table: str) -> str:
    """How a published table is copied into the snapshot, from the marts attached as ``{marts}``."""
    order = f" ORDER BY {STORED_ORDER[table]}" if table in STORED_ORDER else ""
    return f'SELECT * FROM {{marts}}."{table}"{order}'


def digest(made_of: Any) -> str:
    """The sha256 of ``made_of`` (JSON-encodable), with DuckDB's version: its hash and storage may change."""
    return hashlib.sha256(json.dumps([duckdb.__version__, made_of]).encode()).hexdigest()


class RelationContents:
    """What each relation of one attached catalog holds, as a sha256 (``key``), each worked out once.

    A table's is its columns and its rows: their count and the sum of their 64-bit DuckDB hashes
    (the order of rows counts for nothing, a repeated row counts each time), one pass on every
    core. A view's is its query and what each relation it reads holds, as DuckDB's own parser
    finds them (``json_serialize_sql``): a view that joins ten million readings costs the
    hashing of the table it reads them from, not the join. A view whose rows could differ with
    the same inputs (it calls a function ``duckdb_functions`` does not call consistent, or reads
    a table function) or whose inputs cannot be told is hashed by its rows, like a table.
    """

    def __init__(self, connection: duckdb.DuckDBPyConnection, catalog: str) -> None:
        self.connection = connection
        self.catalog = catalog  # unquoted
        self.known: dict[tuple[str, str], str] = {}
        self.varying = {
            name
            for (name,) in connection.execute(
                "SELECT DISTINCT function_name FROM duckdb_functions() WHERE stability <> 'CONSISTENT'"
            ).fetchall()
        }

    def relation(self, schema: str, name: str) -> str:
        quoted = (self.catalog, schema, name)
        return ".".join('"' + part.replace('"', '""') + '"' for part in quoted)

    def key(self, schema: str, name: str) -> str:
        if (schema, name) not in self.known:
            views = self.connection.execute(
                "SELECT sql FROM duckdb_views() WHERE database_name = ? AND schema_name = ? AND view_name = ?",
                [self.catalog, schema, name],
            ).fetchall()
            view_key = self.view_key(schema, views[0][0]) if views else None
            self.known[(schema, name)] = view_key or self.rows_key(schema, name)
        return self.known[(schema, name)]

    def rows_key(self, schema: str, name: str) -> str:
        relation = self.relation(schema, name)
        try:
            columns = [column[:2] for column in self.connection.execute(f"DESCRIBE {relation}").fetchall()]
            [(count, hash_sum)] = self.connection.execute(
                f"SELECT count(*), sum(hash(row)) FROM {relation} AS row"
            ).fetchall()
        except duckdb.CatalogException as error:
            raise missing_table(error) from error
        return digest(["rows", columns, count, str(hash_sum)])

    def view_key(self, schema: str, sql: str) -> str | None:
        """The key of the view ``sql`` defines, from what it reads; None when it cannot be told so."""
        definition, separator, query = sql.partition(" AS ")
        if not separator or '"' in definition or "(" in definition:  # a name or column list to parse
            return None
        query = query.strip().rstrip(";")
        [(tree,)] = self.connection.execute("SELECT json_serialize_sql(?)", [query]).fetchall()
        parsed = json.loads(tree)
        if parsed.get("error"):
            return None
        reads: set[tuple[str, str, str]] = set()
        calls: set[str] = set()
        named: set[str] = set()  # common table expressions
        if not self._walk(parsed, reads, calls, named) or calls & self.varying:
            return None
        inputs = []
        for catalog, read_schema, name in sorted(reads):
            if not catalog and not read_schema and name in named:
                continue
            if catalog not in ("", self.catalog) or not read_schema or not self._exists(read_schema, name):
                return None
            inputs.append([read_schema, name, self.key(read_schema, name)])
        return digest(["view", query, inputs])

    def _walk(self, node: Any, reads: set, calls: set, named: set) -> bool:
        """Gather the relations, functions and CTE names of a parsed query; False at a table function."""
        if isinstance(node, list):
            return all(self._walk(item, reads, calls, named) for item in node)
        if not isinstance(node, dict):
            return True
        if node.get("type") == "TABLE_FUNCTION":
            return False
        if node.get("type") == "BASE_TABLE":
            reads.add((node["catalog_name"], node["schema_name"], node["table_name"]))
        if node.get("class") == "FUNCTION":
            calls.add(node["function_name"])
        if "cte_map" in node:
            named.update(entry["key"] for entry in node["cte_map"]["map"])
        return all(self._walk(value, reads, calls, named) for value in node.values())

    def _exists(self, schema: str, name: str) -> bool:
        found = self.connection.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = $1 AND schema_name = $2 AND table_name = $3 "
            "UNION ALL SELECT count(*) FROM duckdb_views() WHERE database_name = $1 AND schema_name = $2 "
            "AND view_name = $3",
            [self.catalog, schema, name],
        ).fetchall()
        return any(count for (count,) in found)


def table_key(contents: RelationContents, table: str) -> str:
    """What the published ``table`` is made from, as a sha256: the statement that copies it, its
    columns and types, and what the mart holds (``RelationContents``)."""
    relation = contents.relation(MARTS_SCHEMA, table)
    try:
        columns = [column[:2] for column in contents.connection.execute(f"DESCRIBE {relation}").fetchall()]
    except duckdb.CatalogException as error:
        raise missing_table(error) from error
    return digest([copy_statement(table), columns, contents.key(MARTS_SCHEMA, table)])


@dataclasses.dataclass(frozen=True)
class BuildMarts:
    """What a build warehouse publishes, read before anything is written: its tables with their
    keys, and the base URL its marts were built with."""

    tables: tuple[str, ...]
    keys: dict[str, str]
    base_url: str

    @classmethod
    def read(cls, build_warehouse: Path) -> BuildMarts:
        with duckdb.connect() as connection:
            catalog = attach_build(connection, build_warehouse)
            marts = f"{catalog}.{MARTS_SCHEMA}"
            refuse_incomplete(connection, marts)
            tables = published_tables(connection, marts)
            contents = RelationContents(connection, build_warehouse.stem)
            keys = {table: table_key(contents, table) for table in tables}
            base_url = connection.execute(f"SELECT base_url FROM {marts}.publisher").fetchall()[0][0]
        return cls(tables, keys, base_url)


def attach_build(connection: duckdb.DuckDBPyConnection, build_warehouse: Path) -> str:
    """Attach the build warehouse read-only; its catalog's name, quoted. It is attached under its
    own name (the file's stem), so that a mart kept as a view, whose SQL names that catalog,
    resolves here as it does in the warehouse."""
    build = '"' + build_warehouse.stem.replace('"', '""') + '"'
    connection.execute(f"ATTACH {sql_string(str(build_warehouse))} AS {build} (READ_ONLY)")
    return build


def reusable_tables(previous_snapshot: Path, marts: BuildMarts) -> set[str]:
    """The tables of ``previous_snapshot`` a new snapshot of ``marts`` may keep as they are: empty
    unless they hold at least ``KEPT_SHARE_TO_COPY`` of its blocks (then copying it pays)."""
    with open_snapshot(previous_snapshot) as connection:
        recorded = table_keys(connection)
        kept = {table for table, key in marts.keys.items() if recorded.get(table) == key}
        if not kept or kept == set(recorded):
            return kept
        blocks = {
            table: connection.execute(
                "SELECT count(DISTINCT block_id) FROM pragma_storage_info(?) WHERE block_id >= 0", [table]
            ).fetchall()[0][0]
            for table in recorded
        }
        total = connection.execute("SELECT total_blocks FROM pragma_database_size()").fetchall()[0][0]
    return kept if sum(blocks[table] for table in kept) >= KEPT_SHARE_TO_COPY * total else set()


def write_snapshot(
    snapshot_file: Path, build_warehouse: Path, marts: BuildMarts, previous: PublishedRelease | None, info: list[Any]
) -> tuple[str, ...]:
    """Copy the published tables of ``build_warehouse`` into ``snapshot_file``, with
    ``SNAPSHOT_INFO_TABLE`` holding ``info`` (version, time, inputs fingerprint) and the keys.
    Starts from a copy of ``previous``'s snapshot when it holds most of what is published
    unchanged (``reusable_tables``); the tables kept from it."""
    previous_snapshot = previous.folder / SNAPSHOT_FILE if previous else None
    kept = reusable_tables(previous_snapshot, marts) if previous_snapshot and previous_snapshot.is_file() else set()
    if kept:
        shutil.copyfile(previous_snapshot, snapshot_file)
    connection = duckdb.connect(str(snapshot_file))
    try:
        present = {row[0] for row in connection.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        for table in sorted(present - kept):
            connection.execute(f'DROP TABLE "{table}"')
        connection.execute("CHECKPOINT")  # what was dropped is free for what is written next
        build = attach_build(connection, build_warehouse)
        for table in marts.tables:
            if table not in kept:
                statement = copy_statement(table).format(marts=f"{build}.{MARTS_SCHEMA}")
                try:
                    connection.execute(f'CREATE TABLE "{table}" AS {statement}')
                except duckdb.CatalogException as error:
                    raise missing_table(error) from error
        connection.execute(
            f"CREATE TABLE {SNAPSHOT_INFO_TABLE} AS SELECT ? AS version, ?::TIMESTAMPTZ AS published_at, "
            "? AS inputs_fingerprint, ?::VARCHAR[] AS tables, ? AS base_url, "
            "MAP(?::VARCHAR[], ?::VARCHAR[]) AS table_keys",
            [*info, list(marts.tables), marts.base_url, list(marts.keys), list(marts.keys.values())],
        )
        connection.execute(f"DETACH {build}")
        connection.execute("CHECKPOINT")
    finally:
        connection.close()
    os.chmod(snapshot_file, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    return tuple(sorted(kept))


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
    release it refuses is removed, and nothing is published. What the release being served
    already holds is kept or linked rather than written again (module docstring).
    """
    store.mkdir(parents=True, exist_ok=True)
    remove_stale_staging_files(store)
    published_at = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    version = new_version(published_at)
    while release_path(store, version).exists():  # two publishes within one millisecond
        published_at += dt.timedelta(milliseconds=1)
        version = new_version(published_at)
    final = release_path(store, version)
    marts = BuildMarts.read(build_warehouse)
    previous = previous_release(store)
    with staged_release(store, version) as staging:
        kept = write_snapshot(
            staging / SNAPSHOT_FILE, build_warehouse, marts, previous, [version, published_at, inputs_fingerprint]
        )
        made_from = write_files(staging, staging / SNAPSHOT_FILE) if write_files is not None else None
        files = describe_files(staging, previous, made_from)
        shared = link_unchanged(staging, files, previous)
        write_manifest(staging, version, marts.base_url, published_at.isoformat(), files)
    if before_switch is not None:
        try:
            before_switch(final)
        except BaseException:
            remove_tree(final)
            raise
    point_current(store, version)
    prune(store, keep)
    return dataclasses.replace(describe(store, version), kept_tables=kept, shared_files=shared)


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
