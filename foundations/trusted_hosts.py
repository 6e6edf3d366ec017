"""Answer only for our own names: a request whose Host is not one of them is refused before any
route sees it, and so is a browser's request to an origin-checked path (``/mcp``) from a page
whose Origin is not one of them.

DNS rebinding points a name an attacker owns at this server's address, so that a page on that
name, in a browser inside the operator's network, can read the server as if it were its own
origin. The browser then sends the attacker's name as Host (and Origin), which is what this
refuses, with 421 (RFC 9110: this server does not answer for that authority) or 403 for a
foreign Origin, as problem+json. The names answered for are ``Settings.answered_hosts``
(``*.example.org`` stands for every subdomain of it) and the address the request arrived on:
a balancer or a health probe that reaches a server by its address names that address, which a
rebound name never is. A request without Host (HTTP/1.0) names no authority and passes.

The public API's GETs keep answering any Origin (CORS ``*`` is the contract: any page may read
the open data), since a page on another origin that passes the Host check reads only what it
could fetch itself. ``/mcp`` is the exception the MCP specification makes: servers must check
Origin there.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from foundations.problem_details import problem_response

VERDICTS_KEPT = 1024  # distinct (Host, local address) pairs remembered


def host_of(authority: str) -> str:
    """The host name of a Host header's value (``name:port``, ``[v6]:port``), lower case, without
    the root's trailing dot."""
    authority = authority.strip().lower()
    if authority.startswith("["):
        return authority[1 : authority.find("]")] if "]" in authority else authority
    if authority.count(":") == 1:
        authority = authority.split(":", 1)[0]
    return authority.rstrip(".")


class HostNames:
    """A set of host names, exact or ``*.suffix`` (every subdomain of ``suffix``, not itself)."""

    def __init__(self, names: Iterable[str]) -> None:
        names = [name.lower().strip("[]").rstrip(".") for name in names if name]
        self.exact = frozenset(name for name in names if not name.startswith("*."))
        self.suffixes = tuple(name[1:] for name in names if name.startswith("*."))

    def __contains__(self, host: str) -> bool:
        return host in self.exact or (bool(self.suffixes) and host.endswith(self.suffixes))

    def __repr__(self) -> str:
        return ", ".join([*sorted(self.exact), *("*" + suffix for suffix in self.suffixes)])


class TrustedHosts:
    """The ASGI middleware: every HTTP request's Host checked, and Origin on ``origin_checked`` paths."""

    def __init__(self, app: ASGIApp, names: Iterable[str], origin_checked: Iterable[str] = ()) -> None:
        self.app = app
        self.names = HostNames(names)
        self.origin_checked = frozenset(origin_checked)
        # Each Host header's verdict, by its raw bytes and the local address: a request pays one
        # lookup. Bounded: a client sending ever new names empties it, never grows it.
        self.verdicts: dict[tuple[bytes, str | None], bool] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = origin = None
        for name, value in scope["headers"]:
            if name == b"host":
                host = value
            elif name == b"origin":
                origin = value
        if host is not None and not self.answers(host, scope.get("server")):
            detail = (
                f"This server does not answer for the host {host.decode('latin-1')!r}. Use its public address; "
                "an operator who serves it under another name lists that name in REUSE_DATA_TRUSTED_HOSTS."
            )
            await problem_response(Request(scope), 421, detail, slug="unknown-host")(scope, receive, send)
            return
        if origin is not None and scope["path"] in self.origin_checked and not self.trusted_origin(origin):
            detail = (
                f"Requests to {scope['path']} from pages of {origin.decode('latin-1')!r} are refused: it answers "
                "pages of this server's own names only. Clients that are not in a browser send no Origin and are "
                "answered."
            )
            await problem_response(Request(scope), 403, detail, slug="foreign-origin")(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def answers(self, host: bytes, server: tuple[str, int | None] | None) -> bool:
        """Whether the Host header ``host`` names one of our names, or the local address the
        connection came in on."""
        local = server[0] if server is not None else None
        verdict = self.verdicts.get((host, local))
        if verdict is None:
            name = host_of(host.decode("latin-1"))
            verdict = name in self.names or (local is not None and name == local.lower())
            if len(self.verdicts) >= VERDICTS_KEPT:
                self.verdicts.clear()
            self.verdicts[(host, local)] = verdict
        return verdict

    def trusted_origin(self, origin: bytes) -> bool:
        """Whether a browser's Origin (``scheme://host[:port]``, or ``null``) is a page of one of our names."""
        parts = urlsplit(origin.decode("latin-1"))
        return parts.scheme in ("http", "https") and (parts.hostname or "") in self.names
