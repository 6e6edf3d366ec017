"""Published snapshots: atomic switch, read-only files, pruning, rollback, crash leftovers."""

import datetime as dt
import hashlib
import os
import shutil
from pathlib import Path

import duckdb
import pytest

from release.local_store import (
    CURRENT_FILE,
    SNAPSHOT_FILE,
    SnapshotError,
    current_version,
    list_snapshots,
    open_snapshot,
    prune,
    rollback,
    snapshot_path,
    versions,
)
from release.manifest import ReleaseError, read_manifest, verify
from tests.support.build_warehouses import MARTS, PUBLISHED, make_build_warehouse, publish_snapshot_alone
from warehouse.contract import (
    ASK_ENTRY_ORDER_TABLE,
    ASK_VECTORS_TABLE,
    DATA_DICTIONARY_TABLE,
)


def at(minute: int) -> dt.datetime:
    return dt.datetime(2026, 11, 22, 8, minute, tzinfo=dt.UTC)


def test_publish_writes_a_read_only_snapshot_and_switches_current(tmp_path: Path):
    build = make_build_warehouse(tmp_path / "build.duckdb", 1)
    store = tmp_path / "snapshots"
    info = publish_snapshot_alone(store, build, now=at(0), inputs_fingerprint="abc")
    assert info.version == "20261122T080000000Z"
    assert current_version(store) == info.version
    assert info.is_current and info.row_counts == {
        **dict.fromkeys(PUBLISHED, 1),
        DATA_DICTIONARY_TABLE: len(MARTS),
        ASK_VECTORS_TABLE: 2,
        ASK_ENTRY_ORDER_TABLE: 2,
    }
    snapshot_file = info.path / SNAPSHOT_FILE
    assert not os.access(snapshot_file, os.W_OK) or os.geteuid() == 0  # root ignores modes
    assert oct(snapshot_file.stat().st_mode & 0o777) == "0o444"
    assert oct(info.path.stat().st_mode & 0o777) == "0o555"
    with open_snapshot(snapshot_file) as connection:
        assert connection.execute("SELECT inputs_fingerprint, base_url FROM snapshot_info").fetchone() == (
            "abc",
            "https://data.example.org",
        )
        with pytest.raises(duckdb.Error):
            connection.execute("CREATE TABLE x AS SELECT 1")
    assert [p.name for p in store.iterdir() if p.name.startswith(".")] == []


def test_a_mart_kept_as_a_view_is_published_as_a_table(tmp_path: Path):
    # As dbt-duckdb writes views: naming the warehouse's catalog (the file's stem) explicitly.
    build = make_build_warehouse(tmp_path / "lab-warehouse.duckdb", 3)
    with duckdb.connect(str(build)) as connection:
        connection.execute("CREATE SCHEMA intermediate")
        connection.execute("CREATE TABLE intermediate.slots AS SELECT 3 AS marker, ['a', 'b'] AS reading_ids")
        connection.execute('DROP TABLE marts."claims"')
        connection.execute('CREATE VIEW marts."claims" AS SELECT * FROM "lab-warehouse"."intermediate"."slots"')
    info = publish_snapshot_alone(tmp_path / "snapshots", build, now=at(0))
    with open_snapshot(info.path / SNAPSHOT_FILE) as connection:
        kind = connection.execute("SELECT table_type FROM information_schema.tables WHERE table_name = 'claims'")
        assert kind.fetchall() == [("BASE TABLE",)]
        assert connection.execute("SELECT marker, reading_ids FROM claims").fetchall() == [(3, ["a", "b"])]


def test_only_the_newest_five_are_kept(tmp_path: Path):
    build = make_build_warehouse(tmp_path / "build.duckdb", 1)
    store = tmp_path / "snapshots"
    published = [publish_snapshot_alone(store, build, now=at(minute)).version for minute in range(7)]
    assert versions(store) == published[-5:]
    assert current_version(store) == published[-1]


def test_pruning_removes_snapshot_files_of_the_layout_before_releases(tmp_path: Path):
    store = tmp_path / "snapshots"
    store.mkdir()
    (store / "20261101T000000000Z.duckdb").write_bytes(b"an old snapshot")
    (store / "notes.duckdb").write_bytes(b"not ours")
    published = publish_snapshot_alone(store, make_build_warehouse(tmp_path / "build.duckdb", 1), now=at(0)).version
    assert sorted(p.name for p in store.iterdir()) == sorted([published, CURRENT_FILE, "notes.duckdb"])


def test_pruning_never_removes_the_current_snapshot(tmp_path: Path):
    build = make_build_warehouse(tmp_path / "build.duckdb", 1)
    store = tmp_path / "snapshots"
    published = [publish_snapshot_alone(store, build, now=at(minute)).version for minute in range(5)]
    rollback(store, published[0])
    assert prune(store, keep=2) == published[1:3]
    assert versions(store) == [published[0], *published[3:]]


def test_rollback_points_current_back_and_refuses_unknown_versions(tmp_path: Path):
    store = tmp_path / "snapshots"
    first = publish_snapshot_alone(store, make_build_warehouse(tmp_path / "b1.duckdb", 1), now=at(0)).version
    second = publish_snapshot_alone(store, make_build_warehouse(tmp_path / "b2.duckdb", 2), now=at(1)).version
    assert current_version(store) == second
    rollback(store, first)
    assert current_version(store) == first
    with open_snapshot(snapshot_path(store, first)) as connection:
        assert connection.execute("SELECT marker FROM products").fetchone() == (1,)
    with pytest.raises(SnapshotError, match="no snapshot 20990101T000000000Z"):
        rollback(store, "20990101T000000000Z")
    with pytest.raises(SnapshotError, match="is not a snapshot version"):
        rollback(store, "../../etc/passwd")
    assert [s.version for s in list_snapshots(store)] == [second, first]


def test_a_failed_publish_leaves_the_published_snapshot_and_no_leftovers(tmp_path: Path):
    store = tmp_path / "snapshots"
    good = publish_snapshot_alone(store, make_build_warehouse(tmp_path / "good.duckdb", 1), now=at(0)).version
    incomplete = make_build_warehouse(tmp_path / "bad.duckdb", 2, tables=PUBLISHED[1:])
    with pytest.raises(SnapshotError, match="a table is missing"):
        publish_snapshot_alone(store, incomplete, now=at(1))
    assert current_version(store) == good
    assert versions(store) == [good]
    assert sorted(p.name for p in store.iterdir()) == sorted([good, CURRENT_FILE])


def test_a_warehouse_without_its_ask_vectors_is_refused_at_publish(tmp_path: Path):
    store = tmp_path / "snapshots"
    good = publish_snapshot_alone(store, make_build_warehouse(tmp_path / "good.duckdb", 1), now=at(0)).version
    with pytest.raises(SnapshotError, match="nothing published: 2 ask texts without a vector"):
        publish_snapshot_alone(store, make_build_warehouse(tmp_path / "bad.duckdb", 2, vectors=False), now=at(1))
    assert current_version(store) == good and versions(store) == [good]
    assert sorted(p.name for p in store.iterdir()) == sorted([good, CURRENT_FILE])


def test_leftovers_of_a_killed_publish_are_removed_by_the_next(tmp_path: Path):
    store = tmp_path / "snapshots"
    store.mkdir()
    (store / ".staging-20261122T070000000Z").mkdir()
    (store / ".staging-20261122T070000000Z" / SNAPSHOT_FILE).write_bytes(b"half a file")
    assert versions(store) == []  # a staging folder is never taken for a release
    publish_snapshot_alone(store, make_build_warehouse(tmp_path / "b.duckdb", 1), now=at(0))
    assert not list(store.glob(".staging-*"))


def test_the_manifest_lists_every_file_of_the_release_and_verification_names_what_differs(tmp_path: Path):
    def write_files(folder: Path, snapshot_file: Path, previous: object, memory_limit: str | None) -> None:
        (folder / "api").mkdir()
        (folder / "api" / "products.json").write_bytes(b'{"products": []}')

    store = tmp_path / "snapshots"
    info = publish_snapshot_alone(
        store, make_build_warehouse(tmp_path / "b.duckdb", 1), now=at(0), write_files=write_files
    )
    manifest = read_manifest(info.path)
    assert manifest.version == info.version and manifest.base_url == "https://data.example.org"
    assert sorted(manifest.files) == ["api/products.json", SNAPSHOT_FILE]
    listed = manifest.files["api/products.json"]
    assert listed.size == 16 and listed.sha256 == hashlib.sha256(b'{"products": []}').hexdigest()
    verify(info.path, manifest)  # as published: complete

    altered = tmp_path / "altered"
    shutil.copytree(info.path, altered)
    (altered / "api" / "products.json").chmod(0o644)
    (altered / "api" / "products.json").write_bytes(b'{"products": [1]}')
    (altered / SNAPSHOT_FILE).chmod(0o644)
    (altered / SNAPSHOT_FILE).unlink()
    with pytest.raises(
        ReleaseError, match=r"products.json has 17 bytes, the manifest says 16; snapshot.duckdb is miss"
    ):
        verify(altered, manifest)


def test_a_publish_that_fails_while_writing_files_leaves_no_folder(tmp_path: Path):
    def failing(folder: Path, snapshot_file: Path, previous: object, memory_limit: str | None) -> None:
        (folder / "half.json").write_bytes(b"{")
        raise OSError("disk full")

    store = tmp_path / "snapshots"
    good = publish_snapshot_alone(store, make_build_warehouse(tmp_path / "good.duckdb", 1), now=at(0)).version
    with pytest.raises(OSError, match="disk full"):
        publish_snapshot_alone(store, make_build_warehouse(tmp_path / "b.duckdb", 2), now=at(1), write_files=failing)
    assert current_version(store) == good
    assert sorted(p.name for p in store.iterdir()) == sorted([good, CURRENT_FILE])
