"""The distributed tables described for the tools researchers read them with.

dbt's schema.yml describes every published column once: its type (held true by the model's
enforced contract), what it holds, whether it is public, and the keys its data tests prove. The
pipeline publishes that description as the data dictionary (``published_columns``). From it, and
from the columns each distribution is written with, publish describes the distributions twice:
as Croissant record sets in dataset.json (ML tooling, dataset search engines) and as a
Frictionless data package (``datapackage.json``). A distributed column the dictionary does not
describe fails the publish, so neither description can drift from the files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import duckdb
from duckdb.sqltypes import DuckDBPyType

from foundations.media_types import essence, media_type_of

CROISSANT_1_0 = "http://mlcommons.org/croissant/1.0"
# Croissant 1.0's JSON-LD context: schema.org as the vocabulary, Croissant's own terms beside it.
CROISSANT_CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "sc": "https://schema.org/",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "dct": "http://purl.org/dc/terms/",
    "citeAs": "cr:citeAs",
    "equivalentProperty": "cr:equivalentProperty",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
# Croissant's readers know a file's format by these names, which differ from the registered
# media types the files are served with for Parquet and JSON lines.
CROISSANT_FORMATS = {".parquet": "application/x-parquet", ".jsonl": "application/jsonlines"}
FRICTIONLESS_FORMATS = {".parquet": "parquet", ".csv": "csv"}  # the formats frictionless validates

# DuckDB type id -> (Croissant dataType, Frictionless field type) of a scalar column.
SCALAR_TYPES: dict[str, tuple[str, str]] = {
    "varchar": ("sc:Text", "string"),
    "json": ("sc:Text", "string"),
    "boolean": ("sc:Boolean", "boolean"),
    "tinyint": ("sc:Integer", "integer"),
    "smallint": ("sc:Integer", "integer"),
    "integer": ("sc:Integer", "integer"),
    "bigint": ("sc:Integer", "integer"),
    "hugeint": ("sc:Integer", "integer"),
    "float": ("sc:Float", "number"),
    "double": ("sc:Float", "number"),
    "decimal": ("sc:Float", "number"),
    "date": ("sc:Date", "date"),
    "timestamp": ("sc:DateTime", "datetime"),
    "timestamp with time zone": ("sc:DateTime", "datetime"),
}


class UndescribedColumn(ValueError):
    """A distribution would carry a column the data dictionary does not describe as public."""


@dataclass(frozen=True)
class Column:
    name: str
    type: DuckDBPyType
    description: str
    references: tuple[str, str] | None  # (table, column) a tested relationship points it at
    required: bool = False  # never null, as a not_null constraint or test proves
    accepted_values: tuple[str, ...] = ()  # the values its tests allow (empty: any)


@dataclass(frozen=True)
class DescribedTable:
    """A distributed table: its columns as the distribution holds them, as the dictionary describes them."""

    name: str
    description: str
    columns: tuple[Column, ...]
    primary_key: str | None
    row_count: int


def describe_table(
    connection: duckdb.DuckDBPyConnection, table: str, select: str, dictionary: list[dict[str, Any]]
) -> DescribedTable:
    """``table`` as ``select`` writes it, each column as the ``dictionary``'s rows of the table
    describe it; raises UndescribedColumn for a column the dictionary lacks or keeps private."""
    described = {row["column_name"]: row for row in dictionary}
    written = connection.sql(select)
    columns: list[Column] = []
    for name, column_type in zip(written.columns, written.types, strict=True):
        row = described.get(name)
        if row is None or not row["is_public"]:
            why = "is not described" if row is None else "is marked private (meta: {public: false})"
            raise UndescribedColumn(
                f"column {name} of the {table} distribution {why} in the dbt project's sql/models/marts/_marts.yml: "
                "describe it there (with its data_type) or leave it out of the distribution"
            )
        references = (row["references_table"], row["references_column"]) if row["references_table"] else None
        scalar = _type_id(column_type) not in ("list", "struct")
        values = tuple(row["accepted_values"] or ()) if scalar else ()
        columns.append(Column(name, column_type, row["description"], references, not row["is_nullable"], values))
    keys = [row["column_name"] for row in dictionary if row["is_primary_key"] and row["column_name"] in written.columns]
    table_description = dictionary[0]["table_description"] if dictionary else ""
    row_count = connection.execute(f"SELECT count(*) FROM ({select})").fetchone()[0]
    return DescribedTable(table, table_description, tuple(columns), keys[0] if keys else None, row_count)


def _type_id(column_type: DuckDBPyType) -> str:
    return column_type.id.lower()


def _croissant_field(
    record_set: str, name: str, column_type: DuckDBPyType, description: str, source: dict[str, Any]
) -> dict[str, Any]:
    """A Croissant field for a column (or a member of a struct column): a list is a repeated field
    of its items, a struct a field of sub-fields read by JSON path from the column."""
    field: dict[str, Any] = {"@type": "cr:Field", "@id": f"{record_set}/{name}", "name": name}
    if description:
        field["description"] = description
    if _type_id(column_type) == "list":
        field["repeated"] = True
        column_type = column_type.child
    if _type_id(column_type) == "struct":
        path = source.get("transform", {}).get("jsonPath")
        field["subField"] = [
            _croissant_field(
                f"{record_set}/{name}",
                member,
                member_type,
                "",
                {**source, "transform": {"jsonPath": f"{path}.{member}" if path else member}},
            )
            for member, member_type in column_type.children
        ]
    else:
        field["dataType"] = SCALAR_TYPES[_type_id(column_type)][0]
    field["source"] = source
    return field


def croissant_record_set(table: DescribedTable, file_id: str) -> dict[str, Any]:
    """The Croissant record set of a table, its fields read from the file ``file_id``."""
    record_set: dict[str, Any] = {
        "@type": "cr:RecordSet",
        "@id": table.name,
        "name": table.name,
        "description": table.description,
        "field": [
            _croissant_field(
                table.name,
                column.name,
                column.type,
                column.description,
                {"fileObject": {"@id": file_id}, "extract": {"column": column.name}},
            )
            for column in table.columns
        ],
    }
    if table.primary_key:
        record_set["key"] = {"@id": f"{table.name}/{table.primary_key}"}
    return record_set


def croissant_format(path: str) -> str:
    """The format Croissant's readers know a distribution's file by."""
    return CROISSANT_FORMATS.get(os.path.splitext(path)[1], essence(media_type_of(path)))


def frictionless_type(column_type: DuckDBPyType) -> str:
    """The Table Schema type of a column. A list is ``any``: frictionless reads a Parquet list as
    an array object its ``array`` type refuses (it takes JSON text or a Python list), so the
    package would not validate against its own files; Croissant's record sets give the item type."""
    type_id = _type_id(column_type)
    if type_id == "list":
        return "any"
    if type_id == "struct":
        return "object"
    return SCALAR_TYPES[type_id][1]


def frictionless_field(column: Column) -> dict[str, Any]:
    """A Table Schema field: its type, description and the constraints its dbt tests prove."""
    field: dict[str, Any] = {
        "name": column.name,
        "type": frictionless_type(column.type),
        "description": column.description,
    }
    constraints: dict[str, Any] = {}
    if column.required:
        constraints["required"] = True
    if column.accepted_values:
        constraints["enum"] = list(column.accepted_values)
    if constraints:
        field["constraints"] = constraints
    return field


def frictionless_schema(table: DescribedTable, resource_names: dict[str, str]) -> dict[str, Any]:
    """The Table Schema of a table; foreign keys to tables of the package (``resource_names``)."""
    schema: dict[str, Any] = {"fields": [frictionless_field(column) for column in table.columns]}
    if table.primary_key:
        schema["primaryKey"] = [table.primary_key]
    foreign_keys = [
        {"fields": [c.name], "reference": {"resource": resource_names[c.references[0]], "fields": [c.references[1]]}}
        for c in table.columns
        if c.references and c.references[0] in resource_names
    ]
    if foreign_keys:
        schema["foreignKeys"] = foreign_keys
    return schema
