"""The loop closes: a question the library cannot answer is kept, a build lists it for the editors,
an editor adds a phrasing for it to the ask_phrasings seed, and after the next build it is answered.

Real parts throughout: the demo built, served by uvicorn, asked over HTTP, built again by
`reuse-data build` from a copy of the checkout whose seed the test edits as an editor would, on an
install without PyTorch (``make install``'s): the build embeds the phrasing with the model it has,
says how far that model now lags, and publishes.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
import urllib.parse
from pathlib import Path

import duckdb

from foundations.settings import PROJECT_ROOT, load_settings
from release.local_store import current_version, open_snapshot, snapshot_path
from tests.support.harness import copy_home, home_environment, serving, without_pytorch
from warehouse.asked_questions import RECORD_FIELDS

QUESTION = "Which flask fits a bike bottle cage?"  # on topic, but no entry says it (an unanswered question)
ENTRY = "insulated-bottles-cold-summer-hike"  # the entry an editor decides answers it
CLIENT = {"User-Agent": "question-log-test-agent/1.0", "X-Forwarded-For": "203.0.113.9"}
# What an editor's checkout builds from: every package of ours, and the dbt project.
PACKAGES = sorted(init.parent.name for init in PROJECT_ROOT.glob("*/__init__.py"))
CHECKOUT_PARTS = [*(package for package in PACKAGES if package not in {"tests", "benchmarks"}), "sql"]


def ask(server, question: str) -> dict:
    reply = server.get(f"/api/public/ask.json?lang=en&q={urllib.parse.quote(question)}", headers=CLIENT)
    assert reply.status == 200, reply.body[:500]
    return reply.json()


def build(home: Path, checkout: Path = PROJECT_ROOT) -> str:
    """`reuse-data build` run from ``checkout`` (its code and its dbt project), where PyTorch cannot be imported."""
    settings = load_settings()
    environ = {
        **home_environment(home, PROJECT_ROOT / "demo"),
        **without_pytorch(home.parent, checkout),
        "REUSE_DATA_EMBEDDING_CACHE": str(settings.embedding_cache),
        "REUSE_DATA_ASK_MODELS": str(settings.ask_models),
    }
    done = subprocess.run(
        [sys.executable, "-m", "reuse_data.cli", "build"],
        cwd=checkout,
        env=environ,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    return done.stdout


def test_an_unanswered_question_is_listed_then_answered_once_an_editor_adds_a_phrasing(demo_home: Path, tmp_path: Path):
    home = copy_home(demo_home, tmp_path / "home")
    with serving(home) as server:
        for _ in range(3):  # the second and third from the memo: each counts
            assert ask(server, QUESTION)["results"] == []
        assert ask(server, "how long does a bamboo toothbrush last")["results"]

    written = b"".join(path.read_bytes() for path in (home / "questions").rglob("*.jsonl"))
    records = [json.loads(line) for line in written.splitlines()]
    assert [r["answered"] for r in records] == [False, False, False, True]
    assert all(list(record) == list(RECORD_FIELDS) for record in records)  # no field about who asked
    # Unanswered, each with the entry that came closest and why it fell short; answered, with none.
    assert {(r["refusal"], r["entry"] is not None) for r in records[:3]} <= {
        ("below_threshold", True),
        ("uncovered_topic", True),
    }
    assert all(0 <= r["probability"] <= 1 for r in records) and records[3]["refusal"] is None
    assert b"203.0.113.9" not in written and b"question-log-test-agent" not in written

    build(home)
    warehouse = load_settings({"REUSE_DATA_HOME": str(home)}).warehouse_path
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        listed = connection.execute(
            "SELECT question, times_asked, times_answered, last_answered, nearest_entry, last_refusal "
            "FROM marts.asked_questions WHERE question_normalised = 'which flask fits a bike bottle cage'"
        ).fetchall()
    assert listed == [(QUESTION, 3, 0, False, records[2]["entry"], records[2]["refusal"])]
    with (home / "reports" / "unanswered-questions.csv").open(encoding="utf-8") as exported:
        rows = list(csv.DictReader(exported))
    assert [(row["question"], row["times asked"]) for row in rows] == [(QUESTION, "3")]
    assert rows[0]["closest entry"] == records[2]["entry"] and rows[0]["why not answered"] == records[2]["refusal"]
    # The editor sees the closest entry by the id an ask_phrasings.csv row names, beside its question.
    release = duckdb.connect(str(warehouse), read_only=True)
    question_of = dict(
        release.execute(
            "SELECT scenario_slug, question.en FROM marts.recommendations "
            "UNION ALL SELECT answer_id, question.en FROM marts.answers"
        ).fetchall()
    )
    release.close()
    assert rows[0]["its question"] == question_of[records[2]["entry"]]
    printed = subprocess.run(
        [sys.executable, "-m", "reuse_data.cli", "questions", "--csv"],
        cwd=PROJECT_ROOT,
        env=home_environment(home),
        capture_output=True,
        text=True,
    )
    assert printed.returncode == 0 and QUESTION in printed.stdout, printed.stdout + printed.stderr
    store = home / "snapshots"
    with open_snapshot(snapshot_path(store, current_version(store))) as release:
        tables = {row[0] for row in release.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        (entry_url,) = release.execute("SELECT url FROM recommendations WHERE scenario_slug = ?", [ENTRY]).fetchone()
    assert not {"asked_questions", "stg_asked_questions"} & tables  # never published

    # What an editor does: add a row to sql/seeds/ask_phrasings.csv in their checkout, and build.
    checkout = tmp_path / "checkout"
    for part in CHECKOUT_PARTS:
        shutil.copytree(PROJECT_ROOT / part, checkout / part, ignore=shutil.ignore_patterns("__pycache__", "target"))
    seed = checkout / "sql" / "seeds" / "ask_phrasings.csv"
    with seed.open("a", encoding="utf-8", newline="") as phrasings:
        csv.writer(phrasings, lineterminator="\n").writerow([ENTRY, "en", QUESTION])
    output = build(home, checkout)
    # Live at this build, with the model the inputs ship, which the build says lags by this phrasing.
    assert "trained before 1 phrasing of this library" in output and "`reuse-data ask train`" in output
    assert "training step" not in output

    with serving(home) as server:
        answer = ask(server, QUESTION)
    assert answer["results"] and answer["cite"] == entry_url and answer["results"][0]["url"] == entry_url


def test_a_tiny_question_log_benchmark_measures_the_writer_and_the_memo(demo_home: Path, tmp_path: Path):
    home = copy_home(demo_home, tmp_path / "home")
    argv = [sys.executable, "-m", "benchmarks.question_log", "--records", "300", "--requests", "10", "--rounds", "1"]
    done = subprocess.run(argv, cwd=PROJECT_ROOT, env=home_environment(home), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"\| record_question, batched appends \| 300 \| [\d,]+ \| [\d.]+ \|", done.stdout), done.stdout
    for label in ("log off", "log on"):
        assert re.search(rf"\| {label} \| [\d.]+ \| [+-][\d.]+ \|", done.stdout), done.stdout
    assert not (home / "questions").exists()  # the benchmark's records went to a folder of its own
