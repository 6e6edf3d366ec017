"""Whether a release made from the one before it is the release a whole rewrite makes.

A publish takes what it can from the release before: it links unchanged files, copies the
unchanged parts of a parted file, keeps Parquet row groups and patches snapshot tables by row.
This module publishes the same build warehouse again into an empty store, at the same moment
(so the version and every text that names the release are the same), and compares the two
releases file by file:

- every file byte for byte, but two kinds whose bytes may differ by design;
- a Parquet file must hold the same rows in the same order (a kept row group may be cut elsewhere
  than a rewrite cuts it: decision 46);
- the snapshot must hold the same tables with the same rows (a table patched by row is the same
  rows in another DuckDB file);
- the JSON documents that list files with their size and sha256 (dataset.json, datapackage.json,
  the manifest) must say the same but for the sizes and digests of the files that differ by design
  (the manifest is compared last: it also lists the digests of those documents).

`make bench-scale` runs it on the release a sheet made, at every size up to 1M readings.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import zstandard

from publish.new_release import publish_release
from release.local_store import SNAPSHOT_FILE, open_snapshot, sql_string
from release.manifest import MANIFEST_FILE, read_manifest
from warehouse.contract import SNAPSHOT_INFO_TABLE

COMPARED_BY_ROWS = (".parquet", SNAPSHOT_FILE)  # files whose bytes may differ, their rows may not


@dataclass
class Comparison:
    """The files of a release against a whole rewrite's: those with the same bytes, those with
    the same rows, and what differs (a file only one has, or one whose bytes or rows differ)."""

    same_bytes: list[str] = field(default_factory=list)
    same_rows: list[str] = field(default_factory=list)
    different: list[str] = field(default_factory=list)

    def summary(self) -> str:
        said = f"{len(self.same_bytes)} files the same bytes, {len(self.same_rows)} the same rows"
        return said + (f"; DIFFERENT: {', '.join(self.different)}" if self.different else ", none different")


def compare_with_whole_rewrite(release: Path, warehouse: Path, memory_limit: str | None = None) -> Comparison:
    """Publish ``warehouse`` whole at the moment ``release`` was published, and compare the two."""
    manifest = read_manifest(release)
    with open_snapshot(release / SNAPSHOT_FILE) as connection:
        [(fingerprint,)] = connection.execute(f"SELECT inputs_fingerprint FROM {SNAPSHOT_INFO_TABLE}").fetchall()
    with tempfile.TemporaryDirectory(dir=release.parent.parent, prefix=".whole-rewrite-") as scratch:
        whole = publish_release(
            Path(scratch) / "store",
            warehouse,
            now=dt.datetime.fromisoformat(manifest.published_at),
            inputs_fingerprint=fingerprint,
            memory_limit=memory_limit,
        )
        if whole.version != manifest.version:
            raise RuntimeError(f"the rewrite was published as {whole.version}, not {manifest.version}")
        return compare_releases(release, whole.path)


def compare_releases(made: Path, whole: Path) -> Comparison:
    """``made`` against ``whole`` (two release folders of one version), file by file; the manifest
    last, as it lists the others' digests."""
    comparison = Comparison()
    paths = sorted({file.relative_to(folder).as_posix() for folder in (made, whole) for file in files_of(folder)})
    for path in sorted(paths, key=lambda path: path == MANIFEST_FILE):
        a, b = made / path, whole / path
        if not (a.is_file() and b.is_file()):
            comparison.different.append(f"{path} (in one release only)")
        elif a.read_bytes() == b.read_bytes():
            comparison.same_bytes.append(path)
        elif same_content(path, a, b, set(comparison.same_rows)):
            comparison.same_rows.append(path)
        else:
            comparison.different.append(path)
    return comparison


def same_content(path: str, a: Path, b: Path, unlike: set[str]) -> bool:
    """Whether two files whose bytes differ hold the same all the same: Parquet files and snapshots
    the same rows, and JSON documents (dataset.json, datapackage.json, their compressed copies, the
    manifest) the same values, but for the size and digest of each file compared by rows and of
    each file in ``unlike`` (the same content in other bytes)."""
    if path.endswith(COMPARED_BY_ROWS):
        return same_rows(a, b)
    if path.endswith(JSON_DOCUMENTS):
        return without_digests(json_of(a), unlike) == without_digests(json_of(b), unlike)
    return False


JSON_DOCUMENTS = (".json", ".json.gz", ".json.zst")
DIGESTS = ("size", "sha256", "etag", "contentSize", "hash", "bytes")  # a file's, as the documents list it


def json_of(path: Path) -> object:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    elif path.suffix == ".zst":
        data = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True).read()
    return json.loads(data)


def without_digests(value: object, unlike: set[str]) -> object:
    """``value`` with the size and digests left out of every entry that names a file compared by
    rows (by a path or an address that ends with its name) or a file in ``unlike`` (by its path)."""
    if isinstance(value, list):
        return [without_digests(item, unlike) for item in value]
    if not isinstance(value, dict):
        return value
    names_one = any(
        isinstance(item, str) and (item.endswith(COMPARED_BY_ROWS) or item in unlike) for item in value.values()
    )
    return {key: without_digests(item, unlike) for key, item in value.items() if not (names_one and key in DIGESTS)}


def files_of(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*") if path.is_file()]


def same_rows(a: Path, b: Path) -> bool:
    """Whether two Parquet files hold the same rows in the same order, or two snapshots the same
    tables with the same rows."""
    with duckdb.connect() as connection:
        if a.suffix == ".parquet":
            return ordered_rows(connection, f"read_parquet({sql_string(str(a))})") == ordered_rows(
                connection, f"read_parquet({sql_string(str(b))})"
            )
        connection.execute(f"ATTACH {sql_string(str(a))} AS a (READ_ONLY)")
        connection.execute(f"ATTACH {sql_string(str(b))} AS b (READ_ONLY)")
        tables = {
            catalog: sorted(
                name
                for (name,) in connection.execute(
                    "SELECT table_name FROM duckdb_tables() WHERE database_name = ?", [catalog]
                ).fetchall()
            )
            for catalog in ("a", "b")
        }
        if tables["a"] != tables["b"]:
            return False
        return all(
            table_rows(connection, f'a."{table}"') == table_rows(connection, f'b."{table}"') for table in tables["a"]
        )


def ordered_rows(connection: duckdb.DuckDBPyConnection, relation: str) -> list[tuple[int, int]]:
    """Each row's position and hash, in the order the relation lists them."""
    return connection.execute(f"SELECT row_number() OVER (), hash(row) FROM {relation} AS row").fetchall()


def table_rows(connection: duckdb.DuckDBPyConnection, relation: str) -> tuple[int, int]:
    """A table's rows as a bag: their count and the sum of their hashes."""
    [(count, hashes)] = connection.execute(f"SELECT count(*), sum(hash(row)) FROM {relation} AS row").fetchall()
    return count, hashes
