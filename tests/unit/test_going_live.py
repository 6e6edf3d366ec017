"""When a receipt says its readings go live: one build after its last change, late past that."""

from __future__ import annotations

import dataclasses
import datetime as dt

from intake.going_live import BENCH_BUILD, SENSOR_TICK, going_live
from intake.store import Build, Receipt

RECEIVED = dt.datetime(2026, 12, 7, 9, 30, tzinfo=dt.UTC)
EXPECTED = RECEIVED + SENSOR_TICK + BENCH_BUILD
ACCEPTED = Receipt(
    id="rcpt-0123456789abcdef0123",
    sha256="0123456789abcdef" * 4,
    file_name="session.csv",
    suffix=".csv",
    tester="Eleni Papadaki",
    received_at="2026-12-07T09:30:00Z",
    rows_accepted=2,
    slots=("steel-flask:heat-retention",),
    withdrawn_at=None,
    withdrawal_reason=None,
    published_status=None,
)


def test_an_accepted_sheet_is_expected_one_build_after_its_upload():
    told = going_live(ACCEPTED, RECEIVED + dt.timedelta(seconds=1))
    assert told["expected_by"] == "2026-12-07T09:32:05Z" and told["overdue"] is False
    assert told["message"].startswith("It goes live with the next build, expected by 2026-12-07 09:32 UTC")


def test_past_the_expected_time_it_says_it_is_late_and_what_may_hold_it():
    told = going_live(ACCEPTED, EXPECTED + dt.timedelta(seconds=1))
    assert told["overdue"] is True and told["expected_by"] == "2026-12-07T09:32:05Z"
    assert "Not live yet" in told["message"] and "reuse-data build" in told["message"]
    assert going_live(ACCEPTED, EXPECTED)["overdue"] is False  # on the minute, still on time


def test_a_withdrawal_is_expected_one_build_after_it_was_made():
    withdrawn = dataclasses.replace(
        ACCEPTED, withdrawn_at="2026-12-08T10:00:00Z", withdrawal_reason="miscalibrated", published_status="accepted"
    )
    told = going_live(withdrawn, dt.datetime(2026, 12, 8, 10, 1, tzinfo=dt.UTC))
    assert told["expected_by"] == "2026-12-08T10:02:05Z" and told["overdue"] is False
    assert told["message"].startswith("Its withdrawal goes live with the next build")


def test_a_published_receipt_promises_nothing_more():
    live = dataclasses.replace(ACCEPTED, published_status="accepted")
    assert going_live(live, EXPECTED + dt.timedelta(days=3)) == {
        "expected_by": None,
        "overdue": False,
        "message": "Live in the newest published release.",
    }


def test_once_its_build_is_launched_the_receipt_names_it_and_counts_from_its_start():
    queued = dataclasses.replace(ACCEPTED, build=Build("5c0e-run", "2026-12-07T09:30:01Z", None))
    told = going_live(queued, RECEIVED + dt.timedelta(seconds=2))
    assert told["expected_by"] == "2026-12-07T09:32:05Z"  # not started yet: counted from the upload
    assert "Dagster run 5c0e-run) is launched" in told["message"]
    started = dataclasses.replace(ACCEPTED, build=Build("5c0e-run", "2026-12-07T09:30:01Z", "2026-12-07T09:41:00Z"))
    told = going_live(started, dt.datetime(2026, 12, 7, 9, 42, tzinfo=dt.UTC))
    assert told["expected_by"] == "2026-12-07T09:43:00Z" and told["overdue"] is False  # a build after its start
    assert "Dagster run 5c0e-run) started at 2026-12-07 09:41 UTC" in told["message"]
