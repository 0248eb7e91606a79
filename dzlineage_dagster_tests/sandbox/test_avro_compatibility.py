"""The sandbox's Avro compatibility check agrees with fastavro's own schema resolution: what it
calls readable, fastavro reads; what it refuses (without unions, which fail only on the branch
written), fastavro refuses."""

from __future__ import annotations

import io
import json

import fastavro
import pytest
from fastavro.read import SchemaResolutionError
from fastavro.utils import generate_one
from hypothesis import given, settings
from hypothesis import strategies as st

from dzlineage_dagster.sandbox.moto_patches.avro_compatibility import (
    cannot_read,
    incompatibility,
)

#: No bytes: fastavro reads random bytes as a string only when they are UTF-8.
PLAIN_TYPES = ["int", "long", "float", "double", "string", "boolean"]
UNION_TYPES = [["null", "string"], ["null", "long"], ["int", "string"]]
DEFAULTS = {"int": 0, "long": 0, "float": 0.0, "double": 0.0, "string": ""}


def fields(types: list) -> st.SearchStrategy[list[dict]]:
    def field(name: str, kind, default: bool) -> dict:
        spec = {"name": name, "type": kind}
        if default and isinstance(kind, list):
            spec["default"] = None if kind[0] == "null" else DEFAULTS[kind[0]]
        elif default and kind in DEFAULTS:
            spec["default"] = DEFAULTS[kind]
        return spec

    one = st.builds(field, st.sampled_from("abc"), st.sampled_from(types), st.booleans())
    return st.lists(one, min_size=1, max_size=3, unique_by=lambda f: f["name"])


def record(fields: list[dict]) -> str:
    return json.dumps({"type": "record", "name": "Row", "fields": fields})


def read_back(writer: str, reader: str) -> None:
    """A datum written with ``writer``, read with ``reader`` (fastavro's resolution)."""
    written = fastavro.parse_schema(json.loads(writer))
    buffer = io.BytesIO()
    fastavro.schemaless_writer(buffer, written, generate_one(written))
    buffer.seek(0)
    fastavro.schemaless_reader(buffer, written, fastavro.parse_schema(json.loads(reader)))


@settings(max_examples=150, deadline=None)
@given(fields(PLAIN_TYPES + UNION_TYPES), fields(PLAIN_TYPES + UNION_TYPES))
def test_what_it_calls_readable_fastavro_reads(writer_fields, reader_fields):
    writer, reader = record(writer_fields), record(reader_fields)
    if cannot_read(reader=reader, writer=writer) is None:
        read_back(writer, reader)


@settings(max_examples=150, deadline=None)
@given(fields(PLAIN_TYPES), fields(PLAIN_TYPES))
def test_what_it_refuses_fastavro_cannot_read(writer_fields, reader_fields):
    writer, reader = record(writer_fields), record(reader_fields)
    if cannot_read(reader=reader, writer=writer) is not None:
        with pytest.raises(SchemaResolutionError):
            read_back(writer, reader)


def test_a_recursive_type_reads_itself_and_names_must_match():
    linked = json.dumps(
        {
            "type": "record",
            "name": "Node",
            "fields": [{"name": "next", "type": ["null", "Node"]}, {"name": "v", "type": "int"}],
        }
    )
    assert cannot_read(reader=linked, writer=linked) is None
    renamed = linked.replace('"Node"', '"Other"')
    assert "record Node cannot be read as Other" in cannot_read(reader=renamed, writer=linked)
    aliased = json.dumps({**json.loads(renamed), "aliases": ["Node"]})
    assert cannot_read(reader=aliased, writer=linked) is None


def test_strings_and_bytes_read_each_other_and_numbers_widen_only():
    def value(kind: str) -> str:
        return record([{"name": "a", "type": kind}])

    assert cannot_read(reader=value("bytes"), writer=value("string")) is None
    assert cannot_read(reader=value("string"), writer=value("bytes")) is None
    assert cannot_read(reader=value("double"), writer=value("int")) is None
    assert "a: double cannot be read as float" in cannot_read(
        reader=value("float"), writer=value("double")
    )


def test_enum_symbols_need_the_reader_s_knowledge_or_default():
    def enum(*symbols: str, default: str | None = None) -> str:
        spec = {"type": "enum", "name": "E", "symbols": list(symbols)}
        return json.dumps(spec if default is None else {**spec, "default": default})

    assert "symbols C unknown" in cannot_read(reader=enum("A", "B"), writer=enum("A", "C"))
    assert cannot_read(reader=enum("A", "B", default="A"), writer=enum("A", "C")) is None


def test_modes_check_the_previous_or_every_version():
    v1 = record([{"name": "id", "type": "long"}])
    v2 = record([{"name": "id", "type": "long", "default": 0}])
    dropped = record([{"name": "email", "type": "string"}])
    assert incompatibility("FORWARD", dropped, [v1, v2]) is None
    assert "version 1 cannot read" in incompatibility("FORWARD_ALL", dropped, [v1, v2])
    assert "cannot read data of version 2" in incompatibility("BACKWARD", dropped, [v1, v2])
    assert incompatibility("NONE", dropped, [v1]) is None
    assert incompatibility("BACKWARD", dropped, []) is None
    with pytest.raises(ValueError, match="'SIDEWAYS' is not one of NONE"):
        incompatibility("SIDEWAYS", dropped, [v1])
