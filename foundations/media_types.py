"""The media types the service sends, each named once: the public API's and the intake's
responses, the release's files, the data package and the OpenAPI document read them here."""

from __future__ import annotations

import os

JSON = "application/json"
NDJSON = "application/x-ndjson"
CSV = "text/csv"
TEXT = "text/plain"
HTML = "text/html"
XML = "application/xml"
PARQUET = "application/vnd.apache.parquet"
BINARY = "application/octet-stream"
PROBLEM_JSON = "application/problem+json"  # RFC 9457 problem details
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"  # the intake's sheet template
JAVASCRIPT = "text/javascript"  # the explorer's scripts (RFC 9239)
CSS = "text/css"
WASM = "application/wasm"  # what WebAssembly's streaming compile insists on


def with_charset(media_type: str) -> str:
    """A text media type as sent: with its charset, UTF-8."""
    return f"{media_type}; charset=utf-8"


# A release's file -> the Content-Type it is sent with, by extension.
BY_EXTENSION: dict[str, str] = {
    ".json": with_charset(JSON),
    ".jsonl": NDJSON,
    ".csv": with_charset(CSV),
    ".txt": with_charset(TEXT),
    ".xml": with_charset(XML),
    ".parquet": PARQUET,
}


def media_type_of(path: str) -> str:
    """The Content-Type of the file at ``path``."""
    return BY_EXTENSION.get(os.path.splitext(path)[1], BINARY)


def essence(media_type: str) -> str:
    """A media type without its parameters: ``text/csv; charset=utf-8`` -> ``text/csv``."""
    return media_type.split(";")[0].strip()
