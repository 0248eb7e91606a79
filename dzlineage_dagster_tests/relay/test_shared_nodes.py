"""The relay's guard of shared nodes, alone: a run's held datasets (bounded, dropped at the run's
end, the same additions for a retried event) and schemas set aside on the platform's nodes."""

from __future__ import annotations

import copy
import json
import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from dzlineage_dagster.core.lineage.relay_events import ReceivedEvent, client_token
from dzlineage_dagster.relay.shared_nodes import (
    HELD_DATASETS_FACET,
    MAX_SET_ASIDE_FIELD_NAMES,
    PRODUCER_SCHEMA_FACET,
    RunDatasets,
    set_aside_schemas,
)
from dzlineage_dagster_tests.openlineage_spec import validate_openlineage_event

PRODUCER = "https://github.com/example/producer"
TOPICS = "kafka://b-1.demo:9098"
TABLE = ("postgres://db:5432", "shop.public.orders")
TOPIC = (TOPICS, "shop.public.orders")


def dataset(namespace: str, name: str, fields: list[str] | None = None) -> dict:
    facets = {}
    if fields is not None:
        facets["schema"] = {
            "_producer": PRODUCER,
            "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json",
            "fields": [{"name": f, "type": "string"} for f in fields],
        }
    return {"namespace": namespace, "name": name, "facets": facets}


def event(run_id: str, state: str, inputs=(), outputs=(), second: int = 0) -> ReceivedEvent:
    return ReceivedEvent(
        "run",
        {
            "eventType": state,
            "eventTime": f"2026-12-07T12:00:{second:02d}+00:00",
            "run": {"runId": run_id},
            "job": {"namespace": "shop", "name": "shop.0"},
            "inputs": [dataset(*d) for d in inputs],
            "outputs": [dataset(*d) for d in outputs],
            "producer": PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        },
    )


def names(document: dict, side: str) -> list[tuple[str, str]]:
    return [(d["namespace"], d["name"]) for d in document.get(side) or []]


def post(runs: RunDatasets, received: ReceivedEvent) -> tuple[dict, list[str]]:
    forwarded, added, _ = runs.complete(received, client_token(received))
    return forwarded.document, added


def test_a_streaming_run_s_events_each_carry_both_sides_once_both_were_seen():
    runs, run_id = RunDatasets(), str(uuid.uuid4())
    start, _ = post(runs, event(run_id, "START"))
    assert names(start, "inputs") == names(start, "outputs") == []
    post(runs, event(run_id, "RUNNING", inputs=[TABLE], second=1))
    to_topic, added = post(runs, event(run_id, "RUNNING", outputs=[TOPIC], second=2))
    assert names(to_topic, "inputs") == [TABLE] and names(to_topic, "outputs") == [TOPIC]
    assert added == [f"input {TABLE[0]}/{TABLE[1]}"]
    complete, _ = post(runs, event(run_id, "COMPLETE", second=3))
    assert (names(complete, "inputs"), names(complete, "outputs")) == ([TABLE], [TOPIC])
    facet = complete["run"]["facets"][HELD_DATASETS_FACET]
    assert facet["addedOutputs"] == [{"namespace": TOPIC[0], "name": TOPIC[1]}]
    validate_openlineage_event(json.dumps(complete))
    assert len(runs) == 0, "a final event ends the run's entry"


def test_an_event_naming_both_sides_goes_as_sent():
    runs, run_id = RunDatasets(), str(uuid.uuid4())
    post(runs, event(run_id, "START", inputs=[TABLE], outputs=[TOPIC]))
    other = ("postgres://db:5432", "shop.public.customers")
    sent = event(run_id, "RUNNING", inputs=[other], outputs=[TOPIC], second=1)
    forwarded, added = post(runs, sent)
    assert forwarded == sent.document and added == []


def test_a_retry_gets_what_the_first_post_of_it_got_though_the_run_grew():
    runs, run_id = RunDatasets(), str(uuid.uuid4())
    post(runs, event(run_id, "RUNNING", inputs=[TABLE]))
    to_topic = event(run_id, "RUNNING", outputs=[TOPIC], second=1)
    first, _ = post(runs, to_topic)
    post(runs, event(run_id, "RUNNING", inputs=[("postgres://db:5432", "other")], second=2))
    retried, _ = post(runs, copy.deepcopy(to_topic))
    assert retried == first


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 40),
            st.sampled_from(["START", "RUNNING", "RUNNING", "OTHER", "COMPLETE", "FAIL"]),
            st.lists(st.integers(0, 30), max_size=3),
            st.lists(st.integers(0, 30), max_size=3),
        ),
        max_size=80,
    )
)
def test_memory_stays_bounded_and_nothing_is_added_that_the_run_did_not_name(steps):
    runs = RunDatasets(max_runs=5, max_datasets=4)
    run_ids = [str(uuid.UUID(int=i + 1)) for i in range(41)]
    named: dict[str, set] = {}
    for second, (run, state, inputs, outputs) in enumerate(steps):
        ins = [("postgres://db:5432", f"t{i}") for i in inputs]
        outs = [(TOPICS, f"topic{i}") for i in outputs]
        received = event(run_ids[run], state, ins, outs, second % 60)
        forwarded, _ = post(runs, received)
        named.setdefault(run_ids[run], set()).update(ins + outs)
        carried = set(names(forwarded, "inputs") + names(forwarded, "outputs"))
        assert carried <= named[run_ids[run]], "only datasets the run's events named"
        if state in ("COMPLETE", "FAIL"):
            named.pop(run_ids[run])
        assert len(runs) <= 5
        for held in runs._runs.values():
            assert all(len(side) <= 4 for side in held.sides.values())


def test_a_reader_s_schema_of_a_platform_topic_or_a_glue_table_is_set_aside():
    glue = ("arn:aws:glue:us-east-1:123456789012:table", "lakehouse/orders")
    received = ReceivedEvent(
        "run",
        {
            **event(str(uuid.uuid4()), "RUNNING").document,
            "inputs": [
                dataset(*TOPIC, ["id", "version"]),
                dataset(*glue, ["id"]),
                dataset("s3://bucket", "raw/orders", ["id"]),
            ],
            "outputs": [dataset(*glue, ["id", "total"])],
        },
    )
    before = copy.deepcopy(received.document)
    guarded, set_aside = set_aside_schemas(received, {TOPICS})
    assert received.document == before, "the input is left untouched"
    assert set_aside == [f"{TOPIC[0]}/{TOPIC[1]}", f"{glue[0]}/{glue[1]}"]
    topic, table, path = guarded.document["inputs"]
    assert "schema" not in topic["facets"] and "schema" not in table["facets"]
    assert topic["facets"][PRODUCER_SCHEMA_FACET]["fieldNames"] == ["id", "version"]
    assert "schema" in path["facets"], "a dataset only the producer describes keeps its schema"
    assert "schema" in guarded.document["outputs"][0]["facets"], "a table's writer describes it"
    validate_openlineage_event(json.dumps(guarded.document))


def test_a_wide_schema_set_aside_keeps_its_count_and_the_first_names():
    fields = [f"c{i}" for i in range(MAX_SET_ASIDE_FIELD_NAMES + 50)]
    received = event(str(uuid.uuid4()), "RUNNING")
    received.document["inputs"] = [dataset(*TOPIC, fields)]
    guarded, _ = set_aside_schemas(received, {TOPICS})
    facet = guarded.document["inputs"][0]["facets"][PRODUCER_SCHEMA_FACET]
    assert facet["fieldCount"] == len(fields)
    assert facet["fieldNames"] == fields[:MAX_SET_ASIDE_FIELD_NAMES]
