"""Routes whose bodies are fixed per snapshot: collections, descriptors, claims, full text."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from serve.http_cache import JSON, Replayed, cached

NDJSON = "application/x-ndjson"
TEXT = "text/plain; charset=utf-8"


def _document(name: str, media_type: str = JSON) -> Replayed:
    """An endpoint serving the body precomputed under ``name`` for the current snapshot."""

    async def endpoint(request: Request) -> Response:
        snapshot = request.app.state.snapshots.current
        return cached(request, snapshot, snapshot.cache[name], media_type, key=name)

    endpoint.__name__ = name
    return Replayed(endpoint)


routes = [
    Route("/api/public/products.json", _document("products"), methods=["GET"]),
    Route("/api/public/recommendations.json", _document("recommendations"), methods=["GET"]),
    Route("/api/public/answers.json", _document("answers"), methods=["GET"]),
    Route("/api/public/content.json", _document("content"), methods=["GET"]),
    Route("/api/public/capabilities.json", _document("capabilities"), methods=["GET"]),
    Route("/api/public/dataset.json", _document("dataset"), methods=["GET"]),
    Route("/api/public/press-kit.json", _document("press_kit"), methods=["GET"]),
    Route("/api/public/claims.jsonl", _document("claims", NDJSON), methods=["GET"]),
    Route("/llms-full.txt", _document("llms_full", TEXT), methods=["GET"]),
]
