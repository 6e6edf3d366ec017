"""A publish keeps what did not change: the snapshot's unchanged tables, files by inode, and the
older releases' removal leaves the newer ones whole. (The release's served files: tests/api/test_release.py.)"""

import datetime as dt
import os
from pathlib import Path

import duckdb
import pytest

from release.local_store import SNAPSHOT_FILE, open_snapshot, prune, table_keys, versions
from release.manifest import read_manifest, verify
from tests.support.build_warehouses import PUBLISHED, make_build_warehouse, publish_snapshot_alone
from warehouse.contract import (
    DATA_DICTIONARY_TABLE,
    PATCHED_BY,
    SNAPSHOT_GROUPS_TABLE,
    SNAPSHOT_INFO_TABLE,
    STORED_ORDER,
    TABLE_ORDER,
)


def at(minute: int) -> dt.datetime:
    return dt.datetime(2026, 11, 22, 8, minute, tzinfo=dt.UTC)


def markers(snapshot: Path) -> dict[str, int]:
    """Each published table's marker (the build that wrote its row)."""
    with open_snapshot(snapshot) as connection:
        tables = [row[0] for row in connection.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        return {
            table: connection.execute(f'SELECT max(marker) FROM "{table}"').fetchall()[0][0]
            for table in tables
            if table not in (SNAPSHOT_INFO_TABLE, SNAPSHOT_GROUPS_TABLE)
        }


def write_files(folder: Path, snapshot_file: Path, previous: object, memory_limit: str | None) -> None:
    (folder / "api").mkdir()
    (folder / "api" / "products.json").write_bytes(b'{"products": []}')


def test_an_unchanged_build_is_published_from_the_snapshot_before(tmp_path: Path):
    build = make_build_warehouse(tmp_path / "build.duckdb", 1)
    store = tmp_path / "snapshots"
    first = publish_snapshot_alone(store, build, now=at(0), write_files=write_files)
    second = publish_snapshot_alone(store, build, now=at(1), write_files=write_files)
    assert first.kept_tables == () and set(second.kept_tables) == set(PUBLISHED)
    assert "api/products.json" in second.shared_files and SNAPSHOT_FILE not in second.shared_files
    assert (first.path / "api/products.json").stat().st_ino == (second.path / "api/products.json").stat().st_ino
    with open_snapshot(second.path / SNAPSHOT_FILE) as connection:
        assert connection.execute("SELECT version FROM snapshot_info").fetchall() == [(second.version,)]
        with open_snapshot(first.path / SNAPSHOT_FILE) as before:
            assert table_keys(connection) == table_keys(before) and len(table_keys(connection)) == len(PUBLISHED)
    manifest = read_manifest(second.path)
    verify(second.path, manifest)
    assert manifest.files["api/products.json"] == read_manifest(first.path).files["api/products.json"]


def test_a_changed_table_is_copied_again_and_a_table_no_longer_published_is_dropped(tmp_path: Path):
    store = tmp_path / "snapshots"
    publish_snapshot_alone(store, make_build_warehouse(tmp_path / "build.duckdb", 1), now=at(0))
    build = make_build_warehouse(tmp_path / "build.duckdb", 1)
    with duckdb.connect(str(build)) as connection:
        connection.execute("UPDATE marts.products SET marker = 2")
        connection.execute(f"DELETE FROM marts.{DATA_DICTIONARY_TABLE} WHERE table_name = 'claims'")
    info = publish_snapshot_alone(store, build, now=at(1))
    assert "claims" not in info.tables and "claims" not in markers(info.path / SNAPSHOT_FILE)
    assert set(info.kept_tables) == set(PUBLISHED) - {"products", "claims", DATA_DICTIONARY_TABLE}
    assert markers(info.path / SNAPSHOT_FILE) == {
        **{table: 1 for table in PUBLISHED if table != "claims"},
        "products": 2,
    }
    verify(info.path, read_manifest(info.path))


def test_a_snapshot_mostly_changed_is_written_whole(tmp_path: Path):
    store = tmp_path / "snapshots"
    build = make_build_warehouse(tmp_path / "build.duckdb", 1)
    with duckdb.connect(str(build)) as connection:  # the bulk of the snapshot, as the readings are at scale
        connection.execute(
            "CREATE OR REPLACE TABLE marts.products AS SELECT 1 AS marker, range AS n, md5(range::VARCHAR) AS text "
            "FROM range(300000)"
        )
    publish_snapshot_alone(store, build, now=at(0))
    with duckdb.connect(str(build)) as connection:
        connection.execute("UPDATE marts.products SET marker = 2 WHERE n = 0")
    info = publish_snapshot_alone(store, build, now=at(1))
    assert info.kept_tables == ()
    assert markers(info.path / SNAPSHOT_FILE)["products"] == 2


def test_removing_the_older_release_leaves_the_newer_whole(tmp_path: Path):
    build = make_build_warehouse(tmp_path / "build.duckdb", 1)
    store = tmp_path / "snapshots"
    first = publish_snapshot_alone(store, build, now=at(0), write_files=write_files)
    second = publish_snapshot_alone(store, build, now=at(1), write_files=write_files)
    shared = second.path / "api/products.json"
    assert os.stat(shared).st_nlink == 2
    assert prune(store, keep=1) == [first.version] and versions(store) == [second.version]
    assert not first.path.exists() and os.stat(shared).st_nlink == 1
    verify(second.path, read_manifest(second.path))
    assert shared.read_bytes() == b'{"products": []}'
    third = publish_snapshot_alone(
        store, build, now=at(2), write_files=write_files
    )  # and the next publish links from it
    assert (third.path / "api/products.json").stat().st_ino == shared.stat().st_ino


def every_row(snapshot: Path, table: str) -> list[tuple]:
    with open_snapshot(snapshot) as connection:
        return connection.execute(f'SELECT * FROM "{table}" ORDER BY ALL').fetchall()


def with_large_products(build: Path) -> Path:
    """The build's products as the bulk of its snapshot, ten rows to a product, as the readings are at scale."""
    with duckdb.connect(str(build)) as connection:
        connection.execute(
            "CREATE OR REPLACE TABLE marts.products AS SELECT 1 AS marker, 'p' || (range // 10) AS product_slug, "
            "range AS n, md5(range::VARCHAR) AS text FROM range(300000)"
        )
    return build


@pytest.mark.parametrize("null_key", [False, True], ids=["products", "and-rows-of-no-product"])
def test_a_large_table_changed_in_a_few_products_is_patched_and_reads_as_if_written_whole(
    tmp_path: Path, null_key: bool
):
    """The changed products' keys filter the mart as a list; a row of no product is matched by a
    join instead. Either way the snapshot, and its record of each product's rows, are a whole copy's."""
    build = with_large_products(make_build_warehouse(tmp_path / "build.duckdb", 1))
    store = tmp_path / "snapshots"
    publish_snapshot_alone(store, build, now=at(0))
    with duckdb.connect(str(build)) as connection:  # a product changed, one gone, one new
        connection.execute("UPDATE marts.products SET text = 'remeasured' WHERE product_slug = 'p7' AND n = 71")
        connection.execute("DELETE FROM marts.products WHERE product_slug = 'p8'")
        connection.execute("INSERT INTO marts.products VALUES (1, 'new', -1, 'a'), (1, 'new', -2, 'b')")
        if null_key:
            connection.execute("INSERT INTO marts.products VALUES (1, NULL, -3, 'without a product')")
    patched = publish_snapshot_alone(store, build, now=at(1))
    whole = publish_snapshot_alone(tmp_path / "fresh", build, now=at(1))
    assert patched.patched_tables == ("products",) and whole.patched_tables == ()
    assert set(patched.kept_tables) == set(PUBLISHED) - {"products"}
    for table in PUBLISHED:
        assert every_row(patched.path / SNAPSHOT_FILE, table) == every_row(whole.path / SNAPSHOT_FILE, table), table
    with duckdb.connect(str(build), read_only=True) as connection:
        assert (
            every_row(patched.path / SNAPSHOT_FILE, "products")
            == connection.execute("SELECT * FROM marts.products ORDER BY ALL").fetchall()
        )
    with open_snapshot(patched.path / SNAPSHOT_FILE) as connection:
        assert table_keys(connection)["products"] != table_keys(connection)["claims"]
        with open_snapshot(whole.path / SNAPSHOT_FILE) as written:
            assert table_keys(connection) == table_keys(written)
    assert every_row(patched.path / SNAPSHOT_FILE, SNAPSHOT_GROUPS_TABLE) == every_row(
        whole.path / SNAPSHOT_FILE, SNAPSHOT_GROUPS_TABLE
    )
    verify(patched.path, read_manifest(patched.path))


def test_a_large_table_changed_in_most_of_its_rows_is_written_whole(tmp_path: Path):
    build = with_large_products(make_build_warehouse(tmp_path / "build.duckdb", 1))
    store = tmp_path / "snapshots"
    publish_snapshot_alone(store, build, now=at(0))
    with duckdb.connect(str(build)) as connection:
        connection.execute("UPDATE marts.products SET marker = 2 WHERE n < 100000")
    info = publish_snapshot_alone(store, build, now=at(1))
    assert info.patched_tables == () and "products" not in info.kept_tables
    assert markers(info.path / SNAPSHOT_FILE)["products"] == 2


def test_a_patched_table_has_an_order_for_its_files_and_no_stored_order():
    """Patching appends a changed group's rows: what is made from such a table lists them in
    ``TABLE_ORDER``, and a table streamed in its stored order is never patched."""
    assert all(TABLE_ORDER.get(table) for table in PATCHED_BY)
    assert not set(PATCHED_BY) & set(STORED_ORDER)
