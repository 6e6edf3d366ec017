"""What an operator does to a live intake: rotate a tester's token, and back the home up and restore
it into a new one. Real `reuse-data` commands against a real `reuse-data intake` on loopback."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ask.decision.verdict import Refusal
from ask.model.store import ModelStore, TrainedModel
from intake.store import IntakeStore
from reuse_data.backup import BACKUP_MANIFEST
from serve.operations.question_log import Nearest, QuestionLog, record_question
from tests.conftest import run_cli
from tests.support.harness import Server, copy_home, home_layout, serving
from tests.support.intake_sheets import TESTER, good_row, sheet, upload

ROTATED = "Jordan Ellis"


@pytest.fixture(scope="module")
def home(demo_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_home(demo_home, tmp_path_factory.mktemp("operations") / "home")


@pytest.fixture(scope="module")
def models(home: Path) -> Path:
    """The home's ask model store, of its own (REUSE_DATA_ASK_MODELS), holding one training."""
    folder = home.parent / "ask-models"
    ModelStore(folder).keep(TrainedModel(b"a delta", {"key": "library-key", "model_sha256": "0" * 64}))
    return folder


def added_token(home: Path, name: str) -> str:
    """`reuse-data testers add NAME` as an operator runs it: the token is its last line."""
    result = run_cli("testers", "add", name, home=home)
    assert result.returncode == 0, result.output
    return result.output.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def intake(home: Path) -> Iterator[Server]:
    with serving(home, command="intake", ready="/", log=home.parent / "intake.log") as running:
        yield running


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def receipt_ids(server: Server, token: str) -> list[str]:
    reply = server.get("/api/intake/receipts", bearer(token))
    assert reply.status == 200, reply.body
    return [receipt["id"] for receipt in reply.json()["receipts"]]


def test_a_rotated_token_is_refused_and_the_new_one_keeps_the_testers_history(intake: Server, home: Path):
    old = added_token(home, ROTATED)
    sent = upload(intake, sheet(good_row(reading="14.1")), old)
    assert sent.status == 201, sent.body
    added_at = {tester.name: tester.created_at for tester in IntakeStore(home).testers()}[ROTATED]

    rotated = run_cli("testers", "rotate", ROTATED, home=home)
    assert rotated.returncode == 0, rotated.output
    new = rotated.output.strip().splitlines()[-1]
    assert new != old and "old token no longer works" in rotated.output

    refused = intake.get("/api/intake/receipts", bearer(old))
    assert refused.status == 401 and refused.headers["content-type"] == "application/problem+json"
    assert upload(intake, sheet(good_row(reading="14.2")), old).status == 401
    assert receipt_ids(intake, new) == [sent.json()["id"]]  # the same tester, their receipts theirs still
    assert upload(intake, sheet(good_row(reading="14.3")), new).json()["tester"] == ROTATED
    (tester,) = [tester for tester in IntakeStore(home).testers() if tester.name == ROTATED]
    assert tester.active and tester.created_at == added_at


def test_rotating_a_revoked_or_unknown_tester_says_what_to_do(home: Path, intake: Server):
    added_token(home, "Former Tester")
    assert run_cli("testers", "revoke", "Former Tester", home=home).returncode == 0
    revoked = run_cli("testers", "rotate", "Former Tester", home=home)
    assert revoked.returncode == 2 and "`reuse-data testers add`" in revoked.output
    unknown = run_cli("testers", "rotate", "Nobody", home=home)
    assert unknown.returncode == 2 and "`reuse-data testers list`" in unknown.output


def ask_a_question(home: Path) -> Path:
    """One question kept as a server keeps it, in the home's question log; its day file."""
    folder = home_layout(home).questions_dir
    log = QuestionLog(folder)
    answer = {"query": "does the cafetière keep coffee hot?", "language": "en", "results": []}
    record_question(log, answer, Nearest("guide-keeping-warm", 0.41, Refusal.BELOW_THRESHOLD), "20261122T081502123Z")
    log.close()
    (day_file,) = folder.glob("*.jsonl")
    return day_file


def test_a_backup_of_a_live_intake_restores_into_a_new_home(intake: Server, home: Path, models: Path, tmp_path: Path):
    token = added_token(home, TESTER)
    sent = upload(intake, sheet(good_row(reading="12.6")), token)
    assert sent.status == 201, sent.body
    day_file = ask_a_question(home)
    whole_lines = day_file.read_bytes()
    with day_file.open("ab") as log:
        log.write(b'{"time": "2026-12-07T13:')  # a line a server is still appending
    backup = tmp_path / "backup"

    made = run_cli("backup", str(backup), home=home, environ={"REUSE_DATA_ASK_MODELS": str(models)})
    assert made.returncode == 0, made.output
    assert (backup / BACKUP_MANIFEST).is_file() and not list(tmp_path.glob(".backup*"))  # renamed into place
    again = run_cli("backup", str(backup), home=home, environ={"REUSE_DATA_ASK_MODELS": str(models)})
    assert again.returncode == 2 and "name a new folder" in again.output

    new_home, new_models = tmp_path / "new" / "home", tmp_path / "new" / "ask-models"
    environ = {"REUSE_DATA_ASK_MODELS": str(new_models)}
    restored = run_cli("restore", str(backup), home=new_home, environ=environ)
    assert restored.returncode == 0, restored.output

    assert (home_layout(new_home).questions_dir / day_file.name).read_bytes() == whole_lines
    assert ModelStore(new_models).training("library-key").delta == b"a delta"
    with serving(new_home, command="intake", ready="/") as restored_intake:
        assert sent.json()["id"] in receipt_ids(restored_intake, token)  # the token authenticates there
        sheet_path = IntakeStore(new_home).sheet_path(IntakeStore(new_home).receipt(sent.json()["id"]))
        assert sheet_path.read_bytes() == sheet(good_row(reading="12.6"))

    over = run_cli("restore", str(backup), home=new_home, environ=environ)
    assert over.returncode == 2 and "--force" in over.output
    assert run_cli("restore", str(backup), "--force", home=new_home, environ=environ).returncode == 0


def test_a_damaged_backup_restores_nothing(intake: Server, home: Path, models: Path, tmp_path: Path):
    backup = tmp_path / "backup"
    assert run_cli("backup", str(backup), home=home, environ={"REUSE_DATA_ASK_MODELS": str(models)}).returncode == 0
    damaged = backup / "intake" / "intake.sqlite3"
    os.chmod(damaged, 0o644)
    with damaged.open("r+b") as handle:
        handle.seek(200)
        handle.write(b"\xff")

    new_home = tmp_path / "new" / "home"
    environ = {"REUSE_DATA_ASK_MODELS": str(tmp_path / "new" / "ask-models")}
    refused = run_cli("restore", str(backup), home=new_home, environ=environ)
    assert refused.returncode == 2 and "intake/intake.sqlite3 differs from its sha256" in refused.output
    assert not new_home.exists() or not any(new_home.iterdir())
