"""The request head is bounded (foundations/http_limits.py), on the real server: a request line or
headers past ``MAX_HEAD_BYTES`` get 414 or 431 as problem+json, whether they arrive at once or
trickle in, and the server goes on serving everyone else.
"""

from __future__ import annotations

import http.client
import select
import socket
import time

import pytest

from foundations.http_limits import MAX_HEAD_BYTES
from tests.support.harness import Server, request_head

PATH = "/api/public/dataset.json"


def assert_refused(reply, status: int) -> None:
    assert reply.status == status
    assert reply.headers["content-type"] == "application/problem+json"
    problem = reply.json()
    assert problem["status"] == status and str(MAX_HEAD_BYTES) in problem["detail"]
    assert reply.headers["connection"] == "close"


def test_a_head_just_within_the_bound_is_served(server: Server):
    padding = MAX_HEAD_BYTES - len(request_head(PATH, b"X-Padding: ")) - 100
    assert server.exchange(request_head(PATH, b"X-Padding: " + b"a" * padding)).status == 200
    query = "x=" + "a" * (MAX_HEAD_BYTES - 200)
    assert server.exchange(request_head(f"{PATH}?{query}")).status == 200


@pytest.mark.parametrize(
    ("refused_head", "status"),
    [
        (request_head(f"{PATH}?q=" + "a" * MAX_HEAD_BYTES), 414),
        (request_head(PATH, b"X-Big: " + b"a" * MAX_HEAD_BYTES), 431),
        (request_head(PATH, *(b"X-%d: a" % n for n in range(MAX_HEAD_BYTES // 8))), 431),
        (request_head(PATH, b"X-Huge: " + b"a" * 20_000_000), 431),  # never buffered whole
    ],
    ids=["request-line", "one-header", "many-headers", "20-MB-header"],
)
def test_a_head_past_the_bound_is_refused_with_a_problem(server: Server, refused_head: bytes, status: int):
    assert_refused(server.exchange(refused_head), status)
    assert server.get(PATH).status == 200


def test_a_head_trickling_in_is_refused_before_it_ends(server: Server):
    trickle = 1_000_000
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
        connection.sendall(b"GET " + PATH.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        sent = 0
        try:
            while sent < trickle and not select.select([connection], [], [], 0)[0]:
                connection.sendall(b"a" * 1024)
                sent += 1024
                time.sleep(0.001)
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = connection.recv(65536)
    assert answer.startswith(b"HTTP/1.1 431 ")
    assert sent < trickle, "the refusal should come while the header is still arriving"


def test_each_head_on_a_kept_alive_connection_is_measured_on_its_own(server: Server):
    keep_alive = request_head(PATH, b"X-Padding: " + b"a" * (MAX_HEAD_BYTES // 2)).replace(b"close", b"keep-alive")
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
        for _ in range(4):  # four heads of half the bound each: twice the bound in all
            connection.sendall(keep_alive)
            response = http.client.HTTPResponse(connection, method="GET")
            response.begin()
            assert response.status == 200 and response.read()


def test_pipelined_heads_are_each_measured_on_their_own(server: Server):
    """Three requests of 20 KiB heads in one write: together past the bound, each within it."""
    padded = request_head(PATH, b"X-Padding: " + b"a" * (20 * 1024))
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
        connection.sendall(padded.replace(b"close", b"keep-alive") * 2 + padded)
        received = bytearray()
        while block := connection.recv(1 << 16):
            received += block
    assert received.count(b"HTTP/1.1 200 OK\r\n") == 3 and b"HTTP/1.1 431" not in received
