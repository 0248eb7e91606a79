"""What the Avro specification forbids is found wherever it is nested, and the error says where."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dzlineage_dagster.core.schemas.avro import InvalidAvroSchema, parse_columns

BAD_RECORD = {"type": "record", "name": "Inner", "fields": [{"name": "bad-name", "type": "int"}]}


def outer(field_type) -> str:
    return json.dumps(
        {"type": "record", "name": "Outer", "fields": [{"name": "a", "type": field_type}]}
    )


@pytest.mark.parametrize(
    ("definition", "path"),
    [
        (outer(["null", BAD_RECORD]), "schema.a[1].bad-name"),
        (outer({"type": "array", "items": BAD_RECORD}), "schema.a.items.bad-name"),
        (outer({"type": "map", "values": BAD_RECORD}), "schema.a.values.bad-name"),
        (outer({"type": "array", "items": ["null", "int", "int"]}), "schema.a.items"),
        (
            outer({"type": "map", "values": {"type": "fixed", "name": "F", "size": -1}}),
            "schema.a.values",
        ),
        (json.dumps({**BAD_RECORD, "type": "error"}), "schema.bad-name"),
    ],
)
def test_a_violation_nested_anywhere_is_found_and_located(definition, path):
    with pytest.raises(InvalidAvroSchema, match=f"^{re.escape(path)}: "):
        parse_columns(definition)


def test_names_nested_in_a_namespace_compare_as_full_names():
    # Inner's namespace is inherited from Outer: "n.F" declared inside is the same "n.F".
    definition = json.dumps(
        {
            "type": "record",
            "name": "Outer",
            "namespace": "n",
            "fields": [
                {
                    "name": "a",
                    "type": {
                        "type": "array",
                        "items": ["null", {"type": "fixed", "name": "F", "size": 1}, "n.F"],
                    },
                }
            ],
        }
    )
    with pytest.raises(
        InvalidAvroSchema, match=r"^schema\.a\.items: union has more than one 'n\.F'"
    ):
        parse_columns(definition)


# --- nested records, enums and named references read as Glue shows an Iceberg table ----------

GEO = {
    "type": "record",
    "name": "Geo",
    "fields": [
        {"name": "lat", "type": "double", "doc": "degrees north"},
        {"name": "lon", "type": "double"},
    ],
}
KIND = {"type": "enum", "name": "Kind", "symbols": ["HOME", "WORK"]}
ADDRESS = {
    "type": "record",
    "name": "Address",
    "namespace": "shop",
    "fields": [
        {"name": "street", "type": "string"},
        {"name": "geo", "type": ["null", GEO], "default": None},
        {"name": "kind", "type": KIND},
        {"name": "since", "type": {"type": "int", "logicalType": "date"}},
    ],
}
ADDRESS_TYPE = "struct<street:string,geo:struct<lat:double,lon:double>,kind:enum,since:date>"


def record(*fields: dict) -> str:
    return json.dumps(
        {"type": "record", "name": "Row", "namespace": "shop", "fields": list(fields)}
    )


def test_a_nested_record_is_one_struct_column_with_its_fields():
    [address] = parse_columns(record({"name": "address", "type": ["null", ADDRESS]}))
    assert (address.name, address.type, address.nullable) == ("address", ADDRESS_TYPE, True)
    assert [(f.name, f.type, f.nullable) for f in address.fields] == [
        ("street", "string", False),
        ("geo", "struct<lat:double,lon:double>", True),
        ("kind", "enum", False),
        ("since", "date", False),
    ]
    geo = address.fields[1]
    assert [(f.name, f.description) for f in geo.fields] == [
        ("lat", "degrees north"),
        ("lon", None),
    ]
    assert address.fields[2].symbols == ("HOME", "WORK")


def test_a_named_record_used_again_by_name_reads_like_its_definition():
    columns = parse_columns(
        record(
            {"name": "billing", "type": ADDRESS},
            {"name": "shipping", "type": ["null", "shop.Address"]},
            {"name": "others", "type": {"type": "array", "items": "Address"}},
            {"name": "by_label", "type": {"type": "map", "values": ["null", "Address"]}},
        )
    )
    assert [c.type for c in columns] == [
        ADDRESS_TYPE,
        ADDRESS_TYPE,
        f"array<{ADDRESS_TYPE}>",
        f"map<string,{ADDRESS_TYPE}>",
    ]
    # Arrays and maps of records carry the element's fields, as the form's notes need them.
    assert all(c.fields == columns[0].fields for c in columns)


def test_enum_symbols_are_kept_also_inside_arrays_and_described():
    columns = parse_columns(
        record(
            {"name": "address", "type": ADDRESS},
            {"name": "kind", "type": "Kind", "doc": "where"},
            {"name": "kinds", "type": {"type": "array", "items": "shop.Kind"}},
        )
    )
    assert [(c.type, c.symbols) for c in columns[1:]] == [
        ("enum", ("HOME", "WORK")),
        ("array<enum>", ("HOME", "WORK")),
    ]
    assert columns[1].full_description() == "where\nSymbols: HOME, WORK"
    assert columns[0].full_description() == (
        "address.geo.lat: degrees north\naddress.kind symbols: HOME, WORK"
    )


def test_a_recursive_record_reads_as_its_name_where_it_recurs():
    node = {
        "type": "record",
        "name": "Node",
        "fields": [
            {"name": "value", "type": "int"},
            {"name": "next", "type": ["null", "Node"], "default": None},
        ],
    }
    [head] = parse_columns(record({"name": "head", "type": node}))
    assert head.type == "struct<value:int,next:shop.Node>"
    # The row itself recurring (a tree of rows) reads the same way.
    tree = parse_columns(
        record({"name": "children", "type": {"type": "array", "items": "shop.Row"}})
    )
    assert tree[0].type == "array<shop.Row>"


def test_an_envelopes_row_keeps_its_nested_columns():
    row = {
        "type": "record",
        "name": "Value",
        "namespace": "cdc.public.people",
        "fields": [{"name": "id", "type": "int"}, {"name": "home", "type": ADDRESS}],
    }
    envelope = {
        "type": "record",
        "name": "Envelope",
        "namespace": "cdc.public.people",
        "fields": [
            {"name": "before", "type": ["null", row], "default": None},
            {"name": "after", "type": ["null", "Value"], "default": None},
            {"name": "source", "type": "string"},
            {"name": "op", "type": "string"},
        ],
    }
    columns = parse_columns(json.dumps(envelope))
    assert [(c.name, c.type) for c in columns] == [("id", "int"), ("home", ADDRESS_TYPE)]


_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)


@st.composite
def nested_records(draw, depth: int = 0):
    """A record of distinct field names, some of them records again, with its expected type."""
    names = draw(st.lists(_names, min_size=1, max_size=4, unique=True))
    fields, types = [], []
    for name in names:
        if depth < 6 and draw(st.booleans()):
            inner, inner_type = draw(nested_records(depth + 1))
            wrap = draw(st.sampled_from(["plain", "nullable", "array", "map"]))
            field_type, readable = {
                "plain": (inner, inner_type),
                "nullable": (["null", inner], inner_type),
                "array": ({"type": "array", "items": inner}, f"array<{inner_type}>"),
                "map": ({"type": "map", "values": inner}, f"map<string,{inner_type}>"),
            }[wrap]
        else:
            field_type = readable = draw(st.sampled_from(["int", "long", "string", "boolean"]))
        fields.append({"name": name, "type": field_type})
        types.append(f"{name}:{readable}")
    # Unique record names: uuid-like counters keep named types from clashing.
    record_name = f"R{draw(st.uuids()).hex}"
    return {"type": "record", "name": record_name, "fields": fields}, f"struct<{','.join(types)}>"


@settings(max_examples=60)
@given(nested_records())
def test_any_nesting_reads_as_the_struct_glue_would_show(generated):
    schema, expected = generated
    columns = parse_columns(json.dumps({"type": "record", "name": "Top", "fields": [
        {"name": "nested", "type": schema}
    ]}))  # fmt: skip
    assert columns[0].type == expected


def test_a_debezium_enum_or_set_column_keeps_its_allowed_values_as_symbols():
    def debezium(connect_name: str, **extra) -> dict:
        return {"type": "string", "connect.version": 1, "connect.name": connect_name, **extra}

    columns = parse_columns(
        record(
            {"name": "status", "type": debezium("io.debezium.data.Enum", **{
                "connect.parameters": {"allowed": "new,paid,shipped"}})},
            {"name": "flags", "type": ["null", debezium("io.debezium.data.EnumSet", **{
                "connect.parameters": {"allowed": "gift,fragile"}})]},
            {"name": "bare", "type": debezium("io.debezium.data.Enum")},
            {"name": "json", "type": debezium("io.debezium.data.Json", **{
                "connect.parameters": {"allowed": "not,an,enum"}})},
        )
    )  # fmt: skip
    assert [(c.type, c.symbols) for c in columns] == [
        ("enum", ("new", "paid", "shipped")),
        ("set", ("gift", "fragile")),
        ("enum", ()),
        ("json", ()),
    ]
