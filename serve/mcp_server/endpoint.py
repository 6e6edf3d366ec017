"""The MCP endpoint of the HTTP server, built on its first request.

The MCP SDK and what it brings (pydantic's models, sse-starlette) cost about 34 MB resident and
0.6 s to import. A server that no assistant calls never pays for them: the endpoint imports
``serve.mcp_server.server`` when the first request for ``MCP_PATH`` arrives (in a worker thread, so
the event loop goes on answering meanwhile), and from then on runs the SDK's session manager in a
task of its own until the app's lifespan ends (``close``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from release.snapshot import SnapshotHolder
from serve.api.routes_ask import QuestionDesk
from serve.http.cors import WithCorsHeaders
from serve.mcp_server import MCP_HEADERS, MCP_PATH


class AssistantEndpoint:
    """The Streamable HTTP endpoint at ``MCP_PATH``, made and started on its first request."""

    def __init__(self, holder: SnapshotHolder, desk: QuestionDesk):
        self._holder = holder
        self._desk = desk
        self._app: ASGIApp | None = None
        self._starting: asyncio.Future[ASGIApp] | None = None
        self._stop = asyncio.Event()
        self._running: asyncio.Task[None] | None = None

    def route(self) -> Route:
        return Route(MCP_PATH, WithCorsHeaders(self, expose=MCP_HEADERS), name="mcp")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self._app or await self._started()
        await app(scope, receive, send)

    async def _started(self) -> ASGIApp:
        # One start, whichever request comes first; shielded, so a client that leaves does not stop
        # it halfway; a start that failed is tried again by the next request.
        if self._starting is None or (self._starting.done() and self._starting.exception() is not None):
            self._starting = asyncio.ensure_future(self._start())
        return await asyncio.shield(self._starting)

    async def _start(self) -> ASGIApp:
        server, app = await asyncio.to_thread(_built, self._holder, self._desk)
        running = asyncio.Event()
        self._running = asyncio.create_task(self._serve(server.session_manager.run, running))
        await running.wait()
        self._app = app
        return app

    async def _serve(self, run: Callable, running: asyncio.Event) -> None:
        # The session manager's task group is entered and left in this one task, as anyio requires.
        async with run():
            running.set()
            await self._stop.wait()

    async def close(self) -> None:
        """Stop the session manager, if a request ever started it."""
        self._stop.set()
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
        if self._running is not None:
            await self._running


def _built(holder: SnapshotHolder, desk: QuestionDesk) -> tuple:
    from serve.mcp_server.server import assistant_server, streamable_http_endpoint

    server = assistant_server(holder, desk)
    return server, streamable_http_endpoint(server)
