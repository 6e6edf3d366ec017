"""What each tool of the MCP server answers, worked out from one snapshot by the API's own code.

Each function takes the snapshot a tool call took (once) and the call's arguments, and returns a
JSON object: the API's envelope, the URL to cite (``cite``) and the attribution string to print
with it (``attribution``), then the answer. The arguments go through the API's own checks
(``serve.api.params``, with the limits of ``public.openapi``): they are handed over as the query
string of the operation they stand for, so a bad argument is refused with the API's words.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode, urlsplit

import orjson
from starlette.requests import Request

from foundations.ask_limits import ASK_DEFAULT_LIMIT, ASK_MAX_LIMIT
from foundations.problem_details import ProblemError
from public.documents import USAGE, envelope, record
from public.openapi import BENCH_DEFAULT_LIMIT, BENCH_MAX_LIMIT, MAX_Q_LENGTH
from release.folder import DATASET, LLMS
from release.snapshot import Snapshot
from serve.api import params
from serve.api.routes_ask import QuestionDesk, answer_asked
from serve.api.routes_bench import BenchFilters, read_jsonl_page
from serve.api.routes_pages import change_body, found_page, parsed_page_path

# Products of a category one call returns at most (products.json has no parameters to borrow).
PRODUCTS_DEFAULT_LIMIT, PRODUCTS_MAX_LIMIT = 20, 100
ORDER_BY_RATING = "rating"
# Each tool's argument named as its operation's query parameter, where the names differ.
ARGUMENT_OF_PARAMETER = {"q": "question", "lang": "language"}


def as_query(**arguments: object) -> Request:
    """The arguments given (None: not given) as the query string of a request, for ``serve.api.params``."""
    given = [(name, str(value)) for name, value in arguments.items() if value is not None]
    return Request({"type": "http", "query_string": urlencode(given).encode(), "headers": []})


def what_to_send(problem: ProblemError) -> str:
    """A refusal in the tool's words: each bad argument, by the tool's name for it, and what it must be."""
    if not problem.errors:
        return problem.detail
    return " ".join(
        f"Argument '{ARGUMENT_OF_PARAMETER.get(error['parameter'], error['parameter'])}' {error['message']}."
        for error in problem.errors
    )


def file_text(snapshot: Snapshot, path: str) -> str:
    """A release file as text (small documents only: dataset.json, llms.txt)."""
    file = snapshot.files.file(path)
    if file is None:
        raise ProblemError(404, f"Release {snapshot.version} has no file {path!r}.", slug="no-release-file")
    return snapshot.files.read(file.path, 0, file.size).decode()


def dataset_document(snapshot: Snapshot) -> dict[str, Any]:
    """dataset.json of the snapshot's release, as the API sends it."""
    return orjson.loads(file_text(snapshot, DATASET))


def llms_txt(snapshot: Snapshot) -> str:
    return file_text(snapshot, LLMS)


def page_document(snapshot: Snapshot, path: str) -> dict[str, Any]:
    """page.json for ``path``, as the API sends it (ProblemError 404 when the release has no such page)."""
    return orjson.loads(snapshot.files.page(found_page(snapshot.files, path), gzipped=False))


def cited(snapshot: Snapshot, url: str) -> dict[str, str]:
    """``url`` to cite, with the attribution its page's record carries; a URL that is no page of the
    release (an API document) is cited with the dataset's citation."""
    path = url.removeprefix(snapshot.base_url) if url.startswith(snapshot.base_url) else urlsplit(url).path
    record_ = snapshot.files.pages.get(urlsplit(path).path or "/")
    if record_ is not None:
        attribution = orjson.loads(snapshot.files.page(record_, gzipped=False))["page"]["attribution"]
    else:
        attribution = dataset_document(snapshot)["citation"]
    return {"cite": url, "attribution": attribution}


async def ask(
    snapshot: Snapshot,
    desk: QuestionDesk,
    question: str,
    language: str | None,
    limit: int | None,
    route: str,
) -> dict[str, Any]:
    """ask.json's answer to ``question``, through the same function, memo, queue and log as the route."""
    query = as_query(q=question, limit=limit, lang=language)
    asked = (params.required_text(query, "q", MAX_Q_LENGTH), params.limit(query, ASK_DEFAULT_LIMIT, ASK_MAX_LIMIT))
    answer = await answer_asked(snapshot, desk, (*asked, language, None), route)
    head = envelope(snapshot, USAGE["ask"])
    return {**head, **cited(snapshot, answer["cite"]), **answer}


def page(snapshot: Snapshot, path: str) -> dict[str, Any]:
    """page.json for ``path``: the page's record, cited by its own ``url`` and ``attribution``."""
    document = page_document(snapshot, parsed_page_path(as_query(path=path).scope["query_string"]))
    return {**document, "cite": document["page"]["url"], "attribution": document["page"]["attribution"]}


PRODUCTS_SQL = (
    "SELECT {columns} FROM products WHERE category_slug = $category "
    "AND ($min_rating IS NULL OR overall_rating >= $min_rating) "
    "ORDER BY {key} DESC NULLS LAST, product_slug LIMIT $limit"
)
# A protocol's sub-score of a product: the score of its slot for that protocol (null while pending).
SUB_SCORE = "list_filter(sub_scores, lambda slot: slot.protocol = $protocol)[1].score"


def products(
    snapshot: Snapshot, category: str, order_by: str | None, min_rating: float | None, limit: int | None
) -> dict[str, Any]:
    """The products of ``category`` as products.json lists them, best first by their overall rating
    or by one protocol's sub-score; those rated below ``min_rating`` left out."""
    categories = {row["category_slug"]: row for row in snapshot.tables["categories"]}
    if category not in categories:
        raise ProblemError(400, f"Argument 'category' must be one of {', '.join(categories)}.")
    protocols = [row["protocol_slug"] for row in snapshot.tables["protocols"]]
    order_by = order_by or ORDER_BY_RATING
    if order_by != ORDER_BY_RATING and order_by not in protocols:
        raise ProblemError(
            400, f"Argument 'order_by' must be '{ORDER_BY_RATING}' or a protocol: {', '.join(protocols)}."
        )
    if min_rating is not None and not 0 <= min_rating <= 100:
        raise ProblemError(400, "Argument 'min_rating' must be a rating from 0 to 100.")
    chosen = params.limit(as_query(limit=limit), PRODUCTS_DEFAULT_LIMIT, PRODUCTS_MAX_LIMIT)
    by_protocol = order_by != ORDER_BY_RATING
    sql = PRODUCTS_SQL.format(
        columns=snapshot.public_columns("products"), key=SUB_SCORE if by_protocol else "overall_rating"
    )
    arguments = {"category": category, "min_rating": min_rating, "limit": chosen}
    rows = snapshot.query(sql, {**arguments, "protocol": order_by} if by_protocol else arguments)
    json_columns = snapshot.json_columns("products")
    listed = [record(row, json=json_columns) for row in rows]
    return {
        **envelope(snapshot, USAGE["products"]),
        **cited(snapshot, categories[category]["guide_url"]),
        "category": category,
        "order_by": order_by,
        "count": len(listed),
        "products": listed,
    }


def bench(snapshot: Snapshot, product: str | None, protocol: str | None, limit: int | None) -> dict[str, Any]:
    """The bench measurements of a product or a protocol (or both), as bench.jsonl sends them: in
    stream order, a slot not tested yet with ``value`` null and ``status`` pending."""
    query = as_query(product=product, protocol=protocol, limit=limit)
    filters = BenchFilters(
        protocol=params.optional_text(query, "protocol"),
        product=params.optional_text(query, "product"),
        limit=params.limit(query, BENCH_DEFAULT_LIMIT, BENCH_MAX_LIMIT),
    )
    if filters.product is None and filters.protocol is None:
        raise ProblemError(
            400,
            "Send 'product' (a product slug; the products tool lists them) or 'protocol' "
            "(a protocol slug; the dataset tool lists them), or both.",
        )
    bounds = {"protocol": filters.protocol, "product": filters.product, "after": -1, "rows": filters.limit}
    lines = read_jsonl_page(snapshot, bounds, first=True).body.splitlines()
    measurements = [orjson.loads(line) for line in lines]
    if not measurements and filters.limit:
        raise ProblemError(
            404,
            f"No measurements for product {filters.product!r} and protocol {filters.protocol!r}: send a product "
            "slug the products tool lists, or a protocol slug the dataset tool lists.",
        )
    # A product's measurements share its bench results' url and attribution; a protocol's span products.
    first = measurements[0] if measurements and filters.product else None
    citation = {"cite": first["url"], "attribution": first["attribution"]} if first else None
    return {
        **envelope(snapshot, "Bench measurements. Cite each by its url and print its attribution."),
        **(citation or cited(snapshot, f"{snapshot.base_url}/api/public/dataset.json")),
        "product": filters.product,
        "protocol": filters.protocol,
        "count": len(measurements),
        "measurements": measurements,
    }


def changes(snapshot: Snapshot, since: str | None) -> dict[str, Any]:
    """changes.json since ``since``, the same document the API sends."""
    raw_since = since or None
    document = orjson.loads(change_body(snapshot, params.since(as_query(since=raw_since)), raw_since))
    return {**cited(snapshot, f"{snapshot.base_url}/api/public/changes.json"), **document}


def dataset(snapshot: Snapshot) -> dict[str, Any]:
    """What the dataset holds: dataset.json's description, statistics, categories, protocols,
    languages and files, with the citation it asks for."""
    document = dataset_document(snapshot)
    return {
        **envelope(snapshot, USAGE["dataset"]),
        "cite": document["url"],
        "attribution": document["citation"],
        "name": document["name"],
        "description": document["description"],
        "statistics": record(snapshot.statistics),
        "categories": [
            {"category": row["category_slug"], "name": row["category_name"]["en"], "products": row["product_count"]}
            for row in snapshot.tables["categories"]
        ],
        "protocols": [
            {"protocol": row["protocol_slug"], "name": row["protocol_name"]["en"], "unit": row["unit"]}
            for row in snapshot.tables["protocols"]
        ],
        "languages": document["inLanguage"],
        "distribution": [
            {key: item.get(key) for key in ("name", "contentUrl", "encodingFormat", "contentSize", "sha256")}
            for item in document["distribution"]
        ],
        "citation_bibtex": document["citation_bibtex"],
    }
