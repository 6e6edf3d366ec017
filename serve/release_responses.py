"""Responses sent from a release's files: never read whole into memory, always with their length.

Every answer carries Content-Length and the file's ETag (its sha256, from the manifest),
answers If-None-Match with a 304, picks the stored copy (zstd, gzip or the file itself) the
client's Accept-Encoding prefers, and answers a single ``Range`` of the file itself with 206
(416 past the end). Several ranges in one request are answered with the whole file, as RFC
9110 allows. A body up to ``INLINE_BYTES`` is read in one call; a larger one leaves in
pieces read off the event loop, so a slow client holds one piece, not the file.
"""

from __future__ import annotations

import re

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from serve.http_cache import CACHE_CONTROL, CORS_HEADERS, REVALIDATION_HEADERS, etag_matches, negotiate
from serve.problems import ProblemError
from serve.release import ENCODINGS, Release, media_type_of

IMMUTABLE = "public, max-age=31536000, immutable"
INLINE_BYTES = 256 * 1024
PIECE_BYTES = 256 * 1024
CODINGS = (*ENCODINGS, "identity")  # best first
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


class ReleaseFileResponse(Response):
    """``length`` bytes of a release file from ``offset``, with the headers given."""

    def __init__(self, release: Release, path: str, offset: int, length: int, status: int, headers: dict[str, str]):
        super().__init__(status_code=status, headers=headers)
        self.release, self.path, self.offset, self.length = release, path, offset, length

    def init_headers(self, headers=None) -> None:  # type: ignore[no-untyped-def]
        # Content-Length is set by the caller: the slice's length, never a body's.
        self.raw_headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        if scope["method"] == "HEAD" or self.length == 0:
            await send({"type": "http.response.body", "body": b""})
            return
        if self.length <= INLINE_BYTES:
            body = self.release.read(self.path, self.offset, self.length)
            await send({"type": "http.response.body", "body": body})
            return
        position, end = self.offset, self.offset + self.length
        while position < end:
            piece = await run_in_threadpool(self.release.read, self.path, position, min(PIECE_BYTES, end - position))
            if not piece:  # the file shrank under us: a release file never does, but never loop
                raise RuntimeError(f"{self.path} ended at byte {position}, before {end}")
            position += len(piece)
            await send({"type": "http.response.body", "body": piece, "more_body": position < end})


def byte_range(header: str, size: int) -> tuple[int, int] | None:
    """(first, last) byte of a single ``bytes=`` range; None when the header is not one range we
    honour (then the whole file goes). Raises ProblemError 416 when it starts past the end."""
    match = _RANGE.match(header.strip())
    if match is None or not (match[1] or match[2]):
        return None
    if not match[1]:  # the last N bytes
        suffix = int(match[2])
        if suffix == 0:
            raise _unsatisfiable(header, size)
        return max(0, size - suffix), size - 1
    first = int(match[1])
    last = int(match[2]) if match[2] else size - 1
    if match[2] and last < first:
        return None  # not a valid range: ignored
    if first >= size:
        raise _unsatisfiable(header, size)
    return first, min(last, size - 1)


def _unsatisfiable(header: str, size: int) -> ProblemError:
    return ProblemError(
        416,
        f"The range {header!r} starts past the end of this file of {size} bytes; ask for bytes 0 to {size - 1}.",
        slug="range-not-satisfiable",
        headers={"Content-Range": f"bytes */{size}"},
    )


def release_file(request: Request, release: Release, path: str, *, immutable: bool = False) -> Response:
    """The release file at ``path`` (relative) with the HTTP contract above; 404 when there is none."""
    variants = release.variants(path)
    if not variants:
        raise ProblemError(404, f"Release {release.version} has no file {path!r}.", slug="no-release-file")
    range_header = request.headers.get("range")
    stored = tuple(c for c in CODINGS if c in variants)
    coding = "identity" if range_header else negotiate(request.headers.get("accept-encoding"), stored)
    file = variants[coding]
    headers = {
        "ETag": file.etag,
        "Cache-Control": IMMUTABLE if immutable else CACHE_CONTROL,
        "X-Dataset-Version": release.version,
        "Vary": "Accept-Encoding",
        "Accept-Ranges": "bytes",
        **CORS_HEADERS,
    }
    if etag_matches(request.headers.get("if-none-match", ""), file.etag):
        kept = {k: v for k, v in headers.items() if k.lower().encode("latin-1") in REVALIDATION_HEADERS}
        return Response(status_code=304, headers=kept)
    headers["Content-Type"] = media_type_of(path)
    if coding != "identity":
        headers["Content-Encoding"] = coding
    status, offset, length = 200, 0, file.size
    if_range = request.headers.get("if-range")
    if range_header and (if_range is None or if_range == file.etag):
        chosen = byte_range(range_header, file.size)
        if chosen is not None:
            first, last = chosen
            status, offset, length = 206, first, last - first + 1
            headers["Content-Range"] = f"bytes {first}-{last}/{file.size}"
    headers["Content-Length"] = str(length)
    return ReleaseFileResponse(release, file.path, offset, length, status, headers)
