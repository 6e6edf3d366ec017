"""The API's record schemas, written from the release's data dictionary.

A record the API serves is a row of a published table, less its private columns (or, where an
operation serves fewer, the columns it names). dbt's schema.yml declares each column once, and
the pipeline publishes that declaration as the data dictionary (``published_columns``): its type
(held true by the model's enforced contract), its description, whether it may be null, its
values and range (held true by its tests), its text format, and the shape of its nested values.
Each column's JSON Schema is read from there, so that adding a column to a published mart and
describing it in schema.yml is all the OpenAPI document needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb
import orjson
from duckdb.sqltypes import DuckDBPyType

from public.json_schema import Schema, nullable, obj, string
from public.table_descriptions import UndescribedColumn

DictionaryRow = dict[str, Any]  # one row of the data dictionary (warehouse.contract.DATA_DICTIONARY_TABLE)

# The component every struct of the supported languages is: the same text in each of them.
TRANSLATED = "Translated"

INTEGER_TYPES = {"tinyint", "smallint", "integer", "bigint", "hugeint", "utinyint", "usmallint", "uinteger", "ubigint"}
NUMBER_TYPES = {"float", "double", "decimal"}
TEXT_FORMATS = {"date": "date", "timestamp": "date-time", "timestamp with time zone": "date-time"}


@dataclass(frozen=True)
class Record:
    """An API record: the table it is a row of, and the columns it carries when not all public ones."""

    table: str
    columns: tuple[str, ...] = ()


def translated_schema(languages: tuple[str, ...]) -> Schema:
    """The Translated component: one text per supported language."""
    return obj(
        {code: string(f"Text in {code}.") for code in languages},
        f"The same text in every supported language ({', '.join(languages)}).",
    )


def value_schema(
    where: str,
    value_type: DuckDBPyType,
    declared: str,
    facts: dict[str, Any],
    languages: tuple[str, ...],
) -> Schema:
    """The JSON Schema of a value of ``value_type`` (declared as ``declared``) with its dictionary
    ``facts`` (description, nullable, accepted_values, minimum, maximum, format, members,
    json_schema); ``where`` names it in an error."""
    type_id = value_type.id.lower()
    schema: Schema
    if declared.strip().lower() == "json":
        if not facts.get("json_schema"):
            raise UndescribedColumn(
                f"{where} is json, but its documents have no shape: give it meta: {{json_schema: …}}"
            )
        schema = dict(facts["json_schema"])
    elif type_id == "list":
        item_facts = {k: facts[k] for k in ("accepted_values", "format", "members") if facts.get(k)}
        schema = {
            "type": "array",
            "items": value_schema(f"an item of {where}", value_type.child, "", item_facts, languages),
        }
    elif type_id == "struct":
        members = [name for name, _ in value_type.children]
        if tuple(members) == languages:
            schema = {"$ref": f"#/components/schemas/{TRANSLATED}"}
        else:
            described = facts.get("members") or {}
            properties: dict[str, Schema] = {}
            for name, member_type in value_type.children:
                if name not in described:
                    raise UndescribedColumn(
                        f"member {name} of {where} is not described: add it to the column's meta: {{fields: …}}"
                    )
                properties[name] = value_schema(
                    f"member {name} of {where}", member_type, "", described[name], languages
                )
            schema = obj(properties)
    elif type_id in INTEGER_TYPES:
        schema = {"type": "integer"}
    elif type_id in NUMBER_TYPES:
        schema = {"type": "number"}
    elif type_id == "boolean":
        schema = {"type": "boolean"}
    elif type_id == "varchar":
        schema = {"type": "string", **({"format": facts["format"]} if facts.get("format") else {})}
    elif type_id in TEXT_FORMATS:
        schema = {"type": "string", "format": TEXT_FORMATS[type_id]}
    else:
        raise UndescribedColumn(f"{where} has type {value_type}, which the record schemas do not map to JSON")
    if facts.get("accepted_values") and type_id not in ("list", "struct"):
        schema["enum"] = list(facts["accepted_values"])
    for bound in ("minimum", "maximum"):
        if facts.get(bound) is not None:
            schema[bound] = facts[bound]
    if facts.get("description"):
        schema["description"] = facts["description"]
    return nullable(schema) if facts.get("nullable") else schema


def column_schema(row: DictionaryRow, languages: tuple[str, ...]) -> Schema:
    """The JSON Schema of a column, from its row in the data dictionary."""
    where = f"column {row['column_name']} of {row['table_name']}"
    facts = {
        "description": row["description"],
        "nullable": row["is_nullable"],
        "accepted_values": row["accepted_values"],
        "minimum": row["minimum"],
        "maximum": row["maximum"],
        "format": row["format"],
        "members": orjson.loads(row["members"]) if row["members"] else None,
        "json_schema": orjson.loads(row["json_schema"]) if row["json_schema"] else None,
    }
    return value_schema(where, duckdb.sqltype(row["data_type"]), row["data_type"], facts, languages)


def record_schema(dictionary: dict[str, list[DictionaryRow]], record: Record, languages: tuple[str, ...]) -> Schema:
    """The closed schema of ``record``: its table's public columns, or the ones it names."""
    rows = {row["column_name"]: row for row in dictionary.get(record.table, []) if row["is_public"]}
    if not rows:
        raise UndescribedColumn(f"the data dictionary describes no public column of {record.table}")
    names = record.columns or tuple(rows)
    missing = [name for name in names if name not in rows]
    if missing:
        raise UndescribedColumn(f"columns {', '.join(missing)} of {record.table} are not described as public")
    description = rows[names[0]]["table_description"]
    return obj({name: column_schema(rows[name], languages) for name in names}, description)
