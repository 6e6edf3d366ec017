"""Prometheus metrics of one server: its requests, and the release it serves.

Requests are counted by route (the route's path template, so a crawler's millions of product
paths make one series) and status, timed in a histogram by route, and their response bytes
summed by route (the streamed exports are most of them). The release's version, publish time
and age, readiness and the replica's failed store polls are read from the server when
Prometheus scrapes, not kept up to date on the request path.

With several worker processes (``reuse-data serve --workers N``) each worker writes its
counts to memory-mapped files in ``PROMETHEUS_MULTIPROC_DIR`` (prometheus-client's multiprocess
mode, set up by the CLI), and a scrape of any worker sums them all.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import Response

if TYPE_CHECKING:
    from serve.replica import ReleaseFollower
    from serve.snapshot import SnapshotHolder

MULTIPROCESS_DIR_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class ReleaseCollector(Collector):
    """The served release and the replica's store polls, read at scrape time."""

    def __init__(self, holder: SnapshotHolder, follower: ReleaseFollower | None) -> None:
        self.holder = holder
        self.follower = follower

    def collect(self) -> Iterator[Metric]:
        ready = GaugeMetricFamily("reuse_data_ready", "1 once a verified release is loaded and served")
        ready.add_metric([], 1.0 if self.holder.ready else 0.0)
        yield ready
        if self.holder.ready:
            snapshot = self.holder.current
            info = InfoMetricFamily("reuse_data_release", "The release this process serves")
            info.add_metric([], {"version": snapshot.version})
            yield info
            published = snapshot.published_at.timestamp()
            yield GaugeMetricFamily(
                "reuse_data_release_published_timestamp_seconds",
                "When the served release was published (Unix time)",
                value=published,
            )
            yield GaugeMetricFamily(
                "reuse_data_release_age_seconds",
                "Seconds since the served release was published",
                value=time.time() - published,
            )
        if self.follower is not None:
            yield CounterMetricFamily(
                "reuse_data_store_sync_failures",
                "Polls of the object store that could not bring a new release (the served one stays)",
                value=self.follower.failures,
            )


class ServiceMetrics:
    """The request metrics of one app, and the ``/metrics`` endpoint that exposes them."""

    def __init__(self, holder: SnapshotHolder, follower: ReleaseFollower | None = None) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "reuse_data_http_requests",
            "HTTP requests answered, by route and status",
            ["route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "reuse_data_http_request_duration_seconds",
            "Time from a request's arrival to its response's last byte, by route",
            ["route"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.response_bytes = Counter(
            "reuse_data_http_response_bytes",
            "Bytes of response bodies sent (streams included, as they go), by route",
            ["route"],
            registry=self.registry,
        )
        self.release_registry = CollectorRegistry(auto_describe=False)
        self.release_registry.register(ReleaseCollector(holder, follower))
        # The labelled children by their labels: ``labels()`` takes a lock and builds a key each
        # time, a few microseconds of every request otherwise.
        self._per_route: dict[str, tuple[Callable[[float], None], Callable[[float], None]]] = {}
        self._per_status: dict[tuple[str, int], Callable[[float], None]] = {}

    def observe(self, route: str, status: int, seconds: float, body_bytes: int) -> None:
        """Count one answered request."""
        timed = self._per_route.get(route)
        if timed is None:
            timed = self._per_route[route] = (self.latency.labels(route).observe, self.response_bytes.labels(route).inc)
        observe_latency, add_bytes = timed
        observe_latency(seconds)
        if body_bytes:
            add_bytes(body_bytes)
        count = self._per_status.get((route, status))
        if count is None:
            count = self._per_status[(route, status)] = self.requests.labels(route, str(status)).inc
        count(1)

    def exposition(self) -> bytes:
        """Every metric in Prometheus's text format: this process's (or every worker's) and the release's."""
        if os.environ.get(MULTIPROCESS_DIR_VARIABLE):
            registry = CollectorRegistry()
            MultiProcessCollector(registry)
        else:
            registry = self.registry
        return generate_latest(registry) + generate_latest(self.release_registry)

    async def endpoint(self, request: Request) -> Response:
        return Response(self.exposition(), media_type=CONTENT_TYPE, headers={"Cache-Control": "no-store"})
