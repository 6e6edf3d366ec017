"""Every cited URL opens a real page: `{base_url}/<section>/<slug>` as HTML from the same snapshot,
on the real server. Pages are parsed by html5lib in strict mode (any parse error fails)."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest

from tests.api.conftest import BASE_URL
from tests.support.harness import Server
from tests.support.site_pages import LD_TYPES, PAGE_TYPES, links, parsed

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def json_ld(document) -> list[dict]:
    return [
        json.loads(script.text) for script in document.iter("script") if script.get("type") == "application/ld+json"
    ]


@pytest.fixture(scope="module")
def changes(server: Server) -> list[dict]:
    return server.get("/api/public/changes.json").json()["changes"]


def test_every_url_in_the_change_feed_opens_with_its_canonical_link(server: Server, changes: list[dict]):
    assert {change["type"] for change in changes} == set(PAGE_TYPES)
    for change in changes:
        assert change["url"].startswith(BASE_URL)
        document = parsed(server.get(urlsplit(change["url"]).path))
        assert [link["href"] for link in links(document, "canonical")] == [change["url"]]


@pytest.mark.parametrize("page_type", PAGE_TYPES)
def test_each_page_type_says_what_its_record_says_with_json_ld_that_parses(
    server: Server, changes: list[dict], page_type: str
):
    url = next(change["url"] for change in changes if change["type"] == page_type)
    path = urlsplit(url).path
    record = server.get(f"/api/public/page.json?path={path}").json()["page"]
    reply = server.get(path)
    document = parsed(reply)
    text = "".join(document.find("body").itertext())
    assert document.find(".//h1").text == record["title"]
    assert record["answer"]["en"] in text and record["attribution"] in text
    hrefs = {anchor.get("href") for anchor in document.iter("a")}
    assert {source["url"] for source in record["sources"]} <= hrefs
    for row in record["bench_table"]:
        assert row["protocol_name"] in text
    blocks = json_ld(document)
    assert blocks[0]["@type"] == LD_TYPES[page_type]
    if LD_TYPES[page_type] == "Product" and record["bench_table"]:
        assert blocks[0]["aggregateRating"]["bestRating"] == 100 and blocks[0]["review"]["@type"] == "Review"
    assert ("FAQPage" in [b["@type"] for b in blocks]) == bool(record["faq"])
    hreflangs = [link["hreflang"] for link in links(document, "alternate")]
    assert hreflangs == ["en", "zh-Hans", "el", "vi", "ar", "pa", "x-default"]


def test_lang_renders_the_translated_parts_right_to_left_for_arabic(server: Server):
    path = "/guides/start-here"
    record = server.get(f"/api/public/page.json?path={path}").json()["page"]
    for lang in ("ar", "zh", "pa"):
        document = parsed(server.get(f"{path}?lang={lang}"))
        html = document if document.tag == "html" else document.find("html")
        assert html.get("dir") == ("rtl" if lang == "ar" else "ltr")
        text = "".join(document.find("body").itertext())
        assert record["answer"][lang] in text
        assert [link["href"] for link in links(document, "canonical")] == [f"{BASE_URL}{path}?lang={lang}"]
        if record["faq"]:
            assert record["faq"][0]["question"][lang] in text


@pytest.mark.parametrize(
    ("target", "status"),
    [("/guides/no-such-guide", 404), ("/products/", 404), ("/guides/start-here?lang=xx", 400)],
)
def test_an_unknown_page_or_language_gets_a_page_saying_so(server: Server, target: str, status: int):
    reply = server.get(target)
    assert reply.status == status
    heading = parsed(reply).find(".//h1").text
    assert heading.startswith("Unsupported language" if status == 400 else "No page at this address")


def test_pages_carry_the_apis_caching_headers(server: Server):
    first = server.get("/guides/start-here")
    assert first.headers["cache-control"] == "public, max-age=300" and first.headers["x-dataset-version"]
    again = server.get("/guides/start-here", {"If-None-Match": first.headers["etag"]})
    assert again.status == 304 and again.body == b""
    assert server.get("/guides/start-here?lang=el").headers["etag"] != first.headers["etag"]


def test_the_hub_lists_categories_scenarios_and_the_latest_changes(server: Server, changes: list[dict]):
    document = parsed(server.get("/guides/start-here"))
    hrefs = {anchor.get("href") for anchor in document.iter("a")}
    assert document.find(".//form[@role='search']").get("action") == "/api/public/ask.json"
    assert changes[0]["url"] in hrefs
    recommendations = server.get("/api/public/recommendations.json").json()
    assert {item["url"] for item in recommendations["recommendations"]} <= hrefs
    text = "".join(document.find("body").itertext())
    products = server.get("/api/public/products.json").json()["products"]
    assert all(product["category_name"]["en"] in text for product in products)


def test_the_root_documents_every_operation_with_a_live_example(server: Server):
    reply = server.get("/")
    document = parsed(reply)
    capabilities = server.get("/api/public/capabilities.json").json()
    hrefs = [anchor.get("href") for anchor in document.iter("a")]
    text = "".join(document.find("body").itertext())
    for endpoint in capabilities["endpoints"]:
        assert endpoint["example"] in hrefs
        assert server.get(endpoint["example"].removeprefix(BASE_URL)).status == 200
    assert capabilities["attribution"]["rule"] in text
    assert server.get("/api/public/dataset.json").json()["citation"] in text


def product_with_a_pending_slot(server: Server) -> tuple[str, dict]:
    """A product page whose bench table has a pending (untested) slot and measured ones, and its record."""
    products = server.get("/api/public/products.json").json()["products"]
    for product in products:
        path = urlsplit(product["url"]).path
        record = server.get(f"/api/public/page.json?path={path}").json()["page"]
        statuses = {row["status"] for row in record["bench_table"]}
        if {"pending", "measured"} <= statuses:
            return path, record
    raise AssertionError("the demo has no product with both a pending and a measured slot")


def test_a_product_page_has_one_captioned_bench_table_with_pending_slots_left_blank(server: Server):
    path, record = product_with_a_pending_slot(server)
    document = parsed(server.get(path))
    tables = [table for table in document.iter("table") if table.find("caption") is not None]
    assert len(list(document.iter("table"))) == 1 and len(tables) == 1
    table = tables[0]
    assert record["title"] in "".join(table.find("caption").itertext())
    headers = [th for th in table.iter("th") if th.get("scope") == "col"]
    assert [th.text for th in headers] == ["Protocol", "Result", "Tolerance", "Samples", "Sub-score (0–100)", "Status"]
    rows = table.find("tbody").findall("tr")
    assert len(rows) == len(record["bench_table"])
    slug = record["product_slugs"][0]
    lines = server.get(f"/api/public/bench.jsonl?product={slug}").body.decode().splitlines()
    tolerances = {row["protocol_slug"]: row["tolerance"] for row in map(json.loads, lines)}
    for row, slot in zip(rows, record["bench_table"], strict=True):
        cells = ["".join(cell.itertext()).strip() for cell in row]
        assert row[0].tag == "th" and row[0].get("scope") == "row" and cells[0] == slot["protocol_name"]
        if slot["status"] == "pending":
            assert cells[1:] == ["", "", "", "", "pending"]
        else:
            assert cells[1] == f"{slot['value']} {slot['unit']}" and cells[4] == str(slot["score"])
            assert cells[2] == f"± {tolerances[slot['protocol']]} {slot['unit']}" and cells[5] == "measured"


def test_the_byline_names_the_tester_and_the_date_in_english_and_arabic(server: Server):
    path, record = product_with_a_pending_slot(server)
    slug = record["product_slugs"][0]
    lines = server.get(f"/api/public/bench.jsonl?product={slug}").body.decode().splitlines()
    testers = {json.loads(line)["tester"] for line in lines if json.loads(line)["status"] == "measured"}
    assert testers
    for lang, tested_by in (("en", "Tested by "), ("ar", "اختبره ")):
        document = parsed(server.get(path if lang == "en" else f"{path}?lang={lang}"))
        html = document if document.tag == "html" else document.find("html")
        assert html.get("dir") == ("rtl" if lang == "ar" else "ltr")
        byline = document.find(".//p[@class='byline']")
        text = "".join(byline.itertext())
        assert text.startswith(tested_by) and all(tester in text for tester in testers)
        time = byline.find("time")
        assert time.get("datetime") == record["updated_at"] and time.text.endswith(record["updated_at"][:4])
    english = "".join(parsed(server.get(path)).find(".//p[@class='byline']").itertext())
    year, month, day = record["updated_at"][:10].split("-")
    assert english.endswith(f" · {int(day)} {MONTHS[int(month) - 1]} {year}")


def test_no_byline_starts_or_ends_with_a_separator(server: Server, changes: list[dict]):
    for change in changes:
        for lang in ("en", "ar"):
            path = urlsplit(change["url"]).path
            document = parsed(server.get(path if lang == "en" else f"{path}?lang={lang}"))
            byline = document.find(".//p[@class='byline']")
            if byline is not None:
                text = "".join(byline.itertext()).strip()
                assert text and not text.startswith("·") and not text.endswith("·"), (path, lang, text)
