"""Three replicas, each on a host of its own, behind nginx, while releases are published.

Clients keep asking through the balancer for the whole run. It requires no failed request,
every JSON body from the release its ``X-Dataset-Version`` names, and every replica serving
each new release within ``CONVERGE_SECONDS`` of its publish. Then one client asks ``ask.json``
faster than the balancer's per-client rate: it is refused with 429, another client is not.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from foundations.problem_details import PROBLEM_TYPE_BASE
from tests.support.deployment import Deployment, deployment
from tests.support.harness import home_layout
from tests.support.nginx import NGINX

# The store is polled every 2 s; downloading, checking and loading the demo's release takes about 1 s (2 s
# from publish to the last replica, measured); the rest is headroom for a loaded machine.
CONVERGE_SECONDS = 10.0
CLIENTS = 4
SPREE = 60  # questions one client sends at once: past the balancer's burst of 20
PATHS = (
    "/api/public/products.json",
    "/api/public/recommendations.json",
    "/api/public/capabilities.json",
    "/api/public/answers.json?lang=el",
    "/api/public/changes.json",
)

pytestmark = pytest.mark.skipif(not Path(NGINX).exists(), reason="nginx is not installed: run `make setup`")


class Clients:
    """``CLIENTS`` threads asking through the balancer until stopped, checking every answer."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.stop = threading.Event()
        self.answered = 0
        self.failures: list[str] = []
        self.versions: set[str] = set()
        self.threads = [threading.Thread(target=self.ask, args=(n,), daemon=True) for n in range(CLIENTS)]

    def ask(self, number: int) -> None:
        turn = number
        while not self.stop.is_set():
            path = PATHS[turn % len(PATHS)]
            turn += 1
            try:
                with urllib.request.urlopen(self.base_url + path, timeout=30) as response:
                    header, body = response.headers["X-Dataset-Version"], json.loads(response.read())
            except (OSError, ValueError, urllib.error.HTTPError) as error:
                self.failures.append(f"{path}: {error}")
                continue
            if body.get("dataset_version") != header:
                self.failures.append(f"{path}: body of {body.get('dataset_version')} under {header}")
            self.versions.add(header)
            self.answered += 1

    def __enter__(self) -> Clients:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=60)


@pytest.fixture(scope="module")
def deployed(demo_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    with deployment(tmp_path_factory.mktemp("deployment"), home_layout(demo_home).warehouse_path, replicas=3) as made:
        yield made


def test_three_replicas_behind_nginx_while_releases_are_published(deployed: Deployment):
    first = deployed.served()[0]
    assert deployed.served() == [first] * 3
    took = []
    with Clients(deployed.balancer_url) as clients:
        time.sleep(1)
        for _ in range(2):
            version = deployed.publish()
            took.append(deployed.wait_converged(version, CONVERGE_SECONDS))
            time.sleep(1)  # answers from the new release through the balancer
    assert clients.failures == [], clients.failures[:5]
    assert clients.answered > 100
    assert {first, version} <= clients.versions

    # nginx spread the clients over every replica, and keeps the operator's addresses private.
    for replica in deployed.replicas:
        metrics = replica.get("/metrics").body.decode()
        served = sum(
            float(line.rsplit(" ", 1)[1])
            for line in metrics.splitlines()
            if line.startswith("reuse_data_http_requests_total{") and 'route="/api/public/' in line
        )
        assert served > 10, f"replica {replica.host} answered {served} API requests"
    with pytest.raises(urllib.error.HTTPError) as hidden:
        urllib.request.urlopen(deployed.balancer_url + "/metrics", timeout=5)
    assert hidden.value.code == 404
    print(
        f"replicas {'in network namespaces' if deployed.isolated else 'on loopback'}: "
        f"{clients.answered} answers, 0 failed; every replica on each new release in "
        + ", ".join(f"{seconds:.2f} s" for seconds in took)
    )


def ask_from(address: str, balancer_url: str, question: str) -> tuple[int, dict[str, str], bytes]:
    """``ask.json?q=question`` through the balancer from the loopback address ``address`` (a client of its own)."""
    port = int(balancer_url.rsplit(":", 1)[1])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(address, 0))
    try:
        connection.request("GET", f"/api/public/ask.json?q={urllib.parse.quote(question)}")
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def test_a_client_over_its_ask_rate_gets_429_while_another_is_answered(deployed: Deployment):
    hasty, patient = "127.0.0.2", "127.0.0.3"  # two clients, as nginx tells them apart: by address
    questions = [f"Which bottle keeps coffee hot for {n} hours?" for n in range(SPREE)]
    replies: list[tuple[int, dict[str, str], bytes]] = []
    threads = [
        threading.Thread(target=lambda q=q: replies.append(ask_from(hasty, deployed.balancer_url, q)))
        for q in questions
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    statuses = sorted(status for status, _, _ in replies)
    assert len(replies) == SPREE and set(statuses) <= {200, 429}, statuses
    limited = [(headers, json.loads(body)) for status, headers, body in replies if status == 429]
    assert limited, "a spree past the burst is limited"
    assert statuses.count(200) >= 1, "the burst itself is answered"
    for headers, problem in limited:
        assert headers["content-type"] == "application/problem+json" and headers["retry-after"] == "1"
        assert problem["type"] == f"{PROBLEM_TYPE_BASE}rate-limited" and problem["status"] == 429

    # Meanwhile another client, within its own rate, is answered every time.
    for n in range(5):
        status, _, body = ask_from(patient, deployed.balancer_url, f"Is a steel lunch box dishwasher safe ({n})?")
        assert status == 200, body[:300]
