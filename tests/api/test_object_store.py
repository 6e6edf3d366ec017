"""Releases in a real S3-compatible store (SeaweedFS), and replicas serving from it alone.

Publish uploads a release and switches the store's pointer; a replica (`reuse-data serve
--from s3://…`, with an empty home of its own) downloads it, checks it and serves it; a
corrupt or incomplete release in the store is refused while the previous one stays served;
a rollback through the store's pointer reaches the replica; a file the store already holds
is copied within it rather than sent again, and a replica links it rather than download it.
The replicas' day files of questions go up to the store (the last ones as a replica stops) and
down to the build's mirror once each, a grown one replacing its copy, and expire in the store too.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote, urlsplit

import duckdb
import obstore
import orjson
import pytest

from publish.new_release import publish_release
from release.local_store import current_version, versions
from release.manifest import MANIFEST_FILE, read_manifest, verify
from release.object_store import ReleaseStore, StoreError
from release.question_store import MIRROR_FOLDER, Mirrored, QuestionStore
from tests.conftest import PROJECT_ROOT, run_cli
from tests.support.harness import Server, copy_home, home_environment, home_layout, serving
from tests.support.release_store import CONVERGE_SECONDS, publish_to, wait_until_serving
from tests.support.seaweedfs import BUCKET, SeaweedFS
from warehouse.asked_questions import distinct_files, drop_expired, load_asked_questions, record_file_name

DAGSTER = str(Path(sys.executable).parent / "dagster")


def test_publish_uploads_every_file_and_then_the_pointer(store: ReleaseStore, demo_home: Path, tmp_path: Path):
    version = publish_to(store, tmp_path / "snapshots", demo_home)
    manifest = read_manifest(tmp_path / "snapshots" / version)
    stored = {
        entry["path"].removeprefix(f"{store.prefix}/"): entry["size"]
        for batch in obstore.list(store.store)
        for entry in batch
    }
    expected = {store.key(version, file.path): file.size for file in manifest.files.values()}
    assert {key: stored[key] for key in expected} == expected
    assert store.key(version, MANIFEST_FILE) in stored
    assert store.pointer() == version == current_version(tmp_path / "snapshots")
    assert store.versions() == [version]


def test_a_store_that_refuses_the_upload_publishes_nothing(store: ReleaseStore, demo_home: Path, tmp_path: Path):
    local = tmp_path / "snapshots"
    first = publish_to(store, local, demo_home)
    os.environ["AWS_SECRET_ACCESS_KEY"] = "not-the-key"  # monkeypatched: restored after the test
    refusing = ReleaseStore.open(store.url)
    with pytest.raises(StoreError, match="credentials"):
        publish_release(local, home_layout(demo_home).warehouse_path, before_switch=refusing.publish)
    assert current_version(local) == first and versions(local) == [first]  # nothing half-published
    assert not list(local.glob(".staging-*"))


def test_a_replica_serves_the_store_alone_and_says_when_it_is_ready(
    store: ReleaseStore, replica: Server, demo_home: Path, server: Server, tmp_path: Path
):
    assert replica.get("/healthz").status == 200
    not_ready = replica.get("/readyz")
    assert not_ready.status == 503 and not_ready.headers["content-type"] == "application/problem+json"
    assert "publish one to" in not_ready.json()["detail"]

    version = publish_to(store, tmp_path / "snapshots", demo_home)
    wait_until_serving(replica, version)
    for path in ("/api/public/products.json", "/api/public/recommendations.json", "/llms-full.txt"):
        ours, theirs = replica.get(path), server.get(path)
        assert ours.status == 200 and ours.headers["x-dataset-version"] == version
        if path.endswith(".json"):
            body, reference = ours.json(), theirs.json()
            assert body["dataset_version"] == version
            body.pop("dataset_version"), reference.pop("dataset_version")
            body.pop("generated_at"), reference.pop("generated_at")
            assert body == reference  # the same marts, whichever release and host serves them
    assert not (replica.home / "warehouse").exists()


def test_a_corrupt_or_incomplete_release_in_the_store_is_refused_and_the_served_one_stays(
    store: ReleaseStore, replica: Server, demo_home: Path, tmp_path: Path
):
    local = tmp_path / "snapshots"
    good = publish_to(store, local, demo_home)
    wait_until_serving(replica, good)

    for damage in ("altered", "missing"):
        bad = publish_release(local, home_layout(demo_home).warehouse_path).version  # local only
        store.upload(local / bad)
        victim = store.key(bad, "api/public/products.json")
        if damage == "altered":
            obstore.put(store.store, victim, b'{"products": []}')
        else:
            obstore.delete(store.store, victim)
        store.switch(bad)
        refusal = f"release {bad} in {store.url} is incomplete or altered: api/public/products.json"
        deadline = time.monotonic() + CONVERGE_SECONDS
        while refusal not in replica.log.read_text():
            assert time.monotonic() < deadline, f"the replica did not say it refused {bad}"
            time.sleep(0.2)
        assert f"still serving {good}" in replica.log.read_text()
        time.sleep(2.5)  # one more poll: the refused release is still not taken
        assert replica.get("/readyz").json()["dataset_version"] == good
        reply = replica.get("/api/public/products.json")
        assert reply.status == 200 and reply.headers["x-dataset-version"] == good
        assert not (replica.home / "replica" / bad).exists()
        assert not list((replica.home / "replica").glob(".staging-*"))
    failures = replica.get("/metrics").body.decode().split("\nreuse_data_store_sync_failures_total ")[1]
    assert float(failures.split()[0]) >= 2


def test_rollback_through_the_store_pointer_reaches_the_replica(
    store: ReleaseStore, replica: Server, seaweedfs: SeaweedFS, demo_home: Path, tmp_path: Path
):
    home = tmp_path / "build-home"
    local = home_layout(home).snapshots_dir
    first = publish_to(store, local, demo_home)
    second = publish_to(store, local, demo_home)
    wait_until_serving(replica, second)

    env = {**seaweedfs.environment(), "REUSE_DATA_PUBLISH_TO": store.url}
    listed = run_cli("snapshots", "list", "--store", store.url, home=home, environ=env)
    assert listed.returncode == 0 and f"* {second}" in listed.output and f"  {first}" in listed.output
    rolled = run_cli("snapshots", "rollback", first, home=home, environ=env)
    assert rolled.returncode == 0, rolled.output
    assert store.pointer() == first == current_version(local)
    took = wait_until_serving(replica, first)
    assert took < CONVERGE_SECONDS
    assert replica.get("/api/public/products.json").headers["x-dataset-version"] == first
    # a version the store does not hold is refused before anything moves
    refused = run_cli("snapshots", "rollback", "20200101T000000000Z", home=home, environ=env)
    assert refused.returncode == 2 and "holds no whole release 20200101T000000000Z" in refused.output
    assert store.pointer() == first


def test_a_malformed_or_unreachable_store_is_a_sentence_not_a_traceback(tmp_path: Path, seaweedfs: SeaweedFS):
    malformed = run_cli("serve", "--from", "http://bucket/x", home=tmp_path / "h")
    assert malformed.returncode == 2
    assert "not an object-store address: write it as s3://bucket/prefix" in malformed.output
    env = {**seaweedfs.environment(), "AWS_ENDPOINT_URL": "http://127.0.0.1:9"}  # nothing listens there
    unreachable = run_cli("snapshots", "list", "--store", "s3://reuse-data/x", home=tmp_path / "h", environ=env)
    assert unreachable.returncode == 2
    assert "could not read current in s3://reuse-data/x" in unreachable.output
    assert "check AWS_ENDPOINT_URL" in unreachable.output and "Traceback" not in unreachable.output


def test_the_publish_asset_uploads_to_the_configured_store(
    store: ReleaseStore, seaweedfs: SeaweedFS, demo_home: Path, tmp_path: Path
):
    """A real Dagster materialisation of the publish asset, as the daemon runs it (a store that
    refuses the upload: ``test_a_store_that_refuses_the_upload_publishes_nothing``)."""
    home = copy_home(demo_home, tmp_path / "home")
    local = home_layout(home).snapshots_dir
    before = current_version(local)
    env = {**home_environment(home), **seaweedfs.environment(), "REUSE_DATA_PUBLISH_TO": store.url}
    materialize = [DAGSTER, "asset", "materialize", "-m", "pipelines.definitions", "--select", "published/snapshot"]

    done = subprocess.run(materialize, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    version = current_version(local)
    assert version != before and store.pointer() == version
    assert f"uploaded release {version} to {store.url}" in done.stderr


class CountingRelay:
    """A TCP relay in front of the S3 server that notes each request as it passes: its method, its
    path and whether it asks the store to copy an object it holds (``x-amz-copy-source``)."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname, parts.port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.requests: list[tuple[str, str, bool]] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.upstream)
            threading.Thread(target=self._requests, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self._responses, args=(upstream, client), daemon=True).start()

    def _responses(self, upstream: socket.socket, client: socket.socket) -> None:
        try:
            while chunk := upstream.recv(65536):
                client.sendall(chunk)
        except OSError:
            pass
        finally:
            client.close()

    def _requests(self, client: socket.socket, upstream: socket.socket) -> None:
        reader = client.makefile("rb")
        try:
            while head := self._head(reader):
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = lines[0].split(" ", 2)
                fields = dict(line.lower().split(":", 1) for line in lines[1:] if ":" in line)
                assert "transfer-encoding" not in fields, "the relay passes bodies of a known length only"
                self.requests.append((method, urlsplit(target).path, "x-amz-copy-source" in fields))
                upstream.sendall(head + b"\r\n")
                remaining = int(fields.get("content-length", "0"))
                while remaining:
                    chunk = reader.read(min(remaining, 65536))
                    upstream.sendall(chunk)
                    remaining -= len(chunk)
        except (OSError, ValueError):
            pass
        finally:
            upstream.close()

    @staticmethod
    def _head(reader) -> bytes:
        """The next request's line and fields, without the blank line; empty once the client is done."""
        lines = []
        while (line := reader.readline()) not in (b"\r\n", b""):
            lines.append(line)
        return b"".join(lines) if line else b""

    def close(self) -> None:
        self.listener.close()


def test_an_unchanged_file_is_copied_within_the_store_and_linked_by_a_replica(
    store: ReleaseStore, seaweedfs: SeaweedFS, demo_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    local = tmp_path / "snapshots"
    first = publish_to(store, local, demo_home)
    relay = CountingRelay(seaweedfs.endpoint)
    monkeypatch.setenv("AWS_ENDPOINT_URL", relay.endpoint)
    relayed = ReleaseStore.open(store.url)
    try:
        second = publish_to(relayed, local, demo_home)
        before, after = read_manifest(local / first), read_manifest(local / second)
        held = {(file.sha256, file.size) for file in before.files.values()}
        unchanged = {path for path, file in after.files.items() if (file.sha256, file.size) in held}
        assert unchanged and unchanged != set(after.files)  # the demo republished: most files, not all

        def objects(version: str, paths: set[str]) -> set[str]:
            return {f"/{BUCKET}/{relayed.prefix}/{relayed.key(version, path)}" for path in paths}

        copied = {path for method, path, copy in relay.requests if method == "PUT" and copy}
        sent = {path for method, path, copy in relay.requests if method in ("PUT", "POST") and not copy}
        assert copied == objects(second, unchanged)
        pointer = f"/{BUCKET}/{relayed.prefix}/current"
        assert sent == objects(second, set(after.files) - unchanged | {MANIFEST_FILE}) | {pointer}
        stored = {entry["path"]: entry["size"] for batch in obstore.list(store.store) for entry in batch}
        assert all(stored[store.key(second, path)] == file.size for path, file in after.files.items())

        cache = tmp_path / "replica"
        relayed.download(first, cache)
        relay.requests.clear()
        relayed.download(second, cache)
        fetched = {path for method, path, _ in relay.requests if method == "GET"}
        assert fetched & objects(second, set(after.files)) == objects(second, set(after.files) - unchanged)
        for path in unchanged:
            assert (cache / second / path).stat().st_ino == (cache / first / path).stat().st_ino, path
        verify(cache / second, after)
    finally:
        relay.close()


def append_questions(folder: Path, day: dt.date, pid: int, *questions: str, at: str = "12:00:00.000") -> Path:
    """Records of ``questions`` asked ``at`` appended to process ``pid``'s file of ``day`` under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / record_file_name(day, pid)
    with path.open("ab") as day_file:
        for question in questions:
            record = {"time": f"{day}T{at}Z", "question": question, "language": "en", "answered": False}
            day_file.write(orjson.dumps({**record, "entry": None, "probability": None, "refusal": None}) + b"\n")
    return path


def test_the_replicas_questions_reach_the_build_once_and_expire_in_the_store_too(store: ReleaseStore, tmp_path: Path):
    today, questions = dt.date(2026, 12, 1), QuestionStore(store)
    one, two = tmp_path / "replica-one" / "questions", tmp_path / "replica-two" / "questions"
    ours = append_questions(one, today, 7, "a?", "b?")
    theirs = append_questions(two, today, 7, "a?", at="12:00:00.317")  # the same pid, on another host
    expired = append_questions(one, today - dt.timedelta(days=91), 7, "old?")
    obstore.put(store.store, f"questions/replica-one/{expired.name}", expired.read_bytes())  # uploaded in its time

    assert questions.upload(one, "replica-one", 90, today) == 1
    assert not expired.exists()  # the replica deletes its own past the retention, and never sends them again
    assert questions.upload(two, "replica-two", 90, today) == 1
    assert questions.upload(one, "replica-one", 90, today) == 0  # unchanged: nothing sent
    with ours.open("ab") as day_file:  # a line being appended waits for the next upload
        day_file.write(b'{"time": "2026-12-01T12:00:01.000Z", "question": "c?", ')
    assert questions.upload(one, "replica-one", 90, today) == 0

    build = tmp_path / "build" / "questions"
    mirror = build / MIRROR_FOLDER
    assert questions.mirror(mirror, 90, today) == Mirrored(downloaded=2, expired=1, files=2)
    assert sorted(file.key for file in questions.stored()) == [
        f"questions/replica-one/{ours.name}",
        f"questions/replica-two/{theirs.name}",
    ]
    assert questions.mirror(mirror, 90, today) == Mirrored(downloaded=0, expired=0, files=2)  # nothing changed

    # Today's file grew: uploaded whole again, and its copy in the mirror replaced, never put beside it.
    first_copy = (mirror / "replica-one" / ours.name).read_bytes()
    with ours.open("ab") as day_file:
        day_file.write(b'"language": "en", "answered": true, "entry": null, "probability": null, "refusal": null}\n')
    assert questions.upload(one, "replica-one", 90, today) == 1
    assert questions.mirror(mirror, 90, today) == Mirrored(downloaded=1, expired=0, files=2)
    assert (mirror / "replica-one" / ours.name).read_bytes() == ours.read_bytes() != first_copy
    assert sorted(path.relative_to(mirror) for path in mirror.rglob("*") if path.is_file()) == [
        Path("replica-one", ours.name),
        Path("replica-two", theirs.name),
    ]

    # A build host that is also a replica has its own file in its home too (an older copy, here):
    # it is read once, while the other host's file of the same name is read as well.
    (build / ours.name).write_bytes(first_copy)
    kept = drop_expired(build, 90, today)
    assert len(kept) == 3 and len(distinct_files(kept, mirror)) == 2
    with duckdb.connect() as connection:
        assert load_asked_questions(connection, build, distinct_files(kept, mirror)) == 4  # a, b, c; and a

    # A day file gone from the store goes from the mirror, its empty folder with it.
    obstore.delete(store.store, f"questions/replica-two/{theirs.name}")
    assert questions.mirror(mirror, 90, today) == Mirrored(downloaded=0, expired=0, files=1)
    assert not (mirror / "replica-two").exists()


def test_a_replica_that_stops_uploads_the_questions_asked_of_it(
    store: ReleaseStore, seaweedfs: SeaweedFS, demo_home: Path, tmp_path: Path
):
    publish_to(store, tmp_path / "snapshots", demo_home)
    question = "Which flask fits a bike bottle cage?"
    environ = {**seaweedfs.environment(), "REUSE_DATA_REPLICA_NAME": "stopping"}  # uploads every 60 s
    with serving(tmp_path / "replica-home", "--from", store.url, ready="/readyz", environ=environ) as replica:
        assert replica.get(f"/api/public/ask.json?q={quote(question)}").status == 200
        assert QuestionStore(store).stored() == []  # not a minute yet
    (stored,) = QuestionStore(store).stored()  # SIGTERM: the server wrote its log and uploaded it
    assert stored.replica == "stopping"
    assert question.encode() in bytes(obstore.get(store.store, stored.key).bytes())
