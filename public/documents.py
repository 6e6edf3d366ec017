"""The JSON documents of the API, built from a snapshot.

Documents that do not depend on the request are built once, at publish, into the release's
files (``publish.release_files``); the server sends those. Field names are snake_case, URLs
absolute, times ISO 8601 UTC with milliseconds; every document carries the envelope (source,
license, usage, generated_at, dataset_version).
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import re
from dataclasses import dataclass
from typing import Any, BinaryIO

import orjson

from foundations.media_types import essence, media_type_of
from public import table_descriptions
from public.openapi import CC_BY_URL, CHANGE_FIELDS, EXPLORE_PATH, OPERATIONS, PERSON_FIELDS
from public.table_descriptions import DescribedTable
from release.snapshot import Snapshot


def iso_ms(moment: dt.datetime) -> str:
    """2026-11-22T08:15:02.123Z"""
    moment = moment.astimezone(dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def plain_scalar(value: Any) -> Any:
    """A DuckDB scalar that JSON has no type for, as the API writes it: times as ISO strings,
    decimals as numbers (TypeError for anything else, as orjson's ``default`` must)."""
    if isinstance(value, dt.datetime):
        return iso_ms(value if value.tzinfo else value.replace(tzinfo=dt.UTC))
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    raise TypeError(f"{type(value).__name__} is not written as JSON")


def json_value(value: Any) -> Any:
    """A DuckDB value as plain JSON: times as ISO strings, decimals as numbers."""
    if isinstance(value, dict):
        return {k: json_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_value(v) for v in value]
    if isinstance(value, dt.date | decimal.Decimal):  # a datetime is a date
        return plain_scalar(value)
    return value


def _columns(
    row: dict[str, Any], keep: tuple[str, ...] | None, drop: tuple[str, ...], json: frozenset[str]
) -> dict[str, Any]:
    """The columns of ``row`` (those in ``keep``, if given) less ``drop``, the ``json`` ones parsed."""
    return {
        k: (orjson.loads(v) if k in json and isinstance(v, str) else v)
        for k, v in row.items()
        if k not in drop and (keep is None or k in keep)
    }


def record(
    row: dict[str, Any],
    keep: tuple[str, ...] | None = None,
    drop: tuple[str, ...] = (),
    json: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """A row as a JSON record: its columns (those in ``keep``, if given) less ``drop``, with the
    JSON documents of the ``json`` columns parsed."""
    return {k: json_value(v) for k, v in _columns(row, keep, drop, json).items()}


def encoded_record(
    row: dict[str, Any],
    keep: tuple[str, ...] | None = None,
    drop: tuple[str, ...] = (),
    json: frozenset[str] = frozenset(),
) -> bytes:
    """``record(...)`` as JSON bytes, in one call of orjson, which walks the nested values itself
    and hands only times and decimals back (``plain_scalar``): a collection of 100,000 products
    is written in a fraction of the time a Python walk of every value took."""
    return orjson.dumps(_columns(row, keep, drop, json), default=plain_scalar, option=orjson.OPT_PASSTHROUGH_DATETIME)


def licence_text(snapshot: Snapshot) -> str:
    """The licence as every document states it: its name, its address and the publisher's terms."""
    publisher = snapshot.publisher
    return f"{publisher['license']} ({publisher['license_url']}). {publisher['usage_terms']}"


def envelope(snapshot: Snapshot, usage: str, generated_at: dt.datetime | None = None) -> dict[str, Any]:
    publisher = snapshot.publisher
    return {
        "source": publisher["name"],
        "license": licence_text(snapshot),
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
    "dataset": "schema.org Dataset descriptor. Cite the dataset with `citation` (or `citation_bibtex`).",
    "ask": "Quote `answer` and cite `cite`. With no match, start from `fallback.url`.",
}


@dataclass(frozen=True)
class Collection:
    """A collection document: its usage note, the key its items are listed under, and the table
    (``warehouse.contract.TABLE_ORDER``) its items are the rows of, less its private columns."""

    usage: str
    key: str
    table: str

    def drop(self, snapshot: Snapshot) -> tuple[str, ...]:
        """The columns its items leave out: the table's private ones, as the data dictionary says."""
        return snapshot.private_columns(self.table)


COLLECTIONS: dict[str, Collection] = {  # by URL path
    "/api/public/products.json": Collection("products", "products", "products"),
    "/api/public/recommendations.json": Collection("recommendations", "recommendations", "recommendations"),
    "/api/public/answers.json": Collection("answers", "answers", "answers"),
    "/api/public/content.json": Collection("content", "items", "content"),
}


COLLECTION_TAIL = b"]}"  # after a collection's last item


def collection_head(snapshot: Snapshot, collection: Collection) -> bytes:
    """What a collection document begins with, up to its first item: the envelope naming the
    release, the count, and the key of the list."""
    head = {**envelope(snapshot, USAGE[collection.usage]), "count": snapshot.count(collection.table)}
    return orjson.dumps(head)[:-1] + b',"' + collection.key.encode() + b'":['


def write_collection(out: BinaryIO, snapshot: Snapshot, collection: Collection) -> None:
    """The collection document, written item by item as its rows are read."""
    out.write(collection_head(snapshot, collection))
    hidden, json_columns = collection.drop(snapshot), snapshot.json_columns(collection.table)
    for number, row in enumerate(snapshot.stream(collection.table)):
        out.write(b"," if number else b"")
        out.write(encoded_record(row, drop=hidden, json=json_columns))
    out.write(COLLECTION_TAIL)


# llms-full.txt: every page as Markdown (``corpus_documents``, in its order), with a line of ---
# between two (``publish.catalogue`` writes it in parts).
FULL_TEXT_SEPARATOR = b"\n\n---\n\n"


def change_items(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of the change log as changes.json lists them."""
    return [{k: json_value(row[k]) for k in CHANGE_FIELDS} for row in rows]


def capabilities(snapshot: Snapshot) -> dict[str, Any]:
    """The capability index: every operation of the OpenAPI document, attribution and scoring rules."""
    publisher, base_url = snapshot.publisher, snapshot.base_url
    endpoints = [
        {
            "name": operation.operation_id,
            "method": "GET",
            "path": operation.path,
            "example": f"{base_url}{operation.path}" + (f"?{operation.example}" if operation.example else ""),
            "answers_question": operation.question,
            "media_type": operation.media_type,
            "parameters": [
                {"name": p["name"], "required": p["required"], "description": p["description"]}
                for p in operation.parameters
            ],
        }
        for operation in OPERATIONS
    ]
    return {
        **envelope(snapshot, USAGE["capabilities"]),
        "endpoints": endpoints,
        "attribution": {
            "license": publisher["license"],
            "license_url": publisher["license_url"],
            "rule": publisher["usage_terms"],
            "how": "Print the record's `attribution` string next to what you quote and link its `url`.",
        },
        "scoring_methodology": {
            "summary": publisher["methodology"],
            "overall_rating": "Weighted mean of the sub-scores of tested slots only (weights below); "
            "untested slots are pending and never estimated.",
            "protocols": [
                {
                    "protocol": p["protocol_slug"],
                    "name": p["protocol_name"]["en"],
                    "unit": p["unit"],
                    "method": p["method"],
                    "tolerance": json_value(p["tolerance"]),
                    "sample_size": p["sample_size"],
                    "scoring_rules": json_value(p["scoring_rules"]),
                }
                for p in snapshot.tables["protocols"]
            ],
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
        "people": [record(p, keep=PERSON_FIELDS) for p in snapshot.tables["people"]],
        "statistics": record(snapshot.statistics),
    }


def dataset_name(snapshot: Snapshot) -> str:
    return f"{snapshot.publisher['name']} reusable-product bench tests and reviews"


def dataset_description(snapshot: Snapshot) -> str:
    publisher, stats = snapshot.publisher, snapshot.statistics
    return (
        f"Bench-test measurements, 0-100 scores, buying recommendations and editorial answers for "
        f"{stats['products']} reusable products in {stats['categories']} categories, measured by "
        f"{publisher['name']} on {stats['protocols']} published protocols. Untested slots are published "
        f"as pending with a null value and are never estimated."
    )


def dataset(
    snapshot: Snapshot, distributions: list[dict[str, Any]], record_sets: list[dict[str, Any]]
) -> dict[str, Any]:
    """A schema.org Dataset that is also Croissant 1.0: every distribution of the release (a
    FileObject with its sha256), a record set per table, the measured variables and a citation."""
    publisher, stats = snapshot.publisher, snapshot.statistics
    api = f"{snapshot.base_url}/api/public"
    year = snapshot.published_at.year
    name = dataset_name(snapshot)
    citation = f"{publisher['name']} ({year}). {name}, version {snapshot.version}. {api}/dataset.json"
    org = {"@type": "Organization", "name": publisher["name"], "url": publisher["url"]}
    bibtex_key = re.sub(r"[^a-z0-9]+", "", publisher["name"].lower()) or "dataset"
    bibtex = (
        f"@misc{{{bibtex_key}_{snapshot.version.lower()},\n  author = {{{{{publisher['name']}}}}},\n"
        f"  title = {{{name}}},\n  year = {{{year}}},\n  version = {{{snapshot.version}}},\n"
        f"  url = {{{api}/dataset.json}},\n  note = {{Licensed under CC BY 4.0}}\n}}"
    )
    everything_but_license = {k: v for k, v in envelope(snapshot, USAGE["dataset"]).items() if k != "license"}
    return {
        **everything_but_license,
        "@context": table_descriptions.CROISSANT_CONTEXT,
        "@type": "Dataset",
        "conformsTo": table_descriptions.CROISSANT_1_0,
        "name": name,
        "description": dataset_description(snapshot),
        "url": f"{api}/dataset.json",
        "version": snapshot.version,
        "datePublished": iso_ms(snapshot.published_at),
        "dateModified": iso_ms(snapshot.published_at),
        "license": CC_BY_URL,
        "isAccessibleForFree": True,
        "creator": org,
        "publisher": org,
        "keywords": [
            "reusable products",
            "bench tests",
            "product reviews",
            *dict.fromkeys(row["category_group"].replace("-", " ") for row in snapshot.tables["categories"]),
            *(row["category_name"]["en"].lower() for row in snapshot.tables["categories"]),
        ],
        "inLanguage": [row["hreflang"] for row in snapshot.tables["languages"]],
        "temporalCoverage": f"{stats['first_tested_on']}/{stats['last_tested_on']}",
        "distribution": distributions,
        "variableMeasured": [
            {
                "@type": "PropertyValue",
                "name": p["protocol_name"]["en"],
                "propertyID": p["protocol_slug"],
                "unitText": p["unit"],
                "description": p["method"],
                "measurementTechnique": (
                    f"{p['method']} Tolerance ±{json_value(p['tolerance'])} {p['unit']}; "
                    f"{p['sample_size']} samples or more."
                ),
            }
            for p in snapshot.tables["protocols"]
        ],
        "recordSet": record_sets,
        "citeAs": bibtex,
        "citation": citation,
        "citation_bibtex": bibtex,
        "explore_url": f"{snapshot.base_url}{EXPLORE_PATH}#version={snapshot.version}",
    }


def _resource_name(entry: dict[str, Any]) -> str:
    """A table's Parquet file is the resource named after the table; its other files add their format."""
    extension = os.path.splitext(entry["path"])[1]
    return entry["table"] if extension == ".parquet" else f"{entry['table']}-{extension.lstrip('.')}"


def data_package(
    snapshot: Snapshot, tables: dict[str, DescribedTable], distributions: list[dict[str, Any]], location: str
) -> dict[str, Any]:
    """A Frictionless data package of the release's tables, to be written at ``location`` in the
    release: a resource per Parquet and CSV file, with its sha256, row count and table schema
    (field types, primary and foreign keys), and the licence. (No byte count: frictionless cannot
    count a Parquet file's bytes, and would report every one as wrong.)"""
    files = [
        entry
        for entry in distributions
        if entry.get("table") and os.path.splitext(entry["path"])[1] in table_descriptions.FRICTIONLESS_FORMATS
    ]
    # Foreign keys point at each table's Parquet resource.
    resource_names = {entry["table"]: _resource_name(entry) for entry in files if entry["path"].endswith(".parquet")}
    resources = [
        {
            "name": _resource_name(entry),
            # Relative to the package, as data packages are read: from the release's immutable copy
            # of datapackage.json, the same release's files; from the current one, the current files.
            "path": os.path.relpath(entry["path"], os.path.dirname(location)),
            "format": table_descriptions.FRICTIONLESS_FORMATS[os.path.splitext(entry["path"])[1]],
            "mediatype": essence(media_type_of(entry["path"])),
            "hash": f"sha256:{entry['sha256']}",
            "rows": tables[entry["table"]].row_count,
            "description": tables[entry["table"]].description,
            "schema": table_descriptions.frictionless_schema(tables[entry["table"]], resource_names),
        }
        for entry in files
    ]
    publisher = snapshot.publisher
    return {
        "$schema": "https://datapackage.org/profiles/2.0/datapackage.json",
        "name": re.sub(r"[^a-z0-9]+", "-", dataset_name(snapshot).lower()).strip("-"),
        "title": dataset_name(snapshot),
        "description": dataset_description(snapshot),
        "version": snapshot.version,
        "created": iso_ms(snapshot.published_at),
        "homepage": publisher["url"],
        "licenses": [{"name": "CC-BY-4.0", "path": CC_BY_URL, "title": "Creative Commons Attribution 4.0"}],
        "contributors": [{"title": publisher["name"], "path": publisher["url"], "roles": ["publisher"]}],
        "resources": resources,
    }
