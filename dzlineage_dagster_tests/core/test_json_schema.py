"""JSON Schema row columns: declaration order, nullability, envelopes, and clear refusals."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dzlineage_dagster.core.schemas.json_schema import InvalidJsonSchema, parse_json_row_schema

JSON_TYPES = st.sampled_from(["string", "integer", "number", "boolean", "object", "array"])
NAMES = st.text(min_size=1, max_size=20)


@given(st.dictionaries(NAMES, st.tuples(JSON_TYPES, st.booleans()), min_size=1, max_size=12))
def test_columns_follow_the_properties_in_order_with_their_nullability(fields):
    schema = {
        "type": "object",
        "properties": {
            name: {"type": [kind, "null"] if nullable else kind}
            for name, (kind, nullable) in fields.items()
        },
        "required": list(fields),
    }
    row = parse_json_row_schema(json.dumps(schema))
    assert [c.name for c in row.columns] == list(fields)
    assert [(c.type.split("<")[0], c.nullable) for c in row.columns] == list(fields.values())
    assert not row.debezium_envelope or {"before", "after"} <= set(fields)


def test_a_debezium_json_envelope_gives_the_after_rows_columns():
    value = {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
    envelope = {
        "type": "object",
        "properties": {
            "before": {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/Value"}]},
            "after": {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/Value"}]},
            "op": {"type": "string"},
        },
        "$defs": {"Value": value},
    }
    row = parse_json_row_schema(json.dumps(envelope))
    assert row.debezium_envelope
    assert [(c.name, c.type, c.nullable) for c in row.columns] == [("id", "integer", False)]


@pytest.mark.parametrize(
    ("definition", "says"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"type": "string"}', "no `properties`"),
        ('{"$ref": "https://example.com/s.json"}', "not a local reference"),
        ('{"$ref": "#/definitions/Missing"}', "points at nothing"),
    ],
)
def test_what_is_not_a_row_schema_is_refused_with_the_reason(definition, says):
    with pytest.raises(InvalidJsonSchema, match=says):
        parse_json_row_schema(definition)


#: JSON values, with the keywords the reader looks at as likely keys.
KEYWORDS = st.sampled_from(
    ["type", "properties", "required", "oneOf", "anyOf", "$ref", "items", "format",
     "description", "before", "after", "null", "#/a"]
) | st.text(max_size=4)  # fmt: skip
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | KEYWORDS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYWORDS, inner, max_size=5),
    max_leaves=30,
)


@given(JSON_VALUES)
@example({"properties": {"a": {"oneOf": 5, "type": 3, "format": 1}}, "required": 5})
def test_any_json_document_parses_or_is_refused_never_crashes(document):
    try:
        row = parse_json_row_schema(json.dumps(document))
    except InvalidJsonSchema:
        return
    assert all(isinstance(c.name, str) and isinstance(c.type, str) for c in row.columns)
    assert all(c.description is None or isinstance(c.description, str) for c in row.columns)


def test_column_types_formats_arrays_unions_references_and_descriptions():
    schema = {
        "type": "object",
        "required": ["id", "created", "tags", "amount", "payload", 7],
        "properties": {
            "id": {"type": "integer", "description": "the key"},
            "created": {"type": "string", "format": "date-time"},
            "updated": {"type": ["string", "null"], "format": "date-time", "description": 3},
            "tags": {"type": "array", "items": {"$ref": "#/definitions/Tag"}},
            "scores": {"type": "array", "items": {"type": ["number", "null"]}},
            "anything": {"type": "array", "items": True},
            "amount": {"oneOf": [{"type": "null"}, {"type": "number"}, {"type": "string"}]},
            "code": {"anyOf": [{"$ref": "#/definitions/a~1b~0c"}, {"type": "integer"}]},
            "payload": {"properties": {"k": {"type": "string"}}},
            "free": {},
            "odd": 5,
        },
        "definitions": {"Tag": {"type": "string"}, "a/b~c": {"type": "string"}},
    }
    row = parse_json_row_schema(json.dumps(schema))
    assert not row.debezium_envelope
    assert [(c.name, c.type, c.nullable, c.description) for c in row.columns] == [
        ("id", "integer", False, "the key"),
        ("created", "string(date-time)", False, None),
        ("updated", "string(date-time)", True, None),
        ("tags", "array<string>", False, None),
        ("scores", "array<number>", True, None),
        ("anything", "array", True, None),
        ("amount", "number|string", True, None),
        ("code", "string|integer", True, None),
        ("payload", "struct<k:string>", False, None),
        ("free", "any", True, None),
        ("odd", "any", True, None),
    ]


def test_an_envelope_whose_after_is_no_object_schema_is_read_as_a_plain_row():
    schema = {
        "type": "object",
        "required": ["before", "after"],
        "properties": {"before": {"type": "string"}, "after": {"type": "string"}},
    }
    row = parse_json_row_schema(json.dumps(schema))
    assert not row.debezium_envelope
    assert [(c.name, c.type, c.nullable) for c in row.columns] == [
        ("before", "string", False),
        ("after", "string", False),
    ]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"$ref": "#/definitions/Loop", "definitions": {"Loop": {"$ref": "#/definitions/Loop"}}},
         "$ref '#/definitions/Loop' is not a local reference this reader follows"),
        ({"$ref": "#/definitions/N", "definitions": {"N": 5}},
         "$ref '#/definitions/N' is not a schema object"),
        ({"$ref": "#/definitions/N/x", "definitions": {"N": 5}},
         "$ref '#/definitions/N/x' points at nothing"),
    ],
)  # fmt: skip
def test_references_that_cannot_be_followed_are_refused_naming_them(document, message):
    with pytest.raises(InvalidJsonSchema) as raised:
        parse_json_row_schema(json.dumps(document))
    assert str(raised.value) == message


# --- references, nested objects and enums, as users see them ----------------------------------

PERSON = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "required": ["id", "home"],
    "properties": {
        "id": {"type": "integer"},
        "home": {"$ref": "#/definitions/Address"},
        "work": {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/Address"}]},
        "status": {"type": "string", "enum": ["NEW", "ACTIVE", None], "description": "state"},
        "level": {"enum": [1, 2, 3]},
        "previous": {"type": "array", "items": {"$ref": "#/definitions/Address"}},
    },
    "definitions": {
        "Address": {
            "type": "object",
            "required": ["street"],
            "properties": {
                "street": {"type": "string", "description": "street and number"},
                "geo": {
                    "type": "object",
                    "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
                },
                "kind": {"$ref": "#/definitions/Kind"},
            },
        },
        "Kind": {"type": "string", "enum": ["HOME", "WORK"]},
    },
}
PERSON["$defs"] = {"Address": PERSON["definitions"]["Address"]}
ADDRESS_TYPE = "struct<street:string,geo:struct<lat:number,lon:number>,kind:string>"


def test_references_resolve_to_struct_columns_with_their_fields_and_enums():
    columns = {c.name: c for c in parse_json_row_schema(json.dumps(PERSON)).columns}
    home = columns["home"]
    assert (home.type, home.nullable) == (ADDRESS_TYPE, False)
    assert [(f.name, f.type, f.nullable, f.description) for f in home.fields] == [
        ("street", "string", False, "street and number"),
        ("geo", "struct<lat:number,lon:number>", True, None),
        ("kind", "string", True, None),
    ]
    assert home.fields[2].symbols == ("HOME", "WORK")
    # `$defs` (2019-09 on) like `definitions`; a oneOf with null makes it nullable.
    assert (columns["work"].type, columns["work"].nullable) == (ADDRESS_TYPE, True)
    assert columns["previous"].type == f"array<{ADDRESS_TYPE}>"
    assert columns["previous"].fields == home.fields


def test_enum_values_are_kept_and_an_enum_alone_gives_its_values_type():
    columns = {c.name: c for c in parse_json_row_schema(json.dumps(PERSON)).columns}
    status, level = columns["status"], columns["level"]
    assert (status.type, status.symbols, status.nullable) == ("string", ("NEW", "ACTIVE"), True)
    assert status.full_description() == "state\nSymbols: NEW, ACTIVE"
    assert (level.type, level.symbols) == ("integer", ("1", "2", "3"))


def test_a_recursive_definition_reads_as_its_name_where_it_recurs():
    schema = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
            }
        },
    }
    [root] = parse_json_row_schema(json.dumps(schema)).columns
    assert root.type == "struct<value:integer,children:array<Node>>"


def test_a_remote_reference_is_declined_for_its_column_and_the_others_are_read():
    schema = {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "address": {"$ref": "https://example.com/address.json"},
        },
    }
    identifier, address = parse_json_row_schema(json.dumps(schema)).columns
    assert identifier.type == "integer"
    assert (address.type, address.nullable) == ("any", True)
    assert address.description.startswith(
        "not read: $ref 'https://example.com/address.json' is not a local reference"
    )
    with pytest.raises(InvalidJsonSchema, match=r"'other\.json#/x' is not a local reference"):
        parse_json_row_schema(json.dumps({"$ref": "other.json#/x"}))


@st.composite
def nested_definitions(draw):
    """A chain of definitions, each an object whose last property refers to the next one."""
    depth = draw(st.integers(min_value=1, max_value=12))
    names = draw(
        st.lists(st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,6}", fullmatch=True), min_size=depth,
                 max_size=depth, unique=True)
    )  # fmt: skip
    keyword = draw(st.sampled_from(["definitions", "$defs"]))
    definitions, expected = {}, "string"
    for index in reversed(range(depth)):
        inner = (
            {"$ref": f"#/{keyword}/{names[index + 1]}"} if index + 1 < depth else {"type": "string"}
        )
        definitions[names[index]] = {"type": "object", "properties": {"leaf": {"type": "integer"},
                                                                        "next": inner}}  # fmt: skip
        expected = f"struct<leaf:integer,next:{expected}>"
    schema = {
        "type": "object",
        "properties": {"top": {"$ref": f"#/{keyword}/{names[0]}"}},
        keyword: definitions,
    }
    return schema, expected


@given(nested_definitions())
def test_any_chain_of_references_reads_as_nested_structs(generated):
    schema, expected = generated
    [top] = parse_json_row_schema(json.dumps(schema)).columns
    assert top.type == expected
