"""One JSON line per request on standard output: what an operator's log pipeline reads.

Each line is written with one ``write(2)`` of under 4 KB (paths and agents are cut short), so
the lines of several worker processes sharing the output never interleave, and nothing is
buffered in the process to be lost when it is killed. ``REUSE_DATA_ACCESS_LOG=off`` (or
`reuse-data serve --access-log off`) turns it off.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import select

import orjson
from starlette.types import Scope

FIELD_LIMIT = 512  # characters kept of the path, the query, the forwarded chain and the user agent
SHORT_FIELD_LIMIT = 64  # the same, for the rare line still longer than one atomic write
ATOMIC_WRITE_BYTES = select.PIPE_BUF  # a pipe writes this much whole, never mixed with another writer's


class AccessLog:
    """Writes the access lines to the file descriptor ``fd`` (standard output by default)."""

    def __init__(self, fd: int = 1) -> None:
        self.fd = fd

    def write(self, scope: Scope, status: int, seconds: float, body_bytes: int, route: str, version: str) -> None:
        line = self.line(scope, status, seconds, body_bytes, route, version, FIELD_LIMIT)
        if len(line) > ATOMIC_WRITE_BYTES:  # escapes and non-ASCII text take several bytes a character
            line = self.line(scope, status, seconds, body_bytes, route, version, SHORT_FIELD_LIMIT)
        with contextlib.suppress(OSError):  # a closed or full output must not fail the request answered
            os.write(self.fd, line)

    @staticmethod
    def line(scope: Scope, status: int, seconds: float, body_bytes: int, route: str, version: str, limit: int) -> bytes:
        headers = dict(scope["headers"])
        client = scope.get("client")
        fields = {
            "time": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
            "method": scope["method"],
            "path": scope["path"][:limit],
            "query": scope["query_string"].decode("latin-1")[:limit],
            "route": route,
            "status": status,
            "bytes": body_bytes,
            "duration_ms": round(seconds * 1000, 3),
            "dataset_version": version,
            "client": client[0] if client else None,
            "forwarded_for": headers.get(b"x-forwarded-for", b"").decode("latin-1")[:limit] or None,
            "user_agent": headers.get(b"user-agent", b"").decode("latin-1")[:limit] or None,
        }
        return orjson.dumps(fields) + b"\n"
