"""GetLineageNode as DataZone's two lineage views show a node: the timestamp view (only the latest
run of each job at that time, `eventTimestamp`) and the aggregated view (what every job
currently contributes: its latest run, the answer without a timestamp). Real boto3 over HTTP."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest
from openlineage.client.event_v2 import RunState

from dzlineage_dagster.core.identity.glue import glue_dataset
from dzlineage_dagster.core.lineage.openlineage import (
    DatasetSpec,
    build_run_events,
    event_json,
    glue_source_identifier,
)
from dzlineage_dagster_tests.sandbox.test_datazone_lineage_processing import (
    PRODUCER,
    TOPIC,
    new_domain,
)

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
TOPIC_ID = f"{TOPIC.namespace}/{TOPIC.name}"
OLD_TABLE = ("us-east-1", "123456789012", "lakehouse", "orders_history")
NEW_TABLE = ("us-east-1", "123456789012", "lakehouse", "orders_history_v2")
AUDIT = ("us-east-1", "123456789012", "audit", "orders")


@pytest.fixture(scope="module")
def dz(sandbox):
    return sandbox.client("datazone")


def post_run(dz, domain_id, job, inputs, outputs, when, run_id=None, state=RunState.COMPLETE):
    (event,) = build_run_events(
        job_namespace="kafka-connect",
        job_name=job,
        inputs=inputs,
        outputs=outputs,
        run_id=run_id or str(uuid.uuid4()),
        event_time=when,
        producer=PRODUCER,
        event_types=(state,),
    )
    dz.post_lineage_event(domainIdentifier=domain_id, event=event_json(event).encode())


def table(at: tuple[str, str, str, str]) -> DatasetSpec:
    return DatasetSpec(*glue_dataset(*at))


def datasets_beyond(dz, domain_id, identifier, direction, when=None) -> set[str]:
    """sourceIdentifiers of the datasets one run away from the node, at ``when``."""
    at = {"eventTimestamp": when} if when else {}
    node = dz.get_lineage_node(domainIdentifier=domain_id, identifier=identifier, **at)
    found = set()
    for reference in node[f"{direction}Nodes"]:
        run = dz.get_lineage_node(domainIdentifier=domain_id, identifier=reference["id"], **at)
        if run["typeName"] != "amazon.datazone.JobRunLineageNodeType":
            continue
        for far in run[f"{direction}Nodes"]:
            dataset = dz.get_lineage_node(domainIdentifier=domain_id, identifier=far["id"], **at)
            found.add(dataset["sourceIdentifier"])
    return found


def test_a_job_s_newer_run_replaces_its_older_edges_in_both_views(dz):
    domain_id = new_domain(dz)
    job = "shop-archive-sink/shop.sales.orders"
    post_run(dz, domain_id, job, [TOPIC], [table(OLD_TABLE)], T0)
    # Another job's run, earlier than the first job's newer one: still that job's latest.
    post_run(dz, domain_id, "audit-sink/shop.sales.orders", [TOPIC], [table(AUDIT)], T0)
    post_run(dz, domain_id, job, [TOPIC], [table(NEW_TABLE)], T0 + timedelta(hours=1))
    old_id, new_id = glue_source_identifier(*OLD_TABLE), glue_source_identifier(*NEW_TABLE)
    audit_id = glue_source_identifier(*AUDIT)

    # Aggregated view (no timestamp): every job contributes what its latest run says.
    assert datasets_beyond(dz, domain_id, TOPIC_ID, "downstream") == {new_id, audit_id}
    assert datasets_beyond(dz, domain_id, old_id, "upstream") == set()
    assert datasets_beyond(dz, domain_id, new_id, "upstream") == {TOPIC_ID}
    # Timestamp view: at each time, that time's latest run of the job.
    between = T0 + timedelta(minutes=30)
    assert datasets_beyond(dz, domain_id, TOPIC_ID, "downstream", between) == {old_id, audit_id}
    assert datasets_beyond(dz, domain_id, old_id, "upstream", between) == {TOPIC_ID}
    later = T0 + timedelta(hours=2)
    assert datasets_beyond(dz, domain_id, TOPIC_ID, "downstream", later) == {new_id, audit_id}
    assert datasets_beyond(dz, domain_id, old_id, "upstream", later) == set()


def test_a_closing_run_with_no_outputs_takes_the_job_s_edge_away(dz):
    domain_id = new_domain(dz)
    job = "shop-archive-sink/shop.sales.orders"
    post_run(dz, domain_id, job, [TOPIC], [table(OLD_TABLE)], T0)
    post_run(dz, domain_id, job, [TOPIC], [], T0 + timedelta(hours=1))
    assert datasets_beyond(dz, domain_id, TOPIC_ID, "downstream") == set()
    assert datasets_beyond(dz, domain_id, glue_source_identifier(*OLD_TABLE), "upstream") == set()
    # The run that closed the job stays visible from the topic: it reads it, writes nothing.
    topic = dz.get_lineage_node(domainIdentifier=domain_id, identifier=TOPIC_ID)
    (reference,) = topic["downstreamNodes"]
    assert reference["eventTimestamp"] == T0 + timedelta(hours=1)


def test_the_events_of_one_run_add_up_and_replace_the_job_s_earlier_run(dz):
    # A run split over several events (RUNNING, then COMPLETE) is one run: its parts'
    # datasets are all its edges, and it is the job's latest run.
    domain_id = new_domain(dz)
    job = "sink/shop.sales.orders"
    post_run(dz, domain_id, job, [TOPIC], [table(AUDIT)], T0 - timedelta(hours=1))
    run_id = str(uuid.uuid4())
    post_run(dz, domain_id, job, [TOPIC], [table(OLD_TABLE)], T0, run_id, RunState.RUNNING)
    post_run(dz, domain_id, job, [TOPIC], [table(NEW_TABLE)], T0, run_id, RunState.COMPLETE)
    assert datasets_beyond(dz, domain_id, TOPIC_ID, "downstream") == {
        glue_source_identifier(*OLD_TABLE),
        glue_source_identifier(*NEW_TABLE),
    }
