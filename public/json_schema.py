"""Builders of JSON Schema fragments, for the OpenAPI document and the record schemas alike."""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]


def string(description: str, **extra: Any) -> Schema:
    return {"type": "string", "description": description, **extra}


def url(description: str) -> Schema:
    return string(description, format="uri")


def timestamp(description: str) -> Schema:
    return string(description, format="date-time")


def integer(description: str, **extra: Any) -> Schema:
    return {"type": "integer", "description": description, **extra}


def number(description: str, **extra: Any) -> Schema:
    return {"type": "number", "description": description, **extra}


def boolean(description: str) -> Schema:
    return {"type": "boolean", "description": description}


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(schema: Schema) -> Schema:
    """The same schema, with null allowed (for unknown or not-yet-measured values)."""
    if "$ref" in schema:  # a reference takes no type of its own: either it or null
        alternatives: Schema = {"anyOf": [{"$ref": schema["$ref"]}, {"type": "null"}]}
        return {**alternatives, **{k: v for k, v in schema.items() if k != "$ref"}}
    return {**schema, "type": [schema["type"], "null"]}


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
