"""page.json and changes.json: lookups into the snapshot's page records and change log."""

from __future__ import annotations

import bisect
import datetime as dt

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from serve import params
from serve.documents import USAGE, encode, envelope, iso_ms
from serve.http_cache import Replayed, cached
from serve.openapi import MAX_PATH_LENGTH
from serve.problems import ProblemError
from serve.snapshot import Snapshot


async def page(request: Request) -> Response:
    path = params.required_text(request, "path", MAX_PATH_LENGTH)
    snapshot = request.app.state.snapshots.current
    document = snapshot.cache["pages"].get(path)
    if document is None:
        raise ProblemError(
            404,
            f"No structured record for the path {path!r}. Page paths look like "
            "/guides/start-here; changes.json lists every one.",
            slug="no-page-record",
        )
    return cached(request, snapshot, document, key=f"page:{path}")


CHANGE_DOCUMENTS_KEPT = 64  # per snapshot: distinct `since` values whose documents (the size of the log) are kept


async def changes(request: Request) -> Response:
    since = params.since(request)
    raw_since = request.query_params.get("since") or None
    snapshot = request.app.state.snapshots.current
    # Crawlers poll with the same few `since` values: each document is built once per snapshot.
    body = snapshot.remembered(
        "change_documents",
        raw_since,
        lambda: change_document(snapshot, request.app.state.base_url, since, raw_since),
        CHANGE_DOCUMENTS_KEPT,
    )
    return cached(request, snapshot, body)


def change_document(snapshot: Snapshot, base_url: str, since: dt.datetime | None, raw_since: str | None) -> bytes:
    """changes.json for one ``since``: the changes after it, newest first."""
    everything = snapshot.cache["changes"]  # newest first
    # The same times oldest first; ISO 8601 UTC with milliseconds, so text order is time order.
    times = snapshot.cache["change_times"]
    after = len(everything) if since is None else len(times) - bisect.bisect_right(times, iso_ms(since))
    selected = everything[:after]
    return encode(
        {
            **envelope(snapshot, USAGE["changes"]),
            "since": raw_since,
            "latest_change": everything[0]["changed_at"] if everything else None,
            "total_changed": len(selected),
            "returned": len(selected),
            "changes": selected,
            "full_corpus": f"{base_url}/llms-full.txt",
            "claims": f"{base_url}/api/public/claims.jsonl",
        }
    )


routes = [
    Route("/api/public/page.json", Replayed(page), methods=["GET"]),
    Route("/api/public/changes.json", Replayed(changes), methods=["GET"]),
]
