"""A Parquet footer read and written again is the same bytes, and row groups moved between files
as bytes make a file that DuckDB, pyarrow and polars read: the parts ``publish.parquet_parts``
builds the readings' file from."""

from __future__ import annotations

import struct
from pathlib import Path

import duckdb
import polars
import pyarrow.parquet as pq
import pytest

from release.parquet_footer import FileFooter, ParquetLayoutError, encode_struct, write_parquet

# A unique key, its product (few values: a dictionary and a bloom filter per row group), a list.
ROWS = (
    "SELECT 'p' || lpad((n // 100)::VARCHAR, 4, '0') || ':' || n AS key, 'p' || (n // 100) AS product, n, "
    "[n, n + 1] AS pair FROM {table}"
)


def written(path: Path, start: int, stop: int) -> Path:
    """A file of keys ``start`` to ``stop`` in row groups of 2,048 rows, with bloom filters."""
    rows = ROWS.format(table=f"range({start}, {stop}) AS numbers(n)")
    duckdb.execute(f"COPY ({rows} ORDER BY key) TO '{path}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 2048)")
    return path


def test_a_footer_is_written_again_as_it_was_read(tmp_path: Path):
    path = written(tmp_path / "a.parquet", 0, 5000)
    data = path.read_bytes()
    length = struct.unpack("<I", data[-8:-4])[0]
    footer = FileFooter.read(path)
    assert encode_struct(footer.metadata) == data[-8 - length : -8]
    groups = footer.row_groups()
    assert [group.rows for group in groups] == [2048, 2048, 904] and all(group.extras for group in groups)


def test_row_groups_of_two_files_make_one_file_every_reader_reads(tmp_path: Path):
    first, second = written(tmp_path / "a.parquet", 0, 5000), written(tmp_path / "b.parquet", 5000, 7000)
    target = tmp_path / "joined.parquet"
    with first.open("rb") as a, second.open("rb") as b, target.open("wb") as out:
        kept = FileFooter.read(first).row_groups()
        rows = write_parquet(out, FileFooter.read(first), [(a, kept[0]), (b, *FileFooter.read(second).row_groups())])
    assert rows == 2048 + 2000 == pq.read_metadata(target).num_rows
    expected = duckdb.sql(f"SELECT * FROM (FROM '{first}' LIMIT 2048) UNION ALL FROM '{second}'").fetchall()
    assert duckdb.sql(f"FROM '{target}'").fetchall() == expected
    assert polars.read_parquet(target).rows() == [tuple(row) for row in expected]
    # The bloom filters moved with their row groups: each still says which products it may hold.
    probe = "SELECT bloom_filter_excludes FROM parquet_bloom_probe($file, 'product', $product) ORDER BY row_group_id"
    for product, excluded in (("p5", [False, True]), ("p55", [True, False]), ("p30", [True, True])):
        found = duckdb.execute(probe, {"file": str(target), "product": product}).fetchall()
        assert [row[0] for row in found] == excluded, product


def test_a_file_that_is_not_parquet_is_refused(tmp_path: Path):
    path = tmp_path / "not.parquet"
    path.write_bytes(b"PAR1 hello")
    with pytest.raises(ParquetLayoutError):
        FileFooter.read(path)
