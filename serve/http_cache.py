"""Responses with the HTTP contract of every operation: ETag from snapshot version and request,
304 on a match, Cache-Control, X-Dataset-Version, CORS for any origin, gzip when asked.

All of it is decided here, per response, rather than in middleware wrapped around every
request: the API is public and read-only, so its CORS headers are the same on every response
and only preflights need a middleware (``Preflight``), and a body built per snapshot (a
rendered page) is compressed once per snapshot, not once per request. The release's own
files carry their ETags and compressed copies from publish (``serve.release_responses``).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import zlib
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import request_response
from starlette.types import ASGIApp, Receive, Scope, Send

from serve.snapshot import Snapshot

CACHE_CONTROL = "public, max-age=300"
JSON = "application/json; charset=utf-8"
CORS_HEADERS = {"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": "ETag, X-Dataset-Version"}
ALLOWED_METHODS = "GET, HEAD, OPTIONS"
GZIP_MINIMUM_BYTES = 1024  # smaller bodies go as they are: compressing them saves next to nothing
GZIP_LEVEL = 6
GZIP_BODIES_KEPT = 100_000  # keyed bodies are rendered pages; MEMO_BYTES bounds them in bytes too
STREAM_GZIP_LEVEL = 1  # streams are compressed as they leave, on the event loop: the fastest level


def accepts_gzip(request: Request) -> bool:
    """Whether the client's Accept-Encoding allows gzip (q-values honoured, ``*`` included)."""
    return gzip_accepted(request.headers.get("accept-encoding"))


@functools.lru_cache(maxsize=256)  # clients send a handful of distinct Accept-Encoding values
def coding_weights(header: str | None) -> dict[str, float]:
    """The q-value of each content coding an Accept-Encoding value names."""
    weights: dict[str, float] = {}
    for item in (header or "").lower().split(","):
        coding, *parameters = (part.strip() for part in item.split(";"))
        weight = 1.0
        for parameter in parameters:
            name, _, value = parameter.partition("=")
            if name.strip() == "q":
                try:
                    weight = float(value)
                except ValueError:
                    weight = 0.0
        if coding:
            weights[coding] = weight
    return weights


def gzip_accepted(header: str | None) -> bool:
    """Whether an Accept-Encoding value allows gzip."""
    weights = coding_weights(header)
    return weights.get("gzip", weights.get("x-gzip", weights.get("*", 0.0))) > 0


@functools.lru_cache(maxsize=1024)
def negotiate(header: str | None, available: tuple[str, ...]) -> str:
    """The coding to send: of the ``available`` ones (best first), the one the client weighs
    highest; identity, when not refused, ranks below any coding the client accepts."""
    weights = coding_weights(header)
    wildcard = weights.get("*")
    best, best_weight = "identity", 0.0
    for coding in available:
        if coding in weights:
            weight = weights[coding]
        elif coding == "gzip" and "x-gzip" in weights:
            weight = weights["x-gzip"]
        elif coding == "identity":
            weight = 0.0 if wildcard == 0 else 0.001
        else:
            weight = wildcard or 0.0
        if weight > best_weight:
            best, best_weight = coding, weight
    return best


def etag_for(request: Request, snapshot: Snapshot, vary_language: bool = False, gzipped: bool = False) -> str:
    """A strong validator: same snapshot, same request and same encoding give the same tag."""
    # From the ASGI scope, not request.url: building a URL object costs more than the rest together.
    query = (
        "&".join(sorted(f"{k}={v}" for k, v in request.query_params.multi_items()))
        if request.scope["query_string"]
        else ""
    )
    parts = [snapshot.version, request.scope["path"], query]
    if vary_language:
        parts.append(request.headers.get("accept-language", ""))
    digest = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]
    return f'"{digest}-gzip"' if gzipped else f'"{digest}"'


def etag_matches(if_none_match: str, etag: str) -> bool:
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


def not_modified(request: Request, snapshot: Snapshot, etag: str, vary_language: bool = False) -> Response | None:
    if etag_matches(request.headers.get("if-none-match", ""), etag):
        return Response(status_code=304, headers=cache_headers(snapshot.version, etag, vary_language))
    return None


def compressed(snapshot: Snapshot, body: bytes, key: str | None = None) -> bytes:
    """``body`` gzipped; with a ``key``, once per snapshot (the body must be fixed for that key)."""
    if key is None:
        return gzip.compress(body, GZIP_LEVEL, mtime=0)
    return snapshot.remembered("gzip", key, lambda: gzip.compress(body, GZIP_LEVEL, mtime=0), GZIP_BODIES_KEPT)


def cached(
    request: Request,
    snapshot: Snapshot,
    body: bytes,
    media_type: str = JSON,
    vary_language: bool = False,
    extra_headers: dict[str, str] | None = None,
    key: str | None = None,
) -> Response:
    """``body`` with the caching headers, gzipped when asked, or 304 when the client already has it.

    ``key`` names a body that is the same for the whole snapshot, so that it is compressed once.
    """
    gzipped = len(body) >= GZIP_MINIMUM_BYTES and accepts_gzip(request)
    etag = etag_for(request, snapshot, vary_language, gzipped)
    unchanged = not_modified(request, snapshot, etag, vary_language)
    if unchanged is not None:
        return unchanged
    headers = {**cache_headers(snapshot.version, etag, vary_language), **(extra_headers or {})}
    if gzipped:
        body = compressed(snapshot, body, key)
        headers["Content-Encoding"] = "gzip"
    return Response(body, media_type=media_type, headers=headers)


async def gzip_stream(chunks: AsyncIterable[bytes]) -> AsyncIterator[bytes]:
    """The chunks as one gzip stream, each flushed as it comes so that none waits for the next."""
    compressor = zlib.compressobj(STREAM_GZIP_LEVEL, zlib.DEFLATED, 31)
    async for chunk in chunks:
        yield compressor.compress(chunk) + compressor.flush(zlib.Z_SYNC_FLUSH)
    yield compressor.flush()


def streamed(
    request: Request,
    snapshot: Snapshot,
    chunks: AsyncIterable[bytes],
    media_type: str,
    extra_headers: dict[str, str] | None = None,
) -> Response:
    """A streamed body with the same contract as ``cached``."""
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


class Preflight:
    """Answers CORS preflights (OPTIONS with Access-Control-Request-Method) for any origin;
    every other request goes straight to the app."""

    def __init__(self, app: ASGIApp, max_age: int = 86400):
        self.app = app
        self.max_age = str(max_age)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "OPTIONS":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if b"access-control-request-method" not in headers:
            await self.app(scope, receive, send)
            return
        answer = {
            **CORS_HEADERS,
            "Access-Control-Allow-Methods": ALLOWED_METHODS,
            "Access-Control-Max-Age": self.max_age,
            "Vary": "Access-Control-Request-Headers",
        }
        requested = headers.get(b"access-control-request-headers")
        if requested:
            answer["Access-Control-Allow-Headers"] = requested.decode("latin-1")
        await PlainTextResponse("OK", headers=answer)(scope, receive, send)


RESPONSES_KEPT = 4096  # per snapshot: distinct (path, query, encoding) answers replayed


@dataclass(frozen=True)
class KeptAnswer:
    """A 200 answer as it went out, and the 304 that revalidates it, ready to send again."""

    body: bytes
    headers: list[tuple[bytes, bytes]]
    etag: str
    not_modified_headers: list[tuple[bytes, bytes]]


class Replayed:
    """An ASGI endpoint for an operation whose 200 answer depends only on the snapshot, the path,
    the query string and whether gzip is accepted.

    The first answer for a key is kept with the snapshot; later requests get its bytes and
    headers again straight from the ASGI scope, without a Request object, parsing, validating,
    hashing or encoding headers (If-None-Match is still answered with a 304). A request with
    no kept answer goes to ``handler`` as any route would; errors are never kept.
    """

    def __init__(self, handler: Callable[[Request], Awaitable[Response]]) -> None:
        self.handler = handler
        self.__name__ = handler.__name__
        self.answer_afresh = request_response(self.answer_and_keep)

    async def answer_and_keep(self, request: Request) -> Response:
        snapshot = request.app.state.snapshots.current
        response = await self.handler(request)
        # Kept with the snapshot it was made from, and only then: never under a newer one.
        made_from = response.headers.get("x-dataset-version")
        if (
            response.status_code == 200
            and made_from == snapshot.version
            and not isinstance(response, StreamingResponse)
        ):
            headers = list(response.raw_headers)
            revalidation = [(name, value) for name, value in headers if name in REVALIDATION_HEADERS]
            answer = KeptAnswer(response.body, headers, response.headers["etag"], revalidation)
            snapshot.remembered(
                "responses", self.key(request.scope, accepts_gzip(request)), lambda: answer, RESPONSES_KEPT
            )
        return response

    @staticmethod
    def key(scope: Scope, gzipped: bool) -> tuple[str, bytes, bool]:
        return scope["path"], scope["query_string"], gzipped

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if_none_match = accept_encoding = None  # the first of each, as Request.headers.get gives
        for name, value in scope["headers"]:
            if name == b"if-none-match" and if_none_match is None:
                if_none_match = value.decode("latin-1")
            elif name == b"accept-encoding" and accept_encoding is None:
                accept_encoding = value.decode("latin-1")
        snapshot = scope["app"].state.snapshots.current
        kept = snapshot.cache.get("responses", {}).get(self.key(scope, gzip_accepted(accept_encoding)))
        if kept is None:
            await self.answer_afresh(scope, receive, send)
        elif if_none_match and etag_matches(if_none_match, kept.etag):
            await send({"type": "http.response.start", "status": 304, "headers": kept.not_modified_headers})
            await send({"type": "http.response.body", "body": b""})
        else:
            await send({"type": "http.response.start", "status": 200, "headers": kept.headers})
            await send({"type": "http.response.body", "body": kept.body})
