"""What crawlers and answer engines read first, from the demo release on the real server:
robots.txt, the sitemap index and its sitemaps (every page of the change feed with its
changed_at, language alternates that open), llms.txt, and Open Graph / Twitter card tags on
every kind of HTML page."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urlsplit

import html5lib
import pytest

from publish.crawler_files import SITEMAP_MAX_BYTES, SITEMAP_MAX_URLS, write_sitemaps
from release.local_store import SNAPSHOT_FILE, current_version, release_path
from release.snapshot import read_snapshot
from tests.api.conftest import BASE_URL
from tests.support.harness import Reply, Server
from tests.support.site_pages import HREFLANGS, OG_LOCALES, PAGE_TYPES, SITEMAP_NS, XHTML_NS, all_changes, local
from warehouse.reference_data import SECTIONS

_MARKDOWN_LINK = re.compile(r"^- \[([^\]]+)\]\((\S+)\): (.+)$")


def assert_served_with_caching_headers(server: Server, path: str, media_type: str) -> Reply:
    reply = server.get(path)
    assert reply.status == 200, (path, reply.body[:300])
    assert reply.headers["content-type"] == media_type
    assert reply.headers["etag"] and reply.headers["cache-control"] == "public, max-age=300"
    assert reply.headers["x-dataset-version"] == current_version(server.store)
    assert reply.headers["access-control-allow-origin"] == "*"
    assert reply.headers["content-length"] == str(len(reply.body))
    again = server.get(path, {"If-None-Match": reply.headers["etag"]})
    assert again.status == 304 and again.body == b""
    return reply


def sitemap_urls(server: Server) -> dict[str, ET.Element]:
    """Every ``<url>`` of every sitemap the index lists, by its loc."""
    index = ET.fromstring(server.get("/sitemap.xml").body)
    urls: dict[str, ET.Element] = {}
    for entry in index.iter(f"{SITEMAP_NS}sitemap"):
        sitemap = ET.fromstring(server.get(local(entry.findtext(f"{SITEMAP_NS}loc"))).body)
        for url in sitemap.iter(f"{SITEMAP_NS}url"):
            loc = url.findtext(f"{SITEMAP_NS}loc")
            assert loc not in urls, f"{loc} is listed twice"
            urls[loc] = url
    return urls


@pytest.fixture(scope="module")
def changes(server: Server) -> list[dict]:
    return all_changes(server)


@pytest.fixture(scope="module")
def urls(server: Server) -> dict[str, ET.Element]:
    return sitemap_urls(server)


def test_robots_txt_allows_everything_names_the_licence_and_the_sitemap(server: Server):
    reply = assert_served_with_caching_headers(server, "/robots.txt", "text/plain; charset=utf-8")
    text = reply.body.decode()
    lines = text.splitlines()
    publisher = server.get("/api/public/press-kit.json").json()
    capabilities = server.get("/api/public/capabilities.json").json()
    comments = "\n".join(line for line in lines if line.startswith("#"))
    assert publisher["organization"]["name"] in comments and "attribution" in comments
    assert capabilities["attribution"]["license"] in comments and capabilities["attribution"]["license_url"] in comments
    assert "User-agent: *" in lines and "Allow: /" in lines
    assert not any(line.startswith("Disallow:") and line.strip() != "Disallow:" for line in lines)
    assert f"Sitemap: {BASE_URL}/sitemap.xml" in lines


def test_the_sitemap_index_lists_one_sitemap_per_section_and_every_url_answers(server: Server):
    reply = assert_served_with_caching_headers(server, "/sitemap.xml", "application/xml; charset=utf-8")
    index = ET.fromstring(reply.body)
    assert index.tag == f"{SITEMAP_NS}sitemapindex"
    entries = list(index.iter(f"{SITEMAP_NS}sitemap"))
    locs = [entry.findtext(f"{SITEMAP_NS}loc") for entry in entries]
    assert locs == [f"{BASE_URL}/sitemaps/{section}.xml" for section in SECTIONS]  # the demo needs no split
    for entry, loc in zip(entries, locs, strict=True):
        section = loc.rsplit("/", 1)[1].removesuffix(".xml")
        sitemap_reply = assert_served_with_caching_headers(server, local(loc), "application/xml; charset=utf-8")
        assert len(sitemap_reply.body) <= SITEMAP_MAX_BYTES
        sitemap = ET.fromstring(sitemap_reply.body)
        assert sitemap.tag == f"{SITEMAP_NS}urlset"
        listed = list(sitemap.iter(f"{SITEMAP_NS}url"))
        assert 0 < len(listed) <= SITEMAP_MAX_URLS
        lastmods = [url.findtext(f"{SITEMAP_NS}lastmod") for url in listed]
        for url in listed:
            address = url.findtext(f"{SITEMAP_NS}loc")
            assert urlsplit(address).path.startswith(f"/{section}/"), (section, address)
            page = server.get(local(address))
            assert page.status == 200 and page.headers["content-type"] == "text/html; charset=utf-8", address
        # The index's lastmod is the newest of its sitemap's.
        assert entry.findtext(f"{SITEMAP_NS}lastmod") == max(m for m in lastmods if m)


def test_every_change_is_in_the_sitemap_with_its_changed_at_and_nothing_else_has_a_lastmod(
    server: Server, changes: list[dict], urls: dict[str, ET.Element]
):
    changed_at = {change["url"]: change["changed_at"] for change in changes}
    assert {change["type"] for change in changes} == set(PAGE_TYPES)
    for url, when in changed_at.items():
        assert url in urls, f"{url} is in the change feed but not in the sitemap"
        assert urls[url].findtext(f"{SITEMAP_NS}lastmod") == when, url
    published_at = server.get("/api/public/dataset.json").json()["dateModified"]
    for loc, url in urls.items():
        lastmod = url.findtext(f"{SITEMAP_NS}lastmod")
        if loc not in changed_at:
            assert lastmod is None, f"{loc} has no change but a lastmod {lastmod}"
        if lastmod == published_at:
            assert changed_at[loc] == published_at, f"{loc}: the publish time is not a change"


def test_every_language_alternate_is_the_address_the_site_serves_in_that_language(
    server: Server, urls: dict[str, ET.Element]
):
    parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
    for loc, url in urls.items():
        alternates = {link.get("hreflang"): link.get("href") for link in url.iter(f"{XHTML_NS}link")}
        assert all(link.get("rel") == "alternate" for link in url.iter(f"{XHTML_NS}link"))
        assert set(alternates) == {*HREFLANGS.values(), "x-default"}, loc
        assert alternates["x-default"] == alternates["en"] == loc
        for code, hreflang in HREFLANGS.items():
            expected = loc if code == "en" else f"{loc}?lang={code}"
            assert alternates[hreflang] == expected
        if urlsplit(loc).path.split("/")[1] in ("guides", "reviews") or loc == next(iter(urls)):
            for hreflang, href in alternates.items():  # each opens, in its language, naming itself canonical
                reply = server.get(local(href))
                assert reply.status == 200, href
                document = parser.parse(reply.body)
                html = document if document.tag == "html" else document.find("html")
                assert html.get("lang") == (hreflang if hreflang != "x-default" else "en")
                canonical = [link.get("href") for link in document.iter("link") if link.get("rel") == "canonical"]
                assert canonical == [href]
        else:  # the others: each alternate answers
            for href in alternates.values():
                assert server.get(local(href)).status == 200, href


def test_a_section_past_the_protocols_limits_is_split_into_parts_within_them(server: Server, tmp_path: Path):
    snapshot_file = release_path(server.store, current_version(server.store)) / SNAPSHOT_FILE
    snapshot = read_snapshot(snapshot_file)
    try:
        whole = write_sitemaps(tmp_path / "whole", snapshot, SECTIONS)
        by_count = write_sitemaps(tmp_path / "count", snapshot, SECTIONS, max_urls=10)
        by_bytes = write_sitemaps(tmp_path / "bytes", snapshot, SECTIONS, max_bytes=8000)
    finally:
        snapshot.connection.close()

    def listed(folder: Path, paths: list[str]) -> tuple[list[str], dict[str, int]]:
        locs, sizes = [], {}
        for path in paths[:-1]:
            root = ET.parse(folder / path).getroot()
            found = [url.findtext(f"{SITEMAP_NS}loc") for url in root.iter(f"{SITEMAP_NS}url")]
            locs += found
            sizes[path] = len(found)
        index = ET.parse(folder / paths[-1]).getroot()
        assert [e.findtext(f"{SITEMAP_NS}loc") for e in index.iter(f"{SITEMAP_NS}sitemap")] == [
            f"{BASE_URL}/{path}" for path in paths[:-1]
        ]
        return locs, sizes

    everything, _ = listed(tmp_path / "whole", whole)
    assert len(whole) == len(SECTIONS) + 1
    for folder, paths in (("count", by_count), ("bytes", by_bytes)):
        locs, sizes = listed(tmp_path / folder, paths)
        assert locs == everything and len(paths) > len(whole)
        assert "sitemaps/products-2.xml" in paths
        for path, count in sizes.items():
            assert count > 0
            if folder == "count":
                assert count <= 10
            else:
                assert (tmp_path / folder / path).stat().st_size <= 8000


def test_llms_txt_has_its_title_summary_and_sections_and_every_link_answers(server: Server):
    reply = assert_served_with_caching_headers(server, "/llms.txt", "text/plain; charset=utf-8")
    lines = reply.body.decode().splitlines()
    publisher = server.get("/api/public/press-kit.json").json()["organization"]
    assert lines[0] == f"# {publisher['name']}"
    assert lines[1] == "" and lines[2].startswith("> ") and publisher["boilerplate"] in lines[2]
    assert "CC BY 4.0" in lines[2]
    sections = [line.removeprefix("## ") for line in lines if line.startswith("## ")]
    assert sections == ["API", "Corpus", "Dataset", "Guides"]
    links: dict[str, list[tuple[str, str]]] = {}
    current = None
    for line in lines:
        if line.startswith("## "):
            current = line.removeprefix("## ")
        elif line.startswith("- "):
            match = _MARKDOWN_LINK.match(line)
            assert match and current, line
            links.setdefault(current, []).append((match[1], match[2]))
    assert all(links[section] for section in sections)
    hrefs = {href for found in links.values() for _, href in found}
    for needed in ("/api/public/openapi.json", "/api/public/ask.json", "/llms-full.txt", "/api/public/claims.jsonl"):
        assert any(urlsplit(href).path == needed for href in hrefs), needed
    assert f"{BASE_URL}/api/public/dataset.json" in hrefs
    assert any(urlsplit(href).path.startswith("/api/public/downloads/") for href in hrefs)
    guides = [item for item in server.get("/api/public/content.json").json()["items"] if item["section"] == "guides"]
    assert [href for _, href in links["Guides"]] == [guide["url"] for guide in guides]
    for href in sorted(hrefs):
        assert server.get(local(href)).status == 200, href


def og_tags(reply: Reply) -> tuple[dict[str, list[str]], dict[str, str], list[str]]:
    """(og:* and twitter:* meta values by name, other meta by name, canonical links) of a page."""
    assert reply.status == 200 and reply.headers["content-type"] == "text/html; charset=utf-8"
    document = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(reply.body)
    head = document.find("head")
    social: dict[str, list[str]] = {}
    named: dict[str, str] = {}
    for meta in head.iter("meta"):
        key = meta.get("property") or meta.get("name")
        if key and key.startswith(("og:", "twitter:")):
            social.setdefault(key, []).append(meta.get("content"))
        elif key:
            named[key] = meta.get("content")
    canonical = [link.get("href") for link in head.iter("link") if link.get("rel") == "canonical"]
    return social, named, canonical


def one(social: dict[str, list[str]], key: str) -> str:
    [value] = social[key]
    return value


@pytest.mark.parametrize("lang", ["en", "ar", "zh"])
@pytest.mark.parametrize("page_type", [*PAGE_TYPES, "hub"])
def test_each_page_type_has_open_graph_and_twitter_tags(server: Server, changes: list[dict], page_type: str, lang: str):
    if page_type == "hub":
        url = f"{BASE_URL}/guides/start-here"
    else:
        url = next(change["url"] for change in changes if change["type"] == page_type)
    address = url if lang == "en" else f"{url}?lang={lang}"
    record = server.get(f"/api/public/page.json?path={urlsplit(url).path}").json()["page"]
    social, named, canonical = og_tags(server.get(local(address)))
    assert canonical == [address] and one(social, "og:url") == address
    assert one(social, "og:title") == record["title"] == one(social, "twitter:title")
    # Quotes, ampersands and the rest come back as they are: escaped in the HTML, whole in the value.
    assert one(social, "og:description") == record["answer"][lang] == one(social, "twitter:description")
    assert one(social, "og:description") == named["description"]
    expected_type = {"product": "product", "hub": "website"}.get(page_type, "article")
    assert one(social, "og:type") == expected_type
    assert one(social, "og:site_name") == server.get("/api/public/press-kit.json").json()["organization"]["name"]
    assert one(social, "og:locale") == OG_LOCALES[lang]
    assert sorted(social["og:locale:alternate"]) == sorted(v for k, v in OG_LOCALES.items() if k != lang)
    assert one(social, "twitter:card") == "summary"


def test_the_api_guide_has_open_graph_and_twitter_tags(server: Server):
    social, _, _ = og_tags(server.get("/"))
    name = server.get("/api/public/press-kit.json").json()["organization"]["name"]
    assert one(social, "og:url") == f"{BASE_URL}/" and one(social, "og:type") == "website"
    assert one(social, "og:title") == f"The {name} data API" == one(social, "twitter:title")
    assert one(social, "og:description") == server.get("/api/public/dataset.json").json()["description"]
    assert one(social, "twitter:description") == one(social, "og:description")
    assert one(social, "og:site_name") == name and one(social, "og:locale") == "en_US"
    assert len(social["og:locale:alternate"]) == 5 and one(social, "twitter:card") == "summary"


def test_open_graph_values_are_escaped_and_come_back_whole(server: Server, changes: list[dict]):
    change = next(change for change in changes if "&" in change["title"])
    reply = server.get(local(change["url"]))
    social, _, _ = og_tags(reply)
    assert one(social, "og:title") == change["title"] == one(social, "twitter:title")
    escaped = change["title"].replace("&", "&amp;")
    assert f'<meta property="og:title" content="{escaped}">'.encode() in reply.body
