"""What an operator reads of a server: liveness, readiness, Prometheus metrics, JSON access lines.

The server runs two workers, so the metrics each worker counts must be summed whichever
worker a scrape reaches, and the access lines of both must arrive whole.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.harness import Server, serving

PRODUCTS = "/api/public/products.json"


@pytest.fixture(scope="module")
def two_workers(demo_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    log = tmp_path_factory.mktemp("observability") / "server.log"
    with serving(demo_home, "--workers", "2", log=log) as server:
        yield server


def metric(text: str, name: str) -> float:
    """The value of the sample ``name`` (with its labels, as exposed) in a scrape."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} is not in the scrape")


def access_lines(server: Server, path: str, expected: int) -> list[dict]:
    """The access lines of ``path``, once ``expected`` of them are written (they are gathered a
    quarter of a second before being written)."""
    deadline = time.monotonic() + 10
    while True:
        lines = [json.loads(line) for line in server.log.read_text().splitlines() if line.startswith("{")]
        found = [line for line in lines if line["path"] == path]
        if len(found) >= expected or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def test_liveness_and_readiness(two_workers: Server):
    alive = two_workers.get("/healthz")
    assert alive.status == 200 and alive.json() == {"status": "alive"}
    assert alive.headers["cache-control"] == "no-store"
    ready = two_workers.get("/readyz")
    assert ready.status == 200 and ready.json()["status"] == "ready"
    assert ready.json()["dataset_version"] == ready.headers["x-dataset-version"]
    assert ready.headers["x-dataset-version"] == two_workers.get(PRODUCTS).headers["x-dataset-version"]


def test_metrics_count_every_worker_by_route_and_status(two_workers: Server):
    version = two_workers.get(PRODUCTS).headers["x-dataset-version"]
    time.sleep(1.5)  # each worker shares its counts every second
    before = two_workers.get("/metrics").body.decode()
    requests = f'reuse_data_http_requests_total{{route="{PRODUCTS}",status="200"}}'
    start = metric(before, requests) if requests + " " in before else 0.0
    for _ in range(20):
        assert two_workers.get(PRODUCTS).status == 200
    assert two_workers.get("/api/public/products/no-such-product.json").status == 404
    time.sleep(1.5)  # each worker shares its counts every second
    for _ in range(4):  # whichever worker answers the scrape, the sum is the same
        scrape = two_workers.get("/metrics")
        assert scrape.status == 200 and scrape.headers["content-type"].startswith("text/plain")
        text = scrape.body.decode()
        assert metric(text, requests) - start == 20
        assert metric(text, 'reuse_data_http_requests_total{route="unmatched",status="404"}') >= 1
        buckets = f'reuse_data_http_request_duration_seconds_bucket{{le="+Inf",route="{PRODUCTS}"}}'
        assert metric(text, buckets) == metric(text, requests)
        assert metric(text, f'reuse_data_http_response_bytes_total{{route="{PRODUCTS}"}}') > 20 * 10_000
        assert metric(text, f'reuse_data_release_info{{version="{version}"}}') == 1
        assert metric(text, "reuse_data_ready") == 1
        assert 0 <= metric(text, "reuse_data_release_age_seconds") < 3600


def test_one_json_access_line_per_request(two_workers: Server):
    path = "/api/public/recommendations.json"
    for _ in range(6):
        assert two_workers.get(path, headers={"User-Agent": "observability-test", "X-Forwarded-For": "203.0.113.9"})
    lines = access_lines(two_workers, path, 6)
    assert len(lines) == 6
    version = two_workers.get(PRODUCTS).headers["x-dataset-version"]
    for line in lines:
        assert line["status"] == 200 and line["method"] == "GET" and line["route"] == path
        assert line["bytes"] > 1000 and line["duration_ms"] > 0 and line["dataset_version"] == version
        assert line["user_agent"] == "observability-test" and line["forwarded_for"] == "203.0.113.9"
        assert line["time"].endswith("Z")
        # uvicorn takes the client from X-Forwarded-For when the peer is a trusted proxy
        # (FORWARDED_ALLOW_IPS, loopback by default): here the test is that proxy
        assert line["client"] == "203.0.113.9"


def test_a_page_record_and_its_revalidation_are_logged_as_sent(two_workers: Server):
    path, query = "/api/public/page.json", "path=/guides/start-here"
    answered = two_workers.get(f"{path}?{query}", headers={"User-Agent": "page-log-test"})
    revalidated = two_workers.get(
        f"{path}?{query}", headers={"User-Agent": "page-log-test", "If-None-Match": answered.headers["etag"]}
    )
    assert (answered.status, revalidated.status) == (200, 304)
    lines = [line for line in access_lines(two_workers, path, 2) if line["user_agent"] == "page-log-test"]
    assert sorted((line["status"], line["bytes"]) for line in lines) == [(200, len(answered.body)), (304, 0)]
    for line in lines:
        assert line["route"] == path and line["query"] == query and line["method"] == "GET"
        assert line["dataset_version"] == answered.headers["x-dataset-version"]


def test_the_access_log_can_be_switched_off(demo_home: Path, tmp_path: Path):
    log = tmp_path / "quiet.log"
    with serving(demo_home, "--access-log", "off", log=log) as server:
        for _ in range(3):
            assert server.get(PRODUCTS).status == 200
        time.sleep(0.5)
        assert not [line for line in log.read_text().splitlines() if line.startswith("{")]
        # the metrics still count
        assert "reuse_data_http_requests_total" in server.get("/metrics").body.decode()
