"""The OpenAPI document and the running implementation agree both ways, and every URL the API
hands out resolves.

- every API route the app serves is documented, and every documented operation is served
  (the HTML pages of cited URLs are not API operations);
- every response (200, 304, 400, 404) is valid against the document's schema for it, with
  closed record schemas, so an undocumented field fails too; JSONL lines against their item
  schema, the CSV header against the documented column order;
- every documented parameter is validated as documented (required, integer, enum);
- every URL under {base_url} in any response opens: an API address answers 200, a page URL
  has a structured page record.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
from typing import Any
from urllib.parse import quote, urlsplit

import jsonschema
import pytest
from starlette.routing import Route

from public.openapi import EXPLORE_PATH, OPERATIONS, Operation
from release.folder import RELEASES_PREFIX
from serve.api import routes_catalogue
from serve.app import create_app
from serve.explore.assets import assets_route
from serve.explore.page import explorer_route
from serve.html import site
from serve.mcp_server import MCP_PATH
from serve.operations import routes_health
from tests.api.conftest import BASE_URL
from tests.conftest import PROJECT_ROOT
from tests.support.harness import Server

SCORING_SEED = PROJECT_ROOT / "sql" / "seeds" / "protocol_scoring.csv"
FORMATS = jsonschema.FormatChecker(formats=())


@FORMATS.checks("uri", raises=ValueError)
def _is_uri(value: object) -> bool:
    if not isinstance(value, str):
        return True  # formats constrain strings only
    parts = urlsplit(value)
    return bool(parts.scheme in ("http", "https") and parts.netloc)


@FORMATS.checks("date-time", raises=ValueError)
def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).tzinfo is not None


@FORMATS.checks("date", raises=ValueError)
def _is_date(value: object) -> bool:
    if not isinstance(value, str):
        return True
    return bool(dt.date.fromisoformat(value))


@pytest.fixture(scope="module")
def document(server: Server) -> dict[str, Any]:
    return server.get("/api/public/openapi.json").json()


def validate(document: dict[str, Any], schema: dict[str, Any], instance: Any) -> None:
    """Validate against a schema of the document, its $refs resolved within the document."""
    rooted = {**schema, "components": document["components"]}
    jsonschema.Draft202012Validator(rooted, format_checker=FORMATS).validate(instance)


def documented_response(document: dict[str, Any], path: str, status: int) -> tuple[str, dict[str, Any]]:
    response = document["paths"][path]["get"]["responses"][str(status)]
    [(media_type, media)] = response["content"].items()
    return media_type, media


def check_reply(document: dict[str, Any], path: str, reply) -> None:
    """The reply's status, content type and body are the ones documented for ``path``."""
    assert str(reply.status) in document["paths"][path]["get"]["responses"], (path, reply.status)
    if reply.status == 304:
        assert reply.body == b""
        return
    media_type, media = documented_response(document, path, reply.status)
    assert reply.headers["content-type"].split(";")[0] == media_type, path
    if media_type in ("application/json", "application/problem+json"):
        validate(document, media["schema"], reply.json())
    elif "x-item-schema" in media:
        lines = reply.body.decode().splitlines()
        for line in lines:
            validate(document, media["x-item-schema"], json.loads(line))
    elif "x-columns" in media:
        header = next(csv.reader(io.StringIO(reply.body.decode())))
        assert header == media["x-columns"]


def example_request(operation: Operation) -> str:
    return operation.path + (f"?{operation.example}" if operation.example else "")


# --- routes and document --------------------------------------------------------------


def test_every_route_is_documented_and_every_documented_path_is_a_route(document: dict[str, Any]):
    served = {route.path for route in create_app().routes if isinstance(route, Route)}
    pages = {route.path for route in site.routes(BASE_URL)}  # the HTML side, not the API
    # The release's files by name: each is listed, with its size and sha256, by dataset.json.
    files = {route.path for route in routes_catalogue.file_routes}
    crawlers = {route.path for route in routes_catalogue.crawler_routes}  # robots.txt, llms.txt, sitemap.xml
    # The operator's addresses (liveness, readiness, metrics): kept off the public address.
    operator = {route.path for route in routes_health.routes}
    assistants = {MCP_PATH}  # the MCP server's endpoint: its own protocol, outside the GET-only contract
    # The browser's SQL page and its static files: a page for people, like the site's.
    explorer = {explorer_route(BASE_URL, None).path, assets_route(None).path}
    assert served - pages - files - crawlers - operator - assistants - explorer == set(document["paths"])
    assert document["openapi"] == "3.1.0" and document["info"]["version"] == "1.0.0"
    assert document["servers"] == [{"url": BASE_URL}]
    assert all(list(item) == ["get"] for item in document["paths"].values()), "every operation is a GET"


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda o: o.operation_id)
def test_each_operation_answers_as_documented(server: Server, document: dict[str, Any], operation: Operation):
    reply = server.get(example_request(operation))
    assert reply.status == 200, reply.body[:500]
    check_reply(document, operation.path, reply)
    again = server.get(example_request(operation), {"If-None-Match": reply.headers["etag"]})
    assert again.status == 304
    check_reply(document, operation.path, again)


@pytest.mark.parametrize("operation", [o for o in OPERATIONS if o.parameters], ids=lambda o: o.operation_id)
def test_each_documented_parameter_is_validated_as_documented(
    server: Server, document: dict[str, Any], operation: Operation
):
    """A required parameter left out, an integer that is not one and a value outside an enum:
    each a 400 problem naming exactly that parameter."""
    documented = document["paths"][operation.path]["get"]["parameters"]
    required = {p["name"]: "x" for p in documented if p["in"] == "query" and p["required"]}
    cases = [(name, {k: v for k, v in required.items() if k != name}) for name in required]
    for parameter in documented:
        kind = parameter["schema"].get("type")
        if parameter["in"] == "query" and kind == "integer":
            cases.append((parameter["name"], {**required, parameter["name"]: "twelve"}))
        if parameter["in"] == "query" and "enum" in parameter["schema"]:
            cases.append((parameter["name"], {**required, parameter["name"]: "xx"}))
        if parameter["in"] == "query" and "anyOf" in parameter["schema"]:  # alternative formats
            cases.append((parameter["name"], {**required, parameter["name"]: "not-a-date"}))
        if parameter["in"] == "query" and "maxLength" in parameter["schema"]:
            too_long = "y" * (parameter["schema"]["maxLength"] + 1)
            cases.append((parameter["name"], {**required, parameter["name"]: too_long}))
    assert cases
    for name, query in cases:
        reply = server.get(operation.path + "?" + "&".join(f"{k}={quote(v)}" for k, v in query.items()))
        assert reply.status == 400, (name, query)
        check_reply(document, operation.path, reply)
        assert [error["parameter"] for error in reply.json()["errors"]] == [name]


def test_an_integer_above_its_maximum_is_clamped(server: Server, document: dict[str, Any]):
    reply = server.get("/api/public/bench.jsonl?limit=" + "9" * 5000)
    assert reply.status == 200
    check_reply(document, "/api/public/bench.jsonl", reply)


def test_page_without_a_record_is_a_documented_404(server: Server, document: dict[str, Any]):
    reply = server.get("/api/public/page.json?path=/guides/no-such-guide")
    assert reply.status == 404
    check_reply(document, "/api/public/page.json", reply)


def test_every_page_record_and_ask_variant_is_valid(server: Server, document: dict[str, Any]):
    for change in server.get("/api/public/changes.json").json()["changes"]:
        reply = server.get("/api/public/page.json?path=" + quote(urlsplit(change["url"]).path))
        check_reply(document, "/api/public/page.json", reply)
    for query in ("q=quantum+chromodynamics", "q=bottle&lang=ar&limit=20", "q=" + quote("保温杯")):
        check_reply(document, "/api/public/ask.json", server.get(f"/api/public/ask.json?{query}"))
    check_reply(document, "/api/public/changes.json", server.get("/api/public/changes.json"))


def test_capabilities_list_every_operation_with_a_working_example(server: Server):
    capabilities = server.get("/api/public/capabilities.json").json()
    assert [e["name"] for e in capabilities["endpoints"]] == [o.operation_id for o in OPERATIONS]
    for endpoint in capabilities["endpoints"]:
        assert endpoint["example"].startswith(BASE_URL + endpoint["path"])
        parts = urlsplit(endpoint["example"])
        assert server.get(parts.path + (f"?{parts.query}" if parts.query else "")).status == 200, endpoint


def test_capabilities_carry_the_scoring_rules_of_the_seed(server: Server):
    with SCORING_SEED.open(encoding="utf-8") as seed_file:
        seed = list(csv.DictReader(seed_file))
    methodology = server.get("/api/public/capabilities.json").json()["scoring_methodology"]
    protocols = {p["protocol"]: p for p in methodology["protocols"]}
    for row in seed:
        rules = protocols[row["protocol"]]["scoring_rules"]
        matching = [r for r in rules if (r["category"] or "") == row["category"]]
        assert len(matching) == 1, row
        assert matching[0]["direction"] == row["direction"]
        assert (matching[0]["zero_at"], matching[0]["full_at"]) == (float(row["zero_at"]), float(row["full_at"]))
        assert matching[0]["weight"] == float(row["weight"])


# --- every URL resolves ---------------------------------------------------------------

_URL = re.compile(re.escape(BASE_URL) + r"[^\s\"'<>)\]}`,]*")
_MARKDOWN_LINK = re.compile(r"\]\((/[a-z-]+/[a-z0-9-]+)\)")


def emitted_urls(text: str) -> set[str]:
    """Every address under {base_url}, less {base_url} itself (the OpenAPI server, not a resource)."""
    return {match.rstrip(".;:") for match in _URL.findall(text)} - {BASE_URL, BASE_URL + "/"}


def test_every_url_the_api_emits_resolves(server: Server):
    bodies = [server.get(example_request(o)).body.decode() for o in OPERATIONS]
    bodies.append(server.get("/api/public/bench.jsonl?limit=20000").body.decode())
    text = "\n".join(bodies)
    urls = emitted_urls(text)
    served = ("/api/", "/llms", RELEASES_PREFIX, EXPLORE_PATH)  # operations, the release's files, /explore
    page_paths = {urlsplit(u).path for u in urls if not urlsplit(u).path.startswith(served)}
    page_paths |= set(_MARKDOWN_LINK.findall(text))  # links inside Markdown bodies
    api_urls = {u for u in urls if urlsplit(u).path.startswith(served)}
    assert len(page_paths) > 150 and len(api_urls) >= len(OPERATIONS)
    for path in sorted(page_paths):
        assert re.fullmatch(r"/(guides|comparisons|reviews|products|journal)/[a-z0-9-]+", path), path
        assert server.get("/api/public/page.json?path=" + quote(path)).status == 200, path
    for address in sorted(api_urls):
        parts = urlsplit(address)
        assert server.get(parts.path + (f"?{parts.query}" if parts.query else "")).status == 200, address
