"""The release's files over HTTP from a real server: the distributions read by the libraries
researchers use, Content-Length, ETag and 304 on every file, Range, negotiated compression,
immutable versioned addresses, and one base URL per release."""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import hashlib
import io
import json
import logging
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import duckdb
import fsspec
import numpy as np
import pandas
import polars
import pyarrow.parquet as pq
import pytest
import zstandard

from foundations.media_types import media_type_of
from public.openapi import BENCH_COLUMNS
from public.table_descriptions import croissant_format
from publish import parquet_parts, parted_files
from publish.catalogue import DOCUMENTS
from publish.distributions import COPY_OPTIONS
from publish.new_release import publish_release
from publish.parted_files import PARTS_DIR, parts_index_path
from release.folder import DATA_PACKAGE, DATASET, FULL_TEXT, PAGE_ENVELOPE, PAGE_PATHS, Release
from release.local_store import SNAPSHOT_FILE, current_version, open_snapshot, release_path
from release.manifest import Manifest, read_manifest, verify
from serve.api.routes_catalogue import FIXED_DOCUMENTS
from tests.api.conftest import BASE_URL
from tests.support.harness import Server, copy_home, distributed_tables, home_layout, serving

DOWNLOADS = "/api/public/downloads"
GZIP_ONLY = {"Accept-Encoding": "gzip"}


def url(server: Server, path: str) -> str:
    return f"http://127.0.0.1:{server.port}{path}"


def local(address: str) -> str:
    """The path and query of a URL the server handed out, to ask this test's server for it."""
    parts = urlsplit(address)
    return parts.path + (f"?{parts.query}" if parts.query else "")


@pytest.fixture(scope="module")
def dataset(server: Server) -> dict:
    return server.get("/api/public/dataset.json").json()


def test_every_distribution_of_dataset_json_is_served_as_described(server: Server, dataset: dict):
    listed = {entry["contentUrl"].rsplit("/", 1)[1]: entry for entry in dataset["distribution"]}
    for table in distributed_tables():
        assert f"{table}.parquet" in listed, table
    assert {"bench_measurements.csv", "bench_measurements.jsonl", "products.json", "claims.jsonl"} <= set(listed)
    for entry in dataset["distribution"]:
        assert entry["contentUrl"].startswith(f"{BASE_URL}/releases/{dataset['dataset_version']}/"), entry
        reply = server.get(local(entry["contentUrl"]))
        assert reply.status == 200, entry
        assert entry["contentSize"] == f"{len(reply.body)} B" == f"{reply.headers['content-length']} B"
        assert hashlib.sha256(reply.body).hexdigest() == entry["sha256"]
        path = urlsplit(entry["contentUrl"]).path
        assert reply.headers["content-type"] == media_type_of(path)  # the registered type on the wire
        assert entry["encodingFormat"] == croissant_format(path)  # the name Croissant's readers know it by
        assert reply.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert reply.headers["x-dataset-version"] == dataset["dataset_version"]


def test_researchers_libraries_read_the_distributions_over_http(server: Server):
    products = server.get("/api/public/products.json").json()
    bench_rows = server.get("/api/public/bench.jsonl?limit=20000").body.decode().splitlines()
    claims = server.get("/api/public/claims.jsonl").body.decode().splitlines()
    answers = server.get("/api/public/answers.json").json()

    frame = polars.read_parquet(url(server, f"{DOWNLOADS}/products.parquet"))
    assert frame.height == products["count"]
    assert set(frame.columns) == set(products["products"][0])
    bench = polars.read_parquet(url(server, f"{DOWNLOADS}/bench_measurements.parquet"))
    assert bench.height == len(bench_rows)
    assert bench.schema["tested_on"] == polars.Date and bench.schema["value"] == polars.Float64  # types, not text
    assert list(bench.columns) == list(json.loads(bench_rows[0]))
    assert polars.read_csv(url(server, f"{DOWNLOADS}/bench_measurements.csv")).height == len(bench_rows)
    assert polars.read_ndjson(url(server, f"{DOWNLOADS}/bench_measurements.jsonl")).height == len(bench_rows)
    assert len(pandas.read_parquet(url(server, f"{DOWNLOADS}/claims.parquet"))) == len(claims)
    readings = polars.read_parquet(url(server, f"{DOWNLOADS}/bench_readings.parquet"))
    per_measurement = readings.group_by("measurement_id").len()
    measured = bench.filter(polars.col("status") == "measured").select("measurement_id", "sample_size")
    joined = measured.join(per_measurement, on="measurement_id", how="left")
    assert joined.height == measured.height and (joined["len"] == joined["sample_size"]).all()
    http = fsspec.filesystem("http")
    table = pq.read_table(url(server, f"{DOWNLOADS}/answers.parquet"), filesystem=http)
    assert table.num_rows == answers["count"]
    with http.open(url(server, f"{DOWNLOADS}/answers.parquet"), block_size=4096) as ranged:  # reads by Range
        assert pq.ParquetFile(ranged).metadata.num_rows == answers["count"]


def test_a_range_is_answered_with_exactly_the_bytes_asked(server: Server):
    path = f"{DOWNLOADS}/bench_measurements.csv"
    whole = server.get(path).body
    size = len(whole)
    for asked, first, last in (
        ("bytes=0-99", 0, 99),
        ("bytes=100-", 100, size - 1),
        ("bytes=-50", size - 50, size - 1),
    ):
        reply = server.get(path, headers={"Range": asked, "Accept-Encoding": "gzip"})
        assert reply.status == 206, asked
        assert reply.body == whole[first : last + 1]
        assert reply.headers["content-range"] == f"bytes {first}-{last}/{size}"
        assert reply.headers["content-length"] == str(last - first + 1)
        assert "content-encoding" not in reply.headers  # ranges are of the file itself
    past = server.get(path, headers={"Range": f"bytes={size}-"})
    assert past.status == 416 and past.headers["content-range"] == f"bytes */{size}"
    assert past.headers["content-type"] == "application/problem+json"
    assert f"bytes 0 to {size - 1}" in past.json()["detail"]
    several = server.get(path, headers={"Range": "bytes=0-9, 20-29"})  # optional: answered whole
    assert several.status == 200 and several.body == whole
    stale = server.get(path, headers={"Range": "bytes=0-9", "If-Range": '"some-older-version"'})
    assert stale.status == 200 and stale.body == whole


@pytest.mark.parametrize("path", FIXED_DOCUMENTS)
def test_a_fixed_document_has_its_length_validator_and_compressed_copies(server: Server, path: str):
    plain = server.get(path)
    assert plain.status == 200
    assert plain.headers["content-length"] == str(len(plain.body))
    assert plain.headers["cache-control"] == "public, max-age=300"
    assert plain.headers["x-dataset-version"] and plain.headers["vary"] == "Accept-Encoding"
    again = server.get(path, headers={"If-None-Match": plain.headers["etag"]})
    assert again.status == 304 and again.body == b"" and again.headers["etag"] == plain.headers["etag"]
    for coding, decode in (("gzip", gzip.decompress), ("zstd", zstandard.ZstdDecompressor().decompress)):
        reply = server.get(path, headers={"Accept-Encoding": coding})
        if reply.headers.get("content-encoding") == coding:
            assert decode(reply.body) == plain.body
            assert reply.headers["content-length"] == str(len(reply.body))
            assert reply.headers["etag"] != plain.headers["etag"]  # another representation
        else:  # a small document goes as it is
            assert len(plain.body) < 1024 or coding == "zstd", (path, coding)
    head = server.send("HEAD", path)
    assert head.status == 200 and head.body == b"" and head.headers["content-length"] == str(len(plain.body))


def test_the_client_weighs_the_codings(server: Server):
    path = "/api/public/products.json"
    assert server.get(path, headers={"Accept-Encoding": "gzip, zstd"}).headers["content-encoding"] == "zstd"
    assert server.get(path, headers={"Accept-Encoding": "zstd;q=0.5, gzip"}).headers["content-encoding"] == "gzip"
    assert "content-encoding" not in server.get(path, headers={"Accept-Encoding": "br"}).headers
    assert "content-encoding" not in server.get(path, headers={"Accept-Encoding": "gzip;q=0"}).headers


def test_versioned_addresses_never_change_and_name_the_release(server: Server):
    version = current_version(server.store)
    current = server.get("/api/public/products.json")
    pinned = server.get(f"/releases/{version}/api/public/products.json")
    assert pinned.body == current.body and pinned.headers["etag"] == current.headers["etag"]
    assert pinned.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert server.get(f"/releases/{version}/api/public/openapi.json").status == 200
    gone = server.get("/releases/20200101T000000000Z/api/public/products.json")
    assert gone.status == 404 and version in gone.json()["detail"]
    missing = server.get(f"/releases/{version}/api/public/nothing.json")
    assert missing.status == 404 and missing.headers["content-type"] == "application/problem+json"
    sneaky = server.get(f"/releases/{version}/../../../etc/passwd")
    assert sneaky.status == 404


def test_the_manifest_lists_every_file_of_the_release(server: Server):
    folder = release_path(server.store, current_version(server.store))
    manifest = read_manifest(folder)
    on_disk = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {"manifest.json"}
    assert set(manifest.files) == on_disk
    assert manifest.base_url == BASE_URL and manifest.version == folder.name


def test_a_server_configured_with_another_base_url_serves_the_releases_and_says_so(demo_home: Path, tmp_path: Path):
    home = copy_home(demo_home, tmp_path / "home")
    log = tmp_path / "server.log"
    with serving(home, environ={"REUSE_DATA_BASE_URL": "https://data.example.org"}, log=log) as other:
        changes = other.get("/api/public/changes.json").json()
        page = other.get("/api/public/page.json?path=/guides/start-here").json()
        dataset = other.get("/api/public/dataset.json").json()
        openapi = other.get("/api/public/openapi.json").json()
        ask = other.get("/api/public/ask.json?q=insulated+bottle").json()
    handed_out = [
        changes["full_corpus"],
        changes["claims"],
        changes["changes"][0]["url"],
        page["page"]["canonical_url"],
        dataset["url"],
        dataset["distribution"][0]["contentUrl"],
        openapi["servers"][0]["url"],
        ask["fallback"]["url"] if ask.get("fallback") else ask["cite"],
    ]
    assert all(address.startswith(BASE_URL) for address in handed_out), handed_out
    said = log.read_text()
    assert f"was built for {BASE_URL}, not the configured REUSE_DATA_BASE_URL https://data.example.org" in said


def release_naming_files(manifest: Manifest) -> set[str]:
    """The files of a release that name it (its version or time): no other release holds them."""
    named = {SNAPSHOT_FILE, PAGE_ENVELOPE, DATASET, DATA_PACKAGE}
    named |= {path for path, document in DOCUMENTS.items() if document.names_release}
    # Where a parted document's parts lie in its gzip copy follows its head, which names the release.
    named |= {
        parts_index_path(path) for path, document in DOCUMENTS.items() if document.names_release and document.parted
    }
    return {path for path in manifest.files if path in named or path.rsplit(".", 1)[0] in named}


def test_a_publish_with_nothing_changed_links_every_file_that_does_not_name_the_release(
    demo_home: Path, tmp_path: Path
):
    home = copy_home(demo_home, tmp_path / "home")
    store, warehouse = home_layout(home).snapshots_dir, home_layout(home).warehouse_path
    before = release_path(store, current_version(store))
    info = publish_release(store, warehouse)
    manifest, earlier = read_manifest(info.path), read_manifest(before)
    verify(info.path, manifest)
    assert set(manifest.files) == set(earlier.files)
    written = {path for path in manifest.files if (info.path / path).stat().st_ino != (before / path).stat().st_ino}
    named = release_naming_files(manifest)
    # A parted document's index follows the length of its compressed head: the same or not.
    assert named - {path for path in named if path.startswith(PARTS_DIR)} <= written <= named
    assert set(info.shared_files) == set(manifest.files) - written and set(info.kept_tables) == set(info.tables)
    for path in set(manifest.files) - written:  # the same file, made from the same things
        assert manifest.files[path] == earlier.files[path], path

    earlier_bodies = {
        "/api/public/products.json": (before / "api/public/products.json").read_bytes(),
        "/api/public/page.json?path=/guides/start-here": (release := Release.open(before)).page(
            release.pages.get("/guides/start-here"), gzipped=False
        ),
    }
    with serving(home) as again:  # the restamped documents, as a client gets them
        for path, earlier_body in earlier_bodies.items():
            plain = again.get(path)
            assert plain.headers["x-dataset-version"] == info.version
            for coding, decode in (("gzip", gzip.decompress), ("zstd", zstandard.ZstdDecompressor().decompress)):
                reply = again.get(path, headers={"Accept-Encoding": coding})
                if reply.headers.get("content-encoding") == coding:
                    assert decode(reply.body) == plain.body, (path, coding)
            now, then = json.loads(plain.body), json.loads(earlier_body)
            assert now.pop("dataset_version") == info.version and then.pop("dataset_version") == before.name
            now.pop("generated_at"), then.pop("generated_at")
            assert now == then


def test_a_changed_table_is_written_again_and_what_it_does_not_feed_stays_linked(demo_home: Path, tmp_path: Path):
    home = copy_home(demo_home, tmp_path / "home")
    store, warehouse = home_layout(home).snapshots_dir, home_layout(home).warehouse_path
    before = release_path(store, current_version(store))
    with duckdb.connect(str(warehouse)) as connection:
        connection.execute(
            "UPDATE marts.products SET product_name = product_name || ' (revised)' "
            "WHERE product_slug = (SELECT min(product_slug) FROM marts.products)"
        )
        connection.execute("UPDATE marts.pages SET title = title || ' (revised)' WHERE path = '/guides/start-here'")
    info = publish_release(store, warehouse)
    verify(info.path, read_manifest(info.path))
    old_pages, new_pages = Release.open(before), Release.open(info.path)
    unchanged = [path for path in (info.path / PAGE_PATHS).read_text().split() if path != "/guides/start-here"]
    for path in ("/guides/start-here", *unchanged[:20]):
        record = new_pages.pages.get(path)
        now = json.loads(new_pages.page(record, False))
        then = json.loads(old_pages.page(old_pages.pages.get(path), False))
        assert gzip.decompress(new_pages.page(record, True)) == new_pages.page(record, False)
        for document in (now, then):
            document.pop("dataset_version"), document.pop("generated_at")
        if path == "/guides/start-here":  # the page changed, and only it
            assert now["page"]["title"] == then["page"]["title"] + " (revised)"
        else:
            assert now == then, path

    def same(path: str) -> bool:
        return (info.path / path).stat().st_ino == (before / path).stat().st_ino

    products = info.path / DOWNLOADS.lstrip("/") / "products.parquet"
    assert not same(str(products.relative_to(info.path)))
    revised = f"SELECT count(*) FROM read_parquet('{products}') WHERE product_name LIKE '% (revised)'"
    assert duckdb.sql(revised).fetchall() == [(1,)]
    for unfed in ("bench_readings.parquet", "bench_measurements.csv", "bench_measurements.jsonl.gz", "claims.parquet"):
        assert same(f"{DOWNLOADS}/{unfed}".lstrip("/")), unfed
    assert same("api/public/claims.jsonl") and same("api/public/claims.jsonl.gz")
    assert set(info.kept_tables) == set(info.tables) - {"products", "pages"}
    assert info.patched_tables == ("pages", "products")
    with open_snapshot(info.path / SNAPSHOT_FILE) as connection:
        assert connection.execute("SELECT count(*) FROM products WHERE product_name LIKE '% (revised)'").fetchall() == [
            (1,)
        ]
    # The same marts published whole, at the same time into a store of their own: every table
    # holds the same rows and every file but the snapshot's is the same, byte for byte.
    whole = publish_release(tmp_path / "whole", warehouse, now=info.published_at)
    assert whole.version == info.version and whole.patched_tables == whole.kept_tables == ()
    patched_files, whole_files = read_manifest(info.path).files, read_manifest(whole.path).files
    assert set(patched_files) == set(whole_files)
    assert {path for path in patched_files if patched_files[path].sha256 != whole_files[path].sha256} == {SNAPSHOT_FILE}
    with open_snapshot(info.path / SNAPSHOT_FILE) as patched, open_snapshot(whole.path / SNAPSHOT_FILE) as written:
        for table in info.tables:
            every_row = f'SELECT * FROM "{table}" ORDER BY ALL'
            assert patched.execute(every_row).fetchall() == written.execute(every_row).fetchall(), table


def test_documents_said_not_to_name_their_release_are_the_same_in_any_release(demo_home: Path, tmp_path: Path):
    """What ``release_naming_files`` leaves out is linked from release to release: published from
    the same warehouse at two times, without a release before, those files are byte for byte the same."""
    warehouse = home_layout(demo_home).warehouse_path
    first = publish_release(tmp_path / "a", warehouse, now=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    second = publish_release(tmp_path / "b", warehouse, now=dt.datetime(2027, 6, 30, 12, 34, 56, tzinfo=dt.UTC))
    manifest, earlier = read_manifest(second.path), read_manifest(first.path)
    differing = {path for path in manifest.files if manifest.files[path].sha256 != earlier.files[path].sha256}
    assert differing <= release_naming_files(manifest)


def parts_encoded(caplog: pytest.LogCaptureFixture) -> dict[str, tuple[int, int]]:
    """How many parts each parted file encoded, of how many, as ``publish.parted_files`` logs it."""
    return {record.args[0]: record.args[1:] for record in caplog.records if record.name == parted_files.__name__}


def part_rows(release: Path, path: str) -> list[list[str]]:
    """The measurement ids of each part of a bench download (CSV or JSON lines), in file order."""
    data, index = (release / path).read_bytes(), np.load(release / parts_index_path(path))
    pieces = [data[int(at) : int(at) + int(length)].decode() for at, length in index[["plain_at", "plain_length"]]]
    if path.endswith(".csv"):
        return [[row[0] for row in csv.reader(io.StringIO(piece))] for piece in pieces]
    return [[json.loads(line)["measurement_id"] for line in piece.splitlines()] for piece in pieces]


def test_a_parted_file_encodes_only_the_parts_that_changed_and_reads_as_one_file(
    demo_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    """The claims, the products, llms-full.txt and the bench measurements' CSV and JSON lines, cut
    into parts of about two products, pages or measurements (the demo's catalogue in many parts): a
    publish after one
    product changed encodes that product's parts alone, copies the others, plain and deflated,
    and its files are those of a whole rewrite (the bench files those of DuckDB's ``COPY`` of the
    whole, byte for byte); curl, pandas, polars and DuckDB read them, and their gzip copies, as one
    file. The readings' Parquet keeps the row group a change to the last product did not reach,
    and holds a whole rewrite's rows."""
    monkeypatch.setattr(parted_files, "GROUPS_PER_PART", 2)
    # The readings' Parquet in row groups of 2,048 rows (DuckDB cuts them no smaller): two.
    monkeypatch.setattr(parquet_parts, "PARQUET_ROW_GROUP_ROWS", 2048)
    caplog.set_level(logging.INFO, logger=parquet_parts.__name__)
    caplog.set_level(logging.INFO, logger=parted_files.__name__)
    bench = [f"{DOWNLOADS}/bench_measurements.{extension}".lstrip("/") for extension in ("csv", "jsonl")]

    home = copy_home(demo_home, tmp_path / "home")
    store, warehouse = home_layout(home).snapshots_dir, home_layout(home).warehouse_path
    shutil.rmtree(store)  # a store of releases cut this way
    first = publish_release(store, warehouse)
    parted = sorted(parts_encoded(caplog))
    assert parted == sorted(["api/public/claims.jsonl", "api/public/products.json", FULL_TEXT, *bench])
    parts = {path: len(np.load(first.path / parts_index_path(path))) for path in parted}
    assert all(count >= 10 for count in parts.values()), parts
    assert parts_encoded(caplog) == {path: (count, count) for path, count in parts.items()}  # nothing before: all

    with duckdb.connect(str(warehouse)) as connection:
        [(product,)] = connection.execute("SELECT min(product_slug) FROM marts.claims").fetchall()
        connection.execute(
            "UPDATE marts.products SET product_name = product_name || ' (revised)' WHERE product_slug = $1", [product]
        )
        connection.execute(
            "UPDATE marts.corpus_documents SET document = document || ' (revised)' WHERE path = $1",
            [f"/products/{product}"],
        )
        connection.execute(
            "CREATE TABLE marts.revised_claims AS SELECT * REPLACE (CASE WHEN product_slug = $1 "
            "THEN claim || ' (revised)' ELSE claim END AS claim) FROM marts.claims",
            [product],
        )
        connection.execute("DROP VIEW marts.claims")
        connection.execute("ALTER TABLE marts.revised_claims RENAME TO claims")
        [(last,)] = connection.execute("SELECT max(product_slug) FROM marts.bench_readings").fetchall()
        connection.execute(
            "CREATE TABLE marts.revised_readings AS SELECT * REPLACE (CASE WHEN product_slug = $1 "
            "THEN reading + 1 ELSE reading END AS reading) FROM marts.bench_readings",
            [last],
        )
        connection.execute("DROP VIEW marts.bench_readings")
        connection.execute("ALTER TABLE marts.revised_readings RENAME TO bench_readings")
        # Its measurements too, the tester's name now quoted over two lines in the CSV.
        remeasured = connection.execute(
            "UPDATE marts.bench_measurements SET value = value + 1, tester = tester || E' (again,\\n\"twice\")' "
            "WHERE product_slug = $1 AND status = 'measured' RETURNING measurement_id",
            [last],
        ).fetchall()
    assert len(remeasured) >= 2  # one under each of its protocols
    caplog.clear()
    second = publish_release(store, warehouse)
    kept = {record.args[0]: record.args[1] for record in caplog.records if record.name == parquet_parts.__name__}
    readings = second.path / DOWNLOADS.lstrip("/") / "bench_readings.parquet"
    assert kept == {"bench_readings.parquet": 1} and pq.read_metadata(readings).num_row_groups == 2
    encoded = parts_encoded(caplog)
    changed: dict[str, set[int]] = {}  # path -> the numbers of the parts whose source is new
    for path in parted:
        old, new = np.load(first.path / parts_index_path(path)), np.load(second.path / parts_index_path(path))
        changed[path] = {number for number, source in enumerate(new["source"]) if source not in set(old["source"])}
        assert encoded[path] == (len(changed[path]), len(new)), path  # the changed parts encoded, the rest copied
    assert all(len(changed[path]) == 1 for path in parted if path not in bench)  # one product, one part
    ids = {measurement for (measurement,) in remeasured}
    for path in bench:  # the same measurements in the same parts; those holding the product's changed
        assert part_rows(first.path, path) == (rows := part_rows(second.path, path)), path
        assert changed[path] == {number for number, part in enumerate(rows) if ids & set(part)}, path

    whole = publish_release(tmp_path / "whole", warehouse, now=second.published_at)
    ours, rewritten = read_manifest(second.path).files, read_manifest(whole.path).files
    for path in parted:
        for copy in (path, path + ".gz", path + ".zst", parts_index_path(path)):
            if copy in ours or copy in rewritten:
                assert ours[copy].sha256 == rewritten[copy].sha256, copy

    for parquet in ("claims.parquet", "bench_readings.parquet"):
        ours_file, whole_file = (release / DOWNLOADS.lstrip("/") / parquet for release in (second.path, whole.path))
        every_row = "SELECT * FROM read_parquet($file)"
        assert (
            duckdb.execute(every_row, {"file": str(ours_file)}).fetchall()
            == duckdb.execute(every_row, {"file": str(whole_file)}).fetchall()
        ), parquet
        assert (
            polars.read_parquet(ours_file).height
            == len(pandas.read_parquet(ours_file))
            == pq.read_metadata(ours_file).num_rows
        )
    columns = ", ".join(f'"{column}"' for column in BENCH_COLUMNS)
    with open_snapshot(second.path / SNAPSHOT_FILE) as connection:  # what DuckDB's COPY of the whole writes
        [(measurements,)] = connection.execute("SELECT count(*) FROM bench_measurements").fetchall()
        for path, options in zip(bench, (COPY_OPTIONS["csv"], COPY_OPTIONS["jsonl"]), strict=True):
            copied = tmp_path / Path(path).name
            connection.execute(
                f"COPY (SELECT {columns} FROM bench_measurements ORDER BY stream_position) TO '{copied}' ({options})"
            )
            assert (second.path / path).read_bytes() == copied.read_bytes(), path
    assert b'(again,\n""twice"")' in (second.path / bench[0]).read_bytes()
    parquet = str(second.path / DOWNLOADS.lstrip("/") / "bench_measurements.parquet")
    in_order = [
        row[0] for row in duckdb.execute("SELECT measurement_id FROM read_parquet($file)", {"file": parquet}).fetchall()
    ]
    assert len(in_order) == measurements
    for path in bench:
        for file in (str(second.path / path), f"{second.path / path}.gz"):
            csv_file = path.endswith(".csv")
            read = "read_csv" if csv_file else "read_json"
            listed = duckdb.execute(f"SELECT measurement_id FROM {read}($file)", {"file": file}).fetchall()
            assert [row[0] for row in listed] == in_order, file
            frames = (
                (polars.read_csv(file), pandas.read_csv(file))
                if csv_file
                else (polars.read_ndjson(file), pandas.read_json(file, lines=True))
            )
            for frame in frames:
                assert list(frame["measurement_id"]) == in_order, file
    claims_file, products_file = second.path / "api/public/claims.jsonl", second.path / "api/public/products.json"
    claims = [json.loads(line) for line in claims_file.read_text().splitlines()]
    revised = [claim for claim in claims if claim["claim"].endswith(" (revised)")]
    assert revised and {claim["product_slug"] for claim in revised} == {product}
    assert [claim["claim_id"] for claim in claims] == sorted(claim["claim_id"] for claim in claims)
    gzipped = f"{claims_file}.gz"
    assert gzip.decompress(Path(gzipped).read_bytes()) == claims_file.read_bytes()
    assert duckdb.sql(f"SELECT count(*) FROM read_json('{gzipped}')").fetchall() == [(len(claims),)]
    assert len(pandas.read_json(gzipped, lines=True)) == polars.read_ndjson(gzipped).height == len(claims)
    with serving(home) as server:
        full_text = second.path / FULL_TEXT
        assert (
            full_text.read_text().count(" (revised)") == 1
            and gzip.decompress(Path(f"{full_text}.gz").read_bytes()) == full_text.read_bytes()
        )
        served = [
            ("/api/public/claims.jsonl", claims_file),
            ("/api/public/products.json", products_file),
            (f"/{FULL_TEXT}", full_text),
        ]
        for path, body in [*served, *((f"/{path}", second.path / path) for path in bench)]:
            for coding in ("gzip", "zstd"):
                done = subprocess.run(
                    ["curl", "-sS", "--compressed", "-H", f"Accept-Encoding: {coding}", "-D", "-", url(server, path)],
                    capture_output=True,
                    check=True,
                )
                head, _, received = done.stdout.partition(b"\r\n\r\n")
                assert f"content-encoding: {coding}".encode() in head.lower(), (path, coding)
                assert received == body.read_bytes(), (path, coding)
        served = pandas.read_json(url(server, "/api/public/claims.jsonl"), lines=True, storage_options=GZIP_ONLY)
        assert len(served) == len(claims)
        listed = json.loads(gzip.decompress(server.get("/api/public/products.json", headers=GZIP_ONLY).body))
        assert next(item for item in listed["products"] if item["product_slug"] == product)["product_name"].endswith(
            " (revised)"
        )
