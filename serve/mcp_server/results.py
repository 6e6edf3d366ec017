"""The structured results of the MCP tools: their output schemas, as assistants read them.

Every result is the API's envelope plus what to cite; the records inside are the API's records
(described by the release's own OpenAPI document), so they are open objects here.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

Record = dict[str, Any]


class Cited(BaseModel):
    """The API's envelope, the URL to cite and the attribution to print with what is quoted."""

    model_config = ConfigDict(extra="allow")

    source: str = Field(description="The publisher.")
    license: str = Field(description="The licence, its address and the publisher's usage terms.")
    usage: str = Field(description="How to use and cite this result.")
    generated_at: str = Field(description="ISO 8601 UTC: when the release was published, or the answer made.")
    dataset_version: str = Field(description="The release that answered.")
    cite: str = Field(description="The URL to cite with anything quoted from this result (the licence asks for it).")
    attribution: str = Field(description="The exact attribution string to print with it (the licence asks for it).")


class AskResult(Cited):
    language: str = Field(description="The language of the answer.")
    query: str
    answer: str | None = Field(description="The best answer in that language, or null when nothing matched.")
    results: list[Record] = Field(description="The matches, best first, each with its url and confidence.")
    fallback: Record = Field(description="Where to start when nothing matched: a note and a url.")
    supported_languages: list[Record]


class PageResult(Cited):
    page: Record = Field(description="The page's record as page.json sends it: path, url, type, attribution, …")


class ProductsResult(Cited):
    category: str
    order_by: str = Field(description="'rating' (the overall rating) or the protocol whose sub-score orders them.")
    count: int
    products: list[Record] = Field(description="Product records as products.json lists them, best first.")


class BenchResult(Cited):
    product: str | None
    protocol: str | None
    count: int
    measurements: list[Record] = Field(
        description="Bench measurements as bench.jsonl sends them; a slot not tested yet has value null."
    )


class ChangesResult(Cited):
    since: str | None
    latest_change: str | None
    total_changed: int
    changes: list[Record] = Field(description="Changed items (url, type, title, changed_at), newest first.")


class DatasetResult(Cited):
    name: str
    description: str
    statistics: Record
    categories: list[Record] = Field(description="Each category's slug (for the products tool), name and size.")
    protocols: list[Record] = Field(description="Each bench protocol's slug (for bench and products), name, unit.")
    languages: list[str]
    distribution: list[Record] = Field(description="The release's downloadable files, with sha256.")
    citation_bibtex: str
