"""The fixed-path lookup answers with the route Starlette's router would pick, and leaves the rest to it."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from serve.routing import FixedPaths


def answering(name: str):
    async def endpoint(request: Request) -> Response:
        route = request.scope["route"]
        return PlainTextResponse(f"{name} {route.path} {request.path_params}")

    return endpoint


ROUTES = [
    Route("/api/a.json", answering("a"), methods=["GET", "HEAD"]),
    Route("/api/a.json", answering("a-post"), methods=["POST"]),
    Route("/api/b.json", answering("b"), methods=["GET"], name="b"),
    Route("/pages/{slug}", answering("page"), methods=["GET"]),
    Route("/late.json", answering("late"), methods=["GET"]),  # after a parameterised route: not indexed
]


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(Starlette(routes=FixedPaths.ahead_of(ROUTES)))


def test_only_the_fixed_paths_before_the_first_parameterised_route_are_indexed() -> None:
    assert set(FixedPaths(ROUTES).by_path) == {"/api/a.json", "/api/b.json"}


@pytest.mark.parametrize(
    ("method", "path", "status", "text"),
    [
        ("GET", "/api/a.json", 200, "a /api/a.json {}"),
        ("POST", "/api/a.json", 200, "a-post /api/a.json {}"),  # the lookup declines; the list finds it
        ("GET", "/api/b.json", 200, "b /api/b.json {}"),
        ("GET", "/pages/mugs", 200, "page /pages/{slug} {'slug': 'mugs'}"),
        ("GET", "/late.json", 200, "late /late.json {}"),
        ("DELETE", "/api/b.json", 405, "Method Not Allowed"),
        ("GET", "/nowhere", 404, "Not Found"),
    ],
)
def test_every_request_gets_the_answer_of_the_plain_router(
    client: TestClient, method: str, path: str, status: int, text: str
) -> None:
    plain = TestClient(Starlette(routes=ROUTES))
    for app_client in (client, plain):
        response = app_client.request(method, path, follow_redirects=False)
        assert (response.status_code, response.text) == (status, text)


def test_a_trailing_slash_is_redirected_as_the_router_does(client: TestClient) -> None:
    response = client.get("/api/b.json/", follow_redirects=False)
    assert response.status_code == 307 and response.headers["location"].endswith("/api/b.json")


def test_names_still_resolve_to_their_paths(client: TestClient) -> None:
    assert client.app.url_path_for("b") == "/api/b.json"
