"""DataZone's lineage as AWS processes it: asynchronously, possibly failing after acceptance,
and with the facets of dataset nodes kept as forms. Real boto3 clients over HTTP."""

from __future__ import annotations

import json
import time
import urllib.error
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from botocore.exceptions import ClientError

from dzlineage_dagster.core.lineage.openlineage import (
    DatasetSpec,
    build_run_events,
    event_json,
    glue_dataset,
    glue_source_identifier,
    sink_hop_column_lineage,
)
from dzlineage_dagster.core.schemas.avro import Column
from dzlineage_dagster.sandbox.emulators.datazone.lineage import LineageEventRecord
from dzlineage_dagster.sandbox.server.app import Sandbox
from dzlineage_dagster.sandbox.server.control import sandbox_environment
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster_tests.clients import sandbox_client

ROLE = "arn:aws:iam::123456789012:role/DataZoneDomainExecution"
PRODUCER = "https://github.com/example/dzlineage-tests"
TOPIC = DatasetSpec(
    "kafka://b-1.demo:9098",
    "shop.sales.orders",
    [Column("id", "long", True, None), Column("total", "double", True, None)],
)
TABLE_AT = ("us-east-1", "123456789012", "lakehouse", "sales_orders")


def new_domain(dz) -> str:
    return dz.create_domain(name=f"lineage-{uuid.uuid4().hex[:10]}", domainExecutionRole=ROLE)["id"]


def sink_events(run_id: str, when: datetime | None = None) -> list[str]:
    """START and COMPLETE of topic -> Glue table, the way the product builds them."""
    table_columns = [Column("id", "long", True, None), Column("total", "double", True, None)]
    namespace, name = glue_dataset(*TABLE_AT)
    table = DatasetSpec(
        namespace,
        name,
        table_columns,
        sink_hop_column_lineage(table_columns, TOPIC, field_prefix="after."),
    )
    events = build_run_events(
        job_namespace="kafka-connect",
        job_name="shop-iceberg-sink",
        inputs=[TOPIC],
        outputs=[table],
        run_id=run_id,
        event_time=when or datetime.now(timezone.utc),
        producer=PRODUCER,
    )
    return [event_json(event) for event in events]


def post_all(dz, domain_id: str, payloads: list[str]) -> list[str]:
    return [
        dz.post_lineage_event(domainIdentifier=domain_id, event=p.encode())["id"] for p in payloads
    ]


def status_of(dz, domain_id: str, event_id: str) -> str:
    return dz.get_lineage_event(domainIdentifier=domain_id, identifier=event_id)["processingStatus"]


@pytest.fixture(scope="module")
def dz(sandbox):
    return sandbox.client("datazone")


@pytest.fixture
def faults(sandbox):
    yield sandbox.control
    sandbox.control.clear_faults()


def test_dataset_nodes_keep_their_facets_as_forms(dz):
    domain_id = new_domain(dz)
    payloads = sink_events(str(uuid.uuid4()))
    post_all(dz, domain_id, payloads)
    sent = json.loads(payloads[1])["outputs"][0]["facets"]

    table = dz.get_lineage_node(
        domainIdentifier=domain_id, identifier=glue_source_identifier(*TABLE_AT)
    )
    forms = {form["formName"]: json.loads(form["content"]) for form in table["formsOutput"]}
    assert forms == {"schema": sent["schema"], "columnLineage": sent["columnLineage"]}
    assert forms["columnLineage"]["fields"]["total"]["inputFields"][0]["field"] == "after.total"
    topic = dz.get_lineage_node(
        domainIdentifier=domain_id, identifier=f"{TOPIC.namespace}/{TOPIC.name}"
    )
    topic_forms = {form["formName"]: json.loads(form["content"]) for form in topic["formsOutput"]}
    assert [f["name"] for f in topic_forms["schema"]["fields"]] == ["id", "total"]


def test_a_node_shows_the_facets_of_its_version_at_an_event_time(dz):
    domain_id = new_domain(dz)
    early = datetime(2025, 3, 1, 12, 0, tzinfo=timezone.utc)
    post_all(dz, domain_id, sink_events(str(uuid.uuid4()), early))
    later_event = json.loads(sink_events(str(uuid.uuid4()), early + timedelta(hours=1))[1])
    later_event["outputs"][0]["facets"]["schema"]["fields"].append(
        {"name": "note", "type": "string"}
    )
    post_all(dz, domain_id, [json.dumps(later_event)])

    def columns(**params) -> list[str]:
        node = dz.get_lineage_node(
            domainIdentifier=domain_id, identifier=glue_source_identifier(*TABLE_AT), **params
        )
        schema = next(f for f in node["formsOutput"] if f["formName"] == "schema")
        return [field["name"] for field in json.loads(schema["content"])["fields"]]

    assert columns() == ["id", "total", "note"]
    assert columns(eventTimestamp=early + timedelta(minutes=1)) == ["id", "total"]


def test_processing_status_moves_from_requested_to_processing_to_its_outcome():
    accepted = datetime(2026, 12, 7, tzinfo=timezone.utc)
    record = LineageEventRecord(
        id="e",
        payload=b"",
        event=None,
        created_at=accepted,
        created_by="someone",
        processed_at=accepted + timedelta(seconds=1),
    )
    phases = [record.processing_status(accepted + timedelta(seconds=s)) for s in (0, 0.49, 0.5, 1)]
    assert phases == ["REQUESTED", "REQUESTED", "PROCESSING", "PROCESSING"]
    record.outcome = "SUCCESS"
    assert record.processing_status(accepted) == "SUCCESS"


def test_an_accepted_event_is_processed_later_and_its_nodes_appear_on_success():
    processing = 1.0
    with Sandbox(lineage_processing_seconds=processing) as slow:
        dz = sandbox_client(sandbox_environment(slow.endpoint_url), "datazone")
        domain_id = new_domain(dz)
        accepted = time.monotonic()
        start_id, complete_id = post_all(dz, domain_id, sink_events(str(uuid.uuid4())))
        table = glue_source_identifier(*TABLE_AT)

        seen = [status_of(dz, domain_id, complete_id)]
        with pytest.raises(ClientError, match="ResourceNotFoundException"):
            dz.get_lineage_node(domainIdentifier=domain_id, identifier=table)
        listed = dz.list_lineage_events(domainIdentifier=domain_id, processingStatus="REQUESTED")
        assert {item["id"] for item in listed["items"]} <= {start_id, complete_id}
        while seen[-1] != "SUCCESS" and time.monotonic() - accepted < 10 * processing:
            time.sleep(processing / 10)
            seen.append(status_of(dz, domain_id, complete_id))

        # Never back: a busy machine may poll past a phase (the phases' bounds are
        # test_processing_status_moves_from_requested_to_processing_to_its_outcome's).
        order = ["REQUESTED", "PROCESSING", "SUCCESS"]
        assert seen == sorted(seen, key=order.index) and seen[-1] == "SUCCESS", seen
        assert time.monotonic() - accepted >= processing
        assert status_of(dz, domain_id, start_id) == "SUCCESS"
        node = dz.get_lineage_node(domainIdentifier=domain_id, identifier=table)
        assert node["upstreamNodes"]


def test_a_fail_after_accept_fault_fails_the_event_after_posting_succeeded(dz, faults):
    domain_id = new_domain(dz)
    faults.set_faults(
        FaultRule(
            service="datazone", operation="PostLineageEvent", kind="fail-after-accept", count=1
        )
    )
    failed_run, good_run = str(uuid.uuid4()), str(uuid.uuid4())
    failed_id = post_all(dz, domain_id, sink_events(failed_run)[1:])[0]
    good_id = post_all(dz, domain_id, sink_events(good_run)[1:])[0]

    assert status_of(dz, domain_id, failed_id) == "FAILED"
    assert status_of(dz, domain_id, good_id) == "SUCCESS"
    failed = dz.list_lineage_events(domainIdentifier=domain_id, processingStatus="FAILED")
    assert [item["id"] for item in failed["items"]] == [failed_id]
    assert failed["items"][0]["eventSummary"]["openLineageRunEventSummary"]["runId"] == failed_run
    succeeded = dz.list_lineage_events(domainIdentifier=domain_id, processingStatus="SUCCESS")
    assert [item["id"] for item in succeeded["items"]] == [good_id]
    # Only the successful run drew its job-run node.
    dz.get_lineage_node(
        domainIdentifier=domain_id, identifier=f"kafka-connect.shop-iceberg-sink/{good_run}"
    )
    with pytest.raises(ClientError, match="ResourceNotFoundException"):
        dz.get_lineage_node(
            domainIdentifier=domain_id, identifier=f"kafka-connect.shop-iceberg-sink/{failed_run}"
        )


@pytest.mark.parametrize(
    ("rule", "problem"),
    [
        (
            {"service": "ssm", "kind": "fail-after-accept"},
            "applies to datazone PostLineageEvent, UpdateAssetOwner; glue PostLineageEvent only",
        ),
        ({"service": "datazone", "operation": "*", "kind": "fail-after-accept"}, "only"),
    ],
)
def test_a_deferred_fault_must_name_the_call_it_applies_to(sandbox, rule, problem):
    with pytest.raises(urllib.error.HTTPError) as raised:
        sandbox.control._call("PUT", "faults", {"rules": [rule]})
    assert raised.value.code == 400
    assert problem in raised.value.read().decode()
