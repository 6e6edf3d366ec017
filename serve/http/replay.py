"""Replay of fixed answers: an operation whose 200 answer is fixed for a snapshot and what the
request says is answered once, and its bytes sent again to every request with the same key.

Replaying is only right when the key holds everything the answer depends on: an answer that
depends on the language, replayed by path and query alone, would go out in the first asker's
language to everyone. So the answer's dependencies are declared (``varies_on``, next to the
handler's code), the key is declared at the route (``replayed``), and a route whose key misses
one of them is refused when it is defined; an answer whose Vary header names a request header
the key does not hold is sent but never kept, and the log says why.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route, request_response
from starlette.types import Receive, Scope, Send

from serve.http.compression import gzip_accepted
from serve.http.conditional import REVALIDATION_HEADERS, etag_matches, send_not_modified
from serve.http.scope import request_headers

logger = logging.getLogger(__name__)
Handler = Callable[[Request], Awaitable[Response]]
H = TypeVar("H", bound=Handler)
# (path, query string, whether gzip is accepted, Accept-Language): the parts not keyed are None.
ReplayKey = tuple[str, bytes | None, bool | None, str | None]


class Varies(enum.Flag):
    """What of a request an answer depends on besides the snapshot and the path (every replayed
    answer is kept by its path: it names the route in the snapshot's one table of answers)."""

    NOTHING = 0
    QUERY = enum.auto()  # the query string, as sent
    CODING = enum.auto()  # Accept-Encoding: whether gzip is accepted (the one coding a built body is sent in)
    LANGUAGE = enum.auto()  # Accept-Language, as sent


DESCRIPTIONS = {
    Varies.QUERY: "the query string",
    Varies.CODING: "the content coding (Accept-Encoding)",
    Varies.LANGUAGE: "the language (Accept-Language)",
}
VARY_HEADERS = {"accept-encoding": Varies.CODING, "accept-language": Varies.LANGUAGE}
REPLAYED = f"{__name__}.answers"  # the answers replayed, by ReplayKey
RESPONSES_KEPT = 4096  # distinct (path, query, encoding) answers replayed per release
ASKED = frozenset((b"if-none-match", b"accept-encoding", b"accept-language"))  # what a replay reads of a request


def described(varies: Varies) -> str:
    """``varies`` in words, for the sentence that refuses a route."""
    return ", ".join(DESCRIPTIONS[part] for part in Varies if part in varies) or "nothing"


def varies_on(varies: Varies) -> Callable[[H], H]:
    """Declares what of the request ``handler``'s 200 answer depends on, besides the snapshot and
    the path: written next to the code that reads the request, checked against the replay key."""

    def declare(handler: H) -> H:
        handler.varies_on = varies  # type: ignore[attr-defined]
        return handler

    return declare


def vary_header_parts(vary: str) -> Varies | None:
    """What a response's Vary header says it depends on; None when it names a header replay cannot key."""
    varies = Varies.NOTHING
    for name in (part.strip().lower() for part in vary.split(",")):
        if not name:
            continue
        part = VARY_HEADERS.get(name)
        if part is None:
            return None
        varies |= part
    return varies


@dataclass(frozen=True)
class KeptAnswer:
    """A 200 answer as it went out, and the 304 that revalidates it, ready to send again."""

    body: bytes
    headers: list[tuple[bytes, bytes]]
    etag: str
    not_modified_headers: list[tuple[bytes, bytes]]


class Replayed:
    """An ASGI endpoint for an operation whose 200 answer depends only on the snapshot, the path
    and what ``key`` names.

    The first answer for a key is kept with the snapshot; later requests get its bytes and
    headers again straight from the ASGI scope, without a Request object, parsing, validating,
    hashing or encoding headers (If-None-Match is still answered with a 304). A request with
    no kept answer goes to ``handler`` as any route would; errors are never kept.
    """

    def __init__(self, route: str, handler: Handler, key: Varies) -> None:
        name = getattr(handler, "__name__", repr(handler))
        declared = getattr(handler, "varies_on", None)
        if not isinstance(declared, Varies):
            raise ValueError(
                f"The replayed route {route} cannot be defined: its handler {name} does not declare what its "
                "answer varies on (decorate it with @varies_on), so no key can be shown to hold all of it."
            )
        unkeyed = declared & ~key
        if unkeyed:
            raise ValueError(
                f"The replayed route {route} keys its answers on the path and {described(key)}, but its handler "
                f"{name} answers differently by {described(unkeyed)}: add it to the key, or one client's answer "
                "would be replayed to others who should get another."
            )
        self.route = route
        self.handler = handler
        self.key = key
        self.by_query = Varies.QUERY in key
        self.by_coding = Varies.CODING in key
        self.by_language = Varies.LANGUAGE in key
        self.__name__ = name
        self.answer_afresh = request_response(self.answer_and_keep)

    def key_of(self, scope: Scope, accept_encoding: str | None, accept_language: str | None) -> ReplayKey:
        """The key of a request's answer: its path, and of the rest only what ``key`` names."""
        return (
            scope["path"],
            scope["query_string"] if self.by_query else None,
            gzip_accepted(accept_encoding) if self.by_coding else None,
            accept_language if self.by_language else None,
        )

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
            varies = vary_header_parts(response.headers.get("vary", ""))
            if varies is None or varies & ~self.key:
                # The client still gets its own, right answer; only keeping it would be wrong.
                logger.error(
                    "The replayed route %s keys its answers on the path and %s, but its answer says Vary: %s: "
                    "it is not kept; key what it varies on and declare it with @varies_on on %s.",
                    self.route,
                    described(self.key),
                    response.headers.get("vary"),
                    self.__name__,
                )
                return response
            headers = list(response.raw_headers)
            revalidation = [(name, value) for name, value in headers if name in REVALIDATION_HEADERS]
            answer = KeptAnswer(response.body, headers, response.headers["etag"], revalidation)
            key = self.key_of(
                request.scope, request.headers.get("accept-encoding"), request.headers.get("accept-language")
            )
            snapshot.caches.memo(REPLAYED, RESPONSES_KEPT).get_or_build(key, lambda: answer)
        return response

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        asked = request_headers(scope, ASKED)
        if_none_match = asked.get(b"if-none-match")
        snapshot = scope["app"].state.snapshots.current
        kept = snapshot.caches.memo(REPLAYED, RESPONSES_KEPT).get(
            self.key_of(scope, asked.get(b"accept-encoding"), asked.get(b"accept-language"))
        )
        if kept is None:
            await self.answer_afresh(scope, receive, send)
        elif if_none_match and etag_matches(if_none_match, kept.etag):
            await send_not_modified(send, kept.not_modified_headers)
        else:
            await send({"type": "http.response.start", "status": 200, "headers": kept.headers})
            await send({"type": "http.response.body", "body": kept.body})


def replayed(path: str, handler: Handler, *, key: Varies) -> Route:
    """The GET route at ``path`` answered by ``handler`` and replayed by the path and ``key``;
    refused (ValueError) when ``key`` misses something ``handler`` declares its answer varies on."""
    return Route(path, Replayed(path, handler, key), methods=["GET"])
