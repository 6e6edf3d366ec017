"""Routes answered from the release's files: the fixed documents, the distributions, what crawlers
read first (robots.txt, llms.txt, the sitemaps), and every file of a release at its versioned,
immutable address."""

from __future__ import annotations

from starlette.routing import Route
from starlette.types import Scope

from public.documents import COLLECTIONS
from release.folder import (
    DATA_PACKAGE,
    DATASET,
    DOWNLOADS_DIR,
    LLMS,
    RELEASES_PREFIX,
    ROBOTS,
    SINGLE_DOCUMENTS,
    SITEMAP_INDEX,
    SITEMAPS_DIR,
    Release,
)
from serve.api.release_responses import ReleaseFiles

# The documents served at their own address, from the current release's file of the same path:
# every document publish writes.
FIXED_DOCUMENTS = (*COLLECTIONS, *(f"/{path}" for path in (*SINGLE_DOCUMENTS, DATASET, DATA_PACKAGE)))
# The same, for crawlers and answer engines rather than the API's clients (outside its contract).
CRAWLER_FILES = tuple(f"/{path}" for path in (ROBOTS, LLMS, SITEMAP_INDEX))


def current_file(scope: Scope) -> tuple[Release, str, bool]:
    """The current release's file at the request's path (short-lived: it changes with each release)."""
    return scope["app"].state.snapshots.current.files, scope["path"].lstrip("/"), False


def sitemap(scope: Scope) -> tuple[Release, str, bool]:
    return scope["app"].state.snapshots.current.files, f"{SITEMAPS_DIR}/{scope['path_params']['name']}", False


def download(scope: Scope) -> tuple[Release, str, bool]:
    return scope["app"].state.snapshots.current.files, f"{DOWNLOADS_DIR}/{scope['path_params']['name']}", False


def versioned_file(scope: Scope) -> tuple[Release, str, bool]:
    """A file of a given release, at an address that never changes what it answers."""
    parameters = scope["path_params"]
    return scope["app"].state.snapshots.release(parameters["version"]), parameters["path"], True


routes = [Route(path, ReleaseFiles(current_file, path), methods=["GET"]) for path in FIXED_DOCUMENTS]
crawler_routes = [Route(path, ReleaseFiles(current_file, path), methods=["GET"]) for path in CRAWLER_FILES]
# With path parameters: listed after every fixed-path route (serve.routing indexes those).
file_routes = [
    Route(f"/{DOWNLOADS_DIR}/{{name}}", ReleaseFiles(download, "download"), methods=["GET"]),
    Route(f"/{SITEMAPS_DIR}/{{name}}", ReleaseFiles(sitemap, "sitemap"), methods=["GET"]),
    Route(RELEASES_PREFIX + "{version}/{path:path}", ReleaseFiles(versioned_file, "versioned_file"), methods=["GET"]),
]
