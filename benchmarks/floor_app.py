"""The floor of this stack: bare Starlette apps with nothing between the socket and the bytes.

- Every recorded response of the real API, replayed from memory by path and query, with the
  same status, headers and body; an ``If-None-Match`` equal to the recorded ETag gets a 304 with
  the headers the real API's 304 carried (recorded beside the 200; only the ETag if none was).
- ``/floor/bench.csv?limit=N``: the first N rows of the snapshot's bench table streamed from
  DuckDB through pyarrow's own CSV writer, a record batch at a time, with no other logic.

    python -m benchmarks.floor_app --port P --recorded FILE.json --snapshot SNAPSHOT.duckdb

Run on one uvicorn worker with the settings `reuse-data serve` uses, so that the only
difference measured is the work each request does.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow.csv as pa_csv
from starlette.applications import Starlette
from starlette.concurrency import iterate_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from public.openapi import BENCH_COLUMNS

BATCH_ROWS = 1024


Recorded = tuple[int, dict[str, str], bytes, dict[str, str] | None]


def load_recorded(path: Path) -> dict[str, Recorded]:
    """Recorded responses: {path?query: (status, headers, body, the 304's headers or None)}."""
    recorded = json.loads(path.read_text(encoding="utf-8"))
    return {
        key: (r["status"], r["headers"], base64.b64decode(r["body"]), r.get("not_modified"))
        for key, r in recorded.items()
    }


def create_floor_app(recorded_path: Path, snapshot_path: Path) -> Starlette:
    recorded = load_recorded(recorded_path)
    connection = duckdb.connect(str(snapshot_path), read_only=True)
    columns = ", ".join(BENCH_COLUMNS)

    async def replay(request: Request) -> Response:
        key = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        status, headers, body, not_modified = recorded[key]
        etag = headers.get("etag")
        if etag is not None and request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers=not_modified or {"ETag": etag})
        return Response(body, status_code=status, headers=headers)

    def csv_batches(limit: int) -> Iterator[bytes]:
        cursor = connection.cursor()
        try:
            query = f"SELECT {columns} FROM bench_measurements LIMIT $limit"
            reader = cursor.sql(query, params={"limit": limit}).to_arrow_reader(BATCH_ROWS)
            header = True
            for batch in reader:
                buffer = io.BytesIO()
                pa_csv.write_csv(batch, buffer, pa_csv.WriteOptions(include_header=header))
                header = False
                yield buffer.getvalue()
        finally:
            cursor.close()

    async def bench_csv(request: Request) -> Response:
        limit = int(request.query_params.get("limit", "20000"))
        return StreamingResponse(iterate_in_threadpool(csv_batches(limit)), media_type="text/csv")

    return Starlette(routes=[Route("/floor/bench.csv", bench_csv), Route("/{path:path}", replay)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--recorded", type=Path, required=True, help="responses recorded from the real API (JSON)")
    parser.add_argument("--snapshot", type=Path, required=True, help="the snapshot file the real API serves")
    args = parser.parse_args()
    import uvicorn

    app = create_floor_app(args.recorded, args.snapshot)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
