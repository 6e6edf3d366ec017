"""Routing by dictionary for the API's fixed paths.

Starlette's router tries each route's pattern in order, about a microsecond a route, which on
the answers replayed from memory was a fifth of the request's time in the app. The API's
operations have fixed paths, so one route placed first finds them by one lookup; everything else
(the site's pages with path parameters, 405, redirects, 404) is Starlette's router's own, in its
own order, over the same list.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.routing import BaseRoute, Match, NoMatchFound, Route, get_route_path
from starlette.types import Receive, Scope, Send


class FixedPaths(BaseRoute):
    """The fixed-path routes at the head of a route list, found by lookup.

    Only the routes listed before the first one with path parameters are indexed: those are the
    routes Starlette's router would pick first for their path, so either way the same route
    answers. It matches only a path and method one of them takes whole; anything else falls
    through to the routes themselves, listed after it, for their 405s and redirects.
    """

    def __init__(self, routes: Sequence[BaseRoute]) -> None:
        self.by_path: dict[str, Route] = {}
        for route in routes:
            if not isinstance(route, Route) or route.param_convertors:
                break
            self.by_path.setdefault(route.path, route)

    @classmethod
    def ahead_of(cls, routes: Sequence[BaseRoute]) -> list[BaseRoute]:
        """The route list to hand Starlette: the lookup first, then every route as given."""
        return [cls(routes), *routes]

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] == "http":
            route = self.by_path.get(get_route_path(scope))
            if route is not None and (route.methods is None or scope["method"] in route.methods):
                # "route" names the route found, not this index: the access log and metrics label by it.
                path_params = dict(scope.get("path_params", {}))
                return Match.FULL, {"route": route, "endpoint": route.endpoint, "path_params": path_params}
        return Match.NONE, {}

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Straight to the endpoint: ``matches`` has checked the method, all ``Route.handle`` adds.
        await scope["route"].app(scope, receive, send)

    def url_path_for(self, name: str, /, **path_params: object) -> object:
        raise NoMatchFound(name, path_params)  # the routes listed after it answer for their own names
