"""Columns of a JSON Schema registered in the Glue Schema Registry (``DataFormat=JSON``).

The same answer :mod:`dzlineage_dagster.core.schemas.avro` gives for Avro: the row's columns in
declaration order, and whether the schema is a Debezium envelope (Debezium's JSON converter
registers ``before``/``after`` objects, each possibly ``null``). Only what a row schema needs is
read: the root object's ``properties`` (or those of ``after``), their ``type`` (a ``null`` in a
type list or a ``oneOf``/``anyOf`` branch makes a column nullable), ``format``, ``enum`` values
(kept as the column's symbols) and ``description``. A nested object with ``properties`` is one
column of type ``struct<...>`` with its fields, as for Avro records (docs/columns.md).

``$ref``: local JSON pointers into the document (``#/definitions/...``, ``#/$defs/...``, any
``#/...``) are followed, also into recursive definitions (where the type recurs it reads as the
definition's name). Declined, with the reason as the column's description and type ``any``: a
remote reference (``other.json#/...``, ``https://...``) or one by ``$id``/anchor, since GSR
stores one document per schema version and the product does not fetch schemas from elsewhere.
A root or ``after`` that is such a reference is refused with the reference named.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from dzlineage_dagster.core.schemas.avro import Column, RowSchema, struct_type

ENVELOPE_ROW_FIELDS = ("before", "after")


class InvalidJsonSchema(ValueError):
    """The schema is not JSON, or not an object schema whose properties are columns."""


class _DeclinedReference(InvalidJsonSchema):
    """A ``$ref`` this reader does not follow (a column's is declined, the root's refused)."""


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
    return _object_columns(schema, document, where, frozenset())


def _object_columns(
    schema: dict[str, Any], document: dict[str, Any], where: str, expanding: frozenset[str]
) -> list[Column]:
    """The columns of an object schema; ``expanding`` holds the references being expanded, so
    that a recursive definition reads as its name where it recurs."""
    listed = schema.get("required")
    required = (
        {name for name in listed if isinstance(name, str)} if isinstance(listed, list) else set()
    )
    return [
        _column(name, body, document, name in required, expanding)
        for name, body in _properties(schema, document, where).items()
    ]


def _column(
    name: str, body: Any, document: dict[str, Any], required: bool, expanding: frozenset[str]
) -> Column:
    try:
        shape = _shape(body, document, expanding)
    except _DeclinedReference as declined:
        return Column(name, "any", True, f"not read: {declined}")
    return Column(
        name=name,
        type=shape.type,
        nullable=shape.nullable or not required,
        description=shape.description,
        fields=shape.fields,
        symbols=shape.symbols,
    )


@dataclass(frozen=True)
class _Shape:
    type: str
    nullable: bool = False
    description: str | None = None
    fields: tuple[Column, ...] = ()
    symbols: tuple[str, ...] = ()


def _shape(body: Any, document: dict[str, Any], expanding: frozenset[str]) -> _Shape:
    if not isinstance(body, dict):
        return _Shape("any", nullable=True)
    reference = body.get("$ref")
    if isinstance(reference, str) and reference in expanding:
        return _Shape(reference.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~"))
    if isinstance(reference, str):
        expanding = expanding | {reference}
    resolved = _resolve(body, document)
    description = _text(resolved.get("description"))
    types = _types(resolved, document)
    non_null = [t for t in types if t != "null"]
    nullable = "null" in types
    branches = [
        branch
        for key in ("oneOf", "anyOf")
        for branch in _branches(resolved, key)
        if not (
            isinstance(branch, dict) and _types(_resolve(branch, document), document) == ["null"]
        )
    ]
    if "type" not in resolved and len(branches) == 1:
        # A nullable reference written as a oneOf of null and the referenced schema.
        inner = _shape(branches[0], document, expanding)
        return _Shape(
            inner.type, nullable, description or inner.description, inner.fields, inner.symbols
        )
    symbols = _symbols(resolved)
    if non_null == ["object"] and isinstance(resolved.get("properties"), dict):
        fields = tuple(_object_columns(resolved, document, "an object", expanding))
        return _Shape(struct_type(fields), nullable, description, fields)
    if non_null == ["array"] and isinstance(resolved.get("items"), dict):
        items = _shape(resolved["items"], document, expanding)
        return _Shape(f"array<{items.type}>", nullable, description, items.fields, items.symbols)
    type_name = "|".join(non_null) or "any"
    if isinstance(resolved.get("format"), str) and len(non_null) == 1:
        type_name = f"{type_name}({resolved['format']})"
    return _Shape(type_name, nullable or not non_null, description, symbols=symbols)


def _symbols(schema: dict[str, Any]) -> tuple[str, ...]:
    """An ``enum``'s values as text (strings as they are, others as JSON); null is left out:
    it makes the column nullable instead."""
    values = schema.get("enum")
    if not isinstance(values, list):
        return ()
    return tuple(
        value if isinstance(value, str) else json.dumps(value)
        for value in values
        if value is not None
    )


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
    if not types and isinstance(schema.get("enum"), list):
        return list(dict.fromkeys(json_type(value) for value in schema["enum"]))
    return types


def json_type(value: Any) -> str:
    """The JSON Schema type name of a JSON value (``integer`` for whole numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}[type(value)]


def _branches(schema: dict[str, Any], key: str) -> list[Any]:
    branches = schema.get(key)
    return branches if isinstance(branches, list) else []


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _resolve(schema: dict[str, Any], document: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    reference = schema.get("$ref")
    if not isinstance(reference, str):
        return schema
    if not reference.startswith("#/"):
        raise _DeclinedReference(
            f"$ref {reference!r} is not a local reference (#/...) into this schema; remote and "
            "$id/anchor references are not followed"
        )
    if depth > 32:
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
