"""The files crawlers and answer engines read first, written into the release at publish.

- ``robots.txt``: everything may be crawled, indexed and quoted with attribution (the licence
  named in a comment), and where the sitemap is.
- ``sitemap.xml``: a sitemaps.org index with one sitemap per section of the site
  (``sitemaps/<section>.xml``; a section past the protocol's limits goes on in
  ``sitemaps/<section>-2.xml`` and so on). Each page is listed once, at its canonical
  (English) address, with a ``lastmod`` that is its ``changed_at`` in the change log (none
  when the log has no entry for it: never the build's time) and an ``xhtml:link`` alternate
  for every language the site renders it in, at the address the site serves it.
- ``llms.txt`` (the llms.txt proposal): the publisher's name, a summary, and Markdown links to
  the API, the corpus, the dataset and the guides.

Pages are read a batch at a time (``Snapshot.stream``): a section of 100,000 products is
written as it is read.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, BinaryIO
from xml.sax.saxutils import escape, quoteattr

from public import documents
from public.languages import language_suffix, translated
from public.openapi import EXPLORE_PATH, OPERATIONS
from release.folder import DOWNLOADS_DIR, SITEMAP_INDEX, SITEMAPS_DIR
from release.snapshot import Snapshot
from warehouse.reference_data import DEFAULT_LANGUAGE

# The sitemap protocol's limits, per sitemap file.
SITEMAP_MAX_URLS = 50_000
SITEMAP_MAX_BYTES = 50 * 1024 * 1024  # uncompressed

XML_HEAD = b'<?xml version="1.0" encoding="UTF-8"?>\n'
URLSET_OPEN = (
    XML_HEAD + b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
    b'xmlns:xhtml="http://www.w3.org/1999/xhtml">\n'
)
URLSET_CLOSE = b"</urlset>\n"


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def write_robots(out: BinaryIO, snapshot: Snapshot) -> None:
    """robots.txt: every address may be crawled, indexed and quoted with attribution."""
    publisher = snapshot.publisher
    lines = [
        f"# {one_line(publisher['name'])}: every page and document here may be crawled, indexed and quoted, "
        "with attribution and a link to the cited URL.",
        f"# Licence: {one_line(documents.licence_text(snapshot))}",
        "User-agent: *",
        "Allow: /",
        "",
        f"Sitemap: {snapshot.base_url}/{SITEMAP_INDEX}",
    ]
    out.write(("\n".join(lines) + "\n").encode())


# Every page with its section and its change log's changed_at (null when it has none), in order.
SITEMAP_PAGES_SQL = """
    SELECT pages.path, pages.canonical_url, split_part(pages.path, '/', 2) AS section, logged.changed_at
    FROM pages
    LEFT JOIN (SELECT path, max(changed_at) AS changed_at FROM changes GROUP BY path) AS logged USING (path)
    ORDER BY section, pages.path
"""


def url_entry(page: dict[str, Any], alternates: list[tuple[str, str]]) -> bytes:
    """One ``<url>`` of a sitemap: the page's address, its lastmod when logged, and its language
    alternates (``language_alternates``) at the addresses the site serves them.

    An alternate's address is the page's with a suffix that holds no character XML escapes or
    quotes (``public.languages.language_suffix``), so its quoted attribute is the page's quoted
    address with the suffix inside the quotes: the address is escaped once, not once a language.
    """
    url = page["canonical_url"]
    quoted = quoteattr(url)
    parts = [f"<url><loc>{escape(url)}</loc>"]
    if page["changed_at"] is not None:
        parts.append(f"<lastmod>{documents.json_value(page['changed_at'])}</lastmod>")
    for hreflang, suffix in alternates:
        parts.append(f'<xhtml:link rel="alternate" hreflang={hreflang} href={quoted[:-1]}{suffix}{quoted[-1]}/>')
    parts.append(f'<xhtml:link rel="alternate" hreflang="x-default" href={quoted}/>')
    parts.append("</url>\n")
    return "".join(parts).encode()


def language_alternates(languages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Each language's ``hreflang`` as a quoted attribute, and the suffix its addresses carry
    (``language_suffix``), which must need no escaping for ``url_entry``."""
    alternates = []
    for row in languages:
        suffix = language_suffix(row["code"])
        if quoteattr(suffix) != f'"{suffix}"':
            raise ValueError(f"the language suffix {suffix!r} needs escaping in a sitemap")
        alternates.append((quoteattr(row["hreflang"]), suffix))
    return alternates


class SitemapWriter:
    """The sitemaps of one section, each part kept within the protocol's limits."""

    def __init__(self, folder: Path, section: str, max_urls: int, max_bytes: int) -> None:
        self.folder, self.section = folder, section
        self.max_urls, self.max_bytes = max_urls, max_bytes
        self.parts: list[tuple[str, dt.datetime | None]] = []  # (path, newest lastmod) of each part
        self.out: BinaryIO | None = None
        self.urls = self.size = 0
        self.newest: dt.datetime | None = None

    def open_part(self) -> None:
        number = len(self.parts) + 1
        path = f"{SITEMAPS_DIR}/{self.section}{'' if number == 1 else f'-{number}'}.xml"
        target = self.folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        self.out = target.open("wb", buffering=1024 * 1024)
        self.out.write(URLSET_OPEN)
        self.parts.append((path, None))
        self.urls, self.size, self.newest = 0, len(URLSET_OPEN), None

    def close_part(self) -> None:
        assert self.out is not None
        self.out.write(URLSET_CLOSE)
        self.out.close()
        self.out = None
        self.parts[-1] = (self.parts[-1][0], self.newest)

    def add(self, entry: bytes, changed_at: dt.datetime | None) -> None:
        if self.out is None:
            self.open_part()
        elif self.urls >= self.max_urls or self.size + len(entry) + len(URLSET_CLOSE) > self.max_bytes:
            self.close_part()
            self.open_part()
        assert self.out is not None
        self.out.write(entry)
        self.urls += 1
        self.size += len(entry)
        if changed_at is not None and (self.newest is None or changed_at > self.newest):
            self.newest = changed_at

    def finish(self) -> list[tuple[str, dt.datetime | None]]:
        if self.out is None and not self.parts:
            self.open_part()  # a section with no pages yet: an empty, valid sitemap
        if self.out is not None:
            self.close_part()
        return self.parts


def write_sitemaps(
    folder: Path,
    snapshot: Snapshot,
    sections: tuple[str, ...],
    max_urls: int = SITEMAP_MAX_URLS,
    max_bytes: int = SITEMAP_MAX_BYTES,
) -> list[str]:
    """Write each section's sitemaps and the index naming them; the paths written, the index last."""
    alternates = language_alternates(snapshot.tables["languages"])
    writers = {section: SitemapWriter(folder, section, max_urls, max_bytes) for section in sections}
    for page in snapshot.stream_query(SITEMAP_PAGES_SQL):
        writer = writers.get(page["section"])
        if writer is not None:  # pages outside the site's sections are not served
            writer.add(url_entry(page, alternates), page["changed_at"])
    parts = [part for writer in writers.values() for part in writer.finish()]
    index = [XML_HEAD, b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n']
    for path, newest in parts:
        lastmod = f"<lastmod>{documents.json_value(newest)}</lastmod>" if newest is not None else ""
        index.append(f"<sitemap><loc>{escape(f'{snapshot.base_url}/{path}')}</loc>{lastmod}</sitemap>\n".encode())
    index.append(b"</sitemapindex>\n")
    (folder / SITEMAP_INDEX).write_bytes(b"".join(index))
    return [*(path for path, _ in parts), SITEMAP_INDEX]


# The content sections llms.txt lists page by page.
LLMS_GUIDE_SECTIONS = ("guides",)
MAIN_OPERATIONS = ("ask", "products", "recommendations", "answers", "page", "changes", "benchJsonl", "capabilities")


def markdown_link(title: str, url: str, description: str) -> str:
    title = one_line(title).replace("[", "(").replace("]", ")")
    return f"- [{title}]({url}): {one_line(description)}"


def write_llms_txt(out: BinaryIO, snapshot: Snapshot) -> None:
    """llms.txt, as the llms.txt proposal lays it out: H1, a one-paragraph summary, sections of links."""
    publisher, base_url, stats = snapshot.publisher, snapshot.base_url, snapshot.statistics
    api = f"{base_url}/api/public"
    summary = (
        f"{one_line(publisher['boilerplate'])} Its public, read-only data API serves {stats['products']} products "
        f"in {stats['categories']} categories with their bench measurements and 0-100 scores, buying "
        f"recommendations, an answer library and every editorial page, in six languages, under "
        f"{one_line(documents.licence_text(snapshot))}"
    )
    lines = [f"# {one_line(publisher['name'])}", "", f"> {summary}", ""]
    lines += [
        "Every answer and record carries the URL to cite; print its attribution string with anything you quote. "
        "To answer a question, call ask.json first.",
        "",
        "## API",
        "",
        markdown_link("OpenAPI document", f"{api}/openapi.json", "The contract: every operation, parameter, schema."),
    ]
    for operation in OPERATIONS:
        if operation.operation_id in MAIN_OPERATIONS:
            example = f"{base_url}{operation.path}" + (f"?{operation.example}" if operation.example else "")
            lines.append(markdown_link(operation.summary, example, operation.question))
    lines += [
        "",
        "## Corpus",
        "",
        markdown_link("llms-full.txt", f"{base_url}/llms-full.txt", "Every page as Markdown, in one plain-text file."),
        markdown_link(
            "claims.jsonl",
            f"{api}/claims.jsonl",
            "Checkable claims, one JSON object per line, each with the bench readings it rests on.",
        ),
        markdown_link("Content", f"{api}/content.json", "Every guide, comparison, review and journal post in full."),
        "",
        "## Dataset",
        "",
        markdown_link(
            "dataset.json",
            f"{api}/dataset.json",
            "schema.org Dataset: every distribution with its size and sha256, the measured variables, a citation.",
        ),
        markdown_link(
            "Explore with SQL",
            f"{base_url}{EXPLORE_PATH}",
            "Every table below queried with SQL in the browser, charted and downloaded; nothing to install.",
        ),
    ]
    for table in snapshot.distributed_tables:
        lines.append(
            markdown_link(f"{table}.parquet", f"{base_url}/{DOWNLOADS_DIR}/{table}.parquet", f"The {table} table.")
        )
    lines += ["", "## Guides", ""]
    for row in snapshot.stream("content"):
        if row["section"] in LLMS_GUIDE_SECTIONS:
            answer = translated(row["answer"], DEFAULT_LANGUAGE)
            lines.append(markdown_link(row["title"], row["url"], answer or row["title"]))
    out.write(("\n".join(lines) + "\n").encode())
