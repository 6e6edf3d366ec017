"""A server answers only for its own names: the base URL's host, the loopback names, the address
it listens on and the operator's REUSE_DATA_TRUSTED_HOSTS. Any other Host is refused with 421 on
every path (the API, the pages, /mcp, the operator's probes); a page of another origin may still
read the API (CORS ``*``) but not call /mcp. Real uvicorn servers, raw requests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from foundations.media_types import PROBLEM_JSON
from tests.support.harness import Reply, Server, serving

BASE_URL = "https://data.example.org"
PATHS = ("/api/public/products.json", "/guides/start-here", "/readyz", "/llms.txt")
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
).encode()


@pytest.fixture(scope="module")
def named(demo_home: Path) -> Iterator[Server]:
    environ = {"REUSE_DATA_BASE_URL": BASE_URL, "REUSE_DATA_TRUSTED_HOSTS": "*.mirror.example.net, 192.0.2.7"}
    with serving(demo_home, environ=environ) as running:
        yield running


def get(server: Server, path: str, host: str, *fields: str) -> Reply:
    head = [f"GET {path} HTTP/1.1", f"Host: {host}", *fields, "Connection: close"]
    return server.exchange(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))


def post_mcp(server: Server, host: str, *fields: str) -> Reply:
    head = [
        "POST /mcp HTTP/1.1",
        f"Host: {host}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {len(INITIALIZE)}",
        *fields,
        "Connection: close",
    ]
    return server.exchange(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + INITIALIZE)


@pytest.mark.parametrize("host", ["evil.example.com", "evil.example.com:8000", "data.example.org.evil.com", "[::2]"])
def test_a_foreign_host_is_refused_on_every_path(named: Server, host: str):
    for reply in [get(named, path, host) for path in PATHS] + [post_mcp(named, host)]:
        assert reply.status == 421, (host, reply.status, reply.body[:200])
        assert reply.headers["content-type"] == PROBLEM_JSON
        problem = json.loads(reply.body)
        assert problem["status"] == 421 and problem["type"].endswith("/unknown-host")
        assert "REUSE_DATA_TRUSTED_HOSTS" in problem["detail"] and host in problem["detail"]


@pytest.mark.parametrize(
    "host",
    [
        *("data.example.org", "DATA.example.org:443", "data.example.org.", "127.0.0.1", "localhost:8000", "[::1]:8000"),
        *("a.mirror.example.net", "b.a.mirror.example.net", "192.0.2.7"),
    ],
)
def test_the_servers_own_names_are_answered(named: Server, host: str):
    assert [get(named, path, host).status for path in PATHS] == [200] * len(PATHS)
    assert post_mcp(named, host).status == 200


def test_a_wildcard_stands_for_subdomains_only(named: Server):
    assert get(named, "/api/public/products.json", "mirror.example.net").status == 421


def test_pages_of_other_origins_read_the_api_but_do_not_call_mcp(named: Server):
    read = get(named, "/api/public/products.json", "data.example.org", "Origin: https://notebook.example.com")
    assert read.status == 200 and read.headers["access-control-allow-origin"] == "*"

    refused = post_mcp(named, "127.0.0.1", "Origin: http://evil.example.com")
    assert refused.status == 403 and json.loads(refused.body)["type"].endswith("/foreign-origin")
    assert post_mcp(named, "127.0.0.1", "Origin: null").status == 403
    assert post_mcp(named, "127.0.0.1", "Origin: https://data.example.org").status == 200
    assert post_mcp(named, "127.0.0.1", "Origin: http://localhost:6274").status == 200  # a local inspector
    assert post_mcp(named, "127.0.0.1").status == 200  # an assistant outside a browser sends none


def test_the_intake_answers_only_for_its_names_too(demo_home: Path):
    with serving(demo_home, command="intake", ready="/", environ={"REUSE_DATA_BASE_URL": BASE_URL}) as intake:
        assert get(intake, "/", "127.0.0.1").status == 200
        assert get(intake, "/api/intake/receipts", "data.example.org").status == 401
        refused = get(intake, "/", "evil.example.com")
        assert refused.status == 421 and json.loads(refused.body)["status"] == 421
