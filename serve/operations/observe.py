"""The middleware that measures every request once, for the metrics and the access log.

It sits outside everything else, so a request's time runs from its arrival to its response's
last byte, streams included, and the status is the one sent (500 when the app raised before
sending one). The route is the path template the router matched, or ``unmatched``.
"""

from __future__ import annotations

from collections.abc import Awaitable
from time import perf_counter

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from serve.operations.access_log import AccessLog
from serve.operations.metrics import ServiceMetrics

UNMATCHED = "unmatched"
VERSION_HEADER = b"x-dataset-version"


def route_of(scope: Scope) -> str:
    """The path template of the route that answered (bounded in number, unlike paths)."""
    route = scope.get("route")
    return getattr(route, "path", None) or UNMATCHED


class Observe:
    """Times each HTTP request, counts its status and body bytes, and hands them on."""

    def __init__(self, app: ASGIApp, metrics: ServiceMetrics | None, access_log: AccessLog | None) -> None:
        self.app = app
        self.metrics = metrics
        self.access_log = access_log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (self.metrics is None and self.access_log is None):
            await self.app(scope, receive, send)
            return
        started = perf_counter()
        status = 500
        body_bytes = 0
        version = ""
        log_version = self.access_log is not None

        def observed(message: Message) -> Awaitable[None]:
            # Not a coroutine of its own: it hands on the inner send's, one frame fewer a message.
            nonlocal status, body_bytes, version
            kind = message["type"]
            if kind == "http.response.body":
                body_bytes += len(message.get("body", b""))
            elif kind == "http.response.start":
                status = message["status"]
                if log_version:
                    for name, value in message.get("headers", ()):
                        if name == VERSION_HEADER:  # ASGI header names are lower case
                            version = value.decode("latin-1")
                            break
            return send(message)

        try:
            await self.app(scope, receive, observed)
        finally:
            seconds = perf_counter() - started
            route = route_of(scope)
            if self.metrics is not None:
                self.metrics.observe(route, status, seconds, body_bytes)
            if self.access_log is not None:
                self.access_log.write(scope, status, seconds, body_bytes, route, version)
