"""When a receipt's readings are expected to be live, told on every receipt the intake shows.

No build runs on a timer for the intake: the intake asks Dagster for a build of the bench
readings and what depends on them the moment it accepts or withdraws a sheet
(``intake.build_request``), and otherwise the pipeline's sensor (under the Dagster daemon) starts
one within seconds; that build publishes it. Once its run has started, the receipt counts from
the run's start. So a sheet is expected live one
such build after it was accepted (or withdrawn). A build already running is finished first, and
without a daemon nothing builds by itself until someone runs ``reuse-data build``: past the
expected time, a receipt says it is late and what may hold it, rather than promise again.
"""

from __future__ import annotations

import datetime as dt

from intake.store import Receipt, iso_utc

SENSOR_TICK = dt.timedelta(seconds=5)
"""How soon the sensor sees a change: dagster-daemon evaluates sensors on a 5 s loop at best."""
BENCH_BUILD = dt.timedelta(minutes=2)
"""How long a build of the bench readings and what depends on them takes, rounded up: 40 s for
the demo's library on two cores, from the sensor's tick to the published release (one tick of
`tests/api/intake_tick.py --launch`, its process starting included)."""


def changed_at(receipt: Receipt) -> dt.datetime:
    """When the receipt last changed: its withdrawal, or its upload."""
    return dt.datetime.fromisoformat(receipt.withdrawn_at or receipt.received_at)


def expected_live(receipt: Receipt) -> dt.datetime:
    """When the build of the receipt's last change is expected to have published it: a build
    after its start; otherwise one sensor tick and a build after the change."""
    if receipt.build and receipt.build.started_at:
        return dt.datetime.fromisoformat(receipt.build.started_at) + BENCH_BUILD
    return changed_at(receipt) + SENSOR_TICK + BENCH_BUILD


def build_said(receipt: Receipt) -> str:
    """Where its build stands, in a sentence: started, launched and queued, or not yet asked for."""
    build = receipt.build
    if build is None:
        return f"the pipeline starts a build within {SENSOR_TICK.seconds} s of a change at the intake"
    if build.started_at:
        return f"its build (Dagster run {build.run_id}) started at {_when(dt.datetime.fromisoformat(build.started_at))}"
    return f"its build (Dagster run {build.run_id}) is launched and starts once any build before it has finished"


def _when(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def going_live(receipt: Receipt, now: dt.datetime) -> dict[str, object]:
    """``expected_by`` (ISO 8601 UTC; null once live), ``overdue`` and a sentence for the tester."""
    what = "Its withdrawal" if receipt.status == "withdrawn" else "It"
    if receipt.published:
        live = "Withdrawn from" if receipt.status == "withdrawn" else "Live in"
        return {"expected_by": None, "overdue": False, "message": f"{live} the newest published release."}
    expected = expected_live(receipt)
    iso = iso_utc(expected)
    if now <= expected:
        message = (
            f"{what} goes live with the next build, expected by {_when(expected)}: {build_said(receipt)}, and a "
            f"build of the bench readings takes about {BENCH_BUILD.seconds // 60} minutes (longer when another "
            "build is running first)."
        )
        return {"expected_by": iso, "overdue": False, "message": message}
    message = (
        f"Not live yet, though expected by {_when(expected)}: no build has published it. A long build may be "
        "running, a build may have failed, or the pipeline's daemon may be stopped; tell the lab lead "
        "(`reuse-data build` publishes it). Nothing is lost meanwhile."
    )
    return {"expected_by": iso, "overdue": True, "message": message}
