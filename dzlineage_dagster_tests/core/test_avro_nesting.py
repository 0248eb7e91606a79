"""What the Avro specification forbids is found wherever it is nested, and the error says where."""

from __future__ import annotations

import json
import re

import pytest

from dzlineage_dagster.core.avro import InvalidAvroSchema, parse_columns

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
