"""The OpenAPI 3.1.0 document (info.version 1.0.0): every operation, parameter, response and error.

``OPERATIONS`` is the one list of what the API serves: the document, the capability index
(``capabilities.json``) and the tests that check the routes against the document all read it.
The records (``RECORDS``: a product, a bench measurement, a page…) are rows of published tables;
their schemas are generated per release from its data dictionary (``public.record_schemas``), so
that a column is described once, in dbt. Record schemas are closed (``additionalProperties:
false``), so a field the implementation adds without describing it fails the contract tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from foundations.ask_limits import ASK_DEFAULT_LIMIT, ASK_MAX_LIMIT
from foundations.media_types import CSV, JSON, NDJSON, PROBLEM_JSON, TEXT
from public.json_schema import Schema, array, boolean, integer, nullable, number, obj, ref, string, timestamp, url
from public.record_schemas import TRANSLATED, DictionaryRow, Record, record_schema, translated_schema
from public.table_descriptions import CROISSANT_1_0
from warehouse.reference_data import LANGUAGES, SECTIONS

CC_BY_URL = "https://creativecommons.org/licenses/by/4.0/"
BENCH_DEFAULT_LIMIT, BENCH_MAX_LIMIT = 5000, 20000
MAX_Q_LENGTH, MAX_PATH_LENGTH, MAX_FILTER_LENGTH = 1000, 512, 200
# What serve/api/params.py refuses, said as patterns: no NUL anywhere; a required text has
# something besides white space. White space is spelled out as JSON Schema's patterns
# (ECMA-262 \s) know it, so that Python's re, whose \s also takes \x1c-\x1f, applies the same rule.
BLANK_CHARACTERS = "\\t\\n\\u000b\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
TEXT_PATTERN = "^[^\\u0000]*$"
REQUIRED_TEXT_PATTERN = f"^[^\\u0000]*[^\\u0000{BLANK_CHARACTERS}][^\\u0000]*$"


# --- shared parts ------------------------------------------------------------------------

ENVELOPE: dict[str, Schema] = {
    "source": string("Name of the publisher."),
    "license": string("Usage terms, in words, with the licence URL."),
    "usage": string("How to use and cite this response."),
    "generated_at": timestamp(
        "ISO 8601 UTC time with milliseconds: when the body was generated (for bodies fixed per "
        "snapshot, when the snapshot was published)."
    ),
    "dataset_version": string("Version of the published snapshot that answered (also the X-Dataset-Version header)."),
}


def envelope_with(properties: dict[str, Schema], description: str) -> Schema:
    return obj({**ENVELOPE, **properties}, description)


def collection(key: str, item: str, description: str) -> Schema:
    return envelope_with(
        {"count": integer(f"Number of entries in `{key}`."), key: array(ref(item), description)},
        description,
    )


ORGANIZATION = obj(
    {
        "@type": string("schema.org type.", enum=["Organization"]),
        "name": string("Publisher name."),
        "url": url("Publisher home page."),
    }
)

SCHEMAS: dict[str, Schema] = {
    "AskResult": obj(
        {
            "type": string("Where the result comes from.", enum=["recommendation", "answer-library"]),
            "question": string("The matched question, in the response language."),
            "answer": string("Quotable answer, in the response language."),
            "evidence": string("Supporting bench evidence (recommendation results only)."),
            "url": url("URL to cite."),
            "product": obj(
                {"name": string("Product name."), "brand": string("Brand."), "url": url("Product page.")},
                "The recommended product (recommendation results only).",
            ),
            "confidence": number("Match score: 1 for the best result, lower below.", minimum=0, maximum=1),
        },
        "One ranked match.",
        optional=("evidence", "product"),
    ),
    "Problem": {
        "type": "object",
        "description": "RFC 9457 problem details.",
        "required": ["type", "title", "status", "detail", "instance"],
        "additionalProperties": False,
        "properties": {
            "type": url("Identifies the kind of problem."),
            "title": string("Short summary of the kind of problem."),
            "status": integer("HTTP status code."),
            "detail": string("What went wrong with this request and what to do about it."),
            "instance": string("The request path and query."),
            "errors": array(
                obj({"parameter": string("The bad parameter."), "message": string("What is wrong with it.")}),
                "One entry per bad parameter.",
            ),
        },
    },
}

# The records the API serves, each a row of a published table less its private columns (or the
# fields named here): their schemas are written from the release's data dictionary
# (public.record_schemas), with their types, descriptions and values as dbt's schema.yml declares them.
BENCH_COLUMNS: tuple[str, ...] = (  # the fields of a bench.jsonl line and the columns of bench.csv, in order
    "measurement_id",
    "product_slug",
    "product_name",
    "brand",
    "category_slug",
    "protocol_slug",
    "protocol_name",
    "method",
    "tolerance",
    "required_sample_size",
    "sample_size",
    "value",
    "unit",
    "status",
    "standard_deviation",
    "sub_score",
    "tester",
    "tested_on",
    "receipt",
    "url",
    "attribution",
)
CHANGE_FIELDS = ("url", "type", "title", "changed_at")  # an item of changes.json
PERSON_FIELDS = ("person_slug", "person_name", "roles", "title", "expertise", "bio")  # a person of the press kit
LANGUAGE_FIELDS = ("code", "name", "native", "hreflang")  # a language of ask.json
RECORDS: dict[str, Record] = {
    "Product": Record("products"),
    "Recommendation": Record("recommendations"),
    "AnswerEntry": Record("answers"),
    "ContentItem": Record("content"),
    "PageRecord": Record("pages"),
    "BenchMeasurement": Record("bench_measurements", BENCH_COLUMNS),
    "Claim": Record("claims"),
    "Person": Record("people", PERSON_FIELDS),
    "Statistics": Record("dataset_statistics"),
    "Language": Record("languages", LANGUAGE_FIELDS),
    "Change": Record("changes", CHANGE_FIELDS),
}

SCHEMAS["AskResponse"] = envelope_with(
    {
        "language": string("Language of the answer.", enum=list(LANGUAGES)),
        "supported_languages": array(ref("Language"), "The six supported languages."),
        "query": string("The question as received."),
        "answer": nullable(string("Best answer sentence (equals results[0].answer); null when nothing matched.")),
        "cite": url("URL to cite: the best result's URL, or the fallback page when nothing matched."),
        "results": array(ref("AskResult"), "Ranked matches, best first; empty when nothing matched."),
        "fallback": obj(
            {
                "note": string("Where to start when nothing matched."),
                "url": url("The fallback page; carries lang=<code> except for English."),
            }
        ),
    },
    "The best sourced answer to a question.",
)
SCHEMAS["ChangeFeed"] = envelope_with(
    {
        "since": nullable(string("Echo of the since parameter; null when omitted.")),
        "latest_change": timestamp("Newest change in the whole feed."),
        "total_changed": integer("Items changed in the selected range."),
        "returned": integer("Items in `changes`."),
        "changes": array(ref("Change"), "Changed items, newest first."),
        "full_corpus": url("{base_url}/llms-full.txt"),
        "claims": url("{base_url}/api/public/claims.jsonl"),
    },
    "What changed, newest first.",
)
SCHEMAS["PageResponse"] = envelope_with({"page": ref("PageRecord")}, "A structured page record.")
SCHEMAS["ProductsResponse"] = collection("products", "Product", "The scored product catalogue.")
SCHEMAS["RecommendationsResponse"] = collection(
    "recommendations", "Recommendation", "The buying-recommendation matrix: every scenario covered."
)
SCHEMAS["AnswersResponse"] = collection("answers", "AnswerEntry", "The answer library.")
SCHEMAS["ContentResponse"] = collection("items", "ContentItem", "The editorial corpus.")
SCHEMAS["CapabilitiesResponse"] = envelope_with(
    {
        "endpoints": array(
            obj(
                {
                    "name": string("Operation id."),
                    "method": string("HTTP method.", enum=["GET"]),
                    "path": string("Path template."),
                    "example": url("A working example request."),
                    "answers_question": string("The question this endpoint answers."),
                    "media_type": string("Media type of a successful response."),
                    "parameters": array(
                        obj(
                            {
                                "name": string("Parameter name."),
                                "required": boolean("Whether it must be given."),
                                "description": string("What it does."),
                            }
                        ),
                        "Query parameters.",
                    ),
                }
            ),
            "Every machine-readable endpoint.",
        ),
        "attribution": obj(
            {
                "license": string("Licence name."),
                "license_url": url("Licence text."),
                "rule": string("The attribution rule."),
                "how": string("How to attribute a record."),
            }
        ),
        "scoring_methodology": obj(
            {
                "summary": string("The methodology in words."),
                "overall_rating": string("How the overall rating is computed."),
                "protocols": array(
                    obj(
                        {
                            "protocol": string("Protocol slug."),
                            "name": string("Protocol name (English)."),
                            "unit": string("Unit of a reading."),
                            "method": string("How it is run."),
                            "tolerance": number("Tolerance of a reading."),
                            "sample_size": integer("Replicates required."),
                            "scoring_rules": array(
                                obj(
                                    {
                                        "category": nullable(string("Category this rule overrides; null: all.")),
                                        "direction": string(
                                            "Whether higher or lower readings score better.",
                                            enum=["higher_is_better", "lower_is_better"],
                                        ),
                                        "zero_at": number("Reading that scores 0."),
                                        "full_at": number("Reading that scores 100."),
                                        "weight": number("Weight in the overall rating."),
                                    }
                                ),
                                "Scoring rules from the protocol_scoring seed.",
                            ),
                        }
                    ),
                    "Every bench protocol and how its reading becomes a sub-score.",
                ),
            }
        ),
    },
    "What each endpoint answers, how to attribute, how products are scored.",
)
SCHEMAS["PressKitResponse"] = envelope_with(
    {
        "organization": obj(
            {
                "name": string("Publisher name."),
                "legal_name": string("Legal name."),
                "url": url("Home page."),
                "founded": integer("Year founded."),
                "contact": string("Press contact."),
                "boilerplate": string("Boilerplate paragraph."),
            }
        ),
        "methodology": string("How products are bought and tested."),
        "independence_policy": string("Independence policy."),
        "people": array(ref("Person"), "Authors and testers with their expertise."),
        "statistics": ref("Statistics"),
    },
    "Press kit.",
)
SCHEMAS["Dataset"] = obj(
    {
        **{k: v for k, v in ENVELOPE.items() if k != "license"},
        "@context": {
            "type": "object",
            "description": "JSON-LD context: schema.org as the vocabulary, with Croissant 1.0's terms.",
        },
        "@type": string("schema.org type.", enum=["Dataset"]),
        "conformsTo": string("The Croissant version this descriptor follows.", enum=[CROISSANT_1_0]),
        "name": string("Dataset name."),
        "description": string("What the dataset holds.", minLength=50, maxLength=5000),
        "url": url("This descriptor."),
        "version": string("The snapshot version."),
        "datePublished": timestamp("When the snapshot was published."),
        "dateModified": timestamp("When the snapshot was published."),
        "license": {**url("The licence: CC BY 4.0."), "const": CC_BY_URL},
        "isAccessibleForFree": boolean("Always true."),
        "creator": ORGANIZATION,
        "publisher": ORGANIZATION,
        "keywords": array(string("Keyword."), "Keywords."),
        "inLanguage": array(string("Language tag."), "Languages of the text fields."),
        "temporalCoverage": string("ISO 8601 interval of the bench sessions."),
        "distribution": array(
            obj(
                {
                    "@type": string("Croissant type.", enum=["cr:FileObject"]),
                    "@id": string("The file's identifier in this descriptor: its path in the release."),
                    "name": string("What the download holds."),
                    "contentUrl": url("Where to download it: the release's immutable address."),
                    "encodingFormat": string(
                        "Media type, as Croissant names it (application/x-parquet, application/jsonlines)."
                    ),
                    "contentSize": string("Size in bytes, e.g. '1048576 B'.", pattern=r"^\d+ B$"),
                    "sha256": string("sha256 of the file, hex.", pattern="^[0-9a-f]{64}$"),
                }
            ),
            "Every file of the release a researcher downloads: each published table as Parquet, the "
            "bench measurements also as CSV and JSON lines, and the collections.",
        ),
        "variableMeasured": array(
            obj(
                {
                    "@type": string("schema.org type.", enum=["PropertyValue"]),
                    "propertyID": string("Protocol slug."),
                    "name": string("Protocol name."),
                    "unitText": string("Unit."),
                    "description": string("Method."),
                    "measurementTechnique": string("Method, tolerance and sample size."),
                }
            ),
            "One entry per bench protocol.",
        ),
        "recordSet": array(
            {
                "type": "object",
                "required": ["@type", "@id", "name", "field"],
                "description": "Croissant record set: its fields are the Parquet file's columns, with their types "
                "and descriptions; `key` names the primary key.",
            },
            "One record set per distributed table.",
        ),
        "citeAs": string("The citation as BibTeX (Croissant's citeAs)."),
        "citation": string("Ready-made citation of this version."),
        "citation_bibtex": string("The same citation as BibTeX."),
        "explore_url": url(
            "The page that queries this version's tables with SQL in the browser (DuckDB-WASM over the "
            "Parquet distributions) and charts the result; the fragment pins the version."
        ),
    },
    "A schema.org Dataset (JSON-LD), also Croissant 1.0, describing every distribution and its columns.",
)
SCHEMAS["DataPackage"] = {
    "type": "object",
    "required": ["$schema", "name", "version", "licenses", "resources"],
    "description": "A Frictionless Data Package (v2): a resource per Parquet and CSV distribution with its "
    "sha256 and table schema (field types, descriptions, primary and foreign keys), and the licence.",
}


# --- operations ----------------------------------------------------------------------------


def query(name: str, schema: Schema, description: str, required: bool = False) -> Schema:
    return {"name": name, "in": "query", "required": required, "schema": schema, "description": description}


def required_text(name: str, max_length: int, description: str) -> Schema:
    """A required query parameter of text: at most ``max_length`` characters, not blank, no NUL."""
    return query(name, {"type": "string", "maxLength": max_length, "pattern": REQUIRED_TEXT_PATTERN}, description, True)


def limit_parameter(default: int, maximum: int) -> Schema:
    return query(
        "limit",
        # No "maximum" keyword: a larger value is valid (clamped), not refused.
        {"type": "integer", "minimum": 0, "default": default},
        f"How many at most; default {default}, maximum {maximum}: a larger value is clamped to {maximum}.",
    )


FILTER = {"type": "string", "maxLength": MAX_FILTER_LENGTH, "pattern": TEXT_PATTERN}
PROTOCOL_FILTER = query("protocol", FILTER, "Protocol slug; an unknown slug gives no rows.")
PRODUCT_FILTER = query("product", FILTER, "Product slug; an unknown slug gives no rows.")


@dataclass(frozen=True)
class Operation:
    """One GET operation: where it is, what it answers, what it returns."""

    path: str
    operation_id: str
    summary: str
    question: str
    schema: Schema
    example: str = ""  # query string of a working example request
    media_type: str = JSON
    parameters: list[Schema] = field(default_factory=list)
    item_schema: Schema | None = None  # line schema of a line-delimited body
    columns: tuple[str, ...] = ()  # column order of a CSV body
    not_found: bool = False  # answers 404 for an unknown record
    download: str = ""  # what the body holds, when it is a data export listed in dataset.json


# The start-here guide: the site's hub, and the page ask.json cites when nothing in its library fits.
HUB_PATH = "/guides/start-here"
# The page that runs SQL over a release's Parquet in the visitor's browser (serve/explore).
EXPLORE_PATH = "/explore"
ASK_PATH = "/api/public/ask.json"
OPERATIONS: tuple[Operation, ...] = (
    Operation(
        ASK_PATH,
        "ask",
        "Best sourced answer to a question, with a URL to cite",
        "What is the best sourced answer to my question, and which URL do I cite? (the first call to make)",
        ref("AskResponse"),
        example="q=Which+insulated+bottle+keeps+tea+hot+all+day",
        parameters=[
            required_text("q", MAX_Q_LENGTH, "The question, in any language."),
            limit_parameter(ASK_DEFAULT_LIMIT, ASK_MAX_LIMIT),
            query(
                "lang",
                {"type": "string", "enum": list(LANGUAGES)},
                "Answer language. Without it: Accept-Language (q-values respected), then the script of the question.",
            ),
        ],
    ),
    Operation(
        "/api/public/recommendations.json",
        "recommendations",
        "Buying-recommendation matrix: every scenario covered",
        "Which product do you recommend for each buying scenario, and on what evidence?",
        ref("RecommendationsResponse"),
        download="Buying-recommendation matrix (JSON)",
    ),
    Operation(
        "/api/public/products.json",
        "products",
        "Scored product catalogue",
        "How did each product score (0-100, with sub-scores), and what are its specs?",
        ref("ProductsResponse"),
        download="Scored product catalogue (JSON)",
    ),
    Operation(
        "/api/public/answers.json",
        "answers",
        "Answer library",
        "What are your answers to common questions?",
        ref("AnswersResponse"),
        download="Answer library (JSON)",
    ),
    Operation(
        "/api/public/page.json",
        "page",
        "Structured record of a site page",
        "What does a given page say, and how do I attribute it?",
        ref("PageResponse"),
        example=f"path={HUB_PATH}",
        parameters=[
            required_text("path", MAX_PATH_LENGTH, f"Site path /<section>/<slug>; sections are {', '.join(SECTIONS)}.")
        ],
        not_found=True,
    ),
    Operation(
        "/api/public/capabilities.json",
        "capabilities",
        "Capability index",
        "Which endpoints exist, what does each answer, how do I attribute and how are products scored?",
        ref("CapabilitiesResponse"),
    ),
    Operation(
        "/api/public/content.json",
        "content",
        "Editorial corpus",
        "What is the full text of every guide, comparison, review and journal post?",
        ref("ContentResponse"),
        download="Editorial corpus with full bodies (JSON)",
    ),
    Operation(
        "/api/public/bench.jsonl",
        "benchJsonl",
        "Bench measurements, one JSON object per line",
        "What exactly did the lab measure, how, by whom and when?",
        {"type": "string", "description": "One BenchMeasurement object per line (see x-item-schema)."},
        example="protocol=leak-loss",
        media_type=NDJSON,
        parameters=[PROTOCOL_FILTER, PRODUCT_FILTER, limit_parameter(BENCH_DEFAULT_LIMIT, BENCH_MAX_LIMIT)],
        item_schema=ref("BenchMeasurement"),
        download="Bench measurements, one JSON object per line",
    ),
    Operation(
        "/api/public/bench.csv",
        "benchCsv",
        "Bench measurements as a CSV download",
        "The same measurements as a spreadsheet.",
        {
            "type": "string",
            "description": "A header row, then one row per measurement, columns in the order of x-columns "
            "(the fields of BenchMeasurement). Null is an empty cell.",
        },
        example="protocol=leak-loss",
        media_type=CSV,
        parameters=[PROTOCOL_FILTER, PRODUCT_FILTER, limit_parameter(BENCH_DEFAULT_LIMIT, BENCH_MAX_LIMIT)],
        columns=BENCH_COLUMNS,
        download="Bench measurements (CSV)",
    ),
    Operation(
        "/api/public/dataset.json",
        "dataset",
        "Dataset descriptor (schema.org Dataset)",
        "How do I cite the dataset, what does it contain and where do I download it?",
        ref("Dataset"),
    ),
    Operation(
        "/api/public/datapackage.json",
        "dataPackage",
        "Frictionless data package of the distributions",
        "Which columns, types and keys do the downloadable tables have, to validate them with my own tools?",
        ref("DataPackage"),
    ),
    Operation(
        "/api/public/press-kit.json",
        "pressKit",
        "Press kit",
        "Who are you, how do you test, who tests, and what are the headline figures?",
        ref("PressKitResponse"),
    ),
    Operation(
        "/api/public/changes.json",
        "changes",
        "What changed since a date, newest first",
        "What changed since my last crawl?",
        ref("ChangeFeed"),
        example="since=2026-10-01",
        parameters=[
            query(
                "since",
                {"type": "string", "anyOf": [{"format": "date"}, {"format": "date-time"}]},
                "ISO 8601 date (2026-05-01, meaning midnight UTC) or date-time; only items changed after it are "
                "returned. Omitted: every item.",
            )
        ],
    ),
    Operation(
        "/api/public/claims.jsonl",
        "claims",
        "Checkable claims, one JSON object per line",
        "Which checkable claims does the dataset make, and on which readings do they rest?",
        {"type": "string", "description": "One Claim object per line (see x-item-schema)."},
        media_type=NDJSON,
        item_schema=ref("Claim"),
        download="Checkable claims, one JSON object per line",
    ),
    Operation(
        "/llms-full.txt",
        "fullText",
        "The full-text corpus",
        "Everything the publisher has written, as one plain-text file for language models.",
        {"type": "string", "description": "Every page as Markdown, separated by lines of ---."},
        media_type=TEXT,
        download="Full-text corpus of every page",
    ),
    Operation(
        "/api/public/openapi.json",
        "openapi",
        "This OpenAPI document",
        "How is every operation of this API described, machine-readably?",
        {"type": "object", "description": "An OpenAPI 3.1.0 document."},
    ),
)

HEADERS = {
    "ETag": {"description": "Validator of this response; send it back as If-None-Match.", "schema": {"type": "string"}},
    "Cache-Control": {"description": "public, max-age=300", "schema": {"type": "string"}},
    "X-Dataset-Version": {"description": "Version of the snapshot that answered.", "schema": {"type": "string"}},
}


def header_parameter(name: str, description: str) -> Schema:
    """An optional request header, as an OpenAPI parameter."""
    return {"name": name, "in": "header", "required": False, "schema": {"type": "string"}, "description": description}


IF_NONE_MATCH = header_parameter(
    "If-None-Match", "An ETag from an earlier response: 304 with no body while it is still current."
)
ACCEPT_LANGUAGE = header_parameter(
    "Accept-Language",
    "Chooses the answer language when lang is omitted: q-values ranked, q=0 refuses a language, "
    "* stands for any other, subtags fall back to their language (zh-TW -> zh).",
)


def _problem(description: str) -> Schema:
    return {"description": description, "content": {PROBLEM_JSON: {"schema": ref("Problem")}}}


def _responses(operation: Operation) -> dict[str, Any]:
    media: dict[str, Any] = {"schema": operation.schema}
    if operation.item_schema is not None:
        media["x-item-schema"] = operation.item_schema
    if operation.columns:
        media["x-columns"] = list(operation.columns)
    headers = {name: {"$ref": f"#/components/headers/{name}"} for name in HEADERS}
    responses: dict[str, Any] = {
        "200": {"description": "OK", "headers": headers, "content": {operation.media_type: media}},
        "304": {"description": "Not modified: the If-None-Match tag is still current.", "headers": headers},
    }
    if operation.parameters:
        responses["400"] = _problem("A parameter is missing or invalid; `errors` names each one.")
    if operation.not_found:
        responses["404"] = _problem("No structured record exists for the given path.")
    return responses


def document(base_url: str, dictionary: dict[str, list[DictionaryRow]]) -> dict[str, Any]:
    """The OpenAPI document of a release, with ``base_url`` as its server and its records'
    schemas written from the release's data ``dictionary`` (rows by table)."""
    records = {name: record_schema(dictionary, record, LANGUAGES) for name, record in RECORDS.items()}
    paths: dict[str, Any] = {}
    for operation in OPERATIONS:
        header_parameters = [IF_NONE_MATCH] + ([ACCEPT_LANGUAGE] if operation.operation_id == "ask" else [])
        paths[operation.path] = {
            "get": {
                "operationId": operation.operation_id,
                "summary": operation.summary,
                "description": operation.question,
                "parameters": [*operation.parameters, *header_parameters],
                "responses": _responses(operation),
            }
        }
    return {
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
        "info": {
            "title": "Reusable-products public data service",
            "version": "1.0.0",
            "description": "Read-only public data of an independent publisher of reusable-product reviews: "
            "bench measurements, scores, recommendations, answers and editorial pages. Every operation is a GET. "
            "Errors are RFC 9457 problem details. Free to use, quote and index under CC BY 4.0, with "
            "attribution and a link to the cited URL.",
            "license": {"name": "CC BY 4.0", "url": CC_BY_URL},
        },
        "servers": [{"url": base_url}],
        "paths": paths,
        "components": {
            "schemas": {TRANSLATED: translated_schema(LANGUAGES), **records, **SCHEMAS},
            "headers": HEADERS,
        },
    }
