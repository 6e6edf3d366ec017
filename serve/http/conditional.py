"""Validators and conditional requests: an ETag from the snapshot version and the request, a 304
when the client already holds it, and the caching headers every answer carries."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Send

from serve.http.cors import CORS_HEADERS

if TYPE_CHECKING:
    from foundations.release_caches import ServedRelease

CACHE_CONTROL = "public, max-age=300"


def etag_for(
    request: Request, snapshot: ServedRelease, vary_language: bool = False, gzipped: bool = False, validator: str = ""
) -> str:
    """A strong validator: same snapshot, same request and same encoding give the same tag;
    ``validator`` names whatever else the body is made from (the explorer's build)."""
    # From the ASGI scope, not request.url: building a URL object costs more than the rest together.
    query = (
        "&".join(sorted(f"{k}={v}" for k, v in request.query_params.multi_items()))
        if request.scope["query_string"]
        else ""
    )
    parts = [snapshot.version, request.scope["path"], query]
    if validator:
        parts.append(validator)
    if vary_language:
        parts.append(request.headers.get("accept-language", ""))
    digest = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]
    return f'"{digest}-gzip"' if gzipped else f'"{digest}"'


def etag_matches(if_none_match: str, etag: str) -> bool:
    """Whether an If-None-Match value names ``etag`` (weakly compared, as RFC 9110 asks for GET)."""
    if if_none_match == etag:  # what a cache revalidating its one copy sends
        return True
    candidates = [c.strip() for c in if_none_match.split(",")]
    return any(c == "*" or c.removeprefix("W/") == etag for c in candidates)


# What a 304 carries of its 200's headers: the validator and what caches key and keep it by.
REVALIDATION_HEADERS = frozenset(
    name.lower().encode("latin-1")
    for name in ("ETag", "Cache-Control", "X-Dataset-Version", "Vary", "Accept-Ranges", *CORS_HEADERS)
)


def cache_headers(
    version: str, etag: str, vary_language: bool = False, cache_control: str = CACHE_CONTROL
) -> dict[str, str]:
    """The validator and caching headers of an answer from release ``version``."""
    return {
        "ETag": etag,
        "Cache-Control": cache_control,
        "X-Dataset-Version": version,
        "Vary": "Accept-Encoding, Accept-Language" if vary_language else "Accept-Encoding",
        **CORS_HEADERS,
    }


async def send_not_modified(send: Send, headers: list[tuple[bytes, bytes]]) -> None:
    """A 304 with ``headers`` (its 200's ``REVALIDATION_HEADERS``), sent straight to ASGI."""
    await send({"type": "http.response.start", "status": 304, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


def not_modified(request: Request, snapshot: ServedRelease, etag: str, vary_language: bool = False) -> Response | None:
    """The 304 for a client whose If-None-Match names ``etag``; None when it must get the body."""
    if etag_matches(request.headers.get("if-none-match", ""), etag):
        return Response(status_code=304, headers=cache_headers(snapshot.version, etag, vary_language))
    return None
