"""New snapshots are picked up while serving: no restart, no failed request, no mixed response,
with one worker and with several.

Each test serves a copy of the demo home, so publishing here disturbs no other test. Before
each publish the copy's warehouse is marked with the switch's number in every record's
attribution, the change titles and the corpus, so a body served from one snapshot under the
header of another would show the wrong number.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import duckdb
import pytest

from ask.engine import MissingTables
from ask.model.store import ModelStore
from foundations.problem_details import ProblemError
from foundations.settings import load_settings
from publish.new_release import publish_release
from release.local_store import SNAPSHOT_FILE, SnapshotError, current_version, new_version, release_path, rollback
from release.manifest import MANIFEST_FILE, read_manifest, write_manifest
from release.snapshot import SnapshotHolder
from serve.api.routes_ask import prepare_ask
from tests.support.harness import Reply, Server, copy_home, serving

HAMMERED = [  # every operation of the API, and the two corpus exports
    "/api/public/products.json",
    "/api/public/page.json?path=/guides/start-here",
    "/api/public/changes.json?since=2026-06-01",
    "/api/public/ask.json?q=" + quote("Which insulated bottle keeps tea hot?"),
    "/api/public/capabilities.json",
    "/api/public/bench.jsonl?limit=50",
    "/api/public/bench.csv?protocol=heat-retention",
    "/api/public/recommendations.json",
    "/api/public/answers.json",
    "/api/public/content.json",
    "/api/public/dataset.json",
    "/api/public/press-kit.json",
    "/api/public/claims.jsonl",
    "/llms-full.txt",
]
SWITCHES = 10  # each a chance to serve a request across a switch; 20 took 70 s of a suite near its 20 minutes
MARK = re.compile(rb"\[switch-(\d+)\]")
GENERATED_AT = re.compile(rb'"generated_at":"[^"]*"')
MARKED_COLUMNS = {"changes": "title", "corpus_documents": "document"}  # besides every table's attribution


@pytest.fixture
def own_server(demo_home: Path, tmp_path: Path) -> Iterator[Server]:
    with serving(copy_home(demo_home, tmp_path / "home"), log=tmp_path / "server.log") as server:
        yield server


def mark_warehouse(warehouse: Path, switch: int) -> None:
    """Put ``[switch-N]`` at the end of every marked text in the build warehouse, in place of the last mark."""
    with duckdb.connect(str(warehouse)) as connection:
        tables = connection.execute(
            "SELECT c.table_name, c.column_name FROM information_schema.columns c "
            "JOIN information_schema.tables t USING (table_catalog, table_schema, table_name) "
            "WHERE c.table_schema = 'marts' AND t.table_type = 'BASE TABLE' AND c.data_type = 'VARCHAR'"
        ).fetchall()
        for table, column in tables:
            if column == "attribution" or MARKED_COLUMNS.get(table) == column:
                connection.execute(
                    f'UPDATE marts."{table}" SET "{column}" = '
                    f"regexp_replace(\"{column}\", ' \\[switch-\\d+\\]$', '') || ' [switch-{switch}]'"
                )


def test_switches_under_load_fail_no_request_and_mix_no_response(own_server: Server):
    replies: list[tuple[str, Reply]] = []
    errors: list[str] = []
    stop = threading.Event()

    def hammer(offset: int) -> None:
        index = offset
        while not stop.is_set():
            path = HAMMERED[index % len(HAMMERED)]
            index += 1
            try:
                replies.append((path, own_server.get(path)))
            except OSError as error:
                errors.append(f"{path}: {error}")

    clients = [threading.Thread(target=hammer, args=(i,)) for i in range(4)]
    for client in clients:
        client.start()
    published = [current_version(own_server.store)]
    try:
        for switch in range(1, SWITCHES + 1):
            mark_warehouse(own_server.warehouse, switch)
            published.append(publish_release(own_server.store, own_server.warehouse).version)
            own_server.wait_for_version(published[-1])
    finally:
        stop.set()
        for client in clients:
            client.join()
    assert not errors
    assert len(replies) > 20 * len(HAMMERED)
    assert all(reply.status == 200 for _, reply in replies), {r.status for _, r in replies}
    switch_of = {version: switch for switch, version in enumerate(published)}
    served, marked, bodies = set(), set(), {}
    for path, reply in replies:
        version = reply.headers["x-dataset-version"]
        served.add(version)
        marks = {int(number) for number in MARK.findall(reply.body)}
        assert marks <= {switch_of[version]}, f"{path} served {version} with marks of switches {marks}"
        marked.update([path] if marks else [])
        if reply.headers["content-type"].startswith("application/json"):
            assert reply.json()["dataset_version"] == version, path  # body and header from one snapshot
        answer = (reply.headers["etag"], GENERATED_AT.sub(b"", reply.body))  # ask.json is timed per request
        assert bodies.setdefault((path, version), answer) == answer, f"{path} differed within {version}"
    assert served <= set(published) and len(served) >= SWITCHES  # every switch was seen under load
    print(f"{len(replies)} requests over {len(HAMMERED)} addresses through {SWITCHES} switches, none failed")
    # These carry no marked text: the JSON ones name their snapshot in dataset_version (checked
    # above), and claims.jsonl (a view in the warehouse) was byte-identical within each version.
    unmarked = {"capabilities.json", "dataset.json", "press-kit.json", "ask.json", "claims.jsonl"}
    assert marked == {path for path in HAMMERED if path.split("?")[0].rsplit("/", 1)[1] not in unmarked}


def test_several_workers_serve_one_snapshot_and_all_switch(demo_home: Path, tmp_path: Path):
    with serving(copy_home(demo_home, tmp_path / "home"), "--workers", "2") as server:
        assert len(server.worker_pids()) == 2
        before = current_version(server.store)
        assert {server.get(HAMMERED[0]).headers["x-dataset-version"] for _ in range(20)} == {before}
        after = publish_release(server.store, server.warehouse).version
        server.wait_for_version(after, consecutive=20)


def copied_release(store: Path, version: str) -> tuple[str, Path]:
    """A writable copy of release ``version`` under a newer version, and its folder (no manifest yet)."""
    copy = new_version(dt.datetime.now(dt.UTC))
    folder = release_path(store, copy)
    shutil.copytree(release_path(store, version), folder)
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    (folder / MANIFEST_FILE).unlink()
    return copy, folder


def without_ask_vectors(store: Path, version: str) -> str:
    """A copy of release ``version`` under a newer version, complete by its manifest but lacking
    its ask vectors (as one published by an older reuse-data would)."""
    broken, folder = copied_release(store, version)
    with duckdb.connect(str(folder / SNAPSHOT_FILE)) as connection:
        connection.execute("DROP TABLE ask_vectors")
    original = read_manifest(release_path(store, version))
    write_manifest(folder, broken, original.base_url, original.published_at)
    return broken


def test_a_release_with_a_missing_or_altered_file_is_refused_and_the_served_one_stays(own_server: Server):
    store = own_server.store
    served = current_version(store)
    original = read_manifest(release_path(store, served))
    for fault in ("altered", "missing"):
        broken, folder = copied_release(store, served)
        write_manifest(folder, broken, original.base_url, original.published_at)
        if fault == "altered":  # same size, other bytes
            products = folder / "api/public/products.json"
            products.write_bytes(products.read_bytes().replace(b"products", b"PRODUCTS", 1))
        else:
            (folder / "api/public/downloads/claims.parquet").unlink()
        (store / "CURRENT").write_text(broken + "\n", encoding="utf-8")
        time.sleep(2.5)  # two polls of the watcher
        reply = own_server.get("/api/public/products.json")
        assert reply.status == 200 and reply.headers["x-dataset-version"] == served
        assert json.loads(reply.body)["dataset_version"] == served
    said = own_server.log.read_text()
    assert "api/public/products.json differs from its sha256 in the manifest" in said
    assert "api/public/downloads/claims.parquet is missing" in said


def test_a_snapshot_the_server_cannot_use_is_refused_and_the_served_one_stays(own_server: Server):
    store = own_server.home / "snapshots"
    served = current_version(store)
    broken = without_ask_vectors(store, served)
    with pytest.raises(SnapshotError, match="lacks tables"):
        rollback(store, broken)  # the command line refuses it too
    # A release of another manifest format (published by a newer reuse-data) is refused by name.
    newer, folder = copied_release(store, served)
    manifest = json.loads((release_path(store, served) / MANIFEST_FILE).read_text(encoding="utf-8"))
    (folder / MANIFEST_FILE).write_text(json.dumps({**manifest, "version": newer, "format": 2}), encoding="utf-8")
    with pytest.raises(SnapshotError, match=f"snapshot {newer} cannot be served by this reuse-data .*format 2"):
        rollback(store, newer, dry_run=True)
    (store / "CURRENT").write_text(broken + "\n", encoding="utf-8")  # as a hand edit would
    time.sleep(2.5)  # two polls of the watcher
    reply = own_server.get("/api/public/products.json")
    assert reply.status == 200 and reply.headers["x-dataset-version"] == served


def test_a_server_started_on_a_snapshot_it_cannot_use_says_why(demo_home: Path, tmp_path: Path):
    store = copy_home(demo_home, tmp_path / "home") / "snapshots"
    broken = without_ask_vectors(store, current_version(store))
    (store / "CURRENT").write_text(broken + "\n", encoding="utf-8")
    holder = SnapshotHolder(store, functools.partial(prepare_ask, encoders=ModelStore(load_settings().ask_models)))
    with pytest.raises(MissingTables):
        holder.load_current()
    with pytest.raises(ProblemError, match=f"snapshot {broken} cannot be served .*ask_vectors.*reuse-data build"):
        holder.current  # noqa: B018 - the 503 every request gets
    assert holder.load_current() is False  # not tried again at every poll: a published file never changes
