"""The API's record schemas are read from the data dictionary, never restated: each declared fact
(type, nullability, values, range, format, nested members, a json column's shape) shows up, and a
nested value the dictionary does not describe stops the publish with the place to describe it."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from public.record_schemas import Record, record_schema
from public.table_descriptions import UndescribedColumn

LANGUAGES = ("en", "zh")


def column(name: str, data_type: str, **facts: Any) -> dict[str, Any]:
    row = {
        "table_name": "things",
        "table_description": "Things, one row per thing.",
        "column_name": name,
        "data_type": data_type,
        "description": f"The {name}.",
        "is_public": True,
        "is_nullable": False,
        "accepted_values": None,
        "minimum": None,
        "maximum": None,
        "format": None,
        "members": None,
        "json_schema": None,
    }
    for key in ("members", "json_schema"):
        if key in facts:
            facts[key] = orjson.dumps(facts[key]).decode()
    return {**row, **facts}


def schema_of(*columns: dict[str, Any], record: Record | None = None) -> dict[str, Any]:
    return record_schema({"things": list(columns)}, record or Record("things"), LANGUAGES)


def test_each_declared_fact_of_a_column_is_in_its_schema():
    schema = schema_of(
        column("slug", "varchar"),
        column("status", "varchar", accepted_values=["measured", "pending"]),
        column("score", "double", is_nullable=True, minimum=0.0, maximum=100.0),
        column("url", "varchar", format="uri"),
        column("tested_on", "date", is_nullable=True),
        column("changed_at", "timestamp with time zone"),
        column("count", "bigint"),
        column("price", "decimal(10,2)"),
        column("hidden", "varchar", is_public=False),
    )
    properties = schema["properties"]
    assert schema["description"] == "Things, one row per thing." and schema["additionalProperties"] is False
    assert (
        list(properties)
        == schema["required"]
        == ["slug", "status", "score", "url", "tested_on", "changed_at", "count", "price"]
    )
    assert properties["status"] == {"type": "string", "enum": ["measured", "pending"], "description": "The status."}
    assert properties["score"] == {
        "type": ["number", "null"],
        "minimum": 0.0,
        "maximum": 100.0,
        "description": "The score.",
    }
    assert properties["url"]["format"] == "uri" and properties["tested_on"]["type"] == ["string", "null"]
    assert properties["changed_at"]["format"] == "date-time" and properties["count"]["type"] == "integer"
    assert properties["price"]["type"] == "number"


def test_nested_values_are_described_by_their_members_translations_and_shapes():
    schema = schema_of(
        column("name", "struct(en varchar, zh varchar)"),
        column(
            "slots",
            "struct(status varchar, score double)[]",
            members={
                "status": {"description": "Its status.", "accepted_values": ["measured", "pending"]},
                "score": {"description": "Its score.", "nullable": True},
            },
        ),
        column("roles", "varchar[]", accepted_values=["author", "tester"]),
        column("specs", "json", json_schema={"type": "object", "additionalProperties": {"type": "number"}}),
    )
    properties = schema["properties"]
    assert properties["name"] == {"$ref": "#/components/schemas/Translated", "description": "The name."}
    slot = properties["slots"]["items"]
    assert slot["properties"]["status"]["enum"] == ["measured", "pending"] and slot["required"] == ["status", "score"]
    assert slot["properties"]["score"]["type"] == ["number", "null"] and slot["additionalProperties"] is False
    assert properties["roles"]["items"] == {"type": "string", "enum": ["author", "tester"]}
    assert properties["specs"] == {
        "type": "object",
        "additionalProperties": {"type": "number"},
        "description": "The specs.",
    }


def test_a_record_of_named_fields_carries_only_those():
    schema = schema_of(column("a", "varchar"), column("b", "varchar"), record=Record("things", ("b",)))
    assert list(schema["properties"]) == ["b"]


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (
            column(
                "slots", "struct(status varchar, score double)[]", members={"status": {"description": "Its status."}}
            ),
            "member score",
        ),
        (column("specs", "json"), "json_schema"),
    ],
)
def test_a_nested_value_without_a_description_is_refused_naming_where_to_describe_it(bad, says):
    with pytest.raises(UndescribedColumn, match=says):
        schema_of(column("slug", "varchar"), bad)


def test_a_named_field_the_dictionary_does_not_describe_is_refused():
    with pytest.raises(UndescribedColumn, match="missing"):
        schema_of(column("slug", "varchar"), record=Record("things", ("slug", "missing")))
