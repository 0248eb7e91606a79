"""The Glue Data Catalog's lineage API as the sandbox answers it (botocore's ``glue`` model and
the Glue developer guide's "Data lineage in the AWS Glue Data Catalog"). Real boto3 clients
over HTTP."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone
from typing import Any

import pytest
from botocore.exceptions import ClientError

REGION, ACCOUNT = "us-east-1", "123456789012"
GLUE_CATALOG = f"arn:aws:glue:{REGION}:{ACCOUNT}"
PRODUCER = "https://github.com/example/dzlineage-tests"
RUN_EVENT_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
DATASET_EVENT_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent"


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def run_event(
    job: tuple[str, str],
    inputs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    run_id: str | None = None,
    event_type: str = "COMPLETE",
    **extra: Any,
) -> str:
    return json.dumps(
        {
            "eventType": event_type,
            "eventTime": datetime.now(timezone.utc).isoformat(),
            "producer": PRODUCER,
            "schemaURL": RUN_EVENT_URL,
            "run": {"runId": run_id or str(uuid.uuid4())},
            "job": {"namespace": job[0], "name": job[1]},
            "inputs": inputs,
            "outputs": outputs,
            **extra,
        }
    )


def glue_table(database: str, table: str, **facets: Any) -> dict[str, Any]:
    """A table in OpenLineage's Glue naming, as the support matrix identifies it by ARN."""
    return {"namespace": GLUE_CATALOG, "name": f"table/{database}/{table}", "facets": facets}


def arn(database: str, table: str) -> str:
    return f"{GLUE_CATALOG}:table/{database}/{table}"


@pytest.fixture(scope="module")
def glue(sandbox):
    return sandbox.client("glue")


def node(glue, identifier: str) -> dict[str, Any]:
    return glue.get_lineage_node(Identifier=identifier)


def test_a_run_event_builds_job_run_and_dataset_nodes_found_by_id_or_source(glue):
    database, job = unique("shop"), unique("orders_job")
    topic = {"namespace": "kafka://b-1.demo:9098", "name": unique("shop.orders")}
    run_id = str(uuid.uuid4())

    glue.post_lineage_event(
        Event=run_event(("kafka-connect", job), [topic], [glue_table(database, "orders")], run_id)
    )

    table = node(glue, arn(database, "orders"))
    assert table["TypeName"] == "amazon.glue.DatasetLineageNodeType"
    assert table["SourceIdentifier"] == arn(database, "orders")
    assert table["Name"] == f"{database}.orders"
    (run_ref,) = table["UpstreamNodes"]
    run = node(glue, run_ref["Id"])
    assert run["TypeName"] == "amazon.glue.JobRunLineageNodeType"
    assert run["SourceIdentifier"] == f"kafka-connect.{job}/{run_id}"
    assert run["DownstreamNodes"] == [{"Id": table["Id"]}]
    (topic_ref,) = run["UpstreamNodes"]
    assert (
        node(glue, topic_ref["Id"])["SourceIdentifier"] == f"{topic['namespace']}/{topic['name']}"
    )
    job_node = node(glue, f"kafka-connect.{job}")
    assert (job_node["TypeName"], job_node["Name"]) == (
        "amazon.glue.JobLineageNodeType",
        f"kafka-connect.{job}",
    )
    assert node(glue, table["Id"])["SourceIdentifier"] == arn(database, "orders")


def test_s3_locations_are_one_node_whichever_way_the_path_starts(glue):
    bucket = f"s3://{unique('lake').replace('_', '-')}"
    job = unique("copy")
    glue.post_lineage_event(
        Event=run_event(("spark", job), [{"namespace": bucket, "name": "/raw/orders"}], [])
    )
    glue.post_lineage_event(
        Event=run_event(("spark", job), [{"namespace": bucket, "name": "raw/orders"}], [])
    )

    location = node(glue, f"{bucket}/raw/orders")
    assert location["Name"] == "raw/orders"
    # Two runs of one job: the dataset shows only the job's latest run, as DataZone's view does.
    assert len(location["DownstreamNodes"]) == 1


def test_an_unknown_node_is_entity_not_found(glue):
    with pytest.raises(ClientError) as raised:
        node(glue, f"{GLUE_CATALOG}:table/nowhere/{unique('t')}")
    assert raised.value.response["Error"]["Code"] == "EntityNotFoundException"


def test_create_table_records_location_to_glue_manual_job_to_table(glue):
    database, table = unique("lakehouse"), "orders"
    location = f"s3://shop-lake/warehouse/{database}.db/{table}"
    glue.create_database(DatabaseInput={"Name": database})
    glue.create_table(
        DatabaseName=database,
        TableInput={
            "Name": table,
            "StorageDescriptor": {
                "Location": location,
                "Columns": [{"Name": "id", "Type": "bigint"}, {"Name": "total", "Type": "double"}],
            },
        },
    )

    table_node = node(glue, arn(database, table))
    schema = next(f for f in table_node["FormsOutput"] if f["TypeName"] == "openlineage.schema")
    assert [f["name"] for f in json.loads(schema["Content"])["fields"]] == ["id", "total"]
    (run_ref,) = table_node["UpstreamNodes"]
    run = node(glue, run_ref["Id"])
    assert run["Name"] == f"glue_manual.{database}.{table}"
    (location_ref,) = run["UpstreamNodes"]
    assert node(glue, location_ref["Id"])["SourceIdentifier"] == location
    job = node(glue, f"glue_manual.{database}.{table}")
    assert job["Description"] == f"Created by arn:aws:iam::{ACCOUNT}:user/moto"
    assert glue.get_table(DatabaseName=database, Name=table)["Table"]["Name"] == table
