"""CORS for any origin: the API is public and read-only, so every response carries the same
headers (``CORS_HEADERS``, set with the caching headers) and only preflights need a middleware."""

from __future__ import annotations

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

CORS_HEADERS = {"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": "ETag, X-Dataset-Version"}
ALLOWED_METHODS = "GET, HEAD, OPTIONS"


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
