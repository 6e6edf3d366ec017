"""The human-readable side of the same data: every cited ``{base_url}/<section>/<slug>`` as HTML.

A page is rendered from the snapshot's page record (title, quotable answer, body in Markdown,
FAQ, sources, bench table, attribution) with a byline (who tested its products, else who wrote
it, and the date written out in the page's language), bench charts (``serve.html.charts``: for a
product page, each reading among its category's; for comparisons and guides, their products'
readings side by side; read in one query per page), its canonical link, ``hreflang`` alternates for
the six languages and schema.org JSON-LD. ``?lang=<code>`` renders the translated parts in
that language (right to left for ar). A page is rendered once per snapshot and language and
then served from memory with the API's caching headers. Markdown is rendered with raw HTML
escaped and unsafe link schemes refused; templates autoescape.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from foundations.media_types import HTML, with_charset
from foundations.release_caches import BoundedMemo
from public import documents
from public.languages import language_url, translated
from public.openapi import ASK_PATH, CHANGE_FIELDS, EXPLORE_PATH, HUB_PATH
from release.snapshot import Snapshot
from serve.html import charts
from serve.http.responses import answer_with_validators
from warehouse.reference_data import DEFAULT_LANGUAGE, LANGUAGES, SECTIONS

TEMPLATES_DIR = Path(__file__).with_name("templates")
LATEST_CHANGES_SQL = (  # the newest changes, listed on the hub
    f"SELECT {', '.join(CHANGE_FIELDS)} FROM changes ORDER BY changed_at DESC, url LIMIT 12"
)
TESTERS_SQL = (  # who took the accepted readings of a page's products, first tested first
    "SELECT tester FROM bench_measurements WHERE list_contains(?, product_slug) AND status = 'measured'"
    " AND tester IS NOT NULL GROUP BY tester ORDER BY min(tested_on), tester"
)
CHARTED_PAGES = ("product", "comparison", "guide")  # the page types drawn with bench charts
PAGES = f"{__name__}.pages"  # rendered HTML by (path, lang)
PAGES_KEPT = 20_000  # rendered pages kept per release (one per page and language asked for)
PROTOCOL_NAMINGS = f"{__name__}.protocols"  # the protocols named in each language a page is rendered in
BENCH_HEADING = "## Bench results"  # the body's Markdown copy of the bench table, which the page shows as a table
TEMPLATES = Environment(
    loader=FileSystemLoader(TEMPLATES_DIR),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")
# The page's own words in each language (the data's translated parts come from the snapshot).
LABELS: dict[str, dict[str, Any]] = json.loads((TEMPLATES_DIR / "labels.json").read_text(encoding="utf-8"))
# Open Graph names a locale as language_TERRITORY; each language's usual one (others: the hreflang's).
OG_LOCALES = {"en": "en_US", "zh": "zh_CN", "el": "el_GR", "vi": "vi_VN", "ar": "ar_AR", "pa": "pa_IN"}
OG_TYPES = {"product": "product", "review": "article", "guide": "article", "comparison": "article", "post": "article"}


def og_locale(row: dict[str, Any]) -> str:
    return OG_LOCALES.get(row["code"], row["hreflang"].replace("-", "_"))


def open_graph(snapshot: Snapshot, title: str, description: str, kind: str, url: str, lang: str) -> dict[str, Any]:
    """The Open Graph (and Twitter card) values of a page: ``url`` is the canonical address it cites."""
    rows = languages(snapshot)
    return {
        "title": title,
        "description": description,
        "type": kind,
        "url": url,
        "locale": next(og_locale(row) for row in rows if row["code"] == lang),
        "alternate_locales": [og_locale(row) for row in rows if row["code"] != lang],
    }


def render_markdown(text: str | None) -> Markup:
    """Markdown as HTML: raw HTML in it is escaped, javascript: and other unsafe links are refused."""
    return Markup(MARKDOWN.render(text or ""))


def without_bench_section(body: str | None) -> str:
    """The body without its "## Bench results" section (up to the next level-2 heading): the page
    shows the record's bench table once, as a captioned table in the page's language."""
    lines = (body or "").split("\n")
    if BENCH_HEADING not in lines:
        return body or ""
    start = lines.index(BENCH_HEADING)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[:start] + lines[end:]).strip()


def long_date(value: str, labels: dict[str, Any]) -> str:
    """An ISO date or timestamp as a date written out in the labels' language ("24 November 2026")."""
    year, month, day = (int(part) for part in value[:10].split("-"))
    return labels["date"].format(day=day, month=labels["months"][month - 1], year=year)


def byline(snapshot: Snapshot, page: dict[str, Any], labels: dict[str, Any]) -> dict[str, Any] | None:
    """Who tested the page's products (from the bench readings) or, failing that, who wrote it, and
    when it was last updated: each part only when the record has it, None when it has neither."""
    testers = (
        [row["tester"] for row in snapshot.query(TESTERS_SQL, [page["product_slugs"]])]
        if page["page_type"] == "product"
        else []
    )
    names = testers or ([page["author_name"]] if page["author_name"] else [])
    template = labels["tested_by"] if testers else labels["written_by"]
    who = template.format(names=labels["name_separator"].join(names)) if names else None
    when = (
        {"datetime": page["updated_at"], "text": long_date(page["updated_at"], labels)} if page["updated_at"] else None
    )
    return {"who": who, "when": when} if who or when else None


def json_ld(page: dict[str, Any], snapshot: Snapshot, lang: str) -> list[dict[str, Any]]:
    """schema.org for the page: Product (+ Review, AggregateRating) for products and reviews,
    Article for guides, comparisons and journal posts, and FAQPage when it has questions."""
    publisher = {"@type": "Organization", "name": snapshot.publisher["name"], "url": snapshot.publisher["url"]}
    url = language_url(page["canonical_url"], lang)
    answer = translated(page["answer"], lang)
    blocks: list[dict[str, Any]] = []
    product = product_record(snapshot, page["product_slugs"][0]) if page["product_slugs"] else None
    if page["page_type"] in ("product", "review") and product is not None:
        item: dict[str, Any] = {
            "@context": "https://schema.org",
            "@type": "Product",
            "name": product["product_name"],
            "brand": {"@type": "Brand", "name": product["brand"]},
            "category": translated(product["category_name"], lang),
            "url": product["url"],
        }
        if product["overall_rating"] is not None:
            rating = {"@type": "Rating", "ratingValue": product["overall_rating"], "bestRating": 100, "worstRating": 0}
            author = {"@type": "Person", "name": page["author_name"]} if page["author_name"] else publisher
            item["review"] = {
                "@type": "Review",
                "name": page["title"],
                "url": url,
                "author": author,
                "publisher": publisher,
                "reviewBody": answer,
                "reviewRating": rating,
            }
            item["aggregateRating"] = {**rating, "@type": "AggregateRating", "ratingCount": 1}
        if product["price_amount"] is not None:
            item["offers"] = {
                "@type": "Offer",
                "price": product["price_amount"],
                "priceCurrency": product["price_currency"],
            }
        blocks.append(item)
    else:
        article: dict[str, Any] = {
            "@context": "https://schema.org",
            "@type": "Article",
            "headline": page["title"],
            "description": answer,
            "url": url,
            "inLanguage": lang,
            "publisher": publisher,
            "license": snapshot.publisher["license_url"],
        }
        if page["author_name"]:
            article["author"] = {"@type": "Person", "name": page["author_name"]}
        if page["published_at"]:
            article["datePublished"] = page["published_at"]
        if page["updated_at"]:
            article["dateModified"] = page["updated_at"]
        blocks.append(article)
    if page["faq"]:
        blocks.append(
            {
                "@context": "https://schema.org",
                "@type": "FAQPage",
                "mainEntity": [
                    {
                        "@type": "Question",
                        "name": translated(entry["question"], lang),
                        "acceptedAnswer": {"@type": "Answer", "text": translated(entry["answer"], lang)},
                    }
                    for entry in page["faq"]
                ],
            }
        )
    return blocks


def script_json(document: Any) -> Markup:
    """JSON safe inside a <script> element: no "</" can end it early."""
    return Markup(json.dumps(document, ensure_ascii=False).replace("</", "<\\/"))


def languages(snapshot: Snapshot) -> list[dict[str, Any]]:
    return snapshot.tables["languages"]


def language_row(snapshot: Snapshot, code: str) -> dict[str, Any] | None:
    """The snapshot's ``languages`` row of ``code`` (name, hreflang, direction), None if not one of them."""
    return next((row for row in languages(snapshot) if row["code"] == code), None)


def page_protocols(snapshot: Snapshot, lang: str) -> dict[str, charts.Protocol]:
    """Every protocol by slug, named in ``lang`` (worked out once per snapshot and language)."""
    return snapshot.caches.memo(PROTOCOL_NAMINGS, len(LANGUAGES)).get_or_build(
        lang,
        lambda: {
            row["protocol_slug"]: charts.Protocol(
                slug=row["protocol_slug"],
                name=translated(row["protocol_name"], lang),
                unit=row["unit"],
                tolerance=row["tolerance"],
                scoring_rules=row["scoring_rules"],
            )
            for row in snapshot.tables["protocols"]
        },
    )


def bench_figures(
    snapshot: Snapshot, page: dict[str, Any], lang: str
) -> tuple[list[dict[str, Any]], list[charts.Chart]]:
    """The bench table's rows and the page's charts, from one query of the bench slots.

    Each row carries its protocol's name in ``lang`` and its tolerance; a guide, whose record has
    no bench table, gets one from the slots its charts draw, so that every chart's figures are
    also in a table a screen reader can read."""
    protocols = page_protocols(snapshot, lang)
    drawn = page["page_type"] in CHARTED_PAGES and bool(page["product_slugs"])
    slots = charts.page_slots(snapshot, page) if drawn else []
    labels, rtl = LABELS[lang], language_row(snapshot, lang)["direction"] == "rtl"
    if page["page_type"] == "product":
        figures = charts.product_charts(slots, page["product_slugs"][0], protocols, labels, rtl)
    else:
        figures = charts.coverage_charts(slots, page["product_slugs"], protocols, labels, rtl)
    rows = page["bench_table"] or [
        {
            "product_name": slot.product_name,
            "protocol": slot.protocol_slug,
            "value": slot.value,
            "unit": slot.unit,
            "sample_size": slot.sample_size,
            "status": slot.status,
            "score": slot.sub_score,
        }
        for chart in figures
        for slot in chart.slots
    ]
    table = [
        {
            **row,
            "protocol_name": protocols[row["protocol"]].name,
            "tolerance": protocols[row["protocol"]].tolerance,
            "tolerance_unit": protocols[row["protocol"]].unit,
        }
        for row in rows
    ]
    return table, figures


def product_record(snapshot: Snapshot, slug: str) -> dict[str, Any] | None:
    """The product record of ``slug`` as products.json lists it, or None."""
    rows = snapshot.query(f"SELECT {snapshot.public_columns('products')} FROM products WHERE product_slug = ?", [slug])
    return documents.record(rows[0], json=snapshot.json_columns("products")) if rows else None


def page_record(snapshot: Snapshot, path: str) -> dict[str, Any]:
    """The page record at ``path``, read from the release's pack of page.json documents."""
    record = snapshot.files.pages.get(path)
    if record is None:
        raise KeyError(f"no page record at {path}")
    return orjson.loads(snapshot.files.page(record, gzipped=False))["page"]


def render_page(snapshot: Snapshot, path: str, lang: str) -> bytes:
    """The HTML of the page record at ``path`` in ``lang``."""
    base_url = snapshot.base_url
    page = page_record(snapshot, path)
    alternates = [
        {"hreflang": row["hreflang"], "href": language_url(page["canonical_url"], row["code"])}
        for row in languages(snapshot)
    ]
    hub = hub_context(snapshot, lang) if path == HUB_PATH else {}
    canonical = language_url(page["canonical_url"], lang)
    answer = translated(page["answer"], lang)
    kind = "website" if hub else OG_TYPES.get(page["page_type"], "article")
    bench_table, bench_charts = bench_figures(snapshot, page, lang)
    html = TEMPLATES.get_template("hub.html" if hub else "page.html").render(
        **hub,
        page=page,
        lang=lang,
        language=language_row(snapshot, lang),
        languages=languages(snapshot),
        labels=LABELS[lang],
        answer=answer,
        faq=[(translated(e["question"], lang), translated(e["answer"], lang)) for e in page["faq"]],
        bench_table=bench_table,
        bench_charts=bench_charts,
        body=render_markdown(without_bench_section(page["body"]) if page["bench_table"] else page["body"]),
        byline=byline(snapshot, page, LABELS[lang]),
        canonical=canonical,
        og=open_graph(snapshot, page["title"], answer, kind, canonical, lang),
        default_url=page["canonical_url"],
        alternates=alternates,
        json_ld=[script_json(block) for block in json_ld(page, snapshot, lang)],
        publisher=snapshot.publisher,
        version=snapshot.version,
        hub=language_url(base_url + HUB_PATH, lang),
    )
    return html.encode("utf-8")


def hub_context(snapshot: Snapshot, lang: str) -> dict[str, Any]:
    """What the fallback hub lists besides its own record: categories, buying scenarios, latest changes."""
    return {
        "ask_url": ASK_PATH,
        "categories": [
            {
                "name": translated(row["category_name"], lang),
                "url": language_url(row["guide_url"], lang),
                "product_count": row["product_count"],
            }
            for row in snapshot.tables["categories"]
        ],
        "scenarios": [
            {
                "question": translated(row["question"], lang),
                "product_name": row["product_name"],
                "url": language_url(row["url"], lang),
            }
            for row in snapshot.tables["recommendations"]
        ],
        "latest": documents.change_items(snapshot.query(LATEST_CHANGES_SQL)),
    }


# What of dataset.json a page's JSON-LD carries: the schema.org Dataset that search engines read
# from a page, without the API's envelope and Croissant's record sets (dataset.json has those).
DATASET_LD_KEYS = (
    "@type", "name", "description", "url", "version", "datePublished", "dateModified", "license",
    "isAccessibleForFree", "creator", "publisher", "keywords", "inLanguage", "temporalCoverage",
    "variableMeasured", "citation",
)  # fmt: skip


def dataset_json_ld(dataset: dict[str, Any]) -> dict[str, Any]:
    """The schema.org Dataset of ``/``, from the release's dataset.json, with its downloads."""
    downloads = [
        {
            "@type": "DataDownload",
            "name": d["name"],
            "contentUrl": d["contentUrl"],
            "encodingFormat": d["encodingFormat"],
        }
        for d in dataset["distribution"]
    ]
    return {"@context": "https://schema.org/", **{k: dataset[k] for k in DATASET_LD_KEYS}, "distribution": downloads}


def render_api_guide(snapshot: Snapshot) -> bytes:
    """``/``: the API for a developer arriving from a search engine: every operation with a live
    example, the licence and attribution rules, and the dataset citation."""
    base_url = snapshot.base_url
    capabilities = orjson.loads((snapshot.files.folder / "api/public/capabilities.json").read_bytes())
    dataset = orjson.loads((snapshot.files.folder / "api/public/dataset.json").read_bytes())
    title = f"The {snapshot.publisher['name']} data API"
    og = open_graph(snapshot, title, dataset["description"], "website", f"{base_url}/", DEFAULT_LANGUAGE)
    return (
        TEMPLATES.get_template("api_guide.html")
        .render(
            lang=DEFAULT_LANGUAGE,
            language=language_row(snapshot, DEFAULT_LANGUAGE),
            og=og,
            canonical=f"{base_url}/",
            json_ld=script_json(dataset_json_ld(dataset)),
            publisher=snapshot.publisher,
            version=snapshot.version,
            hub=base_url + HUB_PATH,
            endpoints=capabilities["endpoints"],
            attribution=capabilities["attribution"],
            citation=dataset["citation"],
            citation_bibtex=dataset["citation_bibtex"],
            openapi=f"{base_url}/api/public/openapi.json",
            llms_full=f"{base_url}/llms-full.txt",
            explore=base_url + EXPLORE_PATH,
            statistics=snapshot.statistics,
        )
        .encode("utf-8")
    )


def rendered_pages(snapshot: Snapshot) -> BoundedMemo[tuple[str, str], bytes]:
    """The snapshot's pages rendered so far, by (path, lang)."""
    return snapshot.caches.memo(PAGES, PAGES_KEPT)


async def api_guide(request: Request) -> Response:
    snapshot = request.app.state.snapshots.current
    body = rendered_pages(snapshot).get_or_build(("/", DEFAULT_LANGUAGE), lambda: render_api_guide(snapshot))
    return answer_with_validators(request, snapshot, body, media_type=with_charset(HTML), key="html:/")


def render_refusal(snapshot: Snapshot, lang: str | None) -> bytes:
    """The page for an unknown path (in ``lang``), or for a ``lang`` that is not one of the six (None)."""
    shown = lang or DEFAULT_LANGUAGE
    codes = ", ".join(row["code"] for row in languages(snapshot))
    heading = LABELS[shown]["not_found"] if lang else f"Unsupported language: lang must be one of {codes}"
    return (
        TEMPLATES.get_template("not_found.html")
        .render(
            heading=heading,
            language=language_row(snapshot, shown),
            labels=LABELS[shown],
            publisher=snapshot.publisher,
            hub=language_url(snapshot.base_url + HUB_PATH, shown),
        )
        .encode("utf-8")
    )


def requested_language(request: Request, snapshot: Snapshot) -> str | None:
    """``lang`` from the query (default en), or None when it is not one of the six."""
    lang = request.query_params.get("lang") or DEFAULT_LANGUAGE
    return lang if language_row(snapshot, lang) else None


async def site_page(request: Request, section: str) -> Response:
    snapshot = request.app.state.snapshots.current
    path = f"/{section}/{request.path_params.get('slug', '')}"
    lang = requested_language(request, snapshot)
    if lang is None or path not in snapshot.files.pages:
        status = 404 if lang is not None else 400
        body = render_refusal(snapshot, lang)
        return Response(body, status, media_type=with_charset(HTML), headers={"Cache-Control": "no-store"})
    body = rendered_pages(snapshot).get_or_build((path, lang), lambda: render_page(snapshot, path, lang))
    return answer_with_validators(request, snapshot, body, media_type=with_charset(HTML), key=f"html:{lang}:{path}")


def path_prefix(base_url: str) -> str:
    """The path the site's pages lie under: ``base_url``'s, without its last slash ("" at a root)."""
    return urlsplit(base_url).path.rstrip("/")


def routes(base_url: str) -> list[Route]:
    """The page routes, under the path of ``base_url`` (cited URLs are ``{base_url}/<section>/<slug>``)."""
    prefix = path_prefix(base_url)
    pages = [
        Route(f"{prefix}/{section}/{tail}", partial(site_page, section=section))
        for section in SECTIONS
        for tail in ("{slug}", "")  # a section's own address has no page: the 404 page says where to start
    ]
    return [Route(f"{prefix}/", api_guide), *pages]
