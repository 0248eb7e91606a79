"""Protobuf row columns from the registry's .proto text, compiled by protoc."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dzlineage_dagster.core.schemas.protobuf import InvalidProtobufSchema, parse_protobuf_row_schema

CUSTOMER = """
syntax = "proto3";
package shop.v1;

import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";

// A customer of the shop.
message Customer {
  // The key.
  int64 id = 1;
  Address home = 2;
  repeated Address previous = 3;
  map<string, Address> by_label = 4;
  google.protobuf.Timestamp created_at = 5;
  google.protobuf.StringValue nickname = 6;
  oneof contact {
    string email = 7;
    // E.164
    string phone = 8;
  }
  optional uint32 age = 9;
  Status status = 10;
  Customer referrer = 11;
  repeated Status history = 12;

  message Address {
    string street = 1;
    Geo geo = 2;
    message Geo { double lat = 1; double lon = 2; }
  }
  enum Status { STATUS_UNSPECIFIED = 0; ACTIVE = 1; CLOSED = 2; }
}

message Audit { int32 version = 1; }
"""
ADDRESS = "struct<street:string,geo:struct<lat:double,lon:double>>"


def test_a_messages_fields_are_columns_with_nested_messages_oneofs_maps_and_well_known_types():
    parsed = parse_protobuf_row_schema(CUSTOMER)
    assert parsed.origin == "message shop.v1.Customer (the first of 2 top-level messages)"
    assert not parsed.debezium_envelope
    columns = parsed.columns
    assert [(c.name, c.type, c.nullable, c.description) for c in columns] == [
        ("id", "long", False, "The key."),
        ("home", ADDRESS, True, None),
        ("previous", f"array<{ADDRESS}>", False, None),
        ("by_label", f"map<string,{ADDRESS}>", False, None),
        ("created_at", "timestamp", True, None),
        ("nickname", "string", True, None),
        ("email", "string", True, "oneof contact"),
        ("phone", "string", True, "oneof contact: E.164"),
        ("age", "uint32", True, None),
        ("status", "enum", False, None),
        ("referrer", "shop.v1.Customer", True, None),
        ("history", "array<enum>", False, None),
    ]
    home = columns[1]
    assert [f.name for f in home.fields] == ["street", "geo"]
    assert [f.name for f in home.fields[1].fields] == ["lat", "lon"]
    assert columns[9].symbols == columns[11].symbols == ("STATUS_UNSPECIFIED", "ACTIVE", "CLOSED")


def test_proto2_optional_fields_are_nullable_and_required_ones_are_not():
    parsed = parse_protobuf_row_schema(
        'syntax = "proto2";\nmessage Row { required int32 id = 1; optional string note = 2; }'
    )
    assert [(c.name, c.nullable) for c in parsed.columns] == [("id", False), ("note", True)]


def test_a_file_without_messages_has_no_columns():
    parsed = parse_protobuf_row_schema('syntax = "proto3";\nenum Only { ZERO = 0; }')
    assert (parsed.columns, parsed.origin) == ([], "no message")


@pytest.mark.parametrize(
    ("definition", "says"),
    [
        ('syntax = "proto3";\nmessage A { Missing m = 1; }', 'schema.proto:2:13: "Missing" is not defined'),
        ('syntax = "proto3";\nimport "other.proto";\nmessage A { int32 x = 1; }',
         "other.proto: File not found"),
        ("message A {", "schema.proto:1:12: Reached end of input"),
    ],
)  # fmt: skip
def test_what_protoc_refuses_is_refused_with_its_reason_and_place(definition, says):
    with pytest.raises(InvalidProtobufSchema, match=r"^protoc refused the schema: ") as raised:
        parse_protobuf_row_schema(definition)
    assert says in str(raised.value)


_names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda name: name not in {"optional", "repeated", "required", "message", "map", "oneof"}
)


@settings(max_examples=15)
@given(st.lists(_names, min_size=1, max_size=6, unique=True), st.integers(1, 6))
def test_any_nesting_of_messages_reads_as_nested_structs(field_names, depth):
    # M0 holds a `child` M1, which holds a `child` M2 ... down to M<depth>; each also has the
    # drawn string fields.
    scalars = " ".join(f"string {name} = {number};" for number, name in enumerate(field_names, 1))
    scalar_types = ",".join(f"{name}:string" for name in field_names)
    child = f"= {len(field_names) + 1};"
    body, struct = scalars, f"struct<{scalar_types}>"
    for level in reversed(range(1, depth)):
        body = f"{scalars} M{level + 1} child {child} message M{level + 1} {{ {body} }}"
        struct = f"struct<{scalar_types},child:{struct}>"
    definition = f'syntax = "proto3";\nmessage M0 {{ M1 child {child} message M1 {{ {body} }} }}'
    [column] = parse_protobuf_row_schema(definition).columns
    assert (column.name, column.type) == ("child", struct)
