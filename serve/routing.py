"""Routing by dictionary for the API's fixed paths.

Starlette's router tries each route's pattern in order, about a microsecond a route, which on
the answers replayed from memory was a fifth of the request's time in the app. The API's
operations have fixed paths, so they are found by one lookup; everything else (the site's
pages with path parameters, 405, redirects, 404) is the router's own, in its own order.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.routing import BaseRoute, Route, Router, get_route_path
from starlette.types import Lifespan, Receive, Scope, Send


class IndexedRouter(Router):
    """A ``Router`` that finds a route with a fixed path by lookup.

    Only the fixed-path routes listed before the first route with path parameters are indexed:
    those are the routes Starlette itself would pick first for their path, so either way the
    same route answers.
    """

    def __init__(self, routes: Sequence[BaseRoute], lifespan: Lifespan | None = None) -> None:
        super().__init__(routes, lifespan=lifespan)
        self.fixed: dict[str, Route] = {}
        for route in self.routes:
            if not isinstance(route, Route) or route.param_convertors:
                break
            self.fixed.setdefault(route.path, route)

    async def app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            route = self.fixed.get(get_route_path(scope))
            if route is not None and (route.methods is None or scope["method"] in route.methods):
                scope.setdefault("router", self)
                scope["route"] = route
                scope["endpoint"] = route.endpoint
                scope["path_params"] = dict(scope.get("path_params", {}))
                await route.handle(scope, receive, send)
                return
        await super().app(scope, receive, send)
