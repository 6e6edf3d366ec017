"""The release a server answers from: checked and loaded once, swapped whole when a new one lands.

A request takes ``holder.current`` once and answers from that object only, so no response
mixes two snapshots. A watcher polls ``CURRENT``; a new release is checked against its
manifest and loaded off the event loop and then swapped in with one assignment, so a switch
fails no request.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from foundations.problem_details import ProblemError
from foundations.release_caches import ReleaseCaches
from release.folder import Release
from release.local_store import SNAPSHOT_FILE, current_version, release_path, rows_of
from warehouse.contract import DATA_DICTIONARY_TABLE, SERVED_TABLES, table_query

log = logging.getLogger("reuse_data.serve")
POLL_SECONDS = 1.0
STREAM_BATCH_ROWS = 2048


@dataclass
class Snapshot:
    """One published release as the server holds it: its small tables as records, a connection
    for queries and streaming, and the release's files (``release``; None while publishing)."""

    version: str
    path: Path
    published_at: dt.datetime
    base_url: str
    tables: dict[str, list[dict[str, Any]]]
    connection: duckdb.DuckDBPyConnection
    release: Release | None = None
    # The release's data dictionary: per table, its columns as dbt's schema.yml describes them.
    dictionary: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # What features work out from this release and keep with it, each its own (they go with it).
    caches: ReleaseCaches = field(default_factory=ReleaseCaches)

    @property
    def publisher(self) -> dict[str, Any]:
        return self.tables["publisher"][0]

    @property
    def statistics(self) -> dict[str, Any]:
        return self.tables["dataset_statistics"][0]

    @property
    def files(self) -> Release:
        """The release's files; only a served snapshot has them."""
        if self.release is None:
            raise RuntimeError(f"snapshot {self.version} is being published: it has no release files yet")
        return self.release

    @property
    def distributed_tables(self) -> tuple[str, ...]:
        """The tables the release offers whole as downloads: every table its data dictionary
        describes, but the dictionary itself (which describes them rather than being one)."""
        return tuple(table for table in self.dictionary if table != DATA_DICTIONARY_TABLE)

    def private_columns(self, table: str) -> tuple[str, ...]:
        """The columns of ``table`` the dictionary marks private: bookkeeping no client is shown."""
        return tuple(row["column_name"] for row in self.dictionary.get(table, ()) if not row["is_public"])

    def json_columns(self, table: str) -> frozenset[str]:
        """The columns of ``table`` that hold JSON documents (as text), to be sent parsed."""
        return frozenset(row["column_name"] for row in self.dictionary.get(table, ()) if row["data_type"] == "json")

    def public_columns(self, table: str) -> str:
        """The select list of ``table`` as clients see it: every column but its private ones."""
        hidden = self.private_columns(table)
        return f"* EXCLUDE ({', '.join(hidden)})" if hidden else "*"

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A cursor of its own for one request (DuckDB connections are not shared across threads)."""
        return self.connection.cursor()

    def query(self, sql: str, parameters: list[Any] | dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Rows of ``sql`` on this snapshot as dicts, on a cursor of their own."""
        cursor = self.cursor()
        try:
            return rows_of(cursor, sql, parameters)
        finally:
            cursor.close()

    def stream(self, table: str, batch: int = STREAM_BATCH_ROWS) -> Iterator[dict[str, Any]]:
        """The rows of ``table`` (in ``TABLE_ORDER``) as dicts, ``batch`` rows in memory at a time."""
        return self.stream_query(table_query(table), batch)

    def stream_query(self, sql: str, batch: int = STREAM_BATCH_ROWS) -> Iterator[dict[str, Any]]:
        """The rows of ``sql`` as dicts, ``batch`` rows in memory at a time, on a cursor of their own."""
        cursor = self.cursor()
        try:
            yield from streamed_rows(cursor, sql, batch)
        finally:
            cursor.close()

    def count(self, table: str) -> int:
        return self.query(f'SELECT count(*) AS n FROM "{table}"')[0]["n"]


def streamed_rows(
    cursor: duckdb.DuckDBPyConnection, sql: str, batch: int = STREAM_BATCH_ROWS
) -> Iterator[dict[str, Any]]:
    """The rows of ``sql`` on ``cursor`` as dicts, ``batch`` rows in memory at a time."""
    cursor.execute(sql)
    names = [d[0] for d in cursor.description]
    while rows := cursor.fetchmany(batch):
        for row in rows:
            yield dict(zip(names, row, strict=True))


SNAPSHOT_INFO_QUERY = "SELECT version, published_at, base_url FROM snapshot_info"
DICTIONARY_QUERY = f"SELECT * FROM {DATA_DICTIONARY_TABLE} ORDER BY table_name, column_position"


# A server streams small pages in stream order: DuckDB's own worker threads would not speed
# them up, and each keeps memory of its own.
SERVING_CONFIG = {"threads": 1}


def spilling_config(memory_limit: str | None) -> dict[str, str]:
    """DuckDB's configuration for a connection that spills to disk past ``memory_limit`` (None: DuckDB's own)."""
    return {"memory_limit": memory_limit} if memory_limit else {}


def _open(path: Path, tables: tuple[str, ...], release: Release | None, config: dict[str, Any]) -> Snapshot:
    """The snapshot file at ``path`` with ``tables`` read, DuckDB configured with ``config``; its
    version is the release's when it has one."""
    connection = duckdb.connect(str(path), read_only=True, config=config)
    try:
        info = rows_of(connection, SNAPSHOT_INFO_QUERY)[0]
        records = {name: rows_of(connection, table_query(name)) for name in tables}
        dictionary: dict[str, list[dict[str, Any]]] = {}
        for row in rows_of(connection, DICTIONARY_QUERY):
            dictionary.setdefault(row["table_name"], []).append(row)
    except BaseException:
        connection.close()
        raise
    return Snapshot(
        version=release.version if release else info["version"],
        path=path.parent,
        published_at=info["published_at"].astimezone(dt.UTC),
        base_url=info["base_url"],
        tables=records,
        connection=connection,
        release=release,
        dictionary=dictionary,
    )


def read_snapshot(path: Path, memory_limit: str | None = None) -> Snapshot:
    """The snapshot file at ``path``, to write its release's files at publish (the large tables
    are read a batch at a time with ``Snapshot.stream``), on every core; DuckDB spills past
    ``memory_limit``."""
    return _open(path, SERVED_TABLES, None, spilling_config(memory_limit))


def load_snapshot(store: Path, version: str) -> Snapshot:
    """Open a published release, after checking every file against its manifest (ReleaseError if not)."""
    release = Release.open(release_path(store, version))
    return _open(release.folder / SNAPSHOT_FILE, SERVED_TABLES, release, SERVING_CONFIG)


class SnapshotHolder:
    """The snapshot being served, and the watcher that replaces it when CURRENT moves."""

    def __init__(self, store: Path, prepare: Any = None, remedy: str = "run `reuse-data build` to publish one"):
        self.store = store
        self.prepare = prepare or (lambda snapshot: None)
        self.remedy = remedy  # what to do when there is nothing to serve, for the 503 and the log
        self._current: Snapshot | None = None
        self._previous: Release | None = None  # its files stay at their versioned addresses a while
        self.unservable: str | None = None  # why the snapshot CURRENT names could not be loaded, if it could not
        self._unloadable: str | None = None  # that snapshot's version
        self._loading = threading.Lock()  # the watcher and a replica's follower may both ask to load

    @property
    def current(self) -> Snapshot:
        if self._current is None:
            if self.unservable:
                raise ProblemError(503, f"{self.unservable}; {self.remedy}.", slug="no-snapshot")
            raise ProblemError(503, f"No snapshot is published yet: {self.remedy}.", slug="no-snapshot")
        return self._current

    def release(self, version: str) -> Release:
        """The files of release ``version``: the one served, or the one served before it."""
        for release in (self._current and self._current.release, self._previous):
            if release is not None and release.version == version:
                return release
        served = self.current.version
        raise ProblemError(
            404,
            f"This server holds the files of release {served}, not of {version!r}; "
            f"dataset.json lists the current release's files under /releases/{served}/.",
            slug="no-release",
        )

    @property
    def ready(self) -> bool:
        return self._current is not None

    def load_current(self) -> bool:
        """Load the version CURRENT names if it is not the one served; True when it switched."""
        with self._loading:
            return self._load_current()

    def _load_current(self) -> bool:
        version = current_version(self.store)
        if version is None or version in (getattr(self._current, "version", None), self._unloadable):
            return False  # served already, or tried and refused: a published file never changes
        try:
            snapshot = load_snapshot(self.store, version)
            self.prepare(snapshot)
        except Exception as error:
            self._unloadable = version
            if self._current is None:
                self.unservable = f"The published snapshot {version} cannot be served ({error})"
            raise
        self.unservable = self._unloadable = None
        # The previous snapshot is not closed here: a response still streaming from it holds a
        # cursor of its own, and the snapshot (memory and file handle) goes when the last one ends.
        self._previous = self._current and self._current.release
        self._current = snapshot
        log.info("serving snapshot %s", version)
        return True

    async def watch(self) -> None:
        """Poll CURRENT and switch; a snapshot that fails to load leaves the served one in place."""
        while True:
            await asyncio.sleep(POLL_SECONDS)
            try:
                await asyncio.to_thread(self.load_current)
            except Exception:  # keep serving what we have; say why in the log
                log.exception(
                    "could not load the new snapshot; still serving %s", self._current and self._current.version
                )
