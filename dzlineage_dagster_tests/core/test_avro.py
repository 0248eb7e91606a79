from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dzlineage_dagster.core.schemas.avro import (
    Column,
    InvalidAvroSchema,
    is_debezium_envelope,
    parse_columns,
)


def decimal(precision: int, scale: int) -> dict[str, Any]:
    """A decimal as Debezium's Avro converter writes it."""
    return {
        "type": "bytes",
        "scale": scale,
        "precision": precision,
        "connect.version": 1,
        "connect.parameters": {"scale": str(scale), "connect.decimal.precision": str(precision)},
        "connect.name": "org.apache.kafka.connect.data.Decimal",
        "logicalType": "decimal",
    }


def semantic(base: str, connect_name: str) -> dict[str, Any]:
    return {"type": base, "connect.version": 1, "connect.name": connect_name}


ORDERS_ROW = {
    "type": "record",
    "name": "Value",
    "fields": [
        {"name": "id", "type": "int"},
        {"name": "customer", "type": ["null", "string"], "default": None},
        {"name": "amount", "type": decimal(10, 2)},
        {"name": "created_at", "type": semantic("long", "io.debezium.time.MicroTimestamp")},
        {
            "name": "updated_at",
            "type": ["null", semantic("string", "io.debezium.time.ZonedTimestamp")],
            "default": None,
        },
        {"name": "order_date", "type": semantic("int", "io.debezium.time.Date")},
        {
            "name": "tags",
            "type": ["null", {"type": "array", "items": ["null", "string"]}],
            "default": None,
        },
        {"name": "status", "type": semantic("string", "io.debezium.data.Enum")},
        {"name": "note", "type": ["null", "string"], "default": None, "doc": "free text"},
    ],
    "connect.name": "cdc.public.orders.Value",
}

ORDERS_COLUMNS = [
    Column("id", "int", False, None),
    Column("customer", "string", True, None),
    Column("amount", "decimal(10,2)", False, None),
    Column("created_at", "timestamp-micros", False, None),
    Column("updated_at", "timestamp-with-time-zone", True, None),
    Column("order_date", "date", False, None),
    Column("tags", "array<string>", True, None),
    Column("status", "enum", False, None),
    Column("note", "string", True, "free text"),
]

SOURCE = {
    "type": "record",
    "name": "Source",
    "namespace": "io.debezium.connector.postgresql",
    "fields": [
        {"name": "version", "type": "string"},
        {"name": "connector", "type": "string"},
        {"name": "name", "type": "string"},
        {"name": "ts_ms", "type": "long"},
        {"name": "db", "type": "string"},
        {"name": "schema", "type": "string"},
        {"name": "table", "type": "string"},
    ],
}


def envelope(row: dict[str, Any], namespace: str = "cdc.public.orders") -> dict[str, Any]:
    """A Debezium change-event envelope around ``row``, as the Avro converter writes it."""
    return {
        "type": "record",
        "name": "Envelope",
        "namespace": namespace,
        "fields": [
            {"name": "before", "type": ["null", row], "default": None},
            {"name": "after", "type": ["null", row["name"]], "default": None},
            {"name": "source", "type": SOURCE},
            {"name": "op", "type": "string"},
            {"name": "ts_ms", "type": ["null", "long"], "default": None},
        ],
        "connect.name": f"{namespace}.Envelope",
    }


def test_debezium_envelope_gives_the_row_columns() -> None:
    definition = json.dumps(envelope(ORDERS_ROW))
    assert is_debezium_envelope(definition)
    assert parse_columns(definition) == ORDERS_COLUMNS


def test_plain_record_gives_its_own_fields() -> None:
    definition = json.dumps(ORDERS_ROW)
    assert not is_debezium_envelope(definition)
    assert parse_columns(definition) == ORDERS_COLUMNS


def test_envelope_whose_before_and_after_differ_is_a_plain_record() -> None:
    other_row = {"type": "record", "name": "Other", "fields": [{"name": "x", "type": "int"}]}
    document = envelope(ORDERS_ROW)
    document["fields"][1]["type"] = ["null", other_row]
    definition = json.dumps(document)
    assert not is_debezium_envelope(definition)
    assert [column.name for column in parse_columns(definition)] == [
        "before",
        "after",
        "source",
        "op",
        "ts_ms",
    ]


@pytest.mark.parametrize(
    ("field_type", "readable", "nullable"),
    [
        ("long", "long", False),
        ({"type": "string"}, "string", False),
        ({"type": "int", "logicalType": "date"}, "date", False),
        ({"type": "long", "logicalType": "timestamp-millis"}, "timestamp-millis", False),
        ({"type": "string", "logicalType": "uuid"}, "uuid", False),
        ({"type": "long", "logicalType": "not-a-logical-type"}, "long", False),
        ({"type": "bytes", "logicalType": "decimal"}, "bytes", False),  # no precision: ignored
        ({"type": "bytes", "logicalType": "decimal", "precision": 5}, "decimal(5,0)", False),
        (semantic("long", "io.debezium.time.Timestamp"), "timestamp-millis", False),
        (semantic("string", "io.debezium.data.Json"), "json", False),
        (semantic("string", "some.unknown.Type"), "string", False),
        ({"type": "map", "values": "long"}, "map<string,long>", False),
        ({"type": "array", "items": {"type": "array", "items": "int"}}, "array<array<int>>", False),
        ({"type": "enum", "name": "E", "symbols": ["A", "B"]}, "enum", False),
        ({"type": "fixed", "name": "F", "size": 16}, "fixed(16)", False),
        ({"type": "record", "name": "N", "fields": []}, "struct<>", False),
        (["null", "int", "string"], "union<int,string>", True),
        (["int", "string"], "union<int,string>", False),
        (["string", "null"], "string", True),
        (["null"], "union<null>", True),
        ("null", "null", True),
    ],
)
def test_readable_types(field_type: Any, readable: str, nullable: bool) -> None:
    definition = json.dumps(
        {"type": "record", "name": "R", "fields": [{"name": "f", "type": field_type}]}
    )
    [column] = parse_columns(definition)
    assert (column.name, column.type, column.nullable, column.description) == (
        "f",
        readable,
        nullable,
        None,
    )


def test_named_type_references_read_as_their_definition() -> None:
    definition = json.dumps(
        {
            "type": "record",
            "name": "R",
            "namespace": "n",
            "fields": [
                {"name": "a", "type": {"type": "fixed", "name": "Hash", "size": 32}},
                {"name": "b", "type": ["null", "Hash"]},
                {"name": "c", "type": "n.Hash"},
            ],
        }
    )
    assert [(c.type, c.nullable) for c in parse_columns(definition)] == [
        ("fixed(32)", False),
        ("fixed(32)", True),
        ("fixed(32)", False),
    ]


def test_a_schema_that_is_not_a_record_has_no_columns() -> None:
    assert parse_columns('"string"') == []
    assert parse_columns('{"type": "array", "items": "long"}') == []


@pytest.mark.parametrize(
    ("definition", "reason"),
    [
        ("", "not JSON: Expecting value at line 1 column 1 \\(character 0\\)"),
        ('{"type": "record",', "not JSON: .* line 1 column 19"),
        ('{"type": "record", "name": "R", "fields": [{"name": "a", "type": "foo"}]}', "'foo'"),
        ('{"type": "record", "fields": []}', "required field missing"),
        ('{"type": "record", "name": "R"}', "a record needs a list of fields"),
        ('{"type": "record", "name": "R", "fields": [{"type": "int"}]}', "missing 'name'"),
        ('{"type": "record", "name": "1R", "fields": []}', "name '1R' must be names"),
        ('{"type": "record", "name": "R", "namespace": "a-b", "fields": []}', "'a-b.R'"),
        (
            '{"type": "record", "name": "R", "fields": [{"name": "a-b", "type": "int"}]}',
            "schema.a-b: field name must match",
        ),
        (
            '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"},'
            ' {"name": "a", "type": "long"}]}',
            "schema.a: duplicate field name",
        ),
        (
            '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int",'
            ' "default": "x"}]}',
            "Default value",
        ),
        ('{"type": "enum", "name": "E", "symbols": ["A", "A"]}', "unique"),
        ('{"type": "fixed", "name": "F"}', "missing attribute 'size'"),
        ('{"type": "fixed", "name": "F", "size": -1}', "non-negative"),
        ('{"type": "array"}', "missing attribute 'items'"),
        ('["int", "int"]', "more than one 'int' branch"),
        ('["int", {"type": "int"}]', "more than one 'int' branch"),
        ('["null", ["int"]]', "can't contain a union directly"),
        (
            '{"type": "record", "name": "R", "namespace": "n", "fields": [{"name": "a", "type":'
            ' ["null", {"type": "fixed", "name": "F", "size": 1}, "n.F"]}]}',
            "more than one 'n.F' branch",
        ),
        ("[" * 100_000, "nested too deeply"),
        ("5", "not a valid Avro schema"),
        ("null", "not a valid Avro schema"),
        ("{}", "missing attribute 'type'"),
    ],
)
def test_invalid_schemas_say_what_is_wrong(definition: str, reason: str) -> None:
    with pytest.raises(InvalidAvroSchema, match=reason):
        parse_columns(definition)
    with pytest.raises(InvalidAvroSchema):
        is_debezium_envelope(definition)


# Generated valid schemas ------------------------------------------------------------------

AVRO_NAME = st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,15}\Z")
PRIMITIVE = st.sampled_from(["boolean", "int", "long", "float", "double", "bytes", "string"])


@st.composite
def field_types(draw: st.DrawFn, names: list[int], depth: int = 0, union: bool = True) -> Any:
    """A valid Avro type; ``names`` numbers the named types so none is defined twice."""
    options = ["primitive", "logical"] + (["nullable"] if union else [])
    if depth < 2:
        options += ["array", "map", "record", "enum", "fixed"]
    option = draw(st.sampled_from(options))
    if option == "primitive":
        return draw(PRIMITIVE)
    if option == "nullable":
        return ["null", draw(field_types(names, depth + 1, union=False))]
    if option == "logical":
        return draw(
            st.sampled_from(
                [
                    {"type": "int", "logicalType": "date"},
                    {"type": "long", "logicalType": "timestamp-micros"},
                    {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 3},
                    semantic("long", "io.debezium.time.Timestamp"),
                ]
            )
        )
    if option in ("array", "map"):
        key = "items" if option == "array" else "values"
        return {"type": option, key: draw(field_types(names, depth + 1))}
    names.append(len(names))
    name = f"Named{len(names)}"
    if option == "enum":
        return {"type": "enum", "name": name, "symbols": ["A", "B"]}
    if option == "fixed":
        return {"type": "fixed", "name": name, "size": draw(st.integers(0, 64))}
    return draw(records(names, name, depth + 1))


@st.composite
def records(draw: st.DrawFn, names: list[int], name: str = "Row", depth: int = 0) -> Any:
    field_names = draw(st.lists(AVRO_NAME, max_size=8, unique=True))
    return {
        "type": "record",
        "name": name,
        "fields": [
            {"name": field_name, "type": draw(field_types(names, depth))}
            for field_name in field_names
        ],
    }


@settings(max_examples=200)
@given(st.builds(list).flatmap(records))
def test_generated_records_keep_field_names_and_order(record: dict[str, Any]) -> None:
    definition = json.dumps(record)
    columns = parse_columns(definition)
    assert [column.name for column in columns] == [field["name"] for field in record["fields"]]
    assert [column.nullable for column in columns] == [
        isinstance(field["type"], list) for field in record["fields"]
    ]


@settings(max_examples=100)
@given(st.builds(list).flatmap(records))
def test_generated_rows_come_out_of_their_envelope(row: dict[str, Any]) -> None:
    definition = json.dumps(envelope(row, namespace="cdc.db.table"))
    assert is_debezium_envelope(definition)
    assert [column.name for column in parse_columns(definition)] == [
        field["name"] for field in row["fields"]
    ]


def is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@settings(max_examples=200)
@given(st.text())
def test_text_that_is_not_json_raises_invalid_avro_schema(text: str) -> None:
    assume(not is_json(text))
    with pytest.raises(InvalidAvroSchema, match="not JSON"):
        parse_columns(text)


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.sampled_from(["record", "enum", "fixed", "array", "map", "int", "null", "string", "R"])
    | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "name",
                    "namespace",
                    "fields",
                    "items",
                    "values",
                    "symbols",
                    "size",
                    "default",
                    "logicalType",
                    "precision",
                    "scale",
                    "doc",
                ]
            )
            | st.text(max_size=5),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=300)
@given(JSON_VALUES)
def test_any_json_gives_columns_or_invalid_avro_schema_and_nothing_else(document: Any) -> None:
    try:
        columns = parse_columns(json.dumps(document))
    except InvalidAvroSchema:
        return
    assert all(isinstance(column, Column) for column in columns)
