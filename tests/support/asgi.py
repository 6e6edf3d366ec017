"""One HTTP GET as an ASGI scope, for driving an app in-process (no socket, so a microsecond of
the app's own work is not lost in the network's noise)."""

from __future__ import annotations

from typing import Any


def get_scope(path: str, query_string: bytes = b"", headers: dict[str, str] | None = None) -> dict[str, Any]:
    """The scope of ``GET path?query_string`` from a loopback client, with ``headers``."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query_string,
        "headers": [(name.lower().encode(), value.encode()) for name, value in (headers or {}).items()],
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 50000),
    }
