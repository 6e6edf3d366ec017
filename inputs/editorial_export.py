"""Reading the editorial export (catalogue, taxonomy, people, scenarios, answers, content).

Each export file becomes one table of records. Scalars keep their type, nested values
(lists, mappings, translations) are kept as JSON text for staging to unpack, timestamps as
ISO 8601 text. A record missing a required field, or with a field of the wrong kind, fails
with the file, the row (line of a JSONL file, entry of a YAML list) and the field.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import yaml

from foundations.content_keys import sha256_of
from foundations.input_problems import InputProblems, RowProblem

TEXT, NUMBER, LIST, MAPPING, TIMESTAMP = "text", "number", "list", "mapping", "timestamp"
TRANSLATED = MAPPING  # a mapping of language code to text; completeness is checked in dbt


class ExportError(InputProblems):
    """An editorial export file that cannot be ingested."""

    subject = "the editorial export"


@dataclass(frozen=True)
class ExportTable:
    """One raw table: where its records come from and the fields each must carry."""

    table: str
    pattern: str
    layout: str  # "jsonl", "yaml-list", "yaml-mapping" or "markdown"
    required: dict[str, str]
    optional: dict[str, str] = field(default_factory=dict)

    @property
    def columns(self) -> dict[str, str]:
        return {**self.required, **self.optional}


EXPORT_TABLES = [
    ExportTable(
        "products",
        "editorial/products.jsonl",
        "jsonl",
        required={
            "slug": TEXT,
            "brand": TEXT,
            "name": TEXT,
            "category": TEXT,
            "price": MAPPING,
            "specs": MAPPING,
            "variants": LIST,
            "certifications": LIST,
            "pros": LIST,
            "cons": LIST,
            "testing_notes": TEXT,
            "editorial_scores": MAPPING,
            "updated_at": TIMESTAMP,
        },
    ),
    ExportTable(
        "categories",
        "editorial/categories.yml",
        "yaml-list",
        required={"slug": TEXT, "group": TEXT, "name": TRANSLATED},
    ),
    ExportTable(
        "protocols",
        "editorial/protocols.yml",
        "yaml-list",
        required={
            "slug": TEXT,
            "name": TRANSLATED,
            "categories": LIST,
            "method": TEXT,
            "unit": TEXT,
            "tolerance": NUMBER,
            "sample_size": NUMBER,
            "plausible_min": NUMBER,
            "plausible_max": NUMBER,
        },
    ),
    ExportTable(
        "people",
        "editorial/people.yml",
        "yaml-list",
        required={"slug": TEXT, "name": TEXT, "roles": LIST, "title": TEXT, "expertise": LIST, "bio": TEXT},
    ),
    ExportTable(
        "publisher",
        "editorial/publisher.yml",
        "yaml-mapping",
        required={
            "name": TEXT,
            "legal_name": TEXT,
            "url": TEXT,
            "founded": NUMBER,
            "boilerplate": TEXT,
            "methodology": TEXT,
            "independence_policy": TEXT,
            "license": TEXT,
            "license_url": TEXT,
            "usage_terms": TEXT,
            "contact": TEXT,
        },
    ),
    ExportTable(
        "scenarios",
        "editorial/scenarios.yml",
        "yaml-list",
        required={"slug": TEXT, "category": TEXT, "rank_by": TEXT, "scenario": TRANSLATED, "question": TRANSLATED},
        optional={"max_price": NUMBER},
    ),
    ExportTable(
        "answers",
        "editorial/answers.yml",
        "yaml-list",
        required={
            "id": TEXT,
            "category": TEXT,
            "cites": TEXT,
            "updated_at": TIMESTAMP,
            "question": TRANSLATED,
            "answer": TRANSLATED,
        },
    ),
    ExportTable(
        "content",
        "editorial/content/*/*.md",
        "markdown",
        required={
            "slug": TEXT,
            "type": TEXT,
            "title": TEXT,
            "author": TEXT,
            "published_at": TIMESTAMP,
            "updated_at": TIMESTAMP,
            "answer": TRANSLATED,
            "body": TEXT,
            "section": TEXT,
        },
        optional={"category": TEXT, "products": LIST, "faq": LIST, "sources": LIST},
    ),
]


def _records(path: Path, layout: str, display: str) -> Iterator[tuple[int, object]]:
    """(row number, record) pairs of one export file, in file order."""
    text = path.read_text(encoding="utf-8")
    if layout == "jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as error:
                raise ExportError(
                    [RowProblem(display, number, "line", line[:60], f"not valid JSON: {error.msg}")]
                ) from error
        return
    if layout == "markdown":
        parts = text.split("---", 2)
        if not text.startswith("---") or len(parts) < 3:
            raise ExportError(
                [RowProblem(display, 1, "front matter", text[:40], "missing the '---' front matter block")]
            )
        record = _load_yaml(parts[1], display)
        if not isinstance(record, dict):
            raise ExportError([RowProblem(display, 1, "front matter", "", "front matter is not a mapping")])
        yield 1, {**record, "body": parts[2].strip(), "section": path.parent.name}
        return
    document = _load_yaml(text, display)
    if layout == "yaml-mapping":
        yield 1, document
        return
    if not isinstance(document, list):
        raise ExportError([RowProblem(display, 1, "file", "", "expected a YAML list of entries")])
    yield from enumerate(document, start=1)


def _load_yaml(text: str, display: str) -> object:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        row = mark.line + 1 if mark else 1
        raise ExportError([RowProblem(display, row, "yaml", "", f"not valid YAML: {error}")]) from error


def _coerce(value: object, kind: str) -> tuple[object, str | None]:
    """The value as stored in the raw table, or a message saying why it cannot be."""
    if kind == TEXT:
        return (
            (str(value), None)
            if isinstance(value, (str, int, float)) and not isinstance(value, bool)
            else (None, "expected text")
        )
    if kind == NUMBER:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value), None
        return None, "expected a number"
    if kind == TIMESTAMP:
        if isinstance(value, dt.datetime):
            value = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
            return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z"), None
        if isinstance(value, str):
            try:
                dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
                return value, None
            except ValueError:
                pass
        return None, "expected an ISO 8601 timestamp"
    if (kind == LIST and isinstance(value, list)) or (kind == MAPPING and isinstance(value, dict)):
        return json.dumps(value, ensure_ascii=False, default=str), None
    return None, f"expected a {kind}"


PROVENANCE_SCHEMA = {"_source_file": pl.String, "_source_sha256": pl.String, "_source_row": pl.Int64}


def export_files(inputs: Path, spec: ExportTable) -> dict[str, tuple[Path, str]]:
    """The files of one export table: {path as shown (relative to ``inputs``): (path, sha256)}."""
    files = sorted(inputs.glob(spec.pattern))
    if not files:
        raise ExportError([RowProblem(spec.pattern, 0, "file", "", f"no file matches {spec.pattern} under {inputs}")])
    return {str(path.relative_to(inputs)): (path, sha256_of(path)) for path in files}


def export_schema(spec: ExportTable) -> dict[str, pl.DataType]:
    """The columns of an export table's frame: its fields, then the provenance columns."""
    return {c: (pl.Float64 if k == NUMBER else pl.String) for c, k in spec.columns.items()} | PROVENANCE_SCHEMA


def read_export_table(
    inputs: Path, spec: ExportTable, files: dict[str, tuple[Path, str]] | None = None
) -> pl.DataFrame:
    """All records of one export table with provenance columns, or ExportError.

    ``files`` is what `export_files` returned, when the caller has it already."""
    rows: list[dict] = []
    problems: list[RowProblem] = []
    for display, (path, digest) in (files or export_files(inputs, spec)).items():
        for number, record in _records(path, spec.layout, display):
            if not isinstance(record, dict):
                problems.append(RowProblem(display, number, "entry", str(record)[:40], "expected a mapping of fields"))
                continue
            row: dict[str, object] = {}
            for column, kind in spec.columns.items():
                value = record.get(column)
                if value is None:
                    if column in spec.required:
                        problems.append(RowProblem(display, number, column, "", "required field is missing"))
                    row[column] = None
                    continue
                stored, message = _coerce(value, kind)
                if message:
                    problems.append(RowProblem(display, number, column, str(value)[:60], message))
                row[column] = stored
            row.update(_source_file=display, _source_sha256=digest, _source_row=number)
            rows.append(row)
    if problems:
        raise ExportError(problems)
    return pl.DataFrame(rows, schema=export_schema(spec))
