"""The tester intake against real servers: `reuse-data intake` and `reuse-data serve` on loopback,
real sensor ticks and real builds."""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pytest
from dagster import DagsterInstance, RunsFilter

from intake.build_request import INTAKE_STATE_TAG, REQUESTED_BY_TAG
from intake.cli import is_loopback
from intake.store import IntakeStore
from pipelines.sensors import ABANDONED_TAG
from release.local_store import current_version
from release.snapshot import load_snapshot
from tests.conftest import PROJECT_ROOT, run_cli
from tests.support.harness import (
    Server,
    copy_home,
    dagster_daemon,
    dagster_webserver,
    free_port,
    home_environment,
    home_layout,
    running,
    serving,
    wait_for,
)
from tests.support.intake_sheets import SLOT, TESTER, good_row, sheet, upload

MAX_BYTES = 64 * 1024


@pytest.fixture(scope="module")
def intake_home(demo_home: Path, tmp_path_factory) -> Path:
    return copy_home(demo_home, tmp_path_factory.mktemp("intake") / "home")


@pytest.fixture(scope="module")
def tokens(intake_home: Path) -> dict[str, str]:
    store = IntakeStore(intake_home)
    tokens = {name: store.add_tester(name) for name in (TESTER, "Jordan Ellis", "Former Tester")}
    store.revoke_tester("Former Tester")
    return tokens


@pytest.fixture(scope="module")
def intake(intake_home: Path, tokens) -> Iterator[Server]:
    environ = {"REUSE_DATA_INTAKE_MAX_BYTES": str(MAX_BYTES)}
    with serving(intake_home, command="intake", ready="/", environ=environ, log=intake_log(intake_home)) as running:
        yield running


def intake_log(home: Path) -> Path:
    """Everything the module's intake server prints."""
    return home.parent / "intake.log"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# Authentication


@pytest.mark.parametrize("who", [None, "not-a-token", "Former Tester"])
def test_no_wrong_or_revoked_token_gets_401(intake: Server, tokens, who):
    token = tokens.get(who, who)
    reply = upload(intake, sheet(good_row(reading="20.1")), token)
    assert reply.status == 401
    assert reply.headers["content-type"] == "application/problem+json"
    assert reply.headers["www-authenticate"].startswith("Bearer")
    assert intake.get("/api/intake/receipts", bearer(token or "")).status == 401


def test_a_wrong_method_or_address_is_told_in_the_intakes_own_words(intake: Server):
    """Not the public API's "every operation is a GET": the upload address takes a POST, and says so."""
    wrong_method = intake.get("/api/intake/bench-sheets")
    assert wrong_method.status == 405 and wrong_method.headers["allow"] == "POST"
    assert wrong_method.json()["detail"] == "GET is not allowed on /api/intake/bench-sheets: it takes POST."
    assert wrong_method.headers["content-type"] == "application/problem+json"
    nowhere = intake.get("/api/public/products.json")
    assert nowhere.status == 404 and "upload page is at /" in nowhere.json()["detail"]


def test_a_tester_reads_only_their_own_receipts(intake: Server, tokens):
    mine = upload(intake, sheet(good_row(reading="21.3")), tokens[TESTER])
    assert mine.status == 201
    receipt = mine.json()["id"]
    assert intake.get(f"/api/intake/receipts/{receipt}", bearer(tokens[TESTER])).json()["id"] == receipt
    assert intake.get(f"/api/intake/receipts/{receipt}", bearer(tokens["Jordan Ellis"])).status == 403
    assert intake.get("/api/intake/receipts/rcpt-none", bearer(tokens[TESTER])).status == 404
    listed = intake.get("/api/intake/receipts", bearer(tokens["Jordan Ellis"])).json()
    assert listed == {"tester": "Jordan Ellis", "receipts": []}
    assert receipt in [r["id"] for r in intake.get("/api/intake/receipts", bearer(tokens[TESTER])).json()["receipts"]]


# Validation: every rule, reported at the row and column the tester sees


@pytest.mark.parametrize(
    ("bad_row", "column", "message"),
    [
        (f"no-such-product,{SLOT[1]},1,11.5,°C,{TESTER},2026-11-20,", "product", "unknown product"),
        (f"{SLOT[0]},no-such-protocol,1,11.5,°C,{TESTER},2026-11-20,", "protocol", "unknown protocol"),
        (f"{SLOT[0]},leak-loss,1,11.5,ml,{TESTER},2026-11-20,", "protocol", "not run on"),
        (good_row(unit="kg"), "unit", "not a unit of"),
        (good_row(reading="400"), "reading", "plausible range"),
        (good_row(reading="abc"), "reading", "not a number"),
        (good_row(unit="°F", reading="150"), "reading", "plausible range"),  # 65.6 °C once converted
        (f"{SLOT[0]},{SLOT[1]},0,11.5,°C,{TESTER},2026-11-20,", "sample", "whole number"),
        (good_row(date="2999-01-01"), "date", "in the future"),
        (good_row(date="20/11/2026"), "date", "not a date"),
        (f"{SLOT[0]},{SLOT[1]},1,11.5,°C,Nobody Known,2026-11-20,", "tester", "not a known tester"),
        (good_row(sample=9, reading="11.9"), "sample", "the same sample as row 2"),
    ],
)
def test_each_rule_rejects_the_sheet_naming_row_and_column(intake: Server, tokens, bad_row, column, message):
    before = len(IntakeStore(intake.home).receipts())
    reply = upload(intake, sheet(good_row(sample=9, reading="12.25"), bad_row), tokens[TESTER])
    assert reply.status == 422, reply.body
    problem = reply.json()
    assert reply.headers["content-type"] == "application/problem+json"
    assert [(e["row"], e["column"]) for e in problem["errors"]] == [(3, column)], problem
    assert message in problem["errors"][0]["message"]
    assert len(IntakeStore(intake.home).receipts()) == before  # nothing of it kept


def test_convertible_units_are_accepted_and_other_columns_must_exist(intake: Server, tokens):
    assert upload(intake, sheet(good_row(unit="°F", reading="53.6")), tokens[TESTER]).status == 201  # 12 °C
    missing = upload(intake, b"product,protocol,reading\nx,y,1\n", tokens[TESTER])
    assert missing.status == 422
    assert {e["column"] for e in missing.json()["errors"]} >= {"sample", "unit", "tester", "date"}


def test_the_same_bytes_again_get_the_same_receipt_and_nothing_twice(intake: Server, tokens):
    content = sheet(good_row(reading="13.5"), good_row(sample=2, reading="13.7"))
    first = upload(intake, content, tokens[TESTER])
    again = upload(intake, content, tokens[TESTER], name="renamed.csv")
    assert (first.status, again.status) == (201, 200)
    assert first.json() == again.json()
    receipt = first.json()
    from_someone_else = upload(intake, content, tokens["Jordan Ellis"])
    assert from_someone_else.status == 409  # and the receipt stays the first tester's to read
    assert receipt["id"] not in from_someone_else.body.decode() and TESTER not in from_someone_else.body.decode()
    assert receipt["rows_accepted"] == 2 and receipt["slots"] == [":".join(SLOT)]
    assert receipt["tester"] == TESTER and receipt["status"] == "accepted" and not receipt["published"]
    archived = IntakeStore(intake.home).sheets_dir / f"{receipt['sha256']}.csv"
    assert archived.read_bytes() == content  # kept as received
    assert not os.access(archived, os.W_OK) or os.geteuid() == 0


def test_a_sheet_is_accepted_whatever_answers_at_the_dagster_address(demo_home: Path, tmp_path):
    """Nothing listening there, or a server that is not Dagster: the upload gets its 201 all the
    same, with no build named, and the intake's log says why no build was launched (the sensor
    starts it)."""
    home = copy_home(demo_home, tmp_path / "home")
    token = IntakeStore(home).add_tester(TESTER)
    with serving(home) as not_dagster:
        addresses = {
            "nothing": f"http://127.0.0.1:{free_port()}",
            "not-dagster": f"http://127.0.0.1:{not_dagster.port}",
        }
        for number, (what, url) in enumerate(addresses.items()):
            log = tmp_path / f"intake-{what}.log"
            environ = {"REUSE_DATA_DAGSTER_URL": url}
            with serving(home, command="intake", ready="/", environ=environ, log=log) as intake:
                accepted = upload(intake, sheet(good_row(reading=f"1{number}.5")), token)
            assert accepted.status == 201 and accepted.json()["build"] is None, accepted.body
            assert "no build launched" in log.read_text() and url in log.read_text(), log.read_text()[-2000:]


def test_size_and_type_limits(intake: Server, tokens):
    too_big = sheet(*[good_row(sample=n, reading="12.5") for n in range(1, 2000)])
    assert len(too_big) > MAX_BYTES
    assert upload(intake, too_big, tokens[TESTER]).status == 413
    assert upload(intake, b"hello", tokens[TESTER], name="notes.txt").status == 415
    workbook_named_csv = io.BytesIO()
    with zipfile.ZipFile(workbook_named_csv, "w") as archive:
        archive.writestr("x", "y")
    assert upload(intake, workbook_named_csv.getvalue(), tokens[TESTER], name="sheet.csv").status == 415
    no_file = intake.send("POST", "/api/intake/bench-sheets", b"", {**bearer(tokens[TESTER])})
    assert no_file.status == 400


def test_a_file_name_is_never_used_as_a_path(intake: Server, tokens):
    reply = upload(intake, sheet(good_row(reading="14.5")), tokens[TESTER], name="../../../escape.csv")
    assert reply.status == 201
    assert reply.json()["file_name"] == "../../../escape.csv"  # shown, as sent
    assert not (intake.home.parent / "escape.csv").exists()
    stored = {p.name for p in IntakeStore(intake.home).sheets_dir.iterdir()}
    assert f"{reply.json()['sha256']}.csv" in stored and all(".." not in name for name in stored)


def test_the_cli_prints_the_verdict_as_a_table(intake: Server, tokens, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_bytes(sheet(good_row(reading="15.5"), good_row(reading="999")))
    url = f"http://127.0.0.1:{intake.port}"
    rejected = run_cli("upload", str(bad), "--url", url, "--token", tokens[TESTER], home=intake.home)
    assert rejected.returncode == 1
    assert "rejected (422)" in rejected.output and "    3  reading" in rejected.output
    good = tmp_path / "good.csv"
    good.write_bytes(sheet(good_row(reading="15.5")))
    accepted = run_cli("upload", str(good), "--url", url, "--token", tokens[TESTER], "--json", home=intake.home)
    assert accepted.returncode == 0 and json.loads(accepted.output)["http_status"] == 201


def test_no_token_is_ever_written_to_the_intakes_output_or_state(intake: Server, tokens):
    accepted, refused = tokens[TESTER], tokens["Former Tester"]
    assert upload(intake, sheet(good_row(reading="16.5")), accepted).status == 201
    assert upload(intake, sheet(good_row(reading="999")), accepted).status == 422
    assert upload(intake, sheet(good_row(reading="16.5")), refused).status == 401
    for header in (f"Basic {accepted}", accepted, f"Bearer {accepted} {accepted}"):
        assert intake.get("/api/intake/receipts", {"Authorization": header}).status == 401
    # A NUL in a header is refused by the HTTP parser itself, which logs the bad request.
    assert intake.get("/api/intake/receipts", {"Authorization": f"Bearer {accepted}\x00"}).status == 400
    assert intake.get(f"/api/intake/receipts?token={accepted}").status == 401
    written = [intake_log(intake.home).read_bytes()]
    written += [p.read_bytes() for p in (intake.home / "intake").rglob("*") if p.is_file()]
    for token in (accepted, refused):
        assert not any(token.encode() in blob for blob in written)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "intake.example.org"])
def test_the_intake_refuses_an_interface_other_machines_reach_without_the_flag(host: str, tmp_path):
    refused = run_cli("intake", "--host", host, "--port", "1", home=tmp_path / "home")
    assert refused.returncode == 2
    assert "--allow-public" in refused.output and "TLS" in refused.output


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("10.0.0.1", False),
        ("example.org", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool):
    assert is_loopback(host) is loopback


def test_testers_add_prints_the_token_last_and_stores_only_its_hash(tmp_path):
    home = tmp_path / "home"
    added = run_cli("testers", "add", "Harpreet Kaur", home=home)
    token = added.output.strip().splitlines()[-1]
    assert added.returncode == 0 and len(token) >= 40
    assert IntakeStore(home).authenticate(token) == "Harpreet Kaur"
    assert token.encode() not in (home / "intake" / "intake.sqlite3").read_bytes()
    assert "Harpreet Kaur" in run_cli("testers", "list", home=home).output
    assert run_cli("testers", "revoke", "Harpreet Kaur", home=home).returncode == 0
    assert IntakeStore(home).authenticate(token) is None
    assert "revoked" in run_cli("testers", "list", home=home).output


# Tester data: kept once receipted, refused clearly when it cannot be kept


def test_an_accepted_sheet_survives_the_intake_killed_right_after_its_201(intake_home: Path, tokens):
    content = sheet(good_row(reading="14.2"), good_row(sample=2, reading="14.4"))
    with serving(intake_home, command="intake", ready="/") as doomed:
        accepted = upload(doomed, content, tokens[TESTER])
        doomed.process.send_signal(signal.SIGKILL)
        doomed.process.wait()
    assert accepted.status == 201
    store = IntakeStore(intake_home)
    receipt = store.receipt(accepted.json()["id"])
    assert receipt is not None and store.sheet_path(receipt).read_bytes() == content
    with serving(intake_home, command="intake", ready="/") as restarted:
        assert restarted.get(f"/api/intake/receipts/{receipt.id}", bearer(tokens[TESTER])).status == 200


# A small tmpfs over the sheets folder, in a user and mount namespace of the intake's own:
# no privileges needed, and nothing outside the namespace sees it.
SHEETS_FULL = 'mount -t tmpfs -o size=8k tmpfs "$1" && { cat /dev/zero > "$1/filler" 2>/dev/null; true; }'
SHEETS_READ_ONLY = 'mount -t tmpfs -o ro,size=8k tmpfs "$1"'


@contextmanager
def intake_over_mounted_sheets(home: Path, mount: str) -> Iterator[Server]:
    if subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"], check=False).returncode:
        pytest.skip("this machine allows no user namespaces (unshare), so a full or read-only disk cannot be made")
    port = free_port()
    script = f'{mount} && exec "$2" -m reuse_data.cli intake --port "$3"'
    sheets = IntakeStore(home).sheets_dir
    argv = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, "sh", str(sheets), sys.executable]
    env = home_environment(home)
    with running([*argv, str(port)], port, "/", env) as process:
        yield Server(port, home, process)


@pytest.mark.parametrize(("mount", "status"), [(SHEETS_FULL, 507), (SHEETS_READ_ONLY, 503)], ids=["full", "read-only"])
def test_a_full_or_read_only_disk_gets_a_clear_refusal_and_no_receipt(
    intake: Server, intake_home: Path, tokens, mount: str, status: int
):
    content = sheet(good_row(reading=f"{status / 40:.1f}"))
    with intake_over_mounted_sheets(intake_home, mount) as cramped:
        refused = upload(cramped, content, tokens[TESTER])
        assert refused.status == status, refused.body[:500]
        assert refused.headers["content-type"] == "application/problem+json"
        assert "no receipt" in refused.json()["detail"]
        assert cramped.get("/api/intake/receipts", bearer(tokens[TESTER])).status == 200  # reads still work
    store = IntakeStore(intake_home)
    assert store.receipt_by_sha256(hashlib.sha256(content).hexdigest()) is None
    assert upload(intake, content, tokens[TESTER]).status == 201  # nothing lost: the same sheet, once there is room


# Into the pipeline: upload -> sensor -> build -> published snapshot -> the public API


def tick_command(home: Path, launch: bool, environ: dict[str, str] | None = None) -> dict:
    """Arguments for subprocess: one sensor tick (and with ``launch``, the build it asks for) over ``home``."""
    env = {**home_environment(home), **(environ or {})}
    argv = [sys.executable, "-m", "tests.api.intake_tick", *(["--launch"] if launch else [])]
    return {"args": argv, "cwd": PROJECT_ROOT, "env": env}


def sensor_tick(home: Path, launch: bool = False, environ: dict[str, str] | None = None) -> dict:
    completed = subprocess.run(**tick_command(home, launch, environ), capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])


def bench_slot(server: Server) -> dict:
    rows = server.get(f"/api/public/bench.jsonl?product={SLOT[0]}&protocol={SLOT[1]}").body.splitlines()
    (row,) = [json.loads(line) for line in rows]
    return row


def product(server: Server) -> dict:
    (record,) = [p for p in server.get("/api/public/products.json").json()["products"] if p["product_slug"] == SLOT[0]]
    return record


def test_an_accepted_sheet_goes_live_and_a_withdrawn_one_becomes_retest(demo_home: Path, tmp_path):
    home = copy_home(demo_home, tmp_path / "home")
    token = IntakeStore(home).add_tester(TESTER)
    with serving(home) as public:
        before_slot, before_product = bench_slot(public), product(public)
        assert before_slot["status"] == "pending" and before_slot["value"] is None
        assert sensor_tick(home) == {"requested": False, "skip": "every intake receipt is published"}

        with serving(home, command="intake", ready="/") as intake:
            accepted = upload(intake, sheet(good_row(reading="11.5"), good_row(sample=2, reading="12.0")), token)
        assert accepted.status == 201
        receipt = accepted.json()["id"]

        # The intake is gone (as after a crash) before anything was ingested: the sensor still
        # sees the receipt, and asks again on the next tick while no build has published it.
        assert sensor_tick(home)["requested"] and sensor_tick(home)["requested"]
        tick = sensor_tick(home, launch=True)
        assert tick["published"], tick
        assert sensor_tick(home)["requested"] is False
        # Only what an uploaded sheet changes is built: the readings, what depends on them, the publish.
        assert {"raw/bench_readings", "staging/stg_bench_readings", "marts/claims", "published/snapshot"} <= set(
            tick["selection"]
        )
        assert not {"raw/products", "staging/stg_answers", "marts/people"} & set(tick["selection"])

        public.wait_for_version(tick["published"])
        live = bench_slot(public)
        assert (live["status"], live["value"], live["sample_size"]) == ("measured", 11.75, 2)
        assert (live["tester"], live["tested_on"], live["receipt"]) == (TESTER, "2026-11-20", receipt)
        after_product = product(public)
        assert after_product["tested_slots"] == before_product["tested_slots"] + 1
        assert after_product["overall_rating"] != before_product["overall_rating"]
        newest = public.get("/api/public/changes.json").json()["changes"][0]
        assert newest["url"].endswith(f"/products/{SLOT[0]}")

        withdrawn = run_cli("withdraw", receipt, "--reason", "thermometer off by 3 °C", home=home)
        assert withdrawn.returncode == 0, withdrawn.output
        # A warehouse not built from the dbt project as it is now gets a full build, every model refreshed.
        (marker,) = (home / "warehouse").glob("*.dbt-project-key")
        built_from = marker.read_text()
        marker.write_text("a project this warehouse was not built from\n")
        assert sensor_tick(home)["selection"] is None
        marker.write_text(built_from)
        tick = sensor_tick(home, launch=True)
        assert tick["published"], tick
        public.wait_for_version(tick["published"])
        retest = bench_slot(public)
        assert (retest["status"], retest["value"]) == ("retest", None)
        assert product(public)["overall_rating"] == before_product["overall_rating"]
    assert IntakeStore(home).receipt(receipt).status == "withdrawn"
    assert IntakeStore(home).sheet_path(IntakeStore(home).receipt(receipt)).exists()  # nothing deleted


def runs_tagged(home: Path, tag: str) -> list:
    from dagster import DagsterInstance, RunsFilter

    with DagsterInstance.from_config(str(home / "dagster")) as instance:
        return list(instance.get_runs(filters=RunsFilter(tags={tag: "true"})))


def materialisations_so_far(home: Path) -> int:
    """Assets materialised by the newest run in the home's Dagster instance (0 before any run)."""
    from dagster import DagsterEventType, DagsterInstance

    with DagsterInstance.from_config(str(home / "dagster")) as instance:
        runs = instance.get_runs(limit=1)
        if not runs:
            return 0
        return len(instance.get_records_for_run(runs[0].run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION).records)


def test_a_build_killed_midway_publishes_nothing_and_the_next_tick_builds_again(demo_home: Path, tmp_path):
    home = copy_home(demo_home, tmp_path / "home")
    token = IntakeStore(home).add_tester(TESTER)
    with serving(home, command="intake", ready="/") as intake:
        receipt = upload(intake, sheet(good_row(reading="10.5")), token).json()["id"]
    published_before = current_version(home / "snapshots")

    build = subprocess.Popen(**tick_command(home, launch=True), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while materialisations_so_far(home) < 5:  # well into the build: raw data in, dbt models being built
        assert build.poll() is None and time.monotonic() < deadline, "the build ended before it could be killed"
        time.sleep(0.2)
    build.send_signal(signal.SIGKILL)  # as a power cut would: no cleanup of any kind
    build.wait()

    assert current_version(home / "snapshots") == published_before  # nothing half-published
    assert IntakeStore(home).unpublished()[0].id == receipt  # and nothing lost
    # The dead run looks alive until it has been silent for REUSE_DATA_STALE_BUILD_SECONDS.
    assert sensor_tick(home)["skip"] == "a build is already running; the next tick looks again"
    tick = sensor_tick(home, launch=True, environ={"REUSE_DATA_STALE_BUILD_SECONDS": "1"})
    assert tick["requested"] and tick["published"] not in (None, published_before), tick
    assert IntakeStore(home).receipt(receipt).published
    assert [run.status.value for run in runs_tagged(home, ABANDONED_TAG)] == ["FAILURE"]  # the killed one
    snapshot = load_snapshot(home / "snapshots", tick["published"])
    try:
        query = "SELECT value, status FROM bench_measurements WHERE receipt = ?"
        assert snapshot.connection.execute(query, [receipt]).fetchall() == [(10.5, "measured")]
    finally:
        snapshot.connection.close()


def test_under_the_dagster_daemon_an_upload_goes_live_without_anyone_asking(demo_home: Path, tmp_path):
    """The deployment as `make dev` runs it: the daemon ticks the sensor and launches the build in its own process."""
    home = copy_home(demo_home, tmp_path / "home")
    token = IntakeStore(home).add_tester(TESTER)
    with serving(home, command="intake", ready="/") as intake:
        receipt = upload(intake, sheet(good_row(reading="9.5")), token).json()["id"]
    env = home_environment(home)
    log = tmp_path / "daemon.log"
    with dagster_daemon(env, log) as daemon:
        deadline = time.monotonic() + 300
        while not IntakeStore(home).receipt(receipt).published:
            failed = daemon.poll() is not None or time.monotonic() > deadline
            assert not failed, f"the daemon did not publish the sheet:\n{log.read_text()[-4000:]}"
            time.sleep(1)
    with serving(home) as public:
        assert bench_slot(public)["receipt"] == receipt and bench_slot(public)["value"] == 9.5
    # No webserver was there to ask, so the sensor's run built it; the receipt still names that run.
    build = IntakeStore(home).receipt(receipt).build
    assert build is not None and build.started_at is not None and build.requested_at <= build.started_at


def test_an_accepted_sheet_asks_dagster_for_its_build_at_once(demo_home: Path, tmp_path):
    """The intake beside Dagster's webserver: the upload itself launches the build, through
    Dagster's GraphQL API, and the receipt names the run; an intake over another home pointed at
    the same Dagster launches nothing there. The daemon, started after the upload (so that no
    sensor tick can launch first), takes the run from the queue and publishes the sheet."""
    home, other = copy_home(demo_home, tmp_path / "home"), copy_home(demo_home, tmp_path / "other")
    token, other_token = IntakeStore(home).add_tester(TESTER), IntakeStore(other).add_tester(TESTER)
    log, env = tmp_path / "dagster.log", home_environment(home)
    with dagster_webserver(env, log, daemon=False) as dagster_url:
        environ = {"REUSE_DATA_DAGSTER_URL": dagster_url}
        with serving(other, command="intake", ready="/", environ=environ) as stranger:
            refused = upload(stranger, sheet(good_row(reading="8.5")), other_token)
        assert refused.status == 201 and refused.json()["build"] is None
        assert "next build" in refused.json()["going_live"]["message"]
        with serving(home, command="intake", ready="/", environ=environ) as intake:
            accepted = upload(intake, sheet(good_row(reading="9.5")), token)
            assert accepted.status == 201, accepted.body
            receipt, build = accepted.json()["id"], accepted.json()["build"]
            assert build is not None and build["started_at"] is None, build  # on the queue: no daemon yet
            assert f"Dagster run {build['run_id']}" in accepted.json()["going_live"]["message"]
            with dagster_daemon(env, daemon_log := tmp_path / "daemon.log"):
                wait_for("the sheet published", lambda: IntakeStore(home).receipt(receipt).published, 300, daemon_log)
            seen = intake.get(f"/api/intake/receipts/{receipt}", bearer(token)).json()
    assert seen["build"]["run_id"] == build["run_id"] and seen["build"]["started_at"] >= build["requested_at"]
    assert IntakeStore(other).receipts()[0].build is None
    with DagsterInstance.from_config(str(home_layout(home).dagster_home)) as instance:
        run = instance.get_run_by_id(build["run_id"])
        runs = instance.get_runs(RunsFilter(tags={INTAKE_STATE_TAG: run.tags[INTAKE_STATE_TAG]}))
    assert run.tags[REQUESTED_BY_TAG] == "intake"
    assert [found.run_id for found in runs] == [build["run_id"]], "the sensor launched a second build of the same sheet"
    with serving(home) as public:
        assert bench_slot(public)["receipt"] == receipt and bench_slot(public)["value"] == 9.5


def test_an_intake_build_tests_the_slots_it_restaged_and_a_full_build_every_row(demo_home: Path, tmp_path):
    """The bench tables' dbt tests read what the build changed: a fault planted in a slot no sheet
    touches passes the intake's build, which tests the restaged slot alone, and fails the next
    full build, which tests every row."""
    home = copy_home(demo_home, tmp_path / "home")
    warehouse = home_layout(home).warehouse_path
    with duckdb.connect(str(warehouse)) as connection:
        # A reading held twice in a slot the build below does not restage (not the sheet's, nor one of
        # a raw sheet whose every row is a doubled export, which staging restages in every build):
        # the unique test's to find.
        [planted] = connection.execute(
            "SELECT product_slug, protocol_slug FROM staging.stg_bench_readings "
            "WHERE (product_slug, protocol_slug) <> (?, ?) AND (product_slug, protocol_slug) NOT IN ("
            "  SELECT lower(trim(product)), lower(trim(protocol)) FROM raw.bench_readings"
            "  WHERE _source_file NOT IN (SELECT source_file FROM staging.stg_bench_readings)) LIMIT 1",
            list(SLOT),
        ).fetchall()
        connection.execute(
            "INSERT INTO staging.stg_bench_readings SELECT * FROM staging.stg_bench_readings "
            "WHERE product_slug = ? AND protocol_slug = ? LIMIT 1",
            list(planted),
        )
    token = IntakeStore(home).add_tester(TESTER)
    with serving(home, command="intake", ready="/", environ={"REUSE_DATA_DAGSTER_URL": "off"}) as intake:
        assert upload(intake, sheet(good_row(reading="10.5")), token).status == 201
    tick = sensor_tick(home, launch=True)
    assert tick["published"] and not tick["errors"], tick
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        # Scoped while the build ran, and every row again after it, for dbt run by hand.
        assert connection.execute("SELECT every_row FROM main.dbt_test_scope").fetchall() == [(True,)]
        restaged = connection.execute(
            "SELECT DISTINCT product_slug, protocol_slug FROM intermediate.int_slot_readings "
            "WHERE staged_at = (SELECT max(staged_at) FROM intermediate.int_slot_readings)"
        ).fetchall()
    # The sheet's slot alone: not the planted one, nor the demo's sheets that are wholly doubled
    # exports (they leave no row of their own, yet are known as staged).
    assert restaged == [SLOT], restaged

    full = run_cli("build", home=home)
    assert full.returncode != 0, full.output
    assert "unique_stg_bench_readings_reading_id" in full.output, full.output[-3000:]
