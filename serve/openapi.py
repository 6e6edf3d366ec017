"""The OpenAPI 3.1.0 document (info.version 1.0.0) of every operation the app serves."""

from __future__ import annotations

from typing import Any

from serve.ask import LANGUAGES

STRING, INTEGER, NUMBER = {"type": "string"}, {"type": "integer"}, {"type": "number"}
PROBLEM = {"$ref": "#/components/responses/Problem"}
ENVELOPE_FIELDS = {
    "source": STRING,
    "license": STRING,
    "usage": STRING,
    "generated_at": {"type": "string", "format": "date-time"},
    "dataset_version": STRING,
}


def _object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or list(properties)}


def _collection(key: str) -> dict[str, Any]:
    return _object(
        {**ENVELOPE_FIELDS, "count": INTEGER, key: {"type": "array", "items": {"type": "object"}}},
    )


def _query(name: str, schema: dict[str, Any], description: str, required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "schema": schema, "description": description}


LIMIT = "Non-negative integer; values above the maximum are clamped to it."
OPERATIONS: list[dict[str, Any]] = [
    {
        "path": "/api/public/ask.json",
        "id": "ask",
        "summary": "Best sourced answer to a question, with a URL to cite",
        "parameters": [
            _query("q", {"type": "string", "maxLength": 1000}, "The question.", required=True),
            _query("limit", {"type": "integer", "minimum": 0, "default": 5, "maximum": 20}, LIMIT),
            _query(
                "lang",
                {"type": "string", "enum": list(LANGUAGES)},
                "Answer language; else Accept-Language, else the script of the question.",
            ),
        ],
        "schema": {"$ref": "#/components/schemas/AskResponse"},
    },
    {
        "path": "/api/public/recommendations.json",
        "id": "recommendations",
        "summary": "Buying-recommendation matrix: every scenario covered",
        "schema": _collection("recommendations"),
    },
    {
        "path": "/api/public/products.json",
        "id": "products",
        "summary": "Scored product catalogue",
        "schema": _collection("products"),
    },
    {
        "path": "/api/public/answers.json",
        "id": "answers",
        "summary": "Answer library",
        "schema": _collection("answers"),
    },
    {
        "path": "/api/public/page.json",
        "id": "page",
        "summary": "Structured record of a site page",
        "parameters": [_query("path", {"type": "string", "maxLength": 512}, "Site path /<section>/<slug>.", True)],
        "schema": _object({**ENVELOPE_FIELDS, "page": {"type": "object"}}),
        "errors": ["400", "404"],
    },
    {
        "path": "/api/public/capabilities.json",
        "id": "capabilities",
        "summary": "Capability index",
        "schema": _object(
            {
                **ENVELOPE_FIELDS,
                "endpoints": {"type": "array"},
                "attribution": {"type": "object"},
                "scoring_methodology": {"type": "object"},
            }
        ),
    },
    {
        "path": "/api/public/content.json",
        "id": "content",
        "summary": "Editorial corpus",
        "schema": _collection("items"),
    },
    {
        "path": "/api/public/bench.jsonl",
        "id": "benchJsonl",
        "summary": "Bench measurements, one JSON object per line",
        "parameters": [
            _query("protocol", STRING, "Protocol slug; unknown slugs give no rows."),
            _query("product", STRING, "Product slug; unknown slugs give no rows."),
            _query("limit", {"type": "integer", "minimum": 0, "default": 5000, "maximum": 20000}, LIMIT),
        ],
        "media": "application/x-ndjson",
        "schema": {"type": "string"},
    },
    {
        "path": "/api/public/bench.csv",
        "id": "benchCsv",
        "summary": "Bench measurements as CSV",
        "parameters": [
            _query("protocol", STRING, "Protocol slug; unknown slugs give no rows."),
            _query("product", STRING, "Product slug; unknown slugs give no rows."),
            _query("limit", {"type": "integer", "minimum": 0, "default": 5000, "maximum": 20000}, LIMIT),
        ],
        "media": "text/csv",
        "schema": {"type": "string"},
    },
    {
        "path": "/api/public/dataset.json",
        "id": "dataset",
        "summary": "schema.org Dataset descriptor",
        "schema": {"type": "object", "required": ["@type", "name", "version", "distribution"]},
    },
    {
        "path": "/api/public/press-kit.json",
        "id": "pressKit",
        "summary": "Press kit",
        "schema": _object(
            {
                **ENVELOPE_FIELDS,
                "organization": {"type": "object"},
                "people": {"type": "array"},
                "statistics": {"type": "object"},
            }
        ),
    },
    {
        "path": "/api/public/changes.json",
        "id": "changes",
        "summary": "What changed since a date, newest first",
        "parameters": [_query("since", STRING, "ISO 8601 date or date-time; only later changes are returned.")],
        "schema": {"$ref": "#/components/schemas/ChangeFeed"},
    },
    {
        "path": "/api/public/claims.jsonl",
        "id": "claims",
        "summary": "Checkable claims, one JSON object per line",
        "media": "application/x-ndjson",
        "schema": {"type": "string"},
    },
    {
        "path": "/llms-full.txt",
        "id": "fullText",
        "summary": "The full-text corpus",
        "media": "text/plain",
        "schema": {"type": "string"},
    },
    {"path": "/api/public/openapi.json", "id": "openapi", "summary": "This document", "schema": {"type": "object"}},
]

LANGUAGE_OBJECT = _object(
    {"code": {"type": "string", "enum": list(LANGUAGES)}, "name": STRING, "native": STRING, "hreflang": STRING}
)
RESULT = {
    "type": "object",
    "required": ["type", "question", "answer", "url", "confidence"],
    "properties": {
        "type": {"type": "string", "enum": ["recommendation", "answer-library"]},
        "question": STRING,
        "answer": STRING,
        "evidence": STRING,
        "url": {"type": "string", "format": "uri"},
        "product": _object({"name": STRING, "brand": STRING, "url": {"type": "string", "format": "uri"}}),
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
}
SCHEMAS = {
    "AskResponse": _object(
        {
            **ENVELOPE_FIELDS,
            "language": {"type": "string", "enum": list(LANGUAGES)},
            "supported_languages": {"type": "array", "items": LANGUAGE_OBJECT},
            "query": STRING,
            "answer": {"type": ["string", "null"]},
            "cite": {"type": "string", "format": "uri"},
            "results": {"type": "array", "items": RESULT},
            "fallback": _object({"note": STRING, "url": {"type": "string", "format": "uri"}}),
        }
    ),
    "ChangeFeed": _object(
        {
            **ENVELOPE_FIELDS,
            "since": {"type": ["string", "null"]},
            "latest_change": {"type": "string", "format": "date-time"},
            "total_changed": INTEGER,
            "returned": INTEGER,
            "changes": {
                "type": "array",
                "items": _object(
                    {
                        "url": {"type": "string", "format": "uri"},
                        "type": {"type": "string", "enum": ["guide", "comparison", "review", "product", "post"]},
                        "title": STRING,
                        "changed_at": {"type": "string", "format": "date-time"},
                    }
                ),
            },
            "full_corpus": {"type": "string", "format": "uri"},
            "claims": {"type": "string", "format": "uri"},
        }
    ),
    "Problem": {
        "type": "object",
        "required": ["type", "title", "status", "detail", "instance"],
        "properties": {
            "type": STRING,
            "title": STRING,
            "status": INTEGER,
            "detail": STRING,
            "instance": STRING,
            "errors": {"type": "array", "items": _object({"parameter": STRING, "message": STRING})},
        },
    },
}


def document(base_url: str) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for operation in OPERATIONS:
        media = operation.get("media", "application/json")
        responses: dict[str, Any] = {
            "200": {"description": "OK", "content": {media: {"schema": operation["schema"]}}},
            "304": {"description": "Not modified: the If-None-Match tag is current."},
        }
        has_parameters = bool(operation.get("parameters"))
        for status in operation.get("errors", ["400"] if has_parameters else []):
            responses[status] = PROBLEM
        paths[operation["path"]] = {
            "get": {
                "operationId": operation["id"],
                "summary": operation["summary"],
                "parameters": operation.get("parameters", []),
                "responses": responses,
            }
        }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Reusable-products public data service",
            "version": "1.0.0",
            "license": {"name": "CC BY 4.0", "url": "https://creativecommons.org/licenses/by/4.0/"},
        },
        "servers": [{"url": base_url}],
        "paths": paths,
        "components": {
            "schemas": SCHEMAS,
            "responses": {
                "Problem": {
                    "description": "RFC 9457 problem details",
                    "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}},
                }
            },
        },
    }
