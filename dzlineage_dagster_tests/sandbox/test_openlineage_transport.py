"""openlineage-python's own DataZone transport, pointed at the sandbox by AWS_ENDPOINT_URL alone,
posts RunEvents that the emulator takes unchanged and turns into lineage."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

import pytest
from botocore.exceptions import ClientError
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.serde import Serde
from openlineage.client.uuid import generate_new_uuid

TOPIC_NAMESPACE = "kafka://b-1.cdc.kafka.us-east-1.amazonaws.com:9098"
GLUE_NAMESPACE = "arn:aws:glue:us-east-1:123456789012"
PRODUCER = "https://github.com/example/dzlineage-dagster"


def datazone_client(domain_id: str) -> OpenLineageClient:
    return OpenLineageClient(
        config={"transport": {"type": "amazon_datazone_api", "domainId": domain_id}}
    )


def sink_run_event(run_id: str) -> RunEvent:
    return RunEvent(
        eventType=RunState.COMPLETE,
        eventTime=datetime.now(timezone.utc).isoformat(),
        run=Run(runId=run_id),
        job=Job(namespace="cdc", name="iceberg-sink"),
        inputs=[InputDataset(namespace=TOPIC_NAMESPACE, name="cdc.public.orders")],
        outputs=[OutputDataset(namespace=f"{GLUE_NAMESPACE}:table", name="lake/orders")],
        producer=PRODUCER,
    )


@pytest.fixture
def domain_id(sandbox) -> str:
    created = sandbox.client("datazone").create_domain(
        name=f"lineage-{uuid.uuid4().hex[:12]}",
        domainExecutionRole="arn:aws:iam::123456789012:role/DataZoneDomainExecution",
    )
    return created["id"]


def test_the_transport_posts_run_events_that_become_lineage(sandbox, sandbox_env, domain_id):
    run_id = str(generate_new_uuid())
    event = sink_run_event(run_id)
    client = datazone_client(domain_id)
    assert client.transport.kind == "amazon_datazone_api"

    client.emit(event)

    dz = sandbox.client("datazone")
    (listed,) = dz.list_lineage_events(domainIdentifier=domain_id)["items"]
    summary = listed["eventSummary"]["openLineageRunEventSummary"]
    assert (summary["eventType"], summary["runId"]) == ("COMPLETE", run_id)
    posted = dz.get_lineage_event(domainIdentifier=domain_id, identifier=listed["id"])
    assert posted["event"].read() == Serde.to_json(event).encode("utf-8")

    table = dz.get_lineage_node(
        domainIdentifier=domain_id, identifier=f"{GLUE_NAMESPACE}:table/lake/orders"
    )
    (run_reference,) = table["upstreamNodes"]
    run = dz.get_lineage_node(domainIdentifier=domain_id, identifier=run_reference["id"])
    assert run["sourceIdentifier"] == f"cdc.iceberg-sink/{run_id}"
    topic = dz.get_lineage_node(
        domainIdentifier=domain_id, identifier=run["upstreamNodes"][0]["id"]
    )
    assert topic["sourceIdentifier"] == f"{TOPIC_NAMESPACE}/cdc.public.orders"


def test_a_rejected_event_surfaces_as_the_transport_error(sandbox_env):
    client = datazone_client("dzd_nosuchdomain00")
    with pytest.raises(RuntimeError, match="Failed to send lineage event") as raised:
        client.emit(sink_run_event(str(generate_new_uuid())))
    cause = raised.value.__cause__
    assert isinstance(cause, ClientError)
    assert cause.response["Error"]["Code"] == "ResourceNotFoundException"
