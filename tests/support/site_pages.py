"""What the site's and crawlers' tests share: the page types and their schema.org types, the
Open Graph locales, a page parsed strictly, its links, an address made local, the change feed."""

from __future__ import annotations

from urllib.parse import urlsplit

import html5lib

from foundations.settings import DEFAULT_BASE_URL as BASE_URL
from tests.support.harness import Reply, Server

PAGE_TYPES = ("guide", "comparison", "review", "product", "post")
LD_TYPES = {"guide": "Article", "comparison": "Article", "post": "Article", "review": "Product", "product": "Product"}
OG_LOCALES = {"en": "en_US", "zh": "zh_CN", "el": "el_GR", "vi": "vi_VN", "ar": "ar_AR", "pa": "pa_IN"}


def parsed(reply: Reply):
    """The page as an element tree; html5lib's strict mode raises on the first parse error."""
    assert reply.status in (200, 400, 404) and reply.headers["content-type"] == "text/html; charset=utf-8"
    return html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(reply.body)


def links(document, rel: str) -> list[dict[str, str]]:
    return [dict(link.attrib) for link in document.iter("link") if link.get("rel") == rel]


def local(address: str) -> str:
    """The path and query of an address the release hands out, to ask this test's server for it."""
    assert address.startswith(BASE_URL), address
    parts = urlsplit(address)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def all_changes(server: Server) -> list[dict]:
    """Every entry of the change feed, following its pages (at the largest page size) if it pages."""
    operation = server.get("/api/public/openapi.json").json()["paths"]["/api/public/changes.json"]["get"]
    limit = next((p for p in operation.get("parameters", []) if p["name"] == "limit"), None)
    address = "/api/public/changes.json" + (f"?limit={limit['schema']['maximum']}" if limit else "")
    changes: list[dict] = []
    while address:
        feed = server.get(address).json()
        changes += feed["changes"]
        following = feed.get("next")
        address = local(following) if following else ""
    assert len(changes) == feed["total_changed"] or "next" in feed
    return changes


# The sitemaps' XML namespaces, and the hreflang tag of each language.
SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
XHTML_NS = "{http://www.w3.org/1999/xhtml}"
HREFLANGS = {"en": "en", "zh": "zh-Hans", "el": "el", "vi": "vi", "ar": "ar", "pa": "pa"}
