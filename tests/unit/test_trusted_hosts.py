"""The Host check in process (``foundations.trusted_hosts``): the parts a real server on loopback
cannot show, a request arriving on another of the machine's addresses and the header's forms."""

from __future__ import annotations

import asyncio

import pytest

from foundations.trusted_hosts import HostNames, TrustedHosts, host_of
from tests.support.asgi import get_scope


@pytest.mark.parametrize(
    ("authority", "host"),
    [
        ("Data.Example.org:8443", "data.example.org"),
        ("[::1]:8000", "::1"),
        ("[::1]", "::1"),
        ("example.org.", "example.org"),
    ],
)
def test_the_host_of_a_host_header(authority: str, host: str):
    assert host_of(authority) == host


def test_a_wildcard_is_every_subdomain_but_not_the_name_itself():
    names = HostNames(["*.example.org", "data.example.net"])
    assert "a.example.org" in names and "b.a.example.org" in names and "data.example.net" in names
    assert "example.org" not in names and "badexample.org" not in names and "data.example.net.evil" not in names


def statuses(host: str, server: tuple[str, int]) -> int:
    answered: list[int] = []

    async def app(scope, receive, send):
        answered.append(200)

    async def send(message):
        if message["type"] == "http.response.start":
            answered.append(message["status"])

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {**get_scope("/api/public/products.json", headers={"Host": host}), "server": server}
    asyncio.run(TrustedHosts(app, ["data.example.org", "127.0.0.1"])(scope, receive, send))
    return answered[0]


def test_the_address_a_request_arrived_on_is_answered_as_a_host():
    # A replica listening on every interface, probed at 10.0.0.5 (Kubernetes sends the pod's address).
    assert statuses("10.0.0.5:8000", ("10.0.0.5", 8000)) == 200
    assert statuses("10.0.0.6:8000", ("10.0.0.5", 8000)) == 421
    assert statuses("evil.example.com", ("10.0.0.5", 8000)) == 421
    assert statuses("data.example.org", ("10.0.0.5", 8000)) == 200
