"""The whole site as a crawler walks it, on the real server: breadth first from ``/``, robots.txt,
the sitemap index and llms.txt, following every link an HTML page, a sitemap or llms.txt gives,
each address fetched once. No link may be broken: a reader or a crawler that follows one of the
site's own links must land on a page. Links to the release's ``base_url`` are the site's own (the
demo's base URL is not this test server's address), so they are asked of this server."""

from __future__ import annotations

import contextlib
import http.client
import re
import threading
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import pytest

from public.openapi import HUB_PATH
from tests.api.conftest import BASE_URL
from tests.support.harness import Server
from tests.support.site_pages import HREFLANGS, SITEMAP_NS, XHTML_NS, local
from warehouse.reference_data import SECTIONS

SEEDS = ("/", "/robots.txt", "/sitemap.xml", "/llms.txt")  # where crawlers and answer engines start
CRAWL_THREADS = 4  # one server worker on two cores: more clients only queue
BODY_KEPT_BYTES = 256 * 1024  # a bigger body we do not parse is not downloaded: the connection is dropped
MAX_REDIRECTS = 10
TEXT_FILES_WITH_LINKS = ("/robots.txt", "/llms.txt")
# Where links are read from, per element: anchors, head links and embedded resources (SVG's too).
LINK_ATTRIBUTES = {
    "a": ("href", "xlink:href"),
    "link": ("href",),
    "img": ("src",),
    "script": ("src",),
    "source": ("src",),
    "image": ("href", "xlink:href"),
}
MARKDOWN_LINK = re.compile(r"\]\((\S+?)\)")
ROBOTS_SITEMAP = re.compile(r"^Sitemap:\s*(\S+)", re.MULTILINE | re.IGNORECASE)
WELL_FORMED_HOST = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+(:\d{1,5})?$")


class LinkCollector(HTMLParser):
    """Every address an HTML page links to or embeds, as written (the standard library's lenient parser:
    checking the HTML strictly is test_site's job, and html5lib is much slower over a thousand pages)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        wanted = LINK_ATTRIBUTES.get(tag, ())
        self.links += [value for name, value in attrs if name in wanted and value is not None]


def html_links(body: bytes) -> list[str]:
    collector = LinkCollector()
    collector.feed(body.decode("utf-8"))
    collector.close()
    return collector.links


def sitemap_links(body: bytes) -> list[str]:
    """The ``loc`` of every sitemap an index lists, or of every page a sitemap lists, and its language alternates."""
    root = ET.fromstring(body)
    locs = [element.text or "" for element in root.iter(f"{SITEMAP_NS}loc")]
    return locs + [link.get("href", "") for link in root.iter(f"{XHTML_NS}link")]


def text_links(body: bytes) -> list[str]:
    """llms.txt's Markdown links and robots.txt's ``Sitemap:`` lines."""
    text = body.decode("utf-8")
    return MARKDOWN_LINK.findall(text) + ROBOTS_SITEMAP.findall(text)


def link_reader(path: str, content_type: str) -> Callable[[bytes], list[str]] | None:
    """How a crawler reads the links of a response: HTML pages, sitemaps, robots.txt and llms.txt
    (the API's JSON documents and the corpus files are data, not pages to crawl)."""
    media_type = content_type.split(";")[0].strip()
    if media_type == "text/html":
        return html_links
    if media_type == "application/xml":
        return sitemap_links
    if urlsplit(path).path in TEXT_FILES_WITH_LINKS:
        return text_links
    return None


@dataclass
class Fetched:
    status: int | None  # None when no response came
    links: list[str] = field(default_factory=list)
    location: str | None = None  # a redirect's target, as sent
    error: str | None = None


class Fetcher:
    """GETs of paths on the server, over one kept-alive connection per thread."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.connections = threading.local()
        self.opened: list[http.client.HTTPConnection] = []  # to close them all at the end

    def connection(self) -> http.client.HTTPConnection:
        if getattr(self.connections, "current", None) is None:
            self.connections.current = http.client.HTTPConnection(self.server.host, self.server.port, timeout=30)
            self.opened.append(self.connections.current)
        return self.connections.current

    def close(self) -> None:
        for connection in self.opened:
            connection.close()

    def drop_connection(self) -> None:
        self.connections.current.close()
        self.connections.current = None

    def fetch(self, path: str) -> Fetched:
        """GET ``path``; the body is read when it has links to follow or is small, else left unread
        (and the connection dropped with it). A connection the server closed while idle is retried once."""
        for attempt in (1, 2):
            try:
                connection = self.connection()
                connection.request("GET", path, headers={"Accept-Encoding": "identity"})
                response = connection.getresponse()
            except (http.client.HTTPException, OSError) as error:
                self.drop_connection()
                if attempt == 2:
                    return Fetched(None, error=repr(error))
                continue
            read_links = link_reader(path, response.getheader("Content-Type", ""))
            links = read_links(response.read()) if read_links else []
            if not read_links and int(response.getheader("Content-Length") or BODY_KEPT_BYTES + 1) > BODY_KEPT_BYTES:
                self.drop_connection()  # with the body unread
            elif not read_links:
                response.read()
            if response.will_close:
                self.drop_connection()
            return Fetched(response.status, links, response.getheader("Location"))
        raise AssertionError("unreachable")


@dataclass
class Crawl:
    """What a crawl found: each internal address (path and query) with its response, the pages
    linking to it, the external links that do not look like addresses, and how long it took."""

    origin: str  # this test server's, e.g. http://127.0.0.1:54321
    fetched: dict[str, Fetched] = field(default_factory=dict)
    linked_from: defaultdict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    malformed_external: defaultdict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def internal_target(self, page: str, link: str) -> str | None:
        """The path and query ``link`` (as written on ``page``) asks this server for, or None when it
        leaves the site; the release's own base URL is mapped onto this server."""
        address = urljoin(f"{self.origin}{page}", link.strip()).split("#", 1)[0]
        parts = urlsplit(address)
        if f"{parts.scheme}://{parts.netloc}" == self.origin:
            return parts.path + (f"?{parts.query}" if parts.query else "")
        if address == BASE_URL or address.startswith(f"{BASE_URL}/") or address.startswith(f"{BASE_URL}?"):
            return local(address)
        if not well_formed_external(link):
            self.malformed_external[link].add(page)
        return None

    def final_status(self, path: str) -> int | None:
        """The status a client following redirects ends on (None: no answer, a loop, or a redirect out)."""
        seen: list[str] = []
        while path not in seen and len(seen) <= MAX_REDIRECTS:
            seen.append(path)
            fetched = self.fetched[path]
            if fetched.status is None or not 300 <= fetched.status < 400:
                return fetched.status
            target = self.internal_target(path, fetched.location) if fetched.location else None
            if target is None:
                return None
            path = target
        return None

    def broken(self) -> dict[str, str]:
        """Each internal address that does not end on a 2xx, with its status and who links to it."""
        found = {}
        for path, fetched in sorted(self.fetched.items()):
            status = self.final_status(path)
            if status is None or not 200 <= status < 300:
                pages = sorted(self.linked_from[path]) or ["(where the crawl starts)"]
                shown = ", ".join(pages[:5]) + (f" and {len(pages) - 5} more" if len(pages) > 5 else "")
                answer = fetched.error or fetched.status
                found[path] = f"{answer}{f' to {fetched.location}' if fetched.location else ''}, linked from {shown}"
        return found


def well_formed_external(link: str) -> bool:
    """Whether a link off the site is an address a browser can follow: http(s) to a named host, or mailto."""
    parts = urlsplit(link)
    if parts.scheme == "mailto":
        return "@" in parts.path and not any(character.isspace() for character in link)
    return (
        parts.scheme in ("http", "https")
        and WELL_FORMED_HOST.match(parts.netloc.lower()) is not None
        and not any(character.isspace() for character in link)
    )


def crawl_site(server: Server) -> Crawl:
    """Breadth first from the seeds, each internal address fetched once, a level at a time on a few threads."""
    crawl = Crawl(origin=f"http://{server.host}:{server.port}")
    fetcher = Fetcher(server)
    frontier = list(SEEDS)
    with ThreadPoolExecutor(CRAWL_THREADS) as pool, contextlib.closing(fetcher):
        while frontier:
            crawl.fetched.update(zip(frontier, pool.map(fetcher.fetch, frontier), strict=True))
            discovered: dict[str, None] = {}  # in order, once
            for page in frontier:
                fetched = crawl.fetched[page]
                for link in [*fetched.links, *([fetched.location] if fetched.location else [])]:
                    target = crawl.internal_target(page, link)
                    if target is not None:
                        crawl.linked_from[target].add(page)
                        if target not in crawl.fetched:
                            discovered[target] = None
            frontier = list(discovered)
    return crawl


@pytest.fixture(scope="module")
def crawl(server: Server) -> Crawl:
    return crawl_site(server)


def test_every_address_the_site_links_to_answers(crawl: Crawl):
    broken = crawl.broken()
    listing = "\n".join(f"{path}: {why}" for path, why in broken.items())
    assert not broken, f"{len(broken)} broken of {len(crawl.fetched)} crawled:\n{listing}"


def test_no_link_off_the_site_is_malformed(crawl: Crawl):
    listing = "\n".join(
        f"{link!r} on {', '.join(sorted(pages)[:5])}" for link, pages in crawl.malformed_external.items()
    )
    assert not crawl.malformed_external, f"links a browser cannot follow:\n{listing}"


def test_the_crawl_reaches_every_section_in_every_language(crawl: Crawl):
    """The crawl is only as good as what it reached: every section's pages in each of the six
    languages, the hub and the API guide, which only the links between pages lead to."""
    pages = [urlsplit(path) for path, fetched in crawl.fetched.items() if fetched.status == 200]
    reached = {(page.path.split("/")[1], page.query.removeprefix("lang=") or "en") for page in pages}
    missing = [(section, lang) for section in SECTIONS for lang in HREFLANGS if (section, lang) not in reached]
    assert not missing, f"no page reached of (section, language): {missing}"
    assert {"/", HUB_PATH} <= {page.path for page in pages}
