"""The public API against a real uvicorn on a free loopback port, over a real demo build."""

from __future__ import annotations

import csv
import gzip
import io
import json
import urllib.error
import urllib.request
from urllib.parse import quote, urlsplit

import pytest

from tests.api.conftest import BASE_URL
from tests.support.harness import Server

ENVELOPE = ("source", "license", "usage", "generated_at", "dataset_version")
JSON_OPERATIONS = [
    "/api/public/ask.json?q=insulated+bottle+hot",
    "/api/public/recommendations.json",
    "/api/public/products.json",
    "/api/public/answers.json",
    "/api/public/page.json?path=/guides/start-here",
    "/api/public/capabilities.json",
    "/api/public/content.json",
    "/api/public/press-kit.json",
    "/api/public/changes.json",
]


@pytest.mark.parametrize("path", JSON_OPERATIONS)
def test_json_operations_carry_the_envelope_and_caching_headers(server: Server, path: str):
    reply = server.get(path, {"Origin": "https://example.org"})
    assert reply.status == 200
    assert reply.headers["content-type"] == "application/json; charset=utf-8"
    body = reply.json()
    assert all(key in body for key in ENVELOPE)
    assert body["generated_at"].endswith("Z") and len(body["generated_at"]) == len("2026-11-22T08:15:02.123Z")
    assert reply.headers["x-dataset-version"] == body["dataset_version"]
    assert reply.headers["cache-control"] == "public, max-age=300"
    assert reply.headers["access-control-allow-origin"] == "*"
    assert reply.headers["etag"]


def test_a_matching_if_none_match_gets_304(server: Server):
    first = server.get("/api/public/products.json")
    again = server.get("/api/public/products.json", {"If-None-Match": first.headers["etag"]})
    assert again.status == 304 and again.body == b""
    assert server.get("/api/public/products.json", {"If-None-Match": '"other"'}).status == 200


def test_gzip_when_asked(server: Server):
    reply = server.get("/api/public/content.json", {"Accept-Encoding": "gzip"})
    assert reply.headers["content-encoding"] == "gzip"
    assert json.loads(gzip.decompress(reply.body))["count"] >= 60
    assert "accept-encoding" in reply.headers["vary"].lower()


@pytest.mark.parametrize("refusal", ["identity", "gzip;q=0", "br, *;q=0", "gzip;q=zero"])
def test_no_gzip_unless_the_client_accepts_it(server: Server, refusal: str):
    reply = server.get("/api/public/content.json", {"Accept-Encoding": refusal})
    assert "content-encoding" not in reply.headers and json.loads(reply.body)["count"] >= 60


def test_each_encoding_has_its_own_etag_and_revalidates(server: Server):
    path = "/api/public/products.json"
    plain, packed = server.get(path), server.get(path, {"Accept-Encoding": "deflate, gzip;q=0.5"})
    assert packed.headers["content-encoding"] == "gzip" and plain.headers["etag"] != packed.headers["etag"]
    assert gzip.decompress(packed.body) == plain.body
    again = server.get(path, {"Accept-Encoding": "gzip", "If-None-Match": packed.headers["etag"]})
    assert again.status == 304 and again.headers["etag"] == packed.headers["etag"]
    assert again.headers["access-control-allow-origin"] == "*"
    assert server.get(path, {"If-None-Match": packed.headers["etag"]}).status == 200


@pytest.mark.parametrize(
    "path",
    [
        "/api/public/page.json?path=/guides/start-here",
        "/api/public/changes.json",
        "/api/public/products.json",
        "/api/public/press-kit.json?utm=x",
    ],
)
def test_an_answer_asked_again_is_the_same_and_still_revalidates(server: Server, path: str):
    per_response = {"date", "server"}
    for headers in ({}, {"Accept-Encoding": "gzip"}):
        first, again = server.get(path, headers), server.get(path, headers)
        assert (first.status, again.status) == (200, 200) and first.body == again.body
        assert {k: v for k, v in first.headers.items() if k not in per_response} == {
            k: v for k, v in again.headers.items() if k not in per_response
        }
        revalidated = server.get(path, {**headers, "If-None-Match": f'"other", {first.headers["etag"]}'})
        assert revalidated.status == 304 and revalidated.body == b""
        # A 304 carries its 200's validator and caching headers, and no content headers.
        assert {k: v for k, v in revalidated.headers.items() if k not in per_response} == {
            k: v for k, v in first.headers.items() if not k.startswith("content-") and k not in per_response
        }
    assert server.get(path, {"Accept-Encoding": "gzip"}).headers["etag"] != server.get(path).headers["etag"]


@pytest.mark.parametrize(
    "path", ["/api/public/page.json?path=/guides/none", "/api/public/changes.json?since=yesterday"]
)
def test_an_error_is_never_replayed(server: Server, path: str):
    for _ in range(2):
        missing = server.get(path)
        assert missing.status in (400, 404) and missing.headers["content-type"].startswith("application/problem+json")


@pytest.mark.parametrize("export", ["bench.jsonl", "bench.csv"])
def test_a_streamed_export_gzips_to_the_same_rows(server: Server, export: str):
    path = f"/api/public/{export}?limit=300"
    plain, packed = server.get(path), server.get(path, {"Accept-Encoding": "gzip"})
    assert packed.headers["content-encoding"] == "gzip" and gzip.decompress(packed.body) == plain.body
    assert packed.headers["access-control-allow-origin"] == "*"
    assert packed.headers["access-control-expose-headers"] == "ETag, X-Dataset-Version"


def test_a_cors_preflight_is_answered_for_any_origin(server: Server):
    reply = server.send(
        "OPTIONS",
        "/api/public/products.json",
        headers={
            "Origin": "https://example.org",
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "if-none-match",
        },
    )
    assert reply.status == 200
    assert reply.headers["access-control-allow-origin"] == "*"
    assert reply.headers["access-control-allow-methods"] == "GET, HEAD, OPTIONS"
    assert reply.headers["access-control-allow-headers"] == "if-none-match"
    assert int(reply.headers["access-control-max-age"]) >= 600


@pytest.mark.parametrize(
    ("path", "parameter"),
    [
        ("/api/public/ask.json", "q"),
        ("/api/public/ask.json?q=x&limit=-1", "limit"),
        ("/api/public/ask.json?q=x&limit=abc", "limit"),
        ("/api/public/ask.json?q=x&lang=fr", "lang"),
        ("/api/public/ask.json?q=" + "x" * 1001, "q"),
        ("/api/public/page.json", "path"),
        ("/api/public/page.json?path=/" + "x" * 600, "path"),
        ("/api/public/changes.json?since=yesterday", "since"),
        ("/api/public/bench.jsonl?limit=1.5", "limit"),
    ],
)
def test_bad_parameters_get_a_problem_naming_them(server: Server, path: str, parameter: str):
    reply = server.get(path)
    assert reply.status == 400
    assert reply.headers["content-type"] == "application/problem+json"
    problem = reply.json()
    assert {"type", "title", "status", "detail", "instance"} <= set(problem) and problem["status"] == 400
    assert [error["parameter"] for error in problem["errors"]] == [parameter]
    if parameter == "lang":
        assert "en, zh, el, vi, ar, pa" in problem["detail"]


# --- page and changes -------------------------------------------------------------------


def test_page_record_and_404(server: Server):
    page = server.get("/api/public/page.json?path=/guides/start-here").json()["page"]
    assert page["canonical_url"] == f"{BASE_URL}/guides/start-here"
    assert {"title", "answer", "body", "faq", "sources", "attribution"} <= set(page)
    missing = server.get("/api/public/page.json?path=/guides/no-such-guide")
    assert missing.status == 404 and missing.headers["content-type"] == "application/problem+json"


def test_page_record_however_its_query_spells_the_path_and_by_head(server: Server):
    page = "/api/public/page.json"
    plain = server.get(f"{page}?path=/guides/start-here")
    for query in ("path=%2Fguides%2Fstart-here", "utm=x&path=/guides/start-here", "path=/x&path=/guides/start-here"):
        again = server.get(f"{page}?{query}")
        assert (again.status, again.body, again.headers["etag"]) == (200, plain.body, plain.headers["etag"]), query
    for headers in ({}, {"Accept-Encoding": "gzip"}):
        whole = server.get(f"{page}?path=/guides/start-here", headers)
        head = server.send("HEAD", f"{page}?path=/guides/start-here", headers=headers)
        assert head.status == 200 and head.body == b"" and head.headers["content-length"] == str(len(whole.body))
        assert {k: v for k, v in head.headers.items() if k != "date"} == {
            k: v for k, v in whole.headers.items() if k != "date"
        }


def test_change_feed_follows_the_spec(server: Server):
    feed = server.get("/api/public/changes.json").json()
    assert feed["since"] is None
    assert feed["total_changed"] == feed["returned"] == len(feed["changes"]) > 0
    times = [c["changed_at"] for c in feed["changes"]]
    assert times == sorted(times, reverse=True) and feed["latest_change"] == times[0]
    assert {c["type"] for c in feed["changes"]} <= {"guide", "comparison", "review", "product", "post"}
    assert feed["full_corpus"] == f"{BASE_URL}/llms-full.txt"
    assert feed["claims"] == f"{BASE_URL}/api/public/claims.jsonl"
    later = server.get("/api/public/changes.json?since=2026-10-01").json()
    assert later["since"] == "2026-10-01"
    assert all(c["changed_at"] > "2026-10-01" for c in later["changes"])
    assert later["total_changed"] < feed["total_changed"]


def test_every_changed_url_has_a_page_record(server: Server):
    for change in server.get("/api/public/changes.json").json()["changes"]:
        path = urlsplit(change["url"]).path
        assert path.count("/") == 2 and change["url"] == BASE_URL + path
        assert server.get(f"/api/public/page.json?path={quote(path)}").status == 200, path


# --- bench ------------------------------------------------------------------------------


def bench_rows(server: Server, query: str = "") -> tuple[list[dict], list[dict]]:
    jsonl = server.get(f"/api/public/bench.jsonl{query}")
    csv_reply = server.get(f"/api/public/bench.csv{query}")
    assert jsonl.headers["content-type"] == "application/x-ndjson"
    assert csv_reply.headers["content-type"] == "text/csv; charset=utf-8"
    assert "attachment; filename=" in csv_reply.headers["content-disposition"]
    lines = [json.loads(line) for line in jsonl.body.decode().splitlines()]
    table = list(csv.DictReader(io.StringIO(csv_reply.body.decode())))
    return lines, table


def test_bench_jsonl_and_csv_carry_the_same_rows_in_the_same_order(server: Server):
    for query in ("", "?protocol=leak-loss", "?limit=7"):
        lines, table = bench_rows(server, query)
        assert [r["measurement_id"] for r in lines] == [r["measurement_id"] for r in table]
        for line, row in zip(lines, table, strict=True):
            assert (line["value"] is None) == (row["value"] == "")
    lines, _ = bench_rows(server, "?protocol=leak-loss")
    assert lines and {r["protocol_slug"] for r in lines} == {"leak-loss"}


def test_untested_slots_are_published_null_and_pending(server: Server):
    lines, _ = bench_rows(server)
    pending = [r for r in lines if r["status"] == "pending"]
    assert pending and all(r["value"] is None for r in pending)
    assert all(r["value"] is not None for r in lines if r["status"] == "measured")


def test_unknown_filters_and_injection_attempts_return_no_rows(server: Server):
    for query in (
        "?protocol=no-such-protocol",
        "?product=" + quote("x' OR '1'='1"),
        "?protocol=" + quote("'; DROP TABLE bench_measurements; --"),
    ):
        lines, table = bench_rows(server, query)
        assert (lines, table) == ([], [])
    assert len(bench_rows(server)[0]) > 0


def test_press_kit_statistics_are_live_counts_of_the_snapshot(server: Server):
    statistics = server.get("/api/public/press-kit.json").json()["statistics"]
    listed = {name: server.get(f"/api/public/{name}.json").json()["count"] for name in ("products", "answers")}
    assert statistics["products"] == listed["products"] and statistics["answers"] == listed["answers"]
    assert statistics["recommendations"] == server.get("/api/public/recommendations.json").json()["count"]
    assert statistics["editorial_items"] == server.get("/api/public/content.json").json()["count"]
    lines, _ = bench_rows(server, "?limit=20000")
    assert statistics["planned_slots"] == len(lines)
    assert statistics["pending_slots"] == sum(r["status"] == "pending" for r in lines)
    assert statistics["measured_slots"] == statistics["planned_slots"] - statistics["pending_slots"]
    assert statistics["readings"] == sum(r["sample_size"] for r in lines)
    claims = server.get("/api/public/claims.jsonl").body.decode().splitlines()
    assert statistics["claims"] == len(claims)
    tested_on = sorted(r["tested_on"] for r in lines if r["tested_on"])
    assert (statistics["first_tested_on"], statistics["last_tested_on"]) == (tested_on[0][:10], tested_on[-1][:10])


# --- descriptors and the OpenAPI document -----------------------------------------------


def test_dataset_descriptor_is_a_schema_org_dataset_whose_downloads_resolve(server: Server):
    dataset = server.get("/api/public/dataset.json").json()
    assert dataset["@type"] == "Dataset" and dataset["license"] == "https://creativecommons.org/licenses/by/4.0/"
    assert 50 <= len(dataset["description"]) <= 5000
    assert "@misc{" in dataset["citation_bibtex"]
    assert len(dataset["variableMeasured"]) >= 12
    for download in dataset["distribution"]:
        path = urlsplit(download["contentUrl"]).path
        assert server.get(path).status == 200, path


def test_openapi_document_and_routes_agree(server: Server):
    document = server.get("/api/public/openapi.json").json()
    assert document["openapi"] == "3.1.0" and document["info"]["version"] == "1.0.0"
    for path, item in document["paths"].items():
        required = [p for p in item["get"]["parameters"] if p["required"]]
        reply = server.get(path)
        assert reply.status == (400 if required else 200), path
    assert server.get("/api/public/nothing-here").status == 404


# --- hostile input --------------------------------------------------------------------

HOSTILE = [
    ("/api/public/changes.json?since=0001-01-01T00:00:00%2B05:00", {}),
    ("/api/public/changes.json?since=9999-12-31T23:59:59-05:00", {}),
    ("/api/public/changes.json?since=2026-02-30", {}),
    ("/api/public/ask.json?q=%00", {}),
    ("/api/public/ask.json?q=%ff%fe%fd", {}),
    ("/api/public/ask.json?q=bottle&limit=" + "9" * 5000, {}),
    ("/api/public/ask.json?q=bottle&limit=%EF%BC%95", {}),  # a full-width digit
    ("/api/public/ask.json?q=bottle", {"Accept-Language": "zh;q=abc, *;q=nan, el;q=inf, " + "x" * 4000}),
    ("/api/public/ask.json?q=bottle&lang=", {}),
    ("/api/public/page.json?path=/../../etc/passwd", {}),
    ("/api/public/page.json?path=%00", {}),
    ("/api/public/bench.csv?protocol=%00", {}),
    ("/api/public/bench.jsonl?product=" + quote("x' UNION SELECT 1 --"), {}),
    ("/api/public/products.json", {"If-None-Match": 'W/"", "unterminated, ' + '"x",' * 500}),
]


@pytest.mark.parametrize(("path", "headers"), HOSTILE)
def test_hostile_input_gets_a_clear_answer_never_a_5xx(server: Server, path: str, headers: dict[str, str]):
    reply = server.get(path, headers)
    assert reply.status < 500, reply.body[:300]
    if reply.status >= 400:
        assert reply.headers["content-type"] == "application/problem+json"
        assert reply.json()["detail"]


def test_head_and_other_methods(server: Server):
    head = urllib.request.Request(f"http://127.0.0.1:{server.port}/api/public/bench.csv", method="HEAD")
    with urllib.request.urlopen(head, timeout=30) as response:
        assert response.status == 200 and response.read() == b""
        assert response.headers["Content-Disposition"].startswith("attachment")
    document = server.get("/api/public/products.json")
    for _ in range(2):  # the first answer, then the one replayed
        head = urllib.request.Request(f"http://127.0.0.1:{server.port}/api/public/products.json", method="HEAD")
        with urllib.request.urlopen(head, timeout=30) as response:
            assert response.status == 200 and response.read() == b""
            assert response.headers["ETag"] == document.headers["etag"]
            assert response.headers["Content-Length"] == str(len(document.body))
    post = urllib.request.Request(f"http://127.0.0.1:{server.port}/api/public/products.json", data=b"x")
    try:
        urllib.request.urlopen(post, timeout=30)
    except urllib.error.HTTPError as error:
        assert error.code == 405 and error.headers["Allow"] == "GET, HEAD, OPTIONS"
        assert json.loads(error.read())["status"] == 405
    else:
        pytest.fail("POST was accepted")
