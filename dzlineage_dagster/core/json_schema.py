"""Columns of a JSON Schema registered in the Glue Schema Registry (``DataFormat=JSON``).

The same answer :mod:`dzlineage_dagster.core.avro` gives for Avro: the row's columns in
declaration order, and whether the schema is a Debezium envelope (Debezium's JSON converter
registers ``before``/``after`` objects, each possibly ``null``). Only what a row schema needs is
read: the root object's ``properties`` (or those of ``after``), their ``type`` (a ``null`` in a
type list or a ``oneOf``/``anyOf`` branch makes a column nullable), ``format`` and
``description``; local ``$ref``s (``#/definitions/...``, ``#/$defs/...``) are followed.
"""

from __future__ import annotations

import json
from typing import Any

from dzlineage_dagster.core.avro import Column, RowSchema

ENVELOPE_ROW_FIELDS = ("before", "after")


class InvalidJsonSchema(ValueError):
    """The schema is not JSON, or not an object schema whose properties are columns."""


def parse_json_row_schema(schema_definition: str) -> RowSchema:
    try:
        document = json.loads(schema_definition)
    except json.JSONDecodeError as error:
        raise InvalidJsonSchema(f"not JSON: {error}") from None
    if not isinstance(document, dict):
        raise InvalidJsonSchema("the schema is not a JSON object")
    root = _resolve(document, document)
    properties = _properties(root, document, "the schema")
    after = properties.get("after")
    if after is not None and all(name in properties for name in ENVELOPE_ROW_FIELDS):
        row = _object_branch(after, document)
        if row is not None:
            return RowSchema(_columns(row, document, "after"), debezium_envelope=True)
    return RowSchema(_columns(root, document, "the schema"), debezium_envelope=False)


def _columns(schema: dict[str, Any], document: dict[str, Any], where: str) -> list[Column]:
    listed = schema.get("required")
    required = (
        {name for name in listed if isinstance(name, str)} if isinstance(listed, list) else set()
    )
    columns = []
    for name, body in _properties(schema, document, where).items():
        resolved = _resolve(body, document) if isinstance(body, dict) else {}
        types = _types(resolved, document)
        non_null = [t for t in types if t != "null"]
        type_name = "|".join(non_null) or "any"
        if isinstance(resolved.get("format"), str) and len(non_null) == 1:
            type_name = f"{type_name}({resolved['format']})"
        if non_null == ["array"] and isinstance(resolved.get("items"), dict):
            item_types = [t for t in _types(_resolve(resolved["items"], document), document)]
            type_name = f"array<{'|'.join(t for t in item_types if t != 'null') or 'any'}>"
        columns.append(
            Column(
                name=name,
                type=type_name,
                nullable="null" in types or name not in required,
                description=_text(resolved.get("description")),
            )
        )
    return columns


def _properties(schema: dict[str, Any], document: dict[str, Any], where: str) -> dict[str, Any]:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        raise InvalidJsonSchema(f"{where} has no `properties` object: no columns to catalog")
    return properties


def _object_branch(schema: Any, document: dict[str, Any]) -> dict[str, Any] | None:
    """The object schema in ``schema`` or among its oneOf/anyOf branches."""
    if not isinstance(schema, dict):
        return None
    resolved = _resolve(schema, document)
    if isinstance(resolved.get("properties"), dict):
        return resolved
    for key in ("oneOf", "anyOf"):
        for branch in _branches(resolved, key):
            found = _object_branch(branch, document)
            if found is not None:
                return found
    return None


def _types(schema: dict[str, Any], document: dict[str, Any]) -> list[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    types: list[str] = []
    for key in ("oneOf", "anyOf"):
        for branch in _branches(schema, key):
            if isinstance(branch, dict):
                types += [t for t in _types(_resolve(branch, document), document) if t not in types]
    if not types and isinstance(schema.get("properties"), dict):
        return ["object"]
    return types


def _branches(schema: dict[str, Any], key: str) -> list[Any]:
    branches = schema.get(key)
    return branches if isinstance(branches, list) else []


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _resolve(schema: dict[str, Any], document: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    reference = schema.get("$ref")
    if not isinstance(reference, str):
        return schema
    if not reference.startswith("#/") or depth > 32:
        raise InvalidJsonSchema(f"$ref {reference!r} is not a local reference this reader follows")
    target: Any = document
    for part in reference[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, dict) or part not in target:
            raise InvalidJsonSchema(f"$ref {reference!r} points at nothing")
        target = target[part]
    if not isinstance(target, dict):
        raise InvalidJsonSchema(f"$ref {reference!r} is not a schema object")
    return _resolve(target, document, depth + 1)
