"""Responses sent from a release's files: never read whole into memory, always with their length.

Every answer carries Content-Length and the file's ETag (its sha256, from the manifest),
answers If-None-Match with a 304, picks the stored copy (zstd, gzip or the file itself) the
client's Accept-Encoding prefers, and answers a single ``Range`` of the file itself with 206
(416 past the end). Several ranges in one request are answered with the whole file, as RFC
9110 allows. A body leaves in pieces of ``PIECE_BYTES``, each sent before the next is read,
so a slow client holds one piece, not the file; a file above ``INLINE_FILE_BYTES`` (a large
distribution, perhaps not in the page cache) is read off the event loop, and one sent whole
of at most ``KEPT_FILE_BYTES`` (the API's documents at the demo's size) is read once per
release and its bytes kept, ``MEMO_BYTES`` of them at most.

The headers of each (file, coding, address) are worked out once per release (``PreparedFile``),
and ``ReleaseFiles`` answers from the ASGI scope without a Request object: a fixed document
costs little more than replaying it from memory. A page.json document, read from the
release's pack, goes the same way (``send_page``): the headers every page of a release shares
are worked out once per release and coding, and an answer adds its ETag and length to them;
the pages asked for last are kept found (``page_record``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from foundations.media_types import JSON, media_type_of, with_charset
from foundations.problem_details import ProblemError
from foundations.release_caches import BoundedMemo
from release.codecs import ENCODINGS
from release.folder import PackedRecord, Release
from release.manifest import ReleaseFile
from serve.http.compression import negotiate
from serve.http.conditional import (
    CACHE_CONTROL,
    REVALIDATION_HEADERS,
    cache_headers,
    etag_matches,
    send_not_modified,
)
from serve.http.scope import request_headers

IMMUTABLE = "public, max-age=31536000, immutable"
PIECE_BYTES = 1024 * 1024
INLINE_FILE_BYTES = 16 * 1024 * 1024
KEPT_FILE_BYTES = 256 * 1024
KEPT_FILES = 256  # small files a release keeps read (their bytes bounded by MEMO_BYTES too)
CODINGS = (*ENCODINGS, "identity")  # best first
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
Headers = list[tuple[bytes, bytes]]
PAGE_CONTENT_TYPE = (b"content-type", with_charset(JSON).encode("latin-1"))


def _raw(headers: dict[str, str]) -> Headers:
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]


@dataclass(frozen=True)
class Prepared:
    """One stored copy of a release file as an address serves it: its validator and headers."""

    file: ReleaseFile
    coding: str
    headers: dict[str, str]  # of a 200, less Content-Length
    whole: Headers  # of a 200 with the whole file
    not_modified: Headers  # of a 304

    @classmethod
    def make(cls, release: Release, path: str, coding: str, file: ReleaseFile, immutable: bool) -> Prepared:
        headers = {
            **cache_headers(release.version, file.etag, cache_control=IMMUTABLE if immutable else CACHE_CONTROL),
            "Accept-Ranges": "bytes",
            "Content-Type": media_type_of(path),
            **({"Content-Encoding": coding} if coding != "identity" else {}),
        }
        kept = {k: v for k, v in headers.items() if k.lower().encode("latin-1") in REVALIDATION_HEADERS}
        return cls(file, coding, headers, _raw({**headers, "Content-Length": str(file.size)}), _raw(kept))


@dataclass(frozen=True)
class PreparedFile:
    """A release file as an address serves it: the codings it is stored in (best first) and each
    stored copy prepared, worked out the first time the release is asked for it."""

    codings: tuple[str, ...]
    copies: dict[str, Prepared]

    @classmethod
    def of(cls, release: Release, path: str, immutable: bool) -> PreparedFile | None:
        """``path`` prepared (None if the release has no such file), once per release and address."""
        key = (path, immutable)
        prepared = release.prepared.get(key)
        if prepared is None:
            variants = release.variants(path)
            if not variants:
                return None
            codings = tuple(coding for coding in CODINGS if coding in variants)
            copies = {coding: Prepared.make(release, path, coding, variants[coding], immutable) for coding in codings}
            prepared = release.prepared[key] = cls(codings, copies)
        return prepared


async def send_slice(
    release: Release, path: str, offset: int, length: int, scope: Scope, send: Send, status: int, headers: Headers
) -> None:
    """Send ``length`` bytes of a release file from ``offset`` (none for HEAD), piece by piece."""
    await send({"type": "http.response.start", "status": status, "headers": headers})
    if scope["method"] == "HEAD" or length == 0:
        await send({"type": "http.response.body", "body": b""})
        return
    size = release.manifest.files[path].size
    if offset == 0 and length == size <= KEPT_FILE_BYTES:
        await send({"type": "http.response.body", "body": kept_body(release, path, size)})
        return
    inline = size <= INLINE_FILE_BYTES
    position, end = offset, offset + length
    while position < end:
        size = min(PIECE_BYTES, end - position)
        piece = (
            release.read(path, position, size)
            if inline
            else await run_in_threadpool(release.read, path, position, size)
        )
        if not piece:  # the file shrank under us: a release file never does, but never loop
            raise RuntimeError(f"{path} ended at byte {position}, before {end}")
        position += len(piece)
        await send({"type": "http.response.body", "body": piece, "more_body": position < end})


def kept_body(release: Release, path: str, size: int) -> bytes:
    """The whole of a small release file, read the first time it is sent and kept with the
    release: read again for every request, products.json (180 KB) cost a new buffer and a copy
    each time, where the floor sends the same bytes from memory."""
    bodies = release.kept_bodies
    if bodies is None:
        bodies = release.kept_bodies = BoundedMemo(KEPT_FILES)

    def read() -> bytes:
        body = release.read(path, 0, size)
        if len(body) != size:  # the file shrank under us: a release file never does, but never keep it
            raise RuntimeError(f"{path} ended at byte {len(body)}, before {size}")
        return body

    return bodies.get_or_build(path, read)


class ReleaseFileResponse(Response):
    """``length`` bytes of a release file from ``offset``, with the headers given."""

    def __init__(self, release: Release, path: str, offset: int, length: int, status: int, headers: dict[str, str]):
        super().__init__(status_code=status, headers=headers)
        self.release, self.path, self.offset, self.length = release, path, offset, length

    def init_headers(self, headers=None) -> None:  # type: ignore[no-untyped-def]
        # Content-Length is set by the caller: the slice's length, never a body's.
        self.raw_headers = _raw(headers or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send_slice(
            self.release, self.path, self.offset, self.length, scope, send, self.status_code, self.raw_headers
        )


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
    range_header = request.headers.get("range")
    prepared_file = PreparedFile.of(release, path, immutable)
    if prepared_file is None:
        raise ProblemError(404, f"Release {release.version} has no file {path!r}.", slug="no-release-file")
    coding = "identity" if range_header else negotiate(request.headers.get("accept-encoding"), prepared_file.codings)
    prepared = prepared_file.copies[coding]
    if etag_matches(request.headers.get("if-none-match", ""), prepared.file.etag):
        return Response(status_code=304, headers=dict((k.decode(), v.decode()) for k, v in prepared.not_modified))
    headers, size = dict(prepared.headers), prepared.file.size
    status, offset, length = 200, 0, size
    if_range = request.headers.get("if-range")
    if range_header and (if_range is None or if_range == prepared.file.etag):
        chosen = byte_range(range_header, size)
        if chosen is not None:
            first, last = chosen
            status, offset, length = 206, first, last - first + 1
            headers["Content-Range"] = f"bytes {first}-{last}/{size}"
    headers["Content-Length"] = str(length)
    return ReleaseFileResponse(release, prepared.file.path, offset, length, status, headers)


# Where an address's file is: the release and the file's path in it, and whether the address is
# a versioned (immutable) one. Raises ProblemError when there is no such release.
Locator = Callable[[Scope], tuple[Release, str, bool]]


# What an answer from prepared headers reads of a request; a Range (or If-Range) sends a file
# through ``release_file`` instead.
ASKED = frozenset((b"if-none-match", b"accept-encoding", b"range", b"if-range"))


class ReleaseFiles:
    """An ASGI endpoint sending release files: a request without a Range is answered from the
    scope with the file's prepared headers; one with a Range goes through ``release_file``."""

    def __init__(self, locate: Locator, name: str) -> None:
        self.locate = locate
        self.__name__ = name

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        asked = request_headers(scope, ASKED)
        release, path, immutable = self.locate(scope)
        if b"range" in asked or b"if-range" in asked:
            await release_file(Request(scope, receive), release, path, immutable=immutable)(scope, receive, send)
            return
        prepared_file = PreparedFile.of(release, path, immutable)
        if prepared_file is None:
            raise ProblemError(404, f"Release {release.version} has no file {path!r}.", slug="no-release-file")
        prepared = prepared_file.copies[negotiate(asked.get(b"accept-encoding"), prepared_file.codings)]
        if_none_match = asked.get(b"if-none-match")
        if if_none_match and etag_matches(if_none_match, prepared.file.etag):
            await send_not_modified(send, prepared.not_modified)
            return
        await send_slice(release, prepared.file.path, 0, prepared.file.size, scope, send, 200, prepared.whole)


PAGE_RECORDS_KEPT = 1024  # pages a release keeps found: crawlers and answer engines ask for the same again


def page_record(release: Release, path: str) -> PackedRecord | None:
    """``release.pages.get(path)``, kept for the last ``PAGE_RECORDS_KEPT`` pages asked for: a
    search of the index (5 µs) is a quarter of a page.json answer's time in process."""
    find = release.page_records
    if find is None:
        find = release.page_records = functools.lru_cache(maxsize=PAGE_RECORDS_KEPT)(release.pages.get)
    return find(path)


@functools.lru_cache(maxsize=8)  # the release served now, and those still answering when it came
def page_headers(version: str, gzipped: bool) -> tuple[Headers, Headers]:
    """What every page.json answer of release ``version`` in one coding carries besides its ETag:
    the headers its 304 repeats, and those of its 200 before Content-Length."""
    revalidation = _raw({k: v for k, v in cache_headers(version, etag="").items() if k != "ETag"})
    return revalidation, revalidation + ([(b"content-encoding", b"gzip")] if gzipped else [])


async def send_page(
    release: Release, record: PackedRecord, gzipped: bool, if_none_match: str | None, scope: Scope, send: Send
) -> None:
    """The page.json document of ``record`` (found in the release's page index), gzipped if asked,
    with the release's prepared headers; a 304 when If-None-Match names it."""
    etag = record.etag[:-1] + '-gzip"' if gzipped else record.etag
    validator = (b"etag", etag.encode("latin-1"))
    revalidation, before_length = page_headers(release.version, gzipped)
    if if_none_match and etag_matches(if_none_match, etag):
        await send_not_modified(send, [validator, *revalidation])
        return
    body = release.page(record, gzipped)
    headers = [validator, *before_length, (b"content-length", b"%d" % len(body)), PAGE_CONTENT_TYPE]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})
