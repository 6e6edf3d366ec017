"""The OpenAPI 3.1.0 document (info.version 1.0.0): every operation, parameter, response and error.

``OPERATIONS`` is the one list of what the API serves: the document, the capability index
(``capabilities.json``) and the tests that check the routes against the document all read it.
Record schemas are closed (``additionalProperties: false``), so a field the implementation
adds without documenting it fails the contract tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from serve.ask.language import LANGUAGES
from serve.table_descriptions import CROISSANT_1_0

Schema = dict[str, Any]

CC_BY_URL = "https://creativecommons.org/licenses/by/4.0/"
JSON = "application/json"
NDJSON = "application/x-ndjson"
CSV = "text/csv"
TEXT = "text/plain"
PROBLEM_JSON = "application/problem+json"
CHANGE_TYPES = ["guide", "comparison", "review", "product", "post"]
SLOT_STATUSES = ["measured", "pending", "retest"]
ASK_DEFAULT_LIMIT, ASK_MAX_LIMIT = 5, 20
BENCH_DEFAULT_LIMIT, BENCH_MAX_LIMIT = 5000, 20000
MAX_Q_LENGTH, MAX_PATH_LENGTH, MAX_FILTER_LENGTH = 1000, 512, 200
# What serve/params.py refuses, said as patterns: no NUL anywhere; a required text has
# something besides white space. White space is spelled out as JSON Schema's patterns
# (ECMA-262 \s) know it, so that Python's re, whose \s also takes \x1c-\x1f, applies the same rule.
BLANK_CHARACTERS = "\\t\\n\\u000b\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
TEXT_PATTERN = "^[^\\u0000]*$"
REQUIRED_TEXT_PATTERN = f"^[^\\u0000]*[^\\u0000{BLANK_CHARACTERS}][^\\u0000]*$"


# --- schema builders ----------------------------------------------------------------------


def string(description: str, **extra: Any) -> Schema:
    return {"type": "string", "description": description, **extra}


def url(description: str) -> Schema:
    return string(description, format="uri")


def timestamp(description: str) -> Schema:
    return string(description, format="date-time")


def date(description: str) -> Schema:
    return string(description, format="date")


def integer(description: str, **extra: Any) -> Schema:
    return {"type": "integer", "description": description, **extra}


def number(description: str, **extra: Any) -> Schema:
    return {"type": "number", "description": description, **extra}


def boolean(description: str) -> Schema:
    return {"type": "boolean", "description": description}


def nullable(schema: Schema) -> Schema:
    """The same schema, with null allowed (for unknown or not-yet-measured values)."""
    kind = schema["type"]
    return {**schema, "type": [kind, "null"]}


def array(items: Schema, description: str) -> Schema:
    return {"type": "array", "items": items, "description": description}


def obj(properties: dict[str, Schema], description: str = "", optional: tuple[str, ...] = ()) -> Schema:
    """A closed object: every property required unless named in ``optional``."""
    schema: Schema = {
        "type": "object",
        "properties": properties,
        "required": [name for name in properties if name not in optional],
        "additionalProperties": False,
    }
    if description:
        schema["description"] = description
    return schema


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def translated(description: str) -> Schema:
    return {**ref("Translated"), "description": description}


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
CITABLE: dict[str, Schema] = {
    "url": url("Canonical URL to cite: {base_url}/<section>/<slug>."),
    "attribution": string("The exact attribution string to print next to anything quoted from this record."),
}


def envelope_with(properties: dict[str, Schema], description: str) -> Schema:
    return obj({**ENVELOPE, **properties}, description)


def collection(key: str, item: str, description: str) -> Schema:
    return envelope_with(
        {"count": integer(f"Number of entries in `{key}`."), key: array(ref(item), description)},
        description,
    )


SPEC_VALUE = {"type": ["string", "number", "integer", "boolean"]}
SPECS = {
    "type": "object",
    "description": "Live specifications; the keys depend on the category (for example capacity_ml, weight_g).",
    "additionalProperties": SPEC_VALUE,
}
PRICE = obj({"amount": number("Price."), "currency": string("ISO 4217 currency code.")})
SLOT_STATUS = string(
    "measured: the lab's mean is published; pending: not tested yet (value null, never estimated); "
    "retest: a measurement was withdrawn (value null).",
    enum=SLOT_STATUSES,
)
FAQ = obj({"question": translated("The question."), "answer": translated("Its answer.")})
SOURCE = obj({"title": string("Title of the source."), "url": url("Where the source can be read.")})
BENCH_TABLE_ROW = obj(
    {
        "product_slug": string("Product tested."),
        "product_name": string("Its name."),
        "protocol": string("Protocol slug."),
        "protocol_name": string("Protocol name (English)."),
        "value": nullable(number("Mean reading in `unit`; null when pending or retest.")),
        "unit": string("Unit of the reading."),
        "sample_size": integer("Replicates behind the value (0 when untested)."),
        "status": SLOT_STATUS,
        "score": nullable(number("Sub-score 0-100; null when not measured.", minimum=0, maximum=100)),
    },
    "One bench slot shown in an editorial table.",
)
ORGANIZATION = obj(
    {
        "@type": string("schema.org type.", enum=["Organization"]),
        "name": string("Publisher name."),
        "url": url("Publisher home page."),
    }
)
PAGE_SECTIONS = "guides, comparisons, reviews, products or journal"

SCHEMAS: dict[str, Schema] = {
    "Translated": obj(
        {code: string(f"Text in {code}.") for code in LANGUAGES},
        "The same text in every supported language (en, zh Simplified, el, vi, ar, pa).",
    ),
    "SubScore": obj(
        {
            "protocol": string("Protocol slug."),
            "protocol_name": string("Protocol name (English)."),
            "status": SLOT_STATUS,
            "value": nullable(number("Mean reading in `unit`; null unless measured.")),
            "unit": string("Unit of the reading."),
            "sample_size": integer("Replicates behind the value."),
            "score": nullable(number("Sub-score 0-100 by the protocol's scoring rule.", minimum=0, maximum=100)),
            "weight": number("Weight of this protocol in the overall rating."),
        },
        "One planned bench slot of a product and its 0-100 sub-score.",
    ),
    "Product": obj(
        {
            "product_slug": string("Catalogue slug."),
            "product_name": string("Full product name."),
            "brand": string("Brand."),
            "category_slug": string("Category slug."),
            "category_name": translated("Category name."),
            "price_amount": number("Price of the reviewed variant."),
            "price_currency": string("ISO 4217 currency code."),
            "specs": SPECS,
            "variants": array(
                obj({"sku": string("Stock-keeping unit."), "colour": string("Colour."), "price": PRICE}),
                "Variants on sale.",
            ),
            "certifications": array(string("A certification."), "Certifications the product carries."),
            "pros": array(string("A strength."), "What we liked."),
            "cons": array(string("A weakness."), "What could be better."),
            "testing_notes": string("How the product was tested."),
            "editorial_scores": {
                "type": "object",
                "description": "Editors' 0-100 scores (design, ease_of_use, value_for_money).",
                "additionalProperties": {"type": "number"},
            },
            "overall_rating": nullable(
                number(
                    "0-100: weighted mean of the sub-scores of tested slots only; null when nothing is tested yet.",
                    minimum=0,
                    maximum=100,
                )
            ),
            "sub_scores": array(ref("SubScore"), "Every planned slot, tested or not."),
            "tested_slots": integer("Planned slots with a measurement."),
            "planned_slots": integer("Slots the category's protocols plan for this product."),
            "coverage": number("tested_slots / planned_slots.", minimum=0, maximum=1),
            "changed_at": timestamp("When this product's public record last changed."),
            **CITABLE,
        },
        "A scored product of the catalogue.",
    ),
    "Recommendation": obj(
        {
            "scenario_slug": string("Buying scenario slug."),
            "category_slug": string("Category the scenario ranks."),
            "category_name": translated("Category name."),
            "rank_by": string("Protocol slug whose measurement ranks the candidates."),
            "max_price": nullable(number("Price ceiling of the scenario, if any.")),
            "scenario": translated("The buying scenario."),
            "question": translated("The shopper's question this entry answers."),
            "product_slug": string("Recommended product."),
            "product_name": string("Its name."),
            "brand": string("Its brand."),
            "product_url": url("The product's page."),
            "answer": translated("Quotable answer sentence, built from live figures."),
            "evidence": translated("The bench evidence behind the pick."),
            "figure_value": number("The measured figure quoted in the answer."),
            "figure_unit": string("Its unit."),
            "rank_score": number("Sub-score on the ranking protocol (0-100).", minimum=0, maximum=100),
            "overall_rating": nullable(number("The product's overall rating (0-100).", minimum=0, maximum=100)),
            "price_amount": number("The product's price."),
            "price_currency": string("ISO 4217 currency code."),
            "specs": SPECS,
            **CITABLE,
        },
        "One buying scenario paired with the product we recommend for it.",
    ),
    "AnswerEntry": obj(
        {
            "answer_id": string("Stable identifier."),
            "category_slug": nullable(string("Category the question belongs to.")),
            "question": translated("The question."),
            "answer": translated("Quotable answer."),
            "cited_path": string("Site path of the page the answer is taken from."),
            "updated_at": timestamp("When the answer was last edited."),
            **CITABLE,
        },
        "A question/answer pair of the answer library.",
    ),
    "ContentItem": obj(
        {
            "path": string("Site path /<section>/<slug>."),
            "slug": string("Slug."),
            "content_type": string("Kind of item.", enum=["guide", "comparison", "review", "post"]),
            "section": string(f"Site section: {PAGE_SECTIONS}."),
            "title": string("Title."),
            "category_slug": nullable(string("Category, for guides, comparisons and reviews.")),
            "product_slugs": array(string("A product slug."), "Products the item is about."),
            "author_slug": string("Author."),
            "author_name": string("Author's name."),
            "published_at": timestamp("First published."),
            "updated_at": timestamp("Last updated."),
            "answer": translated("Quotable answer."),
            "faq": array(FAQ, "Frequently asked questions."),
            "sources": array(SOURCE, "Sources cited."),
            "body": string("Full body text (Markdown)."),
            "word_count": integer("Words in the body."),
            "bench_table": array(BENCH_TABLE_ROW, "Bench-test table (head-to-head comparisons and reviews)."),
            **CITABLE,
        },
        "A guide, head-to-head comparison, review or journal post with its full body.",
    ),
    "PageRecord": obj(
        {
            "path": string("Site path /<section>/<slug>."),
            "page_type": string("Kind of page.", enum=CHANGE_TYPES),
            "section": string(f"Site section: {PAGE_SECTIONS}."),
            "title": string("Title."),
            "answer": translated("Quotable answer."),
            "body": string("Body text (Markdown)."),
            "faq": array(FAQ, "Frequently asked questions."),
            "sources": array(SOURCE, "Sources cited."),
            "bench_table": array(BENCH_TABLE_ROW, "Bench results shown on the page."),
            "category_slug": nullable(string("Category of the page.")),
            "product_slugs": array(string("A product slug."), "Products on the page."),
            "author_name": nullable(string("Author (editorial pages).")),
            "published_at": nullable(timestamp("First published (editorial pages).")),
            "updated_at": timestamp("When the page's record last changed."),
            "canonical_url": url("Canonical URL of the page."),
            **CITABLE,
        },
        "The structured record of one site page.",
    ),
    "BenchMeasurement": obj(
        {
            "measurement_id": string("product_slug:protocol_slug (one planned slot)."),
            "product_slug": string("Subject product."),
            "product_name": string("Its name."),
            "brand": string("Its brand."),
            "category_slug": string("Its category."),
            "protocol_slug": string("Bench protocol."),
            "protocol_name": string("Protocol name (English)."),
            "method": string("How the protocol is run."),
            "tolerance": number("Tolerance of a reading, in `unit`."),
            "required_sample_size": integer("Replicates the protocol asks for."),
            "sample_size": integer("Replicates behind `value` (0 when untested)."),
            "value": nullable(number("Mean of the accepted replicates in `unit`; null when pending or retest.")),
            "unit": string("Unit."),
            "status": SLOT_STATUS,
            "standard_deviation": nullable(number("Standard deviation of the replicates.")),
            "sub_score": nullable(number("0-100 sub-score.", minimum=0, maximum=100)),
            "tester": nullable(string("Who ran the test.")),
            "tested_on": nullable(date("Date of the test session.")),
            "receipt": nullable(
                string("Receipt of the uploaded bench sheet behind the newest session; null for the lab's archive.")
            ),
            **CITABLE,
        },
        "One planned bench slot (category x protocol x product). Untested slots are null + pending.",
    ),
    "Claim": obj(
        {
            "claim_id": string("product_slug:protocol_slug."),
            "product_slug": string("Subject product."),
            "product_name": string("Its name."),
            "protocol_slug": string("Protocol measured."),
            "claim": string("The claim, as a sentence a reader can check."),
            "value": number("The measured mean."),
            "unit": string("Unit."),
            "sample_size": integer("Replicates."),
            "tested_on": date("Date of the test session."),
            "tester": string("Who ran the test."),
            "reading_ids": array(string("A replicate reading."), "The readings the claim rests on."),
            "source_files": array(string("A bench sheet."), "The bench sheets the readings come from."),
            **CITABLE,
        },
        "One checkable claim, tied to its measurements (a line of claims.jsonl).",
    ),
    "Person": obj(
        {
            "person_slug": string("Slug."),
            "person_name": string("Name."),
            "roles": array(string("Role.", enum=["author", "tester"]), "Roles."),
            "title": string("Job title."),
            "expertise": array(string("An area of expertise."), "Areas of expertise."),
            "bio": string("Short biography."),
        },
        "An author or tester.",
    ),
    "Statistics": obj(
        {
            **{
                name: integer(text)
                for name, text in {
                    "products": "Products in the catalogue.",
                    "categories": "Categories.",
                    "protocols": "Bench protocols.",
                    "planned_slots": "Planned bench slots.",
                    "measured_slots": "Slots measured.",
                    "pending_slots": "Slots still pending.",
                    "readings": "Replicate readings behind the measurements.",
                    "testers": "Testers who contributed readings.",
                    "recommendations": "Buying scenarios answered.",
                    "answers": "Answer-library entries.",
                    "editorial_items": "Guides, comparisons, reviews and posts.",
                    "pages": "Pages with a structured record.",
                    "claims": "Checkable claims.",
                }.items()
            },
            "mean_overall_rating": nullable(number("Mean overall rating of rated products.")),
            "first_tested_on": nullable(date("First bench session.")),
            "last_tested_on": nullable(date("Latest bench session.")),
            "latest_change": nullable(timestamp("Newest change in the change feed.")),
        },
        "Live headline figures of the published snapshot.",
    ),
    "Language": obj(
        {
            "code": string("Language code.", enum=list(LANGUAGES)),
            "name": string("English name."),
            "native": string("Name in the language itself."),
            "hreflang": string("Language tag (zh -> zh-Hans)."),
        }
    ),
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
        "changes": array(
            obj(
                {
                    "url": url("Page URL {base_url}/<section>/<slug>."),
                    "type": string("Kind of item.", enum=CHANGE_TYPES),
                    "title": string("Title."),
                    "changed_at": timestamp("When the item's public record changed."),
                }
            ),
            "Changed items, newest first.",
        ),
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


BENCH_COLUMNS: tuple[str, ...] = tuple(SCHEMAS["BenchMeasurement"]["properties"])

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "/api/public/ask.json",
        "ask",
        "Best sourced answer to a question, with a URL to cite",
        "What is the best sourced answer to my question, and which URL do I cite? (the first call to make)",
        ref("AskResponse"),
        example="q=Which+insulated+bottle+keeps+tea+hot+all+day",
        parameters=[
            query(
                "q",
                {"type": "string", "maxLength": MAX_Q_LENGTH, "pattern": REQUIRED_TEXT_PATTERN},
                "The question, in any language.",
                True,
            ),
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
        example="path=/guides/start-here",
        parameters=[
            query(
                "path",
                {"type": "string", "maxLength": MAX_PATH_LENGTH, "pattern": REQUIRED_TEXT_PATTERN},
                f"Site path /<section>/<slug>; sections are {PAGE_SECTIONS}.",
                True,
            )
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


def document(base_url: str) -> dict[str, Any]:
    """The OpenAPI document, with ``base_url`` as its server."""
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
        "components": {"schemas": SCHEMAS, "headers": HEADERS},
    }
