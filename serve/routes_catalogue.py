"""Routes answered from the release's files: the fixed documents, the distributions, and every
file of a release at its versioned, immutable address."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from serve.release import DOWNLOADS_DIR, RELEASES_PREFIX
from serve.release_responses import release_file

# The documents served at their own address, from the current release's file of the same path.
FIXED_DOCUMENTS = (
    "/api/public/products.json",
    "/api/public/recommendations.json",
    "/api/public/answers.json",
    "/api/public/content.json",
    "/api/public/capabilities.json",
    "/api/public/dataset.json",
    "/api/public/press-kit.json",
    "/api/public/claims.jsonl",
    "/api/public/openapi.json",
    "/llms-full.txt",
)


async def current_file(request: Request) -> Response:
    """The current release's file at the request's path (short-lived: it changes with each release)."""
    release = request.app.state.snapshots.current.files
    return release_file(request, release, request.scope["path"].lstrip("/"))


async def download(request: Request) -> Response:
    release = request.app.state.snapshots.current.files
    return release_file(request, release, f"{DOWNLOADS_DIR}/{request.path_params['name']}")


async def versioned_file(request: Request) -> Response:
    """A file of a given release, at an address that never changes what it answers."""
    release = request.app.state.snapshots.release(request.path_params["version"])
    return release_file(request, release, request.path_params["path"], immutable=True)


routes = [Route(path, current_file, methods=["GET"], name=path) for path in FIXED_DOCUMENTS]
# With path parameters: listed after every fixed-path route (serve.routing indexes those).
file_routes = [
    Route(f"/{DOWNLOADS_DIR}/{{name}}", download, methods=["GET"]),
    Route(RELEASES_PREFIX + "{version}/{path:path}", versioned_file, methods=["GET"]),
]
