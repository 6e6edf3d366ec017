"""Prometheus metrics of one server: its requests, and the release it serves.

Requests are counted by route (the route's path template, so a crawler's millions of product
paths make one series) and status, timed in a histogram by route, and their response bytes
summed by route (the streamed exports are most of them). The release's version, publish time
and age, readiness and the replica's failed store polls are read from the server when
Prometheus scrapes, not kept up to date on the request path.

The request path only adds to plain integers (``RequestCounts``): every request is observed
on the event loop's one thread, so no lock is needed, where prometheus-client's own counters
and histograms take one per value (2.5 µs a request, 4 % of the fastest one). prometheus-client
writes the exposition at scrape time from those counts.

With several worker processes (``reuse-data serve --workers N``) each worker also writes its
counts every ``SHARE_SECONDS`` to a file of its own in a folder the CLI makes for the server
(``workers_dir``), and a scrape of any worker sums every worker's file with its own live counts.
"""

from __future__ import annotations

import asyncio
import os
import time
from bisect import bisect_left
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    InfoMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import Response

from foundations.durable_files import replace_durably

if TYPE_CHECKING:
    from release.replica import ReleaseFollower
    from release.snapshot import SnapshotHolder

SHARE_SECONDS = 1.0
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class RequestCounts:
    """Requests answered, by (route, status); latency bucket counts, seconds and body bytes by route."""

    def __init__(self) -> None:
        self.requests: dict[tuple[str, int], int] = {}
        self.buckets: dict[str, list[int]] = {}  # one count per bucket of LATENCY_BUCKETS, then +Inf
        self.seconds: dict[str, float] = {}
        self.body_bytes: dict[str, int] = {}
        self.refusals: dict[tuple[str, str], int] = {}  # by (route, reason)

    def refused(self, route: str, reason: str) -> None:
        """Count one request refused to bound the work (its answer is observed as any other)."""
        key = (route, reason)
        self.refusals[key] = self.refusals.get(key, 0) + 1

    def observe(self, route: str, status: int, seconds: float, body_bytes: int) -> None:
        """Count one answered request (on the event loop: never two at once)."""
        key = (route, status)
        self.requests[key] = self.requests.get(key, 0) + 1
        buckets = self.buckets.get(route)
        if buckets is None:
            buckets = self.buckets[route] = [0] * (len(LATENCY_BUCKETS) + 1)
            self.seconds[route] = 0.0
            self.body_bytes[route] = 0
        buckets[bisect_left(LATENCY_BUCKETS, seconds)] += 1  # a bucket holds values up to its bound
        self.seconds[route] += seconds
        self.body_bytes[route] += body_bytes

    def add(self, other: RequestCounts) -> None:
        for key, count in other.requests.items():
            self.requests[key] = self.requests.get(key, 0) + count
        for route, buckets in other.buckets.items():
            mine = self.buckets.setdefault(route, [0] * (len(LATENCY_BUCKETS) + 1))
            self.buckets[route] = [a + b for a, b in zip(mine, buckets, strict=True)]
            self.seconds[route] = self.seconds.get(route, 0.0) + other.seconds[route]
            self.body_bytes[route] = self.body_bytes.get(route, 0) + other.body_bytes[route]
        for key, count in other.refusals.items():
            self.refusals[key] = self.refusals.get(key, 0) + count

    def to_json(self) -> bytes:
        return orjson.dumps(
            {
                "requests": [[route, status, count] for (route, status), count in self.requests.items()],
                "buckets": self.buckets,
                "seconds": self.seconds,
                "body_bytes": self.body_bytes,
                "refusals": [[route, reason, count] for (route, reason), count in self.refusals.items()],
            }
        )

    @classmethod
    def from_json(cls, data: bytes) -> RequestCounts:
        loaded = orjson.loads(data)
        counts = cls()
        counts.requests = {(route, status): count for route, status, count in loaded["requests"]}
        counts.buckets, counts.seconds, counts.body_bytes = loaded["buckets"], loaded["seconds"], loaded["body_bytes"]
        counts.refusals = {(route, reason): count for route, reason, count in loaded["refusals"]}
        return counts

    def families(self) -> Iterator[Metric]:
        requests = CounterMetricFamily(
            "reuse_data_http_requests", "HTTP requests answered, by route and status", labels=["route", "status"]
        )
        for (route, status), count in sorted(self.requests.items()):
            requests.add_metric([route, str(status)], count)
        yield requests
        latency = HistogramMetricFamily(
            "reuse_data_http_request_duration_seconds",
            "Time from a request's arrival to its response's last byte, by route",
            labels=["route"],
        )
        sent = CounterMetricFamily(
            "reuse_data_http_response_bytes",
            "Bytes of response bodies sent (streams included, as they go), by route",
            labels=["route"],
        )
        for route in sorted(self.buckets):
            cumulative, running = [], 0
            for bound, count in zip((*LATENCY_BUCKETS, float("inf")), self.buckets[route], strict=True):
                running += count
                cumulative.append(("+Inf" if bound == float("inf") else repr(bound), running))
            latency.add_metric([route], cumulative, sum_value=self.seconds[route])
            sent.add_metric([route], self.body_bytes[route])
        yield latency
        yield sent
        refused = CounterMetricFamily(
            "reuse_data_http_refused_requests",
            "Requests refused at once to bound the work (503 with Retry-After), by route and reason",
            labels=["route", "reason"],
        )
        for (route, reason), count in sorted(self.refusals.items()):
            refused.add_metric([route, reason], count)
        yield refused


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


class ServiceMetrics(Collector):
    """The metrics of one server process, and the ``/metrics`` endpoint that exposes them."""

    def __init__(
        self, holder: SnapshotHolder, follower: ReleaseFollower | None = None, workers_dir: Path | None = None
    ) -> None:
        self.counts = RequestCounts()
        self.observe = self.counts.observe  # what the request path calls
        self.refused = self.counts.refused  # and what it calls for a request refused to bound the work
        self.release = ReleaseCollector(holder, follower)
        self.workers_dir = workers_dir
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self)

    @property
    def own_file(self) -> Path | None:
        return self.workers_dir / f"worker-{os.getpid()}.json" if self.workers_dir else None

    def share(self) -> None:
        """Write this worker's counts where the other workers' scrapes read them."""
        if self.own_file is not None:
            replace_durably(self.own_file, self.counts.to_json(), self.own_file.with_suffix(".staging"))

    async def keep_sharing(self) -> None:
        """Share the counts every ``SHARE_SECONDS`` (only with several workers)."""
        while self.workers_dir is not None:
            await asyncio.to_thread(self.share)
            await asyncio.sleep(SHARE_SECONDS)

    def every_worker(self) -> RequestCounts:
        """This process's counts, plus every other worker's last shared ones."""
        if self.workers_dir is None:
            return self.counts
        total = RequestCounts()
        total.add(self.counts)
        for path in self.workers_dir.glob("worker-*.json"):
            if path != self.own_file:
                try:
                    total.add(RequestCounts.from_json(path.read_bytes()))
                except (OSError, ValueError, KeyError):
                    continue  # being replaced, or from a worker that died mid-write: the next scrape has it
        return total

    def collect(self) -> Iterator[Metric]:
        yield from self.every_worker().families()
        yield from self.release.collect()

    async def endpoint(self, request: Request) -> Response:
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE, headers={"Cache-Control": "no-store"})
