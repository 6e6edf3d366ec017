"""Hostile input against the real server: whatever a client sends, a 2xx or a clear 4xx.

- schemathesis drives every operation of /api/public/openapi.json with values the document
  allows and values it forbids, and checks each response against the document (status, media
  type, headers, body schema), and that forbidden values are refused and allowed ones are not;
- Hypothesis sends random unicode, huge values, NULs, path traversal and SQL fragments in every
  query parameter and in the negotiated headers, byte for byte over a socket;
- an injection attempt in the bench filters or the page path finds nothing and changes nothing.

Both generators are derandomized: the same examples every run, so a failure reproduces.
"""

from __future__ import annotations

import gzip
import json
from urllib.parse import quote

import pytest
import schemathesis
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from public.openapi import BENCH_MAX_LIMIT, OPERATIONS
from tests.support.harness import Reply, Server, request_head

EXAMPLES = 60

NASTY = [
    "../../../../etc/passwd",
    "..%2F..%2Fetc%2Fpasswd",
    "/guides/../../../etc/passwd",
    "/guides/start-here/../../snapshots/CURRENT",
    "heat-retention' OR '1'='1",
    "'; DROP TABLE bench_measurements; --",
    '" OR 1=1 --',
    "x' UNION SELECT * FROM products --",
    "%",
    "_",
    "*",
    "\x00",
    "heat-retention\x00",
    "\u202e\ufeff\u200b",
    "𝕏" * 400,
    "9" * 5000,
    "-1",
    "1e309",
    "NaN",
    "0x10",
    "١٢",
    "２０",
    "<script>alert(1)</script>",
    "${jndi:ldap://127.0.0.1/x}",
    "{{7*7}}",
    "\\",
    "\r\n\r\nGET / HTTP/1.1",
    "Ω" * 2000,
]
TEXT = st.characters(exclude_categories=["Cs"])  # every code point UTF-8 can carry
HOSTILE = st.one_of(st.sampled_from(NASTY), st.text(TEXT, max_size=40), st.text(TEXT, min_size=500, max_size=4000))
QUERIES = [
    ("/api/public/ask.json", "q", {}),
    ("/api/public/ask.json", "lang", {"q": "bottle"}),
    ("/api/public/ask.json", "limit", {"q": "bottle"}),
    ("/api/public/page.json", "path", {}),
    ("/api/public/changes.json", "since", {}),
    ("/api/public/bench.jsonl", "protocol", {}),
    ("/api/public/bench.jsonl", "product", {}),
    ("/api/public/bench.jsonl", "limit", {}),
    ("/api/public/bench.csv", "protocol", {}),
]
# Header values travel as latin-1; CR and LF would end the header rather than be in it.
HEADER_TEXT = st.characters(max_codepoint=0xFF, exclude_characters="\r\n")
HOSTILE_HEADER = st.one_of(
    st.sampled_from([v for v in NASTY if v.isascii() and "\r" not in v]),
    st.text(HEADER_TEXT, max_size=60),
    st.text(HEADER_TEXT, min_size=30_000, max_size=40_000),  # near and past the bound on the head
)
HEADERS = [
    ("/api/public/ask.json?q=bottle", "Accept-Language"),
    ("/api/public/products.json", "If-None-Match"),
    ("/api/public/bench.csv", "If-None-Match"),
    ("/api/public/content.json", "Accept-Encoding"),
]
PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def served_document(server: Server) -> schemathesis.BaseSchema:
    """The document the server publishes with its release: its record schemas come from the
    release's data dictionary, so it exists only once a release is built."""
    return schemathesis.openapi.from_dict(server.get("/api/public/openapi.json").json())


# Every operation with values the document allows; those with query parameters also with values
# it forbids (an operation without any has no forbidden value to draw).
DRAWS = [pytest.param(o.path, GenerationMode.POSITIVE, id=f"{o.operation_id}-allowed") for o in OPERATIONS] + [
    pytest.param(o.path, GenerationMode.NEGATIVE, id=f"{o.operation_id}-forbidden") for o in OPERATIONS if o.parameters
]


@pytest.mark.parametrize(("path", "mode"), DRAWS)
def test_schemathesis_finds_nothing_the_document_does_not_say(
    path: str, mode: GenerationMode, served_document: schemathesis.BaseSchema, server: Server
):
    """Cases schemathesis draws from the served document (allowed values, then forbidden ones),
    each response checked against the same document."""

    @given(case=served_document[path]["GET"].as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    def check(case: schemathesis.Case) -> None:
        case.call_and_validate(base_url=f"http://127.0.0.1:{server.port}")

    check()


DECODERS = {"identity": bytes, "gzip": gzip.decompress, "zstd": zstandard.ZstdDecompressor().decompress}


def assert_clear(reply: Reply, parameter: str) -> None:
    """A 2xx or 304 with a body that parses, or a 4xx problem+json that says what was wrong."""
    assert reply.status < 500, reply.body[:300]
    media_type = reply.headers.get("content-type", "")
    if reply.status < 400:
        if media_type.startswith("application/json"):
            decode = DECODERS[reply.headers.get("content-encoding", "identity")]
            json.loads(decode(reply.body))
        return
    assert media_type == "application/problem+json", (reply.status, reply.body[:300])
    problem = json.loads(reply.body)
    assert problem["status"] == reply.status and problem["title"] and problem["detail"]
    if "errors" in problem:
        assert [error["parameter"] for error in problem["errors"]] == [parameter]


@pytest.mark.parametrize(("path", "parameter", "others"), QUERIES, ids=[f"{p}:{n}" for p, n, _ in QUERIES])
@PROPERTY
@given(value=HOSTILE)
def test_any_value_of_a_query_parameter_gets_a_clear_answer(
    server: Server, path: str, parameter: str, others: dict[str, str], value: str
):
    query = "&".join(f"{k}={quote(v, safe='')}" for k, v in {**others, parameter: value}.items())
    assert_clear(server.exchange(request_head(f"{path}?{query}")), parameter)


@pytest.mark.parametrize(("target", "header"), HEADERS, ids=[h for _, h in HEADERS])
@PROPERTY
@given(value=HOSTILE_HEADER)
def test_any_value_of_a_negotiated_header_gets_a_clear_answer(server: Server, target: str, header: str, value: str):
    assert_clear(server.exchange(request_head(target, f"{header}: {value}".encode("latin-1"))), header)


@pytest.mark.parametrize(
    "target",
    [
        "/api/public/../../../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/api/public/..%2f..%2fsnapshots%2fCURRENT",
        "/api/public/products.json/../../../var",
        "//etc/passwd",
        "/api/public/%00",
    ],
)
def test_path_traversal_in_the_url_reaches_no_file(server: Server, target: str):
    reply = server.exchange(request_head(target))
    assert reply.status in (400, 404)
    assert reply.headers["content-type"] == "application/problem+json"
    assert b"root:" not in reply.body and b"duckdb" not in reply.body


INJECTIONS = [
    "heat-retention' OR '1'='1",
    "heat-retention' --",
    "x' OR protocol_slug IS NOT NULL OR '",
    "'; DROP TABLE bench_measurements; --",
    "' UNION SELECT to_json(products) FROM products --",
    "%",
    "heat%",
    "_eat-retention",
    "$protocol",
]


def rows(reply: Reply) -> list[dict]:
    assert reply.status == 200
    return [json.loads(line) for line in reply.body.splitlines()]


def test_sql_in_a_bench_filter_or_a_page_path_is_inert(server: Server):
    everything = rows(server.get(f"/api/public/bench.jsonl?limit={BENCH_MAX_LIMIT}"))
    heat = rows(server.get("/api/public/bench.jsonl?protocol=heat-retention"))
    assert heat and {row["protocol_slug"] for row in heat} == {"heat-retention"}  # a real filter finds rows
    for attempt in INJECTIONS:
        for parameter in ("protocol", "product"):
            assert rows(server.get(f"/api/public/bench.jsonl?{parameter}={quote(attempt)}")) == [], attempt
            csv = server.get(f"/api/public/bench.csv?{parameter}={quote(attempt)}")
            assert csv.status == 200 and len(csv.body.splitlines()) == 1, attempt  # the header line alone
        assert server.get(f"/api/public/page.json?path={quote('/guides/start-here' + attempt)}").status == 404
    assert server.get("/api/public/page.json?path=/guides/start-here").status == 200
    assert rows(server.get(f"/api/public/bench.jsonl?limit={BENCH_MAX_LIMIT}")) == everything  # nothing changed
