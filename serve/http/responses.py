"""Responses with the HTTP contract of every operation, from a body or a stream: ETag from the
snapshot version and request, 304 on a match, Cache-Control, X-Dataset-Version, CORS for any
origin, gzip when asked."""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from foundations.media_types import JSON, with_charset
from release.codecs import GZIP_MINIMUM_BYTES
from serve.http.compression import accepts_gzip, compressed, gzip_stream
from serve.http.conditional import cache_headers, etag_for, not_modified

if TYPE_CHECKING:
    from foundations.release_caches import ServedRelease


def answer_with_validators(
    request: Request,
    snapshot: ServedRelease,
    body: bytes,
    media_type: str = with_charset(JSON),
    vary_language: bool = False,
    extra_headers: dict[str, str] | None = None,
    key: str | None = None,
    validator: str = "",
) -> Response:
    """``body`` with the caching headers, gzipped when asked, or 304 when the client already has it.

    ``key`` names a body that is the same for the whole snapshot, so that it is compressed once;
    ``validator``, anything besides the snapshot that the body is made from.
    """
    gzipped = len(body) >= GZIP_MINIMUM_BYTES and accepts_gzip(request)
    etag = etag_for(request, snapshot, vary_language, gzipped, validator)
    unchanged = not_modified(request, snapshot, etag, vary_language)
    if unchanged is not None:
        return unchanged
    headers = {**cache_headers(snapshot.version, etag, vary_language), **(extra_headers or {})}
    if gzipped:
        body = compressed(snapshot, body, key)
        headers["Content-Encoding"] = "gzip"
    return Response(body, media_type=media_type, headers=headers)


def streamed(
    request: Request,
    snapshot: ServedRelease,
    chunks: AsyncIterable[bytes],
    media_type: str,
    extra_headers: dict[str, str] | None = None,
) -> Response:
    """A streamed body with the same contract as ``answer_with_validators``."""
    gzipped = accepts_gzip(request)
    etag = etag_for(request, snapshot, gzipped=gzipped)
    unchanged = not_modified(request, snapshot, etag)
    if unchanged is not None:
        return unchanged
    headers = {**cache_headers(snapshot.version, etag), **(extra_headers or {})}
    if gzipped:
        chunks = gzip_stream(chunks)
        headers["Content-Encoding"] = "gzip"
    return StreamingResponse(chunks, media_type=media_type, headers=headers)
