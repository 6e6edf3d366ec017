"""The explorer's static files: what ``make install`` builds into ``serve/explore/web/dist`` (npm's
pinned DuckDB-WASM and Observable Plot, bundled with the page's script), served at a path named by
the build's digest, so that every file can be cached for a year and a new build is a new path.

``build.mjs`` writes ``manifest.json`` last, listing each file with its sha256 and the compressed
copies it made; the server serves only what the manifest lists, picking the copy the client's
Accept-Encoding prefers.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from foundations.media_types import BINARY, CSS, JAVASCRIPT, WASM, with_charset
from serve.http.compression import negotiate
from serve.http.conditional import etag_matches

WEB = Path(__file__).with_name("web")
DIST = WEB / "dist"
ASSETS_PATH = "/assets/explore/"
IMMUTABLE = "public, max-age=31536000, immutable"
MEDIA_TYPES = {".js": with_charset(JAVASCRIPT), ".css": with_charset(CSS), ".wasm": WASM}
CODING_SUFFIXES = {"br": ".br", "gzip": ".gz"}  # best first: brotli's copies are the smaller
INSTALL_HINT = "the explorer's scripts are not installed: run `make install` (it needs npm), then restart the server"


@dataclass(frozen=True)
class ExplorerAssets:
    """One build of the explorer's files, as its manifest lists them."""

    folder: Path
    digest: str  # of the manifest, so of every file: the path segment that makes the URLs immutable
    files: dict[str, dict[str, Any]]
    packages: dict[str, str]

    @classmethod
    def installed(cls, folder: Path = DIST) -> ExplorerAssets | None:
        """The build in ``folder``, or None where there is none (npm missing) or it is unreadable."""
        try:
            manifest_bytes = (folder / "manifest.json").read_bytes()
            manifest = json.loads(manifest_bytes)
            files, packages = manifest["files"], manifest["packages"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if not all((folder / name).is_file() for name in files):
            return None  # a build cut short: serve none of it rather than a page whose scripts 404
        return cls(folder, hashlib.sha256(manifest_bytes).hexdigest()[:16], files, packages)

    @property
    def path(self) -> str:
        """Where the files are served, ending in a slash."""
        return f"{ASSETS_PATH}{self.digest}/"

    async def serve(self, request: Request) -> Response:
        name = request.path_params["name"]
        entry = self.files.get(name)
        if request.path_params["digest"] != self.digest or entry is None:
            raise HTTPException(404, f"no explorer file {request.url.path}: the page names the current ones")
        available = (*(c for c in CODING_SUFFIXES if c in entry["codings"]), "identity")
        coding = negotiate(request.headers.get("accept-encoding"), available)
        etag = f'"{entry["sha256"][:32]}-{coding}"'
        headers = {"Cache-Control": IMMUTABLE, "ETag": etag, "Vary": "Accept-Encoding"}
        if etag_matches(request.headers.get("if-none-match", ""), etag):
            return Response(status_code=304, headers=headers)
        path = self.folder / name
        if coding != "identity":
            path = path.with_name(name + CODING_SUFFIXES[coding])
            headers["Content-Encoding"] = coding
        media_type = MEDIA_TYPES.get(Path(name).suffix, BINARY)
        return FileResponse(path, media_type=media_type, headers=headers)


def assets_route(assets: ExplorerAssets | None) -> Route:
    """The route of the explorer's files; without a build, each request is a 404 saying what to install."""

    async def serve(request: Request) -> Response:
        if assets is None:
            raise HTTPException(404, INSTALL_HINT)
        return await assets.serve(request)

    return Route(ASSETS_PATH + "{digest}/{name}", serve, methods=["GET", "HEAD"])
