"""bench.jsonl and bench.csv: the same rows, in the same order, streamed from DuckDB in Arrow batches.

The query is parameterised (filters never reach the SQL text) and read batch by batch, so the
first bytes leave before the result is complete and memory stays bounded at any size.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

import orjson
import pyarrow as pa
import pyarrow.csv as pa_csv
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from serve import params
from serve.http_cache import streamed
from serve.snapshot import Snapshot

DEFAULT_LIMIT, MAX_LIMIT = 5000, 20000
BATCH_ROWS = 1024
# The documented column order of both exports.
BENCH_COLUMNS = (
    "measurement_id",
    "product_slug",
    "product_name",
    "brand",
    "category_slug",
    "protocol_slug",
    "protocol_name",
    "method",
    "tolerance",
    "required_sample_size",
    "sample_size",
    "value",
    "unit",
    "status",
    "standard_deviation",
    "sub_score",
    "tester",
    "tested_on",
    "url",
    "attribution",
)
BENCH_SQL = (
    f"SELECT {', '.join(BENCH_COLUMNS)} FROM bench_measurements "
    "WHERE ($protocol IS NULL OR protocol_slug = $protocol) AND ($product IS NULL OR product_slug = $product) "
    "ORDER BY stream_position LIMIT $limit"
)


def bench_batches(
    snapshot: Snapshot, protocol: str | None, product: str | None, limit: int
) -> Iterator[pa.RecordBatch]:
    cursor = snapshot.cursor()
    try:
        cursor.execute(BENCH_SQL, {"protocol": protocol, "product": product, "limit": limit})
        reader = cursor.to_arrow_reader(BATCH_ROWS)
        yield from reader
    finally:
        cursor.close()


def jsonl_chunks(batches: Iterator[pa.RecordBatch]) -> Iterator[bytes]:
    for batch in batches:
        yield b"".join(orjson.dumps(row, option=orjson.OPT_NAIVE_UTC) + b"\n" for row in batch.to_pylist())


def csv_chunks(batches: Iterator[pa.RecordBatch]) -> Iterator[bytes]:
    header = True
    for batch in batches:
        buffer = io.BytesIO()
        pa_csv.write_csv(batch, buffer, pa_csv.WriteOptions(include_header=header))
        header = False
        yield buffer.getvalue()
    if header:  # no rows: still a header, so the columns are known
        yield (",".join(f'"{c}"' for c in BENCH_COLUMNS) + "\n").encode()


def _filters(request: Request) -> tuple[str | None, str | None, int]:
    return (
        params.optional_text(request, "protocol"),
        params.optional_text(request, "product"),
        params.limit(request, DEFAULT_LIMIT, MAX_LIMIT),
    )


async def bench_jsonl(request: Request) -> Response:
    protocol, product, limit = _filters(request)
    snapshot = request.app.state.snapshots.current
    return streamed(
        request, snapshot, jsonl_chunks(bench_batches(snapshot, protocol, product, limit)), "application/x-ndjson"
    )


async def bench_csv(request: Request) -> Response:
    protocol, product, limit = _filters(request)
    snapshot = request.app.state.snapshots.current
    label = re.sub(r"[^a-z0-9-]", "", (protocol or "all").lower())[:60] or "all"
    name = f"bench-{label}-{snapshot.version}.csv"
    return streamed(
        request,
        snapshot,
        csv_chunks(bench_batches(snapshot, protocol, product, limit)),
        "text/csv; charset=utf-8",
        {"Content-Disposition": f'attachment; filename="{name}"'},
    )


routes = [
    Route("/api/public/bench.jsonl", bench_jsonl),
    Route("/api/public/bench.csv", bench_csv),
]
