"""RFC 9457 problem details: every error the public API and the intake return, as application/problem+json.

Each app words its own router errors (404, 405); what a problem is and how it is sent is shared."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from foundations.media_types import PROBLEM_JSON

PROBLEM_TYPE_BASE = "https://reuse-data.example/problems/"
TITLES = {
    400: "Invalid request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Already uploaded by another tester",
    413: "Upload too large",
    414: "URI too long",
    415: "Unsupported file type",
    416: "Range not satisfiable",
    421: "Misdirected request",
    422: "Invalid bench sheet",
    431: "Request header fields too large",
    500: "Internal error",
    503: "Service unavailable",
    507: "Insufficient storage",
}


class ProblemError(Exception):
    """An error to return as problem+json; ``errors`` names each bad parameter."""

    def __init__(
        self,
        status: int,
        detail: str,
        errors: list[dict[str, str]] | None = None,
        slug: str | None = None,
        headers: dict[str, str] | None = None,
    ):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.errors = errors or []
        self.slug = slug or {400: "invalid-parameter", 404: "not-found"}.get(status, "error")
        self.headers = headers or {}


def problem_body(status: int, detail: str, slug: str | None = None, instance: str | None = None) -> dict[str, Any]:
    """The RFC 9457 members of a problem: ``type`` from ``slug`` (default: the title's words)."""
    body: dict[str, Any] = {
        "type": PROBLEM_TYPE_BASE + (slug or TITLES.get(status, "error").lower().replace(" ", "-")),
        "title": TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
    }
    if instance is not None:
        body["instance"] = instance
    return body


def problem_response(
    request: Request,
    status: int,
    detail: str,
    errors: list[dict[str, str]] | None = None,
    slug: str | None = None,
    extra_headers: dict[str, str] | None = None,
) -> Response:
    instance = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    body = problem_body(status, detail, slug, instance)
    if errors:
        body["errors"] = errors
    headers = {"Access-Control-Allow-Origin": "*", "Cache-Control": "no-store", **(extra_headers or {})}
    return Response(orjson.dumps(body), status_code=status, media_type=PROBLEM_JSON, headers=headers)


async def handle_problem(request: Request, error: Exception) -> Response:
    assert isinstance(error, ProblemError)
    return problem_response(request, error.status, error.detail, error.errors, error.slug, error.headers)


def router_problem(
    request: Request, error: HTTPException, details: dict[int, str], headers: dict[str, str] | None = None
) -> Response:
    """The router's refusal (404, 405) as a problem in the words of the app it comes from
    (``details`` by status), with the router's headers (Allow) and the app's own ``headers``."""
    detail = details.get(error.status_code, str(error.detail))
    return problem_response(
        request, error.status_code, detail, extra_headers={**(error.headers or {}), **(headers or {})}
    )


async def handle_unexpected(request: Request, error: Exception) -> Response:
    return problem_response(request, 500, "Something went wrong on our side; the request can be retried.")
