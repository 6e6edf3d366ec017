"""One JSON line per request on standard output: what an operator's log pipeline reads.

The lines are gathered and written in batches (``serve.operations.batched_lines``). Paths and agents are
cut short so that any line fits one write.
``REUSE_DATA_ACCESS_LOG=off`` (or `reuse-data serve --access-log off`) turns it off.
"""

from __future__ import annotations

import orjson
from starlette.types import Scope

from serve.operations.batched_lines import ATOMIC_WRITE_BYTES, BatchedLines

FIELD_LIMIT = 512  # characters kept of the path, the query, the forwarded chain and the user agent
SHORT_FIELD_LIMIT = 64  # the same, for the rare line still longer than one atomic write


class AccessLog(BatchedLines):
    """Writes the access lines to the file descriptor ``fd`` (standard output by default)."""

    def __init__(self, fd: int = 1) -> None:
        super().__init__(fd)

    def write(self, scope: Scope, status: int, seconds: float, body_bytes: int, route: str, version: str) -> None:
        """Add the line of one answered request (on the event loop)."""
        line = self.line(scope, status, seconds, body_bytes, route, version, FIELD_LIMIT)
        if len(line) > ATOMIC_WRITE_BYTES:  # escapes and non-ASCII text take several bytes a character
            line = self.line(scope, status, seconds, body_bytes, route, version, SHORT_FIELD_LIMIT)
        self.add(line)

    def line(
        self, scope: Scope, status: int, seconds: float, body_bytes: int, route: str, version: str, limit: int
    ) -> bytes:
        forwarded = agent = None
        for name, value in scope["headers"]:
            if name == b"user-agent":
                agent = value.decode("latin-1")[:limit]
            elif name == b"x-forwarded-for":
                forwarded = value.decode("latin-1")[:limit]
        client = scope.get("client")
        query = scope["query_string"]
        fields = {
            "time": self.now(),
            "method": scope["method"],
            "path": scope["path"][:limit],
            "query": query.decode("latin-1")[:limit] if query else "",
            "route": route,
            "status": status,
            "bytes": body_bytes,
            "duration_ms": round(seconds * 1_000_000) / 1000,  # to the µs; round(ms, 3) costs 0.5 µs more
            "dataset_version": version,
            "client": client[0] if client else None,
            "forwarded_for": forwarded,
            "user_agent": agent,
        }
        return orjson.dumps(fields, option=orjson.OPT_APPEND_NEWLINE)
