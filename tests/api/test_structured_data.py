"""Each kind of page, in English and in Arabic, as the parsers search engines and link previews use
read it: ``extruct`` (lxml underneath, as Scrapy and many crawlers run it) must find the schema.org
JSON-LD block of the page's type and the Open Graph tags a preview is built from, with the page's
own values: og:url is its canonical address, og:locale its language."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import extruct
import pytest

from public.openapi import HUB_PATH
from tests.api.conftest import BASE_URL
from tests.support.harness import Server
from tests.support.site_pages import LD_TYPES, OG_LOCALES, PAGE_TYPES, all_changes, links, local, parsed

LANGUAGES = ("en", "ar")  # left to right and right to left
OG_TYPES = {"product": "product"}  # every other page with a record is an article; the hub and API guide, websites
SCHEMA_ORG = ("https://schema.org", "https://schema.org/")
# `/` documents the API and the dataset it serves, in English only (it takes no ?lang): Dataset is the
# schema.org type dataset.json already carries, and the one dataset search engines read from a page.
API_GUIDE_LD_TYPE = "Dataset"
CASES = [
    *(pytest.param(kind, lang, id=f"{kind}-{lang}") for kind in (*PAGE_TYPES, "hub") for lang in LANGUAGES),
    pytest.param("api_guide", "en", id="api_guide-en"),
]


@dataclass
class Expected:
    """What a page's structured data must say: its address as published, and the values it shows."""

    address: str
    og: dict[str, str]
    ld_type: str
    ld_fields: dict[str, Any] = field(default_factory=dict)  # top-level fields of the JSON-LD block


@pytest.fixture(scope="module")
def changes(server: Server) -> list[dict]:
    return all_changes(server)


def expected_page(server: Server, changes: list[dict], kind: str, lang: str) -> Expected:
    """The address of a page of ``kind`` in ``lang`` (the first the change feed lists) and, from its
    record in page.json (or dataset.json for the API guide), what its structured data must say."""
    if kind == "api_guide":
        dataset = server.get("/api/public/dataset.json").json()
        name = server.get("/api/public/press-kit.json").json()["organization"]["name"]
        og = {"og:title": f"The {name} data API", "og:description": dataset["description"], "og:type": "website"}
        return Expected(f"{BASE_URL}/", og, API_GUIDE_LD_TYPE, {"name": dataset["name"]})
    url = f"{BASE_URL}{HUB_PATH}" if kind == "hub" else next(c["url"] for c in changes if c["type"] == kind)
    address = url if lang == "en" else f"{url}?lang={lang}"
    record = server.get(f"/api/public/page.json?path={urlsplit(url).path}").json()["page"]
    description = record["answer"][lang]
    og_type = "website" if kind == "hub" else OG_TYPES.get(kind, "article")
    og = {"og:title": record["title"], "og:description": description, "og:type": og_type}
    ld_type = LD_TYPES[record["page_type"]]
    if ld_type == "Article":
        ld_fields = {"headline": record["title"], "url": address, "inLanguage": lang, "description": description}
    else:
        products = server.get("/api/public/products.json").json()["products"]
        product = next(p for p in products if p["product_slug"] == record["product_slugs"][0])
        ld_fields = {"name": product["product_name"], "url": product["url"]}
    return Expected(address, og, ld_type, ld_fields)


def open_graph(extracted: dict[str, list]) -> dict[str, list[str]]:
    """Every Open Graph property with all its values. Not extruct's ``uniform`` form: that keeps one
    value per property, and a tag given twice (two og:url) is a fault a preview would hide."""
    properties: dict[str, list[str]] = {}
    for block in extracted["opengraph"]:
        for name, value in block["properties"]:
            properties.setdefault(name, []).append(value)
    return properties


def extracted_page(server: Server, address: str) -> tuple[dict[str, list], list[str]]:
    """What extruct reads on the page at ``address`` (JSON-LD and Open Graph), and its canonical links."""
    reply = server.get(local(address))
    canonical = [link["href"] for link in links(parsed(reply), "canonical")]
    syntaxes = ["json-ld", "opengraph"]
    return extruct.extract(reply.body.decode("utf-8"), base_url=address, syntaxes=syntaxes, uniform=False), canonical


@pytest.mark.parametrize(("kind", "lang"), CASES)
def test_extruct_finds_one_json_ld_block_of_the_pages_type_with_its_values(
    server: Server, changes: list[dict], kind: str, lang: str
):
    expected = expected_page(server, changes, kind, lang)
    extracted, _ = extracted_page(server, expected.address)
    types = [block.get("@type") for block in extracted["json-ld"]]
    blocks = [block for block in extracted["json-ld"] if block.get("@type") == expected.ld_type]
    assert len(blocks) == 1, f"{expected.address}: JSON-LD of types {types}, not one {expected.ld_type}"
    [block] = blocks
    assert block.get("@context") in SCHEMA_ORG
    assert {name: block.get(name) for name in expected.ld_fields} == expected.ld_fields
    if "review" in block:  # a rated product's review is this page
        assert block["review"]["url"] == expected.address


@pytest.mark.parametrize(("kind", "lang"), CASES)
def test_extruct_finds_the_open_graph_tags_with_the_pages_values_and_canonical_address(
    server: Server, changes: list[dict], kind: str, lang: str
):
    expected = expected_page(server, changes, kind, lang)
    extracted, canonical = extracted_page(server, expected.address)
    og = open_graph(extracted)
    wanted = {**expected.og, "og:url": expected.address, "og:locale": OG_LOCALES[lang]}
    assert {name: og.get(name) for name in wanted} == {name: [value] for name, value in wanted.items()}
    assert canonical == [expected.address], f"{expected.address}: og:url is not the page's canonical link"
