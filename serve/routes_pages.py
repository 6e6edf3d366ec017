"""page.json and changes.json: a page's record read from the release's pack, the change log by query."""

from __future__ import annotations

import datetime as dt

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from foundations.media_types import JSON, with_charset
from foundations.problem_details import ProblemError
from serve import params
from serve.documents import CHANGE_FIELDS, USAGE, change_items, encode, envelope, plain
from serve.http.compression import accepts_gzip
from serve.http.conditional import cache_headers, not_modified
from serve.http.replay import Varies, replayed, varies_on
from serve.http.responses import cached
from serve.openapi import MAX_PATH_LENGTH
from serve.snapshot import Snapshot

PAGE_MEDIA_TYPE = with_charset(JSON)


async def page(request: Request) -> Response:
    path = params.required_text(request, "path", MAX_PATH_LENGTH)
    snapshot = request.app.state.snapshots.current
    release = snapshot.files
    record = release.pages.get(path)
    if record is None:
        raise ProblemError(
            404,
            f"No structured record for the path {path!r}. Page paths look like "
            "/guides/start-here; changes.json lists every one.",
            slug="no-page-record",
        )
    gzipped = accepts_gzip(request)
    etag = record.etag[:-1] + '-gzip"' if gzipped else record.etag
    unchanged = not_modified(request, snapshot, etag)
    if unchanged is not None:
        return unchanged
    headers = cache_headers(snapshot.version, etag)
    if gzipped:
        headers["Content-Encoding"] = "gzip"
    return Response(release.page(record, gzipped), media_type=PAGE_MEDIA_TYPE, headers=headers)


CHANGES_SQL = (
    f"SELECT {', '.join(CHANGE_FIELDS)} FROM changes WHERE $since IS NULL OR changed_at > $since "
    "ORDER BY changed_at DESC, url"
)
LATEST_CHANGE_SQL = "SELECT max(changed_at) AS latest FROM changes"


@varies_on(Varies.QUERY | Varies.CODING)  # `since`, and gzip or not (``cached``)
async def changes(request: Request) -> Response:
    since = params.since(request)
    raw_since = request.query_params.get("since") or None
    snapshot = request.app.state.snapshots.current
    # Crawlers poll with the same few `since` values: each document is built once per snapshot.
    body = snapshot.memo.change_documents.get_or_build(raw_since, lambda: change_document(snapshot, since, raw_since))
    return cached(request, snapshot, body)


def change_document(snapshot: Snapshot, since: dt.datetime | None, raw_since: str | None) -> bytes:
    """changes.json for one ``since``: the changes after it, newest first."""
    selected = change_items(snapshot.query(CHANGES_SQL, {"since": since}))
    latest = snapshot.query(LATEST_CHANGE_SQL)[0]["latest"]
    return encode(
        {
            **envelope(snapshot, USAGE["changes"]),
            "since": raw_since,
            "latest_change": plain(latest),
            "total_changed": len(selected),
            "returned": len(selected),
            "changes": selected,
            "full_corpus": f"{snapshot.base_url}/llms-full.txt",
            "claims": f"{snapshot.base_url}/api/public/claims.jsonl",
        }
    )


routes = [
    Route("/api/public/page.json", page, methods=["GET"]),
    replayed("/api/public/changes.json", changes, key=Varies.QUERY | Varies.CODING),
]
