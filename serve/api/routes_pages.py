"""page.json and changes.json: a page's record read from the release's pack, the change log by query."""

from __future__ import annotations

import datetime as dt
import functools

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from foundations.problem_details import ProblemError
from public.documents import CHANGE_FIELDS, USAGE, change_items, encode, envelope, json_value
from public.openapi import HUB_PATH, MAX_PATH_LENGTH
from release.folder import PackedRecord, Release
from release.snapshot import Snapshot
from serve.api import params
from serve.api.release_responses import page_record, send_page
from serve.http.compression import gzip_accepted
from serve.http.replay import Varies, replayed, varies_on
from serve.http.responses import answer_with_validators
from serve.http.scope import request_headers

ASKED = frozenset((b"if-none-match", b"accept-encoding"))  # what page.json reads of a request's headers
# Query strings of page.json kept parsed: crawlers ask for the same pages again. Only those that
# a path (percent-encoded) can fill are kept, so that the kept ones hold at most a few MB.
PAGE_QUERIES_KEPT = 1024
CHANGE_DOCUMENTS = f"{__name__}.changes"  # changes.json documents by `since`
CHANGE_DOCUMENTS_KEPT = 64  # distinct `since` values whose documents are kept
KEPT_QUERY_BYTES = 4 * MAX_PATH_LENGTH


def parsed_page_path(query_string: bytes) -> str:
    """The page path a page.json query string asks for, checked (ProblemError 400 when it names none)."""
    return params.required_text(Request({"type": "http", "query_string": query_string}), "path", MAX_PATH_LENGTH)


kept_page_path = functools.lru_cache(maxsize=PAGE_QUERIES_KEPT)(parsed_page_path)


def page_path(query_string: bytes) -> str:
    """``parsed_page_path``, once per query string of a usual length rather than once per request."""
    return kept_page_path(query_string) if len(query_string) <= KEPT_QUERY_BYTES else parsed_page_path(query_string)


def found_page(release: Release, path: str) -> PackedRecord:
    """The record of the page at ``path`` in ``release`` (ProblemError 404, saying what to ask, when none)."""
    record = page_record(release, path)
    if record is None:
        raise ProblemError(
            404,
            f"No structured record for the path {path!r}. Page paths look like "
            f"{HUB_PATH}; changes.json lists every one.",
            slug="no-page-record",
        )
    return record


class Page:
    """page.json: one page's record, read from the release's pack and sent with the headers the
    release prepared (``serve.api.release_responses.send_page``), from the ASGI scope."""

    __name__ = "page"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        asked = request_headers(scope, ASKED)
        path = page_path(scope["query_string"])
        release = scope["app"].state.snapshots.current.files
        record = found_page(release, path)
        gzipped = gzip_accepted(asked.get(b"accept-encoding"))
        await send_page(release, record, gzipped, asked.get(b"if-none-match"), scope, send)


CHANGES_SQL = (
    f"SELECT {', '.join(CHANGE_FIELDS)} FROM changes WHERE $since IS NULL OR changed_at > $since "
    "ORDER BY changed_at DESC, url"
)
LATEST_CHANGE_SQL = "SELECT max(changed_at) AS latest FROM changes"


@varies_on(Varies.QUERY | Varies.CODING)  # `since`, and gzip or not (``answer_with_validators``)
async def changes(request: Request) -> Response:
    since = params.since(request)
    raw_since = request.query_params.get("since") or None
    snapshot = request.app.state.snapshots.current
    return answer_with_validators(request, snapshot, change_body(snapshot, since, raw_since))


def change_body(snapshot: Snapshot, since: dt.datetime | None, raw_since: str | None) -> bytes:
    """changes.json for ``since`` (as asked: ``raw_since``), of changes.json and of the assistants' tool."""
    # Crawlers poll with the same few `since` values: each document is built once per snapshot.
    change_documents = snapshot.caches.memo(CHANGE_DOCUMENTS, CHANGE_DOCUMENTS_KEPT)
    return change_documents.get_or_build(raw_since, lambda: change_document(snapshot, since, raw_since))


def change_document(snapshot: Snapshot, since: dt.datetime | None, raw_since: str | None) -> bytes:
    """changes.json for one ``since``: the changes after it, newest first."""
    selected = change_items(snapshot.query(CHANGES_SQL, {"since": since}))
    latest = snapshot.query(LATEST_CHANGE_SQL)[0]["latest"]
    return encode(
        {
            **envelope(snapshot, USAGE["changes"]),
            "since": raw_since,
            "latest_change": json_value(latest),
            "total_changed": len(selected),
            "returned": len(selected),
            "changes": selected,
            "full_corpus": f"{snapshot.base_url}/llms-full.txt",
            "claims": f"{snapshot.base_url}/api/public/claims.jsonl",
        }
    )


routes = [
    Route("/api/public/page.json", Page(), methods=["GET"]),
    replayed("/api/public/changes.json", changes, key=Varies.QUERY | Varies.CODING),
]
