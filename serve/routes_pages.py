"""page.json and changes.json: lookups into the snapshot's page records and change log."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from serve import params
from serve.documents import USAGE, encode, envelope, iso_ms
from serve.http_cache import cached
from serve.openapi import MAX_PATH_LENGTH
from serve.problems import ProblemError


async def page(request: Request) -> Response:
    path = params.required_text(request, "path", MAX_PATH_LENGTH)
    snapshot = request.app.state.snapshots.current
    record = snapshot.cache["pages"].get(path)
    if record is None:
        raise ProblemError(
            404,
            f"No structured record for the path {path!r}. Page paths look like "
            "/guides/start-here; changes.json lists every one.",
            slug="no-page-record",
        )
    return cached(request, snapshot, encode({**envelope(snapshot, USAGE["page"]), "page": record}))


async def changes(request: Request) -> Response:
    since = params.since(request)
    snapshot = request.app.state.snapshots.current
    base_url = request.app.state.base_url
    everything = snapshot.cache["changes"]
    # Both sides are ISO 8601 UTC with milliseconds, so text order is time order.
    selected = [c for c in everything if since is None or c["changed_at"] > iso_ms(since)]
    body = {
        **envelope(snapshot, USAGE["changes"]),
        "since": request.query_params.get("since") or None,
        "latest_change": everything[0]["changed_at"] if everything else None,
        "total_changed": len(selected),
        "returned": len(selected),
        "changes": [{k: c[k] for k in ("url", "type", "title", "changed_at")} for c in selected],
        "full_corpus": f"{base_url}/llms-full.txt",
        "claims": f"{base_url}/api/public/claims.jsonl",
    }
    return cached(request, snapshot, encode(body))


routes = [
    Route("/api/public/page.json", page),
    Route("/api/public/changes.json", changes),
]
