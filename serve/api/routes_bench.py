"""bench.jsonl and bench.csv: the same rows, in the same order, streamed from DuckDB a page at a time.

A snapshot stores ``bench_measurements`` sorted by ``stream_position``
(``warehouse.contract.STORED_ORDER``) and a DuckDB scan keeps that order, so a page is a small
query with no ORDER BY that resumes after the last row sent and stops after a page's rows
(about ``PAGE_BYTES`` of output). The server holds one page per stream whatever the size of
the table or of the export, and the first page leaves before the next is read. (DuckDB's own
streaming result reads far ahead of a slow client, which costs memory in proportion to the
export: 15 to 30 MB per open reader of a 20,000-row table here, even with
``streaming_buffer_size`` lowered.) The snapshot is immutable, so the pages of one stream
always fit together. Filters are query parameters, never SQL text. DuckDB encodes JSON lines
itself and pyarrow writes CSV: no Python object per row.
"""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.csv as pa_csv
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from foundations.arrow_buffers import string_column_bytes
from foundations.media_types import CSV, NDJSON, with_charset
from public.openapi import BENCH_COLUMNS, BENCH_DEFAULT_LIMIT, BENCH_MAX_LIMIT
from release.snapshot import Snapshot
from serve.api import params
from serve.http.responses import streamed

# The first page is small, so the first byte leaves early. Later pages are sized in bytes of
# output: each page is a query of its own (1 to 2 ms of fixed cost, whatever its rows), so
# fewer, larger pages stream faster, while a slow client holds one page of memory. The rows of
# the next page are PAGE_BYTES over the bytes per row of the pages sent so far: about 2,800 CSV
# rows or 1,900 JSON lines of the demo's rows (it was 2,048 rows of either).
FIRST_PAGE_ROWS = 256
PAGE_BYTES = 1536 * 1024
MIN_PAGE_ROWS, MAX_PAGE_ROWS = 256, 8192
# A page leaves in pieces of this size: the server's transport copies what it sends, and a
# copy of one piece per slow client costs far less than a copy of one page.
SEND_BYTES = 64 * 1024
_PAGE = (
    "SELECT {select} FROM bench_measurements "
    "WHERE ($protocol IS NULL OR protocol_slug = $protocol) AND ($product IS NULL OR product_slug = $product) "
    "AND stream_position > $after LIMIT $rows"
)
CSV_PAGE_SQL = _PAGE.format(select=", ".join((*BENCH_COLUMNS, "stream_position")))
# DuckDB writes each row as one JSON line: no Python object per row or per value.
_JSON_ROW = "to_json(struct_pack(" + ", ".join(f"{c} := {c}" for c in BENCH_COLUMNS) + ")) || chr(10)"
JSONL_PAGE_SQL = _PAGE.format(select=f"{_JSON_ROW} AS line, stream_position")


@dataclass(frozen=True)
class BenchFilters:
    """What a client asked for: a protocol, a product (None: all) and at most ``limit`` rows."""

    protocol: str | None
    product: str | None
    limit: int


@dataclass(frozen=True)
class Page:
    body: bytes
    rows: int
    last_position: int | None


def _last_position(page: pa.Table) -> int | None:
    return page.column("stream_position")[-1].as_py() if page.num_rows else None


def read_jsonl_page(snapshot: Snapshot, query: dict[str, Any], first: bool) -> Page:
    with snapshot.cursor() as cursor:
        page = cursor.sql(JSONL_PAGE_SQL, params=query).to_arrow_table()
    return Page(string_column_bytes(page.column("line")), page.num_rows, _last_position(page))


def read_csv_page(snapshot: Snapshot, query: dict[str, Any], first: bool) -> Page:
    """A page as CSV; the first carries the header (even with no rows, so the columns are known)."""
    with snapshot.cursor() as cursor:
        page = cursor.sql(CSV_PAGE_SQL, params=query).to_arrow_table()
    buffer = io.BytesIO()
    pa_csv.write_csv(page.drop_columns(["stream_position"]), buffer, pa_csv.WriteOptions(include_header=first))
    return Page(buffer.getvalue(), page.num_rows, _last_position(page))


def send_pieces(body: bytes) -> Iterator[bytes]:
    """``body`` in pieces of at most ``SEND_BYTES``, each ending after a line where one fits."""
    start = 0
    while start < len(body):
        end = start + SEND_BYTES
        if end < len(body):
            line_end = body.rfind(b"\n", start, end)
            end = line_end + 1 if line_end >= 0 else end
        yield body[start:end]
        start = end


async def export_pages(
    snapshot: Snapshot,
    reader_pool: Executor,
    filters: BenchFilters,
    read_page: Callable[[Snapshot, dict[str, Any], bool], Page],
) -> AsyncIterator[bytes]:
    """The selected rows in stream order, encoded a page at a time as the response is sent.

    Pages are read on ``reader_pool``, a few threads of the app's own: DuckDB and Arrow keep
    memory per thread that touches them, so a handful of readers bound the server's memory
    however many clients stream at once.
    """
    loop = asyncio.get_running_loop()
    after, left, first = -1, filters.limit, True
    sent_bytes = sent_rows = 0
    while True:
        rows = min(FIRST_PAGE_ROWS if first else next_page_rows(sent_bytes, sent_rows), left)
        query = {"protocol": filters.protocol, "product": filters.product, "after": after, "rows": rows}
        page = await loop.run_in_executor(reader_pool, read_page, snapshot, query, first)
        body, count, after = page.body, page.rows, page.last_position
        del page
        sent_bytes, sent_rows = sent_bytes + len(body), sent_rows + count
        for piece in send_pieces(body):
            yield piece
        del body  # before the next page is read: one page per stream in memory, not two
        first, left = False, left - count
        if count < rows or left <= 0:
            return


def next_page_rows(sent_bytes: int, sent_rows: int) -> int:
    """Rows for a page of about ``PAGE_BYTES``, at the bytes per row sent so far."""
    if sent_rows == 0:
        return MIN_PAGE_ROWS
    return max(MIN_PAGE_ROWS, min(MAX_PAGE_ROWS, PAGE_BYTES * sent_rows // max(sent_bytes, 1)))


def _filters(request: Request) -> BenchFilters:
    return BenchFilters(
        protocol=params.optional_text(request, "protocol"),
        product=params.optional_text(request, "product"),
        limit=params.limit(request, BENCH_DEFAULT_LIMIT, BENCH_MAX_LIMIT),
    )


async def bench_jsonl(request: Request) -> Response:
    filters = _filters(request)
    snapshot = request.app.state.snapshots.current
    chunks = export_pages(snapshot, request.app.state.reader_pool, filters, read_jsonl_page)
    return streamed(request, snapshot, chunks, NDJSON)


async def bench_csv(request: Request) -> Response:
    filters = _filters(request)
    snapshot = request.app.state.snapshots.current
    label = re.sub(r"[^a-z0-9-]", "", (filters.protocol or "all").lower())[:60] or "all"
    name = f"bench-{label}-{snapshot.version}.csv"
    return streamed(
        request,
        snapshot,
        export_pages(snapshot, request.app.state.reader_pool, filters, read_csv_page),
        with_charset(CSV),
        {"Content-Disposition": f'attachment; filename="{name}"'},
    )


routes = [
    Route("/api/public/bench.jsonl", bench_jsonl),
    Route("/api/public/bench.csv", bench_csv),
]
