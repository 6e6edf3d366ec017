"""A request read from its ASGI scope, for the endpoints that answer from prepared headers:
building a Request costs more than the rest of such an answer."""

from __future__ import annotations

from starlette.types import Scope


def request_headers(scope: Scope, names: frozenset[bytes]) -> dict[bytes, str]:
    """The first value of each header in ``names`` (lower case) the request carries, as
    ``Request.headers.get`` gives it."""
    found: dict[bytes, str] = {}
    for name, value in scope["headers"]:
        if name in names and name not in found:
            found[name] = value.decode("latin-1")
    return found
