"""Two things DataZone's lineage documents leave open, as the sandbox's switches answer them:
what a run node shows when the run's events name different datasets (``run_event_merge``), and
which ``schema`` a dataset node shows when several events gave it one (``node_schema``).
Real boto3 over HTTP."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest
from openlineage.client.event_v2 import RunState

from dzlineage_dagster.core.lineage.openlineage import DatasetSpec
from dzlineage_dagster.core.schemas.avro import Column
from dzlineage_dagster.sandbox.server.ambiguities import CHOICES, Ambiguities
from dzlineage_dagster_tests.sandbox.test_datazone_lineage_processing import TOPIC, new_domain
from dzlineage_dagster_tests.sandbox.test_datazone_lineage_views import (
    T0,
    TOPIC_ID,
    datasets_beyond,
    post_run,
)

SOURCE = DatasetSpec("postgres://shop-db:5432", "shop.sales.orders")
SOURCE_ID = f"{SOURCE.namespace}/{SOURCE.name}"
RUN_TYPE = "amazon.datazone.JobRunLineageNodeType"


@pytest.fixture(scope="module")
def dz(sandbox):
    return sandbox.client("datazone")


@pytest.fixture
def reading(sandbox, request):
    """Set one switch (``request.param``: (switch, value)) for the test, then the defaults."""
    switch, value = request.param
    sandbox.control.set_ambiguities(**{switch: value})
    yield value
    sandbox.control.set_ambiguities(**Ambiguities().describe())


def run_node(dz, domain_id: str, run_id: str, when=None) -> dict:
    """The run node of ``run_id`` (its sourceIdentifier is ``<job namespace>.<job>/<runId>``)."""
    at = {"eventTimestamp": when} if when else {}
    return dz.get_lineage_node(
        domainIdentifier=domain_id, identifier=f"kafka-connect.debezium/{run_id}", **at
    )


def neighbours(dz, domain_id: str, node: dict, direction: str) -> set[str]:
    return {
        dz.get_lineage_node(domainIdentifier=domain_id, identifier=n["id"])["sourceIdentifier"]
        for n in node[f"{direction}Nodes"]
    }


@pytest.mark.parametrize(
    "reading", [("run_event_merge", v) for v in CHOICES["run_event_merge"]], indirect=True
)
def test_a_streaming_run_s_separate_events_add_up_or_only_its_latest_shows(dz, reading):
    """Debezium's shape: START, the source table in one RUNNING event, the topic in another,
    then a COMPLETE naming no dataset. ``merge``: the run is source -> topic; ``latest``: the
    run shows what its latest event named, and the datasets' edges to it follow."""
    domain_id = new_domain(dz)
    run_id = str(uuid.uuid4())
    steps = [
        (RunState.START, [], []),
        (RunState.RUNNING, [SOURCE], []),
        (RunState.RUNNING, [], [TOPIC]),
        (RunState.COMPLETE, [], []),
    ]
    for second, (state, inputs, outputs) in enumerate(steps):
        post_run(
            dz,
            domain_id,
            "debezium",
            inputs,
            outputs,
            T0 + timedelta(seconds=second),
            run_id,
            state,
        )

    run = run_node(dz, domain_id, run_id)
    after_output = T0 + timedelta(seconds=2.5)
    if reading == "merge":
        assert neighbours(dz, domain_id, run, "upstream") == {SOURCE_ID}
        assert neighbours(dz, domain_id, run, "downstream") == {TOPIC_ID}
        assert datasets_beyond(dz, domain_id, TOPIC_ID, "upstream") == {SOURCE_ID}
        assert datasets_beyond(dz, domain_id, TOPIC_ID, "upstream", after_output) == {SOURCE_ID}
    else:
        assert run["upstreamNodes"] == run["downstreamNodes"] == []
        assert datasets_beyond(dz, domain_id, TOPIC_ID, "upstream") == set()
        assert datasets_beyond(dz, domain_id, SOURCE_ID, "downstream") == set()
        # Between the events, the run is what its latest one named: the topic alone.
        at_output = run_node(dz, domain_id, run_id, after_output)
        assert neighbours(dz, domain_id, at_output, "downstream") == {TOPIC_ID}
        assert at_output["upstreamNodes"] == []
        assert datasets_beyond(dz, domain_id, SOURCE_ID, "downstream", after_output) == set()

    # A last event that names both sides shows both under either reading.
    post_run(
        dz,
        domain_id,
        "debezium",
        [SOURCE],
        [TOPIC],
        T0 + timedelta(seconds=9),
        run_id,
        RunState.OTHER,
    )
    assert datasets_beyond(dz, domain_id, TOPIC_ID, "upstream") == {SOURCE_ID}
    assert datasets_beyond(dz, domain_id, SOURCE_ID, "downstream") == {TOPIC_ID}


def schema_of(dz, domain_id: str, identifier: str) -> list[str]:
    node = dz.get_lineage_node(domainIdentifier=domain_id, identifier=identifier)
    (form,) = [f for f in node["formsOutput"] if f["formName"] == "schema"]
    return [field["name"] for field in json.loads(form["content"])["fields"]]


@pytest.mark.parametrize(
    "reading", [("node_schema", v) for v in CHOICES["node_schema"]], indirect=True
)
def test_a_node_s_schema_is_the_last_the_first_or_every_writer_s(dz, reading):
    """The topic's own columns, then a reader's narrower schema (Flink's two fields)."""
    domain_id = new_domain(dz)
    post_run(dz, domain_id, "sink", [TOPIC], [], T0)
    read = DatasetSpec(
        TOPIC.namespace,
        TOPIC.name,
        [Column("id", "long", True, None), Column("version", "int", True, None)],
    )
    post_run(dz, domain_id, "flink-reader", [read], [], T0 + timedelta(minutes=1))
    expected = {
        "last-writer": ["id", "version"],
        "first-writer": ["id", "total"],
        "merged": ["id", "total", "version"],
    }
    assert schema_of(dz, domain_id, TOPIC_ID) == expected[reading]
