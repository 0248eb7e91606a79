from __future__ import annotations

import json
import re
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import botocore.session
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import ValidationError
from openlineage.client.event_v2 import RunState

from dzlineage_dagster.core.identity.glue import glue_dataset
from dzlineage_dagster.core.identity.kafka import kafka_dataset_namespace
from dzlineage_dagster.core.lineage.openlineage import (
    MAX_EVENT_BYTES,
    DatasetSpec,
    build_fitted_run_events,
    build_run_events,
    dataset_source_identifier,
    deterministic_run_id,
    event_json,
    event_size_ok,
    glue_source_identifier,
    glue_table_spec,
    lineage_client_token,
)
from dzlineage_dagster.core.schemas.avro import Column
from dzlineage_dagster_tests.openlineage_spec import validate_openlineage_event

PRODUCER = "https://github.com/dzlineage/dzlineage-dagster/tree/0.1.0"
EVENT_TIME = datetime(2024, 5, 1, 12, 30, tzinfo=timezone.utc)
TOPIC = DatasetSpec(
    kafka_dataset_namespace("b-1.demo.kafka.us-east-1.amazonaws.com:9098"),
    "cdc.public.orders",
    [Column("id", "int", False, None), Column("note", "string", True, "free text")],
)
TABLE = glue_table_spec("us-east-1", "123456789012", "lake", "orders")


def datazone_shape(name: str) -> Any:
    model = botocore.session.get_session().get_service_model("datazone")
    return model.shape_for(name)


def orders_events(**overrides: Any) -> list:
    arguments = {
        "job_namespace": "dzlineage",
        "job_name": "iceberg-sink.cdc.public.orders",
        "inputs": [TOPIC],
        "outputs": [TABLE],
        "run_id": deterministic_run_id("iceberg-sink", "cdc.public.orders", "7"),
        "event_time": EVENT_TIME,
        "producer": PRODUCER,
    }
    return build_run_events(**{**arguments, **overrides})


def test_a_run_is_a_start_and_a_complete_event_of_one_run() -> None:
    start, complete = (json.loads(event_json(event)) for event in orders_events())
    assert (start["eventType"], complete["eventType"]) == ("START", "COMPLETE")
    assert start["run"]["runId"] == complete["run"]["runId"]
    assert start["eventTime"] == "2024-05-01T12:30:00+00:00"
    assert start["producer"] == PRODUCER


def test_built_events_follow_the_openlineage_specification() -> None:
    for event in orders_events():
        validate_openlineage_event(event_json(event))


def test_datasets_with_columns_carry_a_schema_facet() -> None:
    event = json.loads(event_json(orders_events()[0]))
    (topic,), (table,) = event["inputs"], event["outputs"]
    assert (topic["namespace"], topic["name"]) == (
        "kafka://b-1.demo.kafka.us-east-1.amazonaws.com:9098",
        "cdc.public.orders",
    )
    schema = topic["facets"]["schema"]
    assert schema["_producer"] == PRODUCER
    assert [(f["name"], f["type"], f.get("description")) for f in schema["fields"]] == [
        ("id", "int", None),
        ("note", "string", "free text"),
    ]
    assert "schema" not in table["facets"]


def test_a_glue_table_is_named_so_the_documented_rule_gives_its_arn_and_keeps_openlineages_name():
    event = json.loads(event_json(orders_events()[-1]))
    (table,) = event["outputs"]
    arn = "arn:aws:glue:us-east-1:123456789012:table/lake/orders"
    # DataZone's guide: "<namespace>/<name>" for every dataset it names no other way.
    assert f"{table['namespace']}/{table['name']}" == arn
    # A reading that joins OpenLineage's Glue naming at a colon does not apply to this name.
    assert table["namespace"] != "arn:aws:glue:us-east-1:123456789012"
    assert table["facets"]["symlinks"]["identifiers"] == [
        {
            "namespace": "arn:aws:glue:us-east-1:123456789012",
            "name": "table/lake/orders",
            "type": "TABLE",
        }
    ]
    assert glue_source_identifier("us-east-1", "123456789012", "lake", "orders") == arn


def test_a_split_or_trimmed_run_keeps_the_glue_tables_symlink() -> None:
    wide = [Column(f"c{i:04d}", "string", True, "x" * 200) for i in range(600)]
    table = glue_table_spec("us-east-1", "123456789012", "lake", "wide", wide)
    fitted = build_fitted_run_events(
        job_namespace="dzlineage",
        job_name="wide",
        inputs=[],
        outputs=[table],
        run_id=deterministic_run_id("wide"),
        event_time=EVENT_TIME,
        producer=PRODUCER,
        limit=20_000,
    )
    assert fitted.split or fitted.trimmed
    for event in fitted.events:
        (output,) = json.loads(event_json(event))["outputs"]
        assert output["facets"]["symlinks"]["identifiers"][0]["name"] == "table/lake/wide"


@pytest.mark.parametrize("database", ["s3tablescatalog/orders_bucket", ""])
def test_a_federated_catalogs_table_is_refused_by_name(database: str) -> None:
    with pytest.raises(ValueError, match="federated catalog"):
        glue_dataset("us-east-1", "123456789012", database, "orders")


def test_naive_event_time_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        orders_events(event_time=datetime(2024, 5, 1))


DATASET_NAMES = st.text(min_size=1, max_size=60)
COLUMNS = st.lists(
    st.builds(
        Column,
        name=st.text(min_size=1, max_size=20),
        type=st.sampled_from(["int", "long", "string", "decimal(10,2)", "array<string>"]),
        nullable=st.booleans(),
        description=st.none() | st.text(max_size=30),
    ),
    max_size=8,
)
DATASETS = st.builds(
    DatasetSpec, namespace=DATASET_NAMES, name=DATASET_NAMES, columns=st.none() | COLUMNS
)


@settings(max_examples=200)
@given(
    st.lists(DATASETS, max_size=3),
    st.lists(DATASETS, max_size=3),
    DATASET_NAMES,
    st.datetimes(timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=-5))])),
)
def test_any_datasets_make_valid_events(
    inputs: list[DatasetSpec], outputs: list[DatasetSpec], job_name: str, event_time: datetime
) -> None:
    events = orders_events(inputs=inputs, outputs=outputs, job_name=job_name, event_time=event_time)
    for event in events:
        text = event_json(event)
        validate_openlineage_event(text)
        document = json.loads(text)
        for side, datasets in (("inputs", inputs), ("outputs", outputs)):
            for built, spec in zip(document[side], datasets, strict=True):
                assert (built["namespace"], built["name"]) == (spec.namespace, spec.name)
                facet = built["facets"].get("schema")
                if spec.columns is None:
                    assert facet is None
                else:
                    assert [f["name"] for f in facet["fields"]] == [c.name for c in spec.columns]


def event_document() -> dict[str, Any]:
    return json.loads(event_json(orders_events()[0]))


def with_change(path: list[str | int], value: Any) -> str:
    document = event_document()
    target = document
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return json.dumps(document)


@pytest.mark.parametrize(
    ("path", "value", "reason"),
    [
        (["eventTime"], KeyError, "'eventTime' is a required property"),
        (["eventTime"], "yesterday", "is not a 'date-time'"),
        (["eventType"], "DONE", "is not one of"),
        (["run", "runId"], "run-1", "is not a 'uuid'"),
        (["producer"], "dzlineage", "is not a 'uri'"),
        (["inputs", 0, "name"], KeyError, "'name' is a required property"),
        (["inputs", 0, "facets", "schema", "fields", 0, "name"], KeyError, "'name' is a required"),
        (["inputs", 0, "facets", "schema", "fields"], "id,note", "is not of type 'array'"),
        (["inputs", 0, "facets", "schema", "_producer"], KeyError, "'_producer' is a required"),
        (["schemaURL"], "https://example.com/OtherSpec.json#/$defs/RunEvent", "no local"),
        (
            ["inputs", 0, "facets", "schema", "_schemaURL"],
            "https://openlineage.io/spec/facets/9-9-9/SchemaDatasetFacet.json",
            "no local OpenLineage schema",
        ),
    ],
)
def test_the_validator_catches_violations(path: list, value: Any, reason: str) -> None:
    validate_openlineage_event(json.dumps(event_document()))
    with pytest.raises(ValidationError, match=re.escape(reason)):
        validate_openlineage_event(with_change(path, value))


def test_deterministic_run_id_is_a_stable_uuid() -> None:
    run_id = deterministic_run_id("iceberg-sink", "cdc.public.orders", "7")
    assert uuid.UUID(run_id).version == 5
    assert run_id == deterministic_run_id("iceberg-sink", "cdc.public.orders", "7")
    assert deterministic_run_id("a.b", "c") != deterministic_run_id("a", "b.c")
    with pytest.raises(ValueError, match="at least one part"):
        deterministic_run_id()


@settings(max_examples=200)
@given(st.lists(st.text(), min_size=1, max_size=4), st.lists(st.text(), min_size=1, max_size=4))
def test_distinct_parts_give_distinct_run_ids(first: list[str], second: list[str]) -> None:
    assert (deterministic_run_id(*first) == deterministic_run_id(*second)) == (first == second)


def test_client_token_fits_datazone_and_follows_the_run_and_event_type() -> None:
    shape = datazone_shape("ClientToken")
    events = orders_events()
    tokens = [lineage_client_token(str(e.run.runId), str(e.eventType.value)) for e in events]
    for token in tokens:
        assert shape.metadata["min"] <= len(token) <= shape.metadata["max"]
        assert re.fullmatch(shape.metadata["pattern"], token)
    assert tokens[0] == lineage_client_token(str(events[0].run.runId), "START")
    assert tokens[0] != tokens[1]
    assert lineage_client_token("other-run", "START") != tokens[0]


def test_event_size_limit_is_datazones_and_counts_bytes() -> None:
    assert datazone_shape("LineageEvent").metadata["max"] == MAX_EVENT_BYTES
    assert event_size_ok("x" * MAX_EVENT_BYTES)
    assert not event_size_ok("x" * (MAX_EVENT_BYTES + 1))
    assert not event_size_ok("é" * (MAX_EVENT_BYTES // 2 + 1))
    assert event_size_ok("abc", limit=3) and not event_size_ok("abcd", limit=3)


def test_source_identifiers() -> None:
    assert glue_source_identifier("eu-west-1", "123456789012", "lake", "orders") == (
        "arn:aws:glue:eu-west-1:123456789012:table/lake/orders"
    )
    assert dataset_source_identifier("kafka://b-1.x:9098", "cdc.public.orders") == (
        "kafka://b-1.x:9098/cdc.public.orders"
    )


def test_a_struct_columns_fields_nest_in_the_schema_facet_and_the_event_stays_valid() -> None:
    from dzlineage_dagster.core.schemas.avro import struct_type

    geo = (Column("lat", "double", False, "degrees north"),)
    fields = (
        Column("geo", struct_type(geo), True, None, fields=geo),
        Column("kind", "enum", False, None, symbols=("HOME", "WORK")),
    )
    address = Column("address", struct_type(fields), True, "where", fields=fields)
    topic = DatasetSpec(TOPIC.namespace, TOPIC.name, [address])
    (event,) = orders_events(inputs=[topic], outputs=[], event_types=(RunState.START,))
    text = event_json(event)
    validate_openlineage_event(text)
    [field] = json.loads(text)["inputs"][0]["facets"]["schema"]["fields"]
    assert (field["name"], field["type"], field["description"]) == (
        "address",
        "struct<geo:struct<lat:double>,kind:enum>",
        "where",
    )
    geo_field, kind_field = field["fields"]
    assert geo_field["fields"] == [
        {"name": "lat", "type": "double", "description": "degrees north", "fields": []}
    ]
    assert kind_field["description"] == "Symbols: HOME, WORK"
