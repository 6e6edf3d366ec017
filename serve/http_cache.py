"""Responses with the caching contract: ETag from snapshot version and request, 304 on a match,
Cache-Control, X-Dataset-Version. CORS and gzip are middleware in the app."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterable, Iterable

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from serve.snapshot import Snapshot

CACHE_CONTROL = "public, max-age=300"
JSON = "application/json; charset=utf-8"


def etag_for(request: Request, snapshot: Snapshot, vary_language: bool = False) -> str:
    """A strong validator: same snapshot and same request give the same tag."""
    parts = [
        snapshot.version,
        request.url.path,
        "&".join(sorted(f"{k}={v}" for k, v in request.query_params.multi_items())),
    ]
    if vary_language:
        parts.append(request.headers.get("accept-language", ""))
    return '"' + hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32] + '"'


def _matches(if_none_match: str, etag: str) -> bool:
    candidates = [c.strip() for c in if_none_match.split(",")]
    return any(c == "*" or c.removeprefix("W/") == etag for c in candidates)


def cache_headers(snapshot: Snapshot, etag: str, vary_language: bool = False) -> dict[str, str]:
    headers = {"ETag": etag, "Cache-Control": CACHE_CONTROL, "X-Dataset-Version": snapshot.version}
    if vary_language:
        headers["Vary"] = "Accept-Language"
    return headers


def not_modified(request: Request, snapshot: Snapshot, etag: str, vary_language: bool = False) -> Response | None:
    if _matches(request.headers.get("if-none-match", ""), etag):
        return Response(status_code=304, headers=cache_headers(snapshot, etag, vary_language))
    return None


def cached(
    request: Request,
    snapshot: Snapshot,
    body: bytes,
    media_type: str = JSON,
    vary_language: bool = False,
    extra_headers: dict[str, str] | None = None,
) -> Response:
    """``body`` with the caching headers, or 304 when the client already has it."""
    etag = etag_for(request, snapshot, vary_language)
    unchanged = not_modified(request, snapshot, etag, vary_language)
    if unchanged is not None:
        return unchanged
    headers = {**cache_headers(snapshot, etag, vary_language), **(extra_headers or {})}
    return Response(body, media_type=media_type, headers=headers)


def streamed(
    request: Request,
    snapshot: Snapshot,
    chunks: Iterable[bytes] | AsyncIterable[bytes],
    media_type: str,
    extra_headers: dict[str, str] | None = None,
) -> Response:
    """A streamed body with the same caching contract as ``cached``."""
    etag = etag_for(request, snapshot)
    unchanged = not_modified(request, snapshot, etag)
    if unchanged is not None:
        return unchanged
    headers = {**cache_headers(snapshot, etag), **(extra_headers or {})}
    return StreamingResponse(chunks, media_type=media_type, headers=headers)
