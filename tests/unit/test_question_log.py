"""The question log: records without who asked, a file per day and process, whole lines; a build
keeps the days of the retention, reads the records into DuckDB and counts questions by their
normalised text."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
from pathlib import Path

import duckdb
import pytest

from ask.decision.verdict import Refusal
from foundations.settings import SettingsError, load_settings
from serve.operations.question_log import Nearest, QuestionLog, answered, record_question
from warehouse.asked_questions import (
    RECORD_FIELDS,
    drop_expired,
    load_asked_questions,
    normalise_question,
    record_file_name,
)

RELEASE = "20261126T000000000Z"
ANSWERED = {
    "query": "Which flask keeps tea hot?",
    "language": "en",
    "results": [
        {"url": "https://example.org/guides/best-insulated-bottles", "confidence": 1.0},
        {"url": "https://example.org/guides/best-travel-mugs", "confidence": 0.42},
    ],
}
UNANSWERED = {"query": "what is the weather in Paris", "language": "en", "results": []}
# The entry that came closest to each: it answered the first, and fell short for the second.
CITED = Nearest("insulated-bottles-hot-tea-workday", 0.93, None)
SHORT = Nearest("travel-mugs-04", 0.21, Refusal.BELOW_THRESHOLD)


def records_in(folder: Path) -> list[dict]:
    return [json.loads(line) for path in sorted(folder.rglob("*.jsonl")) for line in path.read_text().splitlines()]


def test_a_record_holds_the_question_and_its_answer_and_nothing_about_who_asked(tmp_path: Path):
    async def ask_twice() -> None:
        log = QuestionLog(tmp_path)
        record_question(log, ANSWERED, CITED, RELEASE)
        record_question(log, UNANSWERED, SHORT, RELEASE)
        assert records_in(tmp_path) == []  # gathered, not yet written: the request paid no write
        log.close()

    asyncio.run(ask_twice())
    first, second = records_in(tmp_path)
    assert list(first) == list(RECORD_FIELDS)  # every field, and no other (no address, no agent)
    assert first["question"] == "Which flask keeps tea hot?" and first["answered"] is True
    assert first["entry"] == CITED.entry and first["probability"] == 0.93 and first["refusal"] is None
    assert first["release"] == RELEASE and first["language"] == "en"
    assert dt.datetime.fromisoformat(first["time"]).tzinfo == dt.UTC
    assert second["answered"] is False  # with the entry that came closest, and why it fell short
    assert (second["entry"], second["probability"], second["refusal"]) == (SHORT.entry, 0.21, "below_threshold")
    (written,) = tmp_path.iterdir()
    assert written.name == record_file_name(dt.datetime.now(dt.UTC).date(), os.getpid())


def test_answered_means_an_entry_was_cited_rather_than_the_fallback():
    assert answered(ANSWERED) and not answered(UNANSWERED)


def test_the_log_off_records_nothing(tmp_path: Path):
    record_question(None, ANSWERED, CITED, RELEASE)
    assert not any(tmp_path.iterdir())


def test_each_day_goes_to_its_own_file_in_whole_lines(tmp_path: Path):
    log = QuestionLog(tmp_path)
    long_question = "ਥਰਮਸ " * 199  # near the length limit, three bytes a character: cut to fit one write
    for day in ("2026-11-25", "2026-11-26"):
        for n in range(40):
            fields = {name: None for name in RECORD_FIELDS}
            question = long_question if n == 0 else f"question {n}"
            log.add_record({**fields, "time": f"{day}T23:59:59.000Z", "question": question, "answered": False})
    log.close()
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names == [f"2026-11-25-{os.getpid()}.jsonl", f"2026-11-26-{os.getpid()}.jsonl"]
    for path in tmp_path.iterdir():
        records = [json.loads(line) for line in path.read_text().splitlines()]
        assert len(records) == 40 and all(r["time"].startswith(path.name[:10]) for r in records)
        assert long_question.startswith(records[0]["question"]) and len(records[0]["question"]) > 100


@pytest.mark.parametrize(
    ("asked", "normalised"),
    [
        ("  Which  FLASK keeps tea hot?? ", "which flask keeps tea hot"),
        ("which flask keeps tea hot", "which flask keeps tea hot"),
        ("¿Qué termo\tes mejor?", "qué termo es mejor"),
        ("哪个保温杯最好？", "哪个保温杯最好"),  # full-width question mark folded (NFKC), then trimmed
        ("ＡＢＣ bottle", "abc bottle"),
        ("what's a 1.5 l flask...", "what's a 1.5 l flask"),  # punctuation inside stays
        ("Straße", "strasse"),
        ("?!", ""),
    ],
)
def test_questions_count_as_the_same_by_their_normalised_text(asked: str, normalised: str):
    assert normalise_question(asked) == normalised


def test_days_older_than_the_retention_are_dropped_whole_at_any_depth(tmp_path: Path):
    today = dt.date(2026, 11, 26)
    replica = tmp_path / "replica-2"
    replica.mkdir()
    files = {
        "expired": tmp_path / record_file_name(today - dt.timedelta(days=91), 100),
        "expired at a replica": replica / record_file_name(today - dt.timedelta(days=120), 7),
        "last day kept": tmp_path / record_file_name(today - dt.timedelta(days=90), 100),
        "today at a replica": replica / record_file_name(today, 7),
        "not a record file": tmp_path / "notes.txt",
    }
    for path in files.values():
        path.write_text("{}\n")
    kept = drop_expired(tmp_path, 90, today)
    assert kept == [files["last day kept"], files["today at a replica"]]
    assert not files["expired"].exists() and not files["expired at a replica"].exists()
    assert files["not a record file"].exists()
    assert drop_expired(tmp_path / "missing", 90, today) == []


def test_the_records_load_into_the_raw_table_with_their_normalised_text(tmp_path: Path):
    folder = tmp_path / "questions"
    (folder / "replica-2").mkdir(parents=True)
    fields = {
        "language": "en",
        "answered": False,
        "entry": SHORT.entry,
        "probability": 0.21,
        "refusal": Refusal.BELOW_THRESHOLD,
    }
    fields["release"] = RELEASE
    lines = [
        json.dumps({**fields, "time": "2026-11-26T10:00:00.000Z", "question": "Which flask?"}),
        json.dumps({**fields, "time": "2026-11-26T11:00:00.500Z", "question": "which  FLASK"}),
    ]
    here = folder / record_file_name(dt.date(2026, 11, 26), 1)
    here.write_text("\n".join(lines) + "\n")
    there = folder / "replica-2" / record_file_name(dt.date(2026, 11, 26), 2)
    there.write_text(lines[0] + '\n{"time": "2026-11-26T12:0')  # a server killed mid-line
    with duckdb.connect() as connection:
        assert load_asked_questions(connection, folder, [here, there]) == 3
        rows = connection.execute(
            "SELECT question_normalised, asked_at, _source_file FROM raw.asked_questions ORDER BY ALL"
        ).fetchall()
        nearest = connection.execute("SELECT DISTINCT entry, probability, refusal FROM raw.asked_questions").fetchall()
        assert nearest == [(SHORT.entry, 0.21, Refusal.BELOW_THRESHOLD)]
        assert {row[0] for row in rows} == {"which flask"}
        assert rows[0][1] == dt.datetime(2026, 11, 26, 10, 0)
        assert {row[2] for row in rows} == {here.name, f"replica-2/{there.name}"}
        assert load_asked_questions(connection, folder, []) == 0  # no record yet: an empty table


def test_the_settings_turn_the_log_off_and_set_the_retention():
    defaults = load_settings({})
    assert defaults.question_log and defaults.question_retention_days == 90
    chosen = load_settings({"REUSE_DATA_QUESTION_LOG": "off", "REUSE_DATA_QUESTION_RETENTION_DAYS": "30"})
    assert not chosen.question_log and chosen.question_retention_days == 30
    with pytest.raises(SettingsError, match="REUSE_DATA_QUESTION_RETENTION_DAYS must be a whole number"):
        load_settings({"REUSE_DATA_QUESTION_RETENTION_DAYS": "ninety"})
