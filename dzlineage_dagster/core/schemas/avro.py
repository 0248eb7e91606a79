"""The columns an Avro schema from the Glue Schema Registry describes.

Parsing is fastavro's ``parse_schema`` (unknown types, missing attributes, bad defaults,
redefined names, enum symbols), plus the rules of the Avro specification it lets through:
names must match ``[A-Za-z_][A-Za-z0-9_]*`` (namespaces: such names joined by dots), a record
has a list of fields with unique names, a fixed's size is a non-negative integer, and a union
holds no union directly and no two branches of the same type (named types may repeat under
different names). The Glue Schema Registry parses Avro with the same rules, so a schema it
stores passes here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from fastavro.schema import SchemaParseException, UnknownType, parse_schema

PRIMITIVE_TYPES = frozenset(
    {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
)
NAMED_TYPES = frozenset({"record", "error", "enum", "fixed"})
#: The specification's logical types; others are ignored for the underlying type, as it asks.
LOGICAL_TYPES = frozenset(
    {
        "decimal",
        "big-decimal",
        "uuid",
        "date",
        "time-millis",
        "time-micros",
        "timestamp-millis",
        "timestamp-micros",
        "timestamp-nanos",
        "local-timestamp-millis",
        "local-timestamp-micros",
        "local-timestamp-nanos",
        "duration",
    }
)

#: Debezium's semantic types (``connect.name``), as the readable type they stand for.
#: https://debezium.io/documentation/reference/stable/connectors/postgresql.html#postgresql-data-types
DEBEZIUM_SEMANTIC_TYPES = {
    "io.debezium.time.Date": "date",
    "io.debezium.time.Time": "time-millis",
    "io.debezium.time.MicroTime": "time-micros",
    "io.debezium.time.NanoTime": "time-nanos",
    "io.debezium.time.Timestamp": "timestamp-millis",
    "io.debezium.time.MicroTimestamp": "timestamp-micros",
    "io.debezium.time.NanoTimestamp": "timestamp-nanos",
    "io.debezium.time.ZonedTime": "time-with-time-zone",
    "io.debezium.time.ZonedTimestamp": "timestamp-with-time-zone",
    "io.debezium.time.Year": "year",
    "io.debezium.time.MicroDuration": "interval-micros",
    "io.debezium.time.Interval": "interval",
    "io.debezium.data.Json": "json",
    "io.debezium.data.Xml": "xml",
    "io.debezium.data.Uuid": "uuid",
    "io.debezium.data.Bits": "bits",
    "io.debezium.data.Enum": "enum",
    "io.debezium.data.EnumSet": "set",
    "io.debezium.data.VariableScaleDecimal": "decimal",
    "io.debezium.data.geometry.Geometry": "geometry",
    "io.debezium.data.geometry.Geography": "geography",
    "io.debezium.data.geometry.Point": "point",
    "io.debezium.data.Ltree": "ltree",
}

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ENVELOPE_FIELDS = frozenset({"before", "after", "op", "source"})
_PARSE_FAILURES = (
    SchemaParseException,
    UnknownType,
    ValueError,
    TypeError,
    KeyError,
    AttributeError,
    IndexError,
    RecursionError,
)


class InvalidAvroSchema(ValueError):
    """A schema definition that is not valid Avro; the message says why and where."""


@dataclass(frozen=True)
class Column:
    """One field of a record: ``type`` is readable (``long``, ``decimal(10,2)``,
    ``timestamp-millis``, ``array<string>``, ``struct<street:string,geo:struct<lat:double>>``,
    ...), ``description`` the field's doc.

    A nested record (JSON object, Protobuf message) stays one column, as the Iceberg sink keeps
    it (an Iceberg struct column, shown by Glue as ``struct<name:type,...>``): its type spells the
    struct out and ``fields`` holds its fields, also for a struct inside an array or a map.
    ``symbols`` are an enum's symbols (of its elements or values, inside an array or a map).
    ``aliases`` are the field's Avro ``aliases``: the names it had before (the specification's
    schema resolution reads a writer's field of an alias's name into it). See docs/columns.md.
    """

    name: str
    type: str
    nullable: bool
    description: str | None
    fields: tuple[Column, ...] = ()
    symbols: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()

    def full_description(self) -> str | None:
        """The description, then one line per nested field (by dotted path) that has a
        description or enum symbols, for views that show one flat text per column (DataZone's
        relational table form, Dagster's column schema)."""
        lines = [self.description] if self.description else []
        if self.symbols:
            lines.append(f"Symbols: {', '.join(self.symbols)}")
        lines += _nested_notes(self.fields, self.name)
        return "\n".join(lines) or None


def _nested_notes(fields: tuple[Column, ...], parent: str) -> list[str]:
    notes = []
    for field in fields:
        path = f"{parent}.{field.name}"
        if field.description:
            notes.append(f"{path}: {field.description}")
        if field.symbols:
            notes.append(f"{path} symbols: {', '.join(field.symbols)}")
        notes += _nested_notes(field.fields, path)
    return notes


def struct_type(fields: Iterable[Column]) -> str:
    """Glue's spelling of a struct column's type, as Iceberg's GlueCatalog writes it."""
    return "struct<" + ",".join(f"{field.name}:{field.type}" for field in fields) + ">"


@dataclass(frozen=True)
class RowSchema:
    """What one parse of a schema tells: its row columns, and whether it is an envelope."""

    columns: list[Column]
    debezium_envelope: bool
    #: Which part of the schema the columns are from where the schema itself does not say
    #: (a Protobuf file's message, see :mod:`dzlineage_dagster.core.schemas.protobuf`).
    origin: str | None = None


def parse_row_schema(schema_definition: str) -> RowSchema:
    """The columns of ``schema_definition``, in field order, from a single parse.

    For a Debezium change-event envelope (see :func:`is_debezium_envelope`) these are the
    fields of the row record in ``after``; for any other record, its own fields; a schema that
    is not a record (``"string"``, an array, ...) has none.
    """
    schema, named = _parse(schema_definition)
    row = _row_record(schema, named)
    record = row or schema
    if not _is_record(record):
        return RowSchema([], debezium_envelope=False)
    try:
        columns = _record_columns(record, named, frozenset({record["name"]}))
    except RecursionError:
        raise InvalidAvroSchema("schema definition is nested too deeply to read") from None
    return RowSchema(columns, debezium_envelope=row is not None)


def parse_columns(schema_definition: str) -> list[Column]:
    """The row columns of ``schema_definition`` (see :func:`parse_row_schema`)."""
    return parse_row_schema(schema_definition).columns


def is_debezium_envelope(schema_definition: str) -> bool:
    """Whether the schema is a Debezium change-event envelope.

    That is a record with the fields ``before``, ``after``, ``op`` and ``source``, where
    ``before`` and ``after`` are both nullable unions of the same row record. Raises
    InvalidAvroSchema for a definition that is not valid Avro.
    """
    return parse_row_schema(schema_definition).debezium_envelope


def _parse(schema_definition: str) -> tuple[Any, dict[str, Any]]:
    try:
        document = json.loads(schema_definition)
    except json.JSONDecodeError as error:
        raise InvalidAvroSchema(
            f"schema definition is not JSON: {error.msg} at line {error.lineno} column "
            f"{error.colno} (character {error.pos})"
        ) from error
    except RecursionError as error:
        raise InvalidAvroSchema("schema definition is nested too deeply to parse") from error
    named: dict[str, Any] = {}
    try:
        schema = parse_schema(document, named_schemas=named)
    except _PARSE_FAILURES as error:
        raise InvalidAvroSchema(f"not a valid Avro schema: {_reason(error)}") from error
    _check_specification(document, "schema")
    return schema, named


def _reason(error: Exception) -> str:
    if isinstance(error, UnknownType):
        return f"unknown type {error.name!r}"
    if isinstance(error, KeyError):
        return f"missing attribute {error.args[0]!r}"
    return f"{error} ({type(error).__name__})"


def _check_specification(document: Any, path: str, namespace: str = "") -> None:
    """Raise InvalidAvroSchema for what the Avro specification forbids and fastavro allows.

    Walks the document as written (fastavro fills in what is missing, such as ``fields``),
    tracking the enclosing namespace so that names compare as full names.
    """
    if isinstance(document, list):
        _check_union(document, path, namespace)
        for index, branch in enumerate(document):
            _check_specification(branch, f"{path}[{index}]", namespace)
        return
    if not isinstance(document, dict):
        return
    kind = document["type"]
    if not isinstance(kind, str):
        _check_specification(kind, f"{path}.type", namespace)
        return
    if kind in NAMED_TYPES:
        namespace = _full_name(document, namespace, path).rpartition(".")[0]
    if kind == "fixed" and not (type(document.get("size")) is int and document["size"] >= 0):
        raise InvalidAvroSchema(f"{path}: fixed size must be a non-negative integer")
    if kind in ("record", "error"):
        _check_fields(document.get("fields"), path, namespace)
    elif kind == "array":
        _check_specification(document["items"], f"{path}.items", namespace)
    elif kind == "map":
        _check_specification(document["values"], f"{path}.values", namespace)


def _check_fields(fields: Any, path: str, namespace: str) -> None:
    if not isinstance(fields, list):
        raise InvalidAvroSchema(f"{path}: a record needs a list of fields")
    seen: set[str] = set()
    for field in fields:
        name = field["name"]
        field_path = f"{path}.{name}"
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise InvalidAvroSchema(f"{field_path}: field name must match {_NAME.pattern}")
        if name in seen:
            raise InvalidAvroSchema(f"{field_path}: duplicate field name")
        seen.add(name)
        _check_specification(field["type"], field_path, namespace)


def _full_name(document: dict[str, Any], namespace: str, path: str) -> str:
    """A named type's full name (checked), by the specification's namespace rules."""
    name, own_namespace = document.get("name"), document.get("namespace")
    if isinstance(own_namespace, str):
        namespace = own_namespace
    if not isinstance(name, str):
        raise InvalidAvroSchema(f"{path}: a named type needs a string name, not {name!r}")
    full_name = name if "." in name or not namespace else f"{namespace}.{name}"
    if not all(_NAME.fullmatch(part) for part in full_name.split(".")):
        raise InvalidAvroSchema(
            f"{path}: name {full_name!r} must be names matching {_NAME.pattern} joined by dots"
        )
    return full_name


def _check_union(branches: list[Any], path: str, namespace: str) -> None:
    seen: set[str] = set()
    for branch in branches:
        if isinstance(branch, list):
            raise InvalidAvroSchema(f"{path}: a union can't contain a union directly")
        key = _union_branch_key(branch, namespace, path)
        if key in seen:
            raise InvalidAvroSchema(f"{path}: union has more than one {key!r} branch")
        seen.add(key)


def _union_branch_key(branch: Any, namespace: str, path: str) -> str:
    """What a union branch must not share with another: its type, or a named type's name."""
    if isinstance(branch, str):
        if branch in PRIMITIVE_TYPES or "." in branch or not namespace:
            return branch
        return f"{namespace}.{branch}"
    kind = branch["type"]
    return _full_name(branch, namespace, path) if kind in NAMED_TYPES else str(kind)


def _resolve(schema: Any, named: dict[str, Any]) -> Any:
    return named[schema] if isinstance(schema, str) and schema in named else schema


def _is_record(schema: Any) -> bool:
    return isinstance(schema, dict) and schema["type"] in ("record", "error")


def _row_record(schema: Any, named: dict[str, Any]) -> dict[str, Any] | None:
    """The row record of a Debezium envelope, or None when ``schema`` is not one."""
    if not _is_record(schema):
        return None
    types = {field["name"]: field["type"] for field in schema["fields"]}
    if not types.keys() >= _ENVELOPE_FIELDS:
        return None
    before, after = (_nullable_record(types[name], named) for name in ("before", "after"))
    if before is None or after is None or before["name"] != after["name"]:
        return None
    return after


def _nullable_record(schema: Any, named: dict[str, Any]) -> dict[str, Any] | None:
    """The record R of a ``[null, R]`` union, or None for any other schema."""
    if not isinstance(schema, list) or len(schema) != 2:
        return None
    others = [_resolve(branch, named) for branch in schema if not _is_null(branch)]
    if len(others) != 1 or not _is_record(others[0]):
        return None
    return others[0]


def _is_null(schema: Any) -> bool:
    return schema == "null" or (isinstance(schema, dict) and schema["type"] == "null")


def _is_nullable(schema: Any, named: dict[str, Any]) -> bool:
    schema = _resolve(schema, named)
    return any(map(_is_null, schema)) if isinstance(schema, list) else _is_null(schema)


def _record_columns(
    record: dict[str, Any], named: dict[str, Any], enclosing: frozenset[str]
) -> list[Column]:
    """The fields of ``record`` as columns; ``enclosing`` holds the full names of the records
    being expanded, so that a recursive reference reads as the record's name, not forever."""
    columns = []
    for field in record["fields"]:
        readable, fields, symbols = _shape(field["type"], named, enclosing)
        columns.append(
            Column(
                name=field["name"],
                type=readable,
                nullable=_is_nullable(field["type"], named),
                description=field.get("doc") if isinstance(field.get("doc"), str) else None,
                fields=fields,
                symbols=symbols,
                aliases=_field_aliases(field),
            )
        )
    return columns


def _field_aliases(field: dict[str, Any]) -> tuple[str, ...]:
    aliases = field.get("aliases")
    if not isinstance(aliases, list):
        return ()
    return tuple(alias for alias in aliases if isinstance(alias, str))


def _shape(
    schema: Any, named: dict[str, Any], enclosing: frozenset[str]
) -> tuple[str, tuple[Column, ...], tuple[str, ...]]:
    """``schema`` as a short type name, with its struct fields and enum symbols.

    A union with null reads as its other branch; an array or a map carries its element's
    fields and symbols.
    """
    schema = _resolve(schema, named)
    if isinstance(schema, list):
        others = [branch for branch in schema if not _is_null(branch)]
        if len(others) == 1:
            return _shape(others[0], named, enclosing)
        branches = ",".join(_shape(b, named, enclosing)[0] for b in others or schema)
        return f"union<{branches}>", (), ()
    if isinstance(schema, str):
        return schema, (), ()
    semantic = DEBEZIUM_SEMANTIC_TYPES.get(schema.get("connect.name"))
    if semantic:
        return semantic, (), _debezium_allowed_values(schema)
    kind, logical = schema["type"], schema.get("logicalType")
    if logical == "decimal" and type(schema.get("precision")) is int:
        return f"decimal({schema['precision']},{schema.get('scale', 0)})", (), ()
    if logical in LOGICAL_TYPES and logical != "decimal":
        return logical, (), ()
    if kind in ("array", "map"):
        inner, fields, symbols = _shape(
            schema["items" if kind == "array" else "values"], named, enclosing
        )
        readable = f"array<{inner}>" if kind == "array" else f"map<string,{inner}>"
        return readable, fields, symbols
    if kind == "fixed":
        return f"fixed({schema['size']})", (), ()
    if kind == "enum":
        return "enum", (), tuple(schema["symbols"])
    if _is_record(schema):
        name = schema["name"]
        if name in enclosing:
            return name, (), ()
        fields = tuple(_record_columns(schema, named, enclosing | {name}))
        return struct_type(fields), fields, ()
    return kind, (), ()


def _debezium_allowed_values(schema: dict[str, Any]) -> tuple[str, ...]:
    """A Debezium ``Enum``/``EnumSet`` column's values: its ``allowed`` schema parameter, the
    values joined by commas ("The set of allowed values is maintained in the allowed schema
    parameter", Debezium's PostgreSQL and MySQL connector data types)."""
    if schema.get("connect.name") not in ("io.debezium.data.Enum", "io.debezium.data.EnumSet"):
        return ()
    parameters = schema.get("connect.parameters")
    allowed = parameters.get("allowed") if isinstance(parameters, dict) else None
    return tuple(allowed.split(",")) if isinstance(allowed, str) and allowed else ()
