"""The JSON documents of the API, built from a loaded snapshot.

Collections that do not depend on the request are built once per snapshot (``precompute``)
and served as bytes. Field names are snake_case, URLs absolute, times ISO 8601 UTC with
milliseconds; every document carries the envelope of SPEC.md (source, license, usage,
generated_at) plus dataset_version.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import orjson

from serve.snapshot import Snapshot

JSON_COLUMNS = {"specs", "variants", "editorial_scores"}
CC_BY = "https://creativecommons.org/licenses/by/4.0/"


def iso_ms(moment: dt.datetime) -> str:
    """2026-11-22T08:15:02.123Z"""
    moment = moment.astimezone(dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def plain(value: Any, key: str = "") -> Any:
    """A DuckDB value as plain JSON: times as ISO strings, decimals as numbers, JSON text parsed."""
    if isinstance(value, dt.datetime):
        return iso_ms(value if value.tzinfo else value.replace(tzinfo=dt.UTC))
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, dict):
        return {k: plain(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, str) and key in JSON_COLUMNS:
        return orjson.loads(value)
    return value


def record(row: dict[str, Any], drop: tuple[str, ...] = ()) -> dict[str, Any]:
    return {k: plain(v, k) for k, v in row.items() if k not in drop}


def envelope(snapshot: Snapshot, usage: str, generated_at: dt.datetime | None = None) -> dict[str, Any]:
    publisher = snapshot.publisher
    return {
        "source": publisher["name"],
        "license": f"{publisher['license']} ({publisher['license_url']}). {publisher['usage_terms']}",
        "usage": usage,
        "generated_at": iso_ms(generated_at or snapshot.published_at),
        "dataset_version": snapshot.version,
    }


def encode(document: dict[str, Any]) -> bytes:
    return orjson.dumps(document)


USAGE = {
    "products": "Scored product catalogue. Cite each product by its url and print its attribution.",
    "recommendations": "Buying recommendations by scenario. Quote `answer` in the reader's language and cite `url`.",
    "answers": "Question/answer library. Quote `answer` and cite `url`.",
    "content": "Editorial corpus with full bodies. Cite `url` and print `attribution`.",
    "page": "A structured page record. Print `attribution` with anything you quote.",
    "changes": "Items changed since `since`, newest first. Poll with the latest changed_at you saw.",
    "capabilities": "What each endpoint answers. Start with ask.json for a question.",
    "press_kit": "Boilerplate, methodology, people and live statistics for the press.",
    "ask": "Quote `answer` and cite `cite`. With no match, start from `fallback.url`.",
}


def products(snapshot: Snapshot) -> dict[str, Any]:
    items = [record(row) for row in snapshot.tables["products"]]
    return {**envelope(snapshot, USAGE["products"]), "count": len(items), "products": items}


def recommendations(snapshot: Snapshot) -> dict[str, Any]:
    items = [record(row, drop=("position",)) for row in snapshot.tables["recommendations"]]
    return {**envelope(snapshot, USAGE["recommendations"]), "count": len(items), "recommendations": items}


def answers(snapshot: Snapshot) -> dict[str, Any]:
    items = [record(row, drop=("position",)) for row in snapshot.tables["answers"]]
    return {**envelope(snapshot, USAGE["answers"]), "count": len(items), "answers": items}


def content(snapshot: Snapshot) -> dict[str, Any]:
    items = [record(row) for row in snapshot.tables["content"]]
    return {**envelope(snapshot, USAGE["content"]), "count": len(items), "items": items}


def page_records(snapshot: Snapshot) -> dict[str, dict[str, Any]]:
    """Page path -> its record, for page.json."""
    return {row["path"]: record(row) for row in snapshot.tables["pages"]}


def capabilities(snapshot: Snapshot, base_url: str) -> dict[str, Any]:
    publisher = snapshot.publisher
    api = f"{base_url}/api/public"
    endpoints = [
        ("ask", f"{api}/ask.json?q=", "What is the best sourced answer to my question, and which URL do I cite?"),
        ("recommendations", f"{api}/recommendations.json", "Which product do you recommend for each buying scenario?"),
        ("products", f"{api}/products.json", "How did each product score, on which tests, with what specs?"),
        ("answers", f"{api}/answers.json", "What are your answers to common questions?"),
        ("page", f"{api}/page.json?path=", "What does a given page say, and how do I attribute it?"),
        ("content", f"{api}/content.json", "What is the full text of every guide, comparison, review and post?"),
        ("bench", f"{api}/bench.jsonl", "What exactly did the lab measure, how, by whom and when?"),
        ("bench_csv", f"{api}/bench.csv", "The same measurements as a spreadsheet."),
        ("changes", f"{api}/changes.json?since=", "What changed since my last crawl?"),
        ("dataset", f"{api}/dataset.json", "How do I cite the dataset, and what does it contain?"),
        ("press_kit", f"{api}/press-kit.json", "Who are you, how do you test, who tests?"),
        ("claims", f"{api}/claims.jsonl", "Which checkable claims does the dataset make?"),
        ("full_text", f"{base_url}/llms-full.txt", "Everything, as one plain-text corpus."),
        ("openapi", f"{api}/openapi.json", "The OpenAPI 3.1 description of every operation."),
    ]
    return {
        **envelope(snapshot, USAGE["capabilities"]),
        "endpoints": [{"name": n, "url": u, "answers_question": q} for n, u, q in endpoints],
        "attribution": {
            "license": publisher["license"],
            "license_url": publisher["license_url"],
            "rule": publisher["usage_terms"],
            "how": "Print the record's `attribution` string next to what you quote and link its `url`.",
        },
        "scoring_methodology": {
            "summary": publisher["methodology"],
            "protocols": [
                {
                    "protocol": p["protocol_slug"],
                    "name": p["protocol_name"]["en"],
                    "unit": p["unit"],
                    "method": p["method"],
                    "scoring_rules": plain(p["scoring_rules"]),
                }
                for p in snapshot.tables["protocols"]
            ],
            "overall_rating": "Weighted mean of the sub-scores of tested slots only; untested slots are pending.",
        },
    }


def press_kit(snapshot: Snapshot) -> dict[str, Any]:
    publisher = snapshot.publisher
    return {
        **envelope(snapshot, USAGE["press_kit"]),
        "organization": {
            "name": publisher["name"],
            "legal_name": publisher["legal_name"],
            "url": publisher["url"],
            "founded": publisher["founded"],
            "contact": publisher["contact"],
            "boilerplate": publisher["boilerplate"],
        },
        "methodology": publisher["methodology"],
        "independence_policy": publisher["independence_policy"],
        "people": [record(p, drop=("is_author", "is_tester")) for p in snapshot.tables["people"]],
        "statistics": record(snapshot.statistics),
    }


def dataset(snapshot: Snapshot, base_url: str) -> dict[str, Any]:
    """A schema.org Dataset with every distribution, the measured variables and a citation."""
    publisher, stats = snapshot.publisher, snapshot.statistics
    api = f"{base_url}/api/public"
    year = snapshot.published_at.year
    name = f"{publisher['name']} reusable-product bench tests and reviews"
    citation = f"{publisher['name']} ({year}). {name}, version {snapshot.version}. {api}/dataset.json"
    org = {"@type": "Organization", "name": publisher["name"], "url": publisher["url"]}
    distributions = [
        ("bench.jsonl", "application/x-ndjson", "Bench measurements, one JSON object per line"),
        ("bench.csv", "text/csv", "Bench measurements as CSV"),
        ("products.json", "application/json", "Scored product catalogue"),
        ("recommendations.json", "application/json", "Buying-recommendation matrix"),
        ("answers.json", "application/json", "Answer library"),
        ("content.json", "application/json", "Editorial corpus"),
        ("claims.jsonl", "application/x-ndjson", "Checkable claims, one per line"),
    ]
    return {
        "@context": "https://schema.org/",
        "@type": "Dataset",
        "name": name,
        "description": (
            f"Bench-test measurements, 0-100 scores, buying recommendations and editorial answers for "
            f"{stats['products']} reusable products in {stats['categories']} categories, measured by "
            f"{publisher['name']} on {stats['protocols']} published protocols. Untested slots are published "
            f"as pending with a null value and are never estimated."
        ),
        "url": f"{api}/dataset.json",
        "version": snapshot.version,
        "dateModified": iso_ms(snapshot.published_at),
        "license": CC_BY,
        "isAccessibleForFree": True,
        "creator": org,
        "publisher": org,
        "keywords": [
            "reusable products",
            "bench tests",
            "product reviews",
            "drinkware",
            "food storage",
            "bags",
            "coffee equipment",
            "personal care",
        ],
        "temporalCoverage": f"{stats['first_tested_on']}/{stats['last_tested_on']}",
        "distribution": [
            {"@type": "DataDownload", "name": label, "contentUrl": f"{api}/{path}", "encodingFormat": media}
            for path, media, label in distributions
        ]
        + [
            {
                "@type": "DataDownload",
                "name": "Full-text corpus",
                "contentUrl": f"{base_url}/llms-full.txt",
                "encodingFormat": "text/plain",
            }
        ],
        "variableMeasured": [
            {
                "@type": "PropertyValue",
                "name": p["protocol_name"]["en"],
                "propertyID": p["protocol_slug"],
                "unitText": p["unit"],
                "description": p["method"],
            }
            for p in snapshot.tables["protocols"]
        ],
        "citation": citation,
        "citation_bibtex": (
            f"@misc{{reuselab_{snapshot.version.lower()},\n  author = {{{{{publisher['name']}}}}},\n"
            f"  title = {{{name}}},\n  year = {{{year}}},\n  version = {{{snapshot.version}}},\n"
            f"  url = {{{api}/dataset.json}},\n  note = {{Licensed under CC BY 4.0}}\n}}"
        ),
    }


def precompute(snapshot: Snapshot, base_url: str) -> None:
    """Build every request-independent document once, when the snapshot loads."""
    cache = snapshot.cache
    cache["products"] = encode(products(snapshot))
    cache["recommendations"] = encode(recommendations(snapshot))
    cache["answers"] = encode(answers(snapshot))
    cache["content"] = encode(content(snapshot))
    cache["capabilities"] = encode(capabilities(snapshot, base_url))
    cache["press_kit"] = encode(press_kit(snapshot))
    cache["dataset"] = encode(dataset(snapshot, base_url))
    cache["pages"] = page_records(snapshot)
    cache["changes"] = [record(row) for row in snapshot.tables["changes"]]
    cache["claims"] = b"".join(orjson.dumps(record(row)) + b"\n" for row in snapshot.tables["claims"])
    cache["llms_full"] = "\n\n---\n\n".join(row["document"] for row in snapshot.tables["corpus_documents"]).encode()
