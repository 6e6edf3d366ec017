"""CORS for any origin: the API is public and read-only, so every response carries the same
headers (``CORS_HEADERS``, set with the caching headers) and only preflights need a middleware.

The assistants' MCP endpoint is the one place a page in a browser may POST (a JSON-RPC call
that reads, like every tool). Its preflight allows POST, and its answers, written by the MCP
library, get the CORS headers from ``WithCorsHeaders``.
"""

from __future__ import annotations

from collections.abc import Mapping

from starlette.datastructures import MutableHeaders
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CORS_HEADERS = {"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": "ETag, X-Dataset-Version"}
ALLOWED_METHODS = "GET, HEAD, OPTIONS"
POST_METHODS = "GET, HEAD, POST, OPTIONS"  # for the paths a page may also POST to


class Preflight:
    """Answers CORS preflights (OPTIONS with Access-Control-Request-Method) for any origin;
    every other request goes straight to the app. ``methods_by_path`` names the paths that allow
    more than ``ALLOWED_METHODS``."""

    def __init__(self, app: ASGIApp, max_age: int = 86400, methods_by_path: Mapping[str, str] | None = None):
        self.app = app
        self.max_age = str(max_age)
        self.methods_by_path = dict(methods_by_path or {})

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
            "Access-Control-Allow-Methods": self.methods_by_path.get(scope["path"], ALLOWED_METHODS),
            "Access-Control-Max-Age": self.max_age,
            "Vary": "Access-Control-Request-Headers",
        }
        requested = headers.get(b"access-control-request-headers")
        if requested:
            answer["Access-Control-Allow-Headers"] = requested.decode("latin-1")
        await PlainTextResponse("OK", headers=answer)(scope, receive, send)


class WithCorsHeaders:
    """An ASGI app whose answers get ``CORS_HEADERS`` (and ``expose``, headers a browser's script
    may read), for an app that knows nothing of CORS."""

    def __init__(self, app: ASGIApp, expose: tuple[str, ...] = ()):
        self.app = app
        self.headers = dict(CORS_HEADERS)
        if expose:
            self.headers["Access-Control-Expose-Headers"] += ", " + ", ".join(expose)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in self.headers.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_cors)
