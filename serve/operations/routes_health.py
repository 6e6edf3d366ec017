"""What a balancer and an operator ask of a server: is it alive, is it ready, its metrics.

- ``/healthz`` (liveness): 200 while the process answers at all; a balancer or orchestrator
  restarts a server that stops answering it.
- ``/readyz`` (readiness): 200 once a verified release is loaded, with its version; 503
  (problem+json, saying why) before that, so no traffic reaches a server with nothing to serve.
- ``/metrics``: Prometheus's text format (``serve.operations.metrics``).

None of them is cached, and none is part of the public API's OpenAPI document: a deployment
keeps them off its public address (``docs/deploy.md``).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from foundations.problem_details import ProblemError

NOT_CACHED = {"Cache-Control": "no-store"}


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "alive"}, headers=NOT_CACHED)


async def readyz(request: Request) -> Response:
    holder = request.app.state.snapshots
    if not holder.ready:
        follower = request.app.state.follower
        why = holder.unservable or (follower and follower.last_error) or "nothing is published yet"
        why = f"{why}; {holder.remedy}"
        raise ProblemError(503, f"Not ready: {why}.", slug="not-ready", headers=NOT_CACHED)
    snapshot = holder.current
    return JSONResponse(
        {"status": "ready", "dataset_version": snapshot.version, "published_at": snapshot.published_at.isoformat()},
        headers={**NOT_CACHED, "X-Dataset-Version": snapshot.version},
    )


async def metrics(request: Request) -> Response:
    return await request.app.state.metrics.endpoint(request)


routes = [
    Route("/healthz", healthz, methods=["GET"]),
    Route("/readyz", readyz, methods=["GET"]),
    Route("/metrics", metrics, methods=["GET"]),
]
