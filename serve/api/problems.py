"""The public API's own words for the router's errors (its other problems are ``foundations.problem_details``)."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from foundations.problem_details import router_problem


async def handle_http_exception(request: Request, error: Exception) -> Response:
    """The router's 404 and 405 for the public API, whose every operation is a GET."""
    assert isinstance(error, HTTPException)
    details = {
        404: f"No resource at {request.url.path}. The operations are listed at /api/public/openapi.json.",
        405: f"{request.method} is not allowed: every operation of this API is a GET.",
    }
    return router_problem(
        request, error, details, {"Allow": "GET, HEAD, OPTIONS"} if error.status_code == 405 else None
    )
