"""The Glue Data Catalog's lineage API as the sandbox answers it (botocore's ``glue`` model and
the Glue developer guide's "Data lineage in the AWS Glue Data Catalog"). Real boto3 clients
over HTTP."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest
from botocore.exceptions import ClientError
from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.lineage.openlineage import glue_dataset
from dzlineage_dagster.sandbox.emulators.datazone.lineage import DatasetRef
from dzlineage_dagster.sandbox.emulators.glue_lineage.events import resolved
from dzlineage_dagster.sandbox.server.ambiguities import CHOICES, Ambiguities
from dzlineage_dagster.sandbox.server.app import Sandbox
from dzlineage_dagster.sandbox.server.control import sandbox_environment
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster_tests.clients import sandbox_client

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


@pytest.fixture(params=CHOICES["glue_lineage_repost"])
def repost_reading(request, sandbox) -> Iterator[str]:
    """The sandbox under each reading of a repost, back to the default after the test."""
    sandbox.control.set_ambiguities(glue_lineage_repost=request.param)
    yield request.param
    sandbox.control.set_ambiguities(glue_lineage_repost=Ambiguities().glue_lineage_repost)


def node(glue, identifier: str) -> dict[str, Any]:
    return glue.get_lineage_node(Identifier=identifier)


def forms(lineage_node: dict[str, Any]) -> dict[str, Any]:
    return {f["TypeName"]: json.loads(f["Content"]) for f in lineage_node["FormsOutput"]}


def dataset_event(namespace: str, name: str, **facets: Any) -> str:
    return json.dumps(
        {
            "eventTime": datetime.now(timezone.utc).isoformat(),
            "producer": PRODUCER,
            "schemaURL": DATASET_EVENT_URL,
            "dataset": {"namespace": namespace, "name": name, "facets": facets},
        }
    )


def error_of(call, **params) -> tuple[str, str, int]:
    with pytest.raises(ClientError) as raised:
        call(**params)
    response = raised.value.response
    return (
        response["Error"]["Code"],
        response["Error"]["Message"],
        response["ResponseMetadata"]["HTTPStatusCode"],
    )


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


NAME_PART = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="/", exclude_categories=["Cs"]),
    min_size=1,
    max_size=20,
)


@given(database=NAME_PART, table=NAME_PART)
def test_every_naming_of_a_glue_table_resolves_to_its_arn(database, table):
    arn_of_table = arn(database, table)
    project = DatasetRef(*glue_dataset(REGION, ACCOUNT, database, table))
    openlineage = DatasetRef(GLUE_CATALOG, f"table/{database}/{table}")
    link = {"namespace": GLUE_CATALOG, "name": f"table/{database}/{table}", "type": "TABLE"}
    location = DatasetRef("s3://lake", f"warehouse/{database}.db/{table}")

    for ref, facets in (
        (project, {}),
        (openlineage, {}),
        (location, {"symlinks": {"identifiers": [link]}}),
    ):
        assert resolved(ref, facets).source_identifier() == arn_of_table


@given(
    bucket=st.from_regex(r"[a-z0-9][a-z0-9.-]{1,20}[a-z0-9]", fullmatch=True),
    path=st.lists(NAME_PART, min_size=1, max_size=4).map("/".join),
)
def test_an_s3_location_is_one_identity_whichever_way_its_path_starts(bucket, path):
    identities = {
        resolved(DatasetRef(f"s3://{bucket}", name), {}).source_identifier()
        for name in (path, f"/{path}")
    }
    assert identities == {f"s3://{bucket}/{path}"}


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


def test_a_dataset_event_updates_the_dataset_node_s_forms_and_draws_no_edge(glue):
    topic = ("kafka://b-1.demo:9098", unique("shop.customers"))
    schema = {"fields": [{"name": "id", "type": "long"}]}
    owners = {"owners": [{"name": "team:shop-platform", "type": "TEAM"}]}
    glue.post_lineage_event(Event=dataset_event(*topic, schema=schema, ownership=owners))

    only_facets = node(glue, "/".join(topic))
    assert only_facets["Name"] == topic[1]
    assert forms(only_facets) == {"openlineage.schema": schema, "openlineage.ownership": owners}
    assert only_facets["UpstreamNodes"] == only_facets["DownstreamNodes"] == []

    job = unique("sink")
    glue.post_lineage_event(
        Event=run_event(("kafka-connect", job), [{"namespace": topic[0], "name": topic[1]}], [])
    )
    wider = {"fields": [*schema["fields"], {"name": "email", "type": "string"}]}
    glue.post_lineage_event(Event=dataset_event(*topic, schema=wider))
    after = node(glue, "/".join(topic))
    assert after["Id"] == only_facets["Id"]
    assert forms(after) == {"openlineage.schema": wider, "openlineage.ownership": owners}
    assert len(after["DownstreamNodes"]) == 1


def test_job_and_run_facets_are_forms_and_a_run_lists_its_events(glue):
    job, run_id = unique("daily"), str(uuid.uuid4())
    sql = {"query": "INSERT INTO t SELECT 1"}
    job_type = {"processingType": "BATCH", "integration": "SPARK", "jobType": "SQL_JOB"}
    for event_type in ("START", "COMPLETE"):
        event = json.loads(
            run_event(("spark", job), [], [glue_table(unique("db"), "t")], run_id, event_type)
        )
        event["run"]["facets"] = {"nominalTime": {"nominalStartTime": "x"}}
        event["job"]["facets"] = {"sql": sql, "jobType": job_type}
        glue.post_lineage_event(Event=json.dumps(event))

    assert forms(node(glue, f"spark.{job}")) == {
        "openlineage.sql": sql,
        "openlineage.jobType": job_type,
    }
    run = forms(node(glue, f"spark.{job}/{run_id}"))
    assert run["openlineage.nominalTime"] == {"nominalStartTime": "x"}
    events = run["amazon.glue.JobRunEvents"]
    assert events["runId"] == run_id
    assert [e["eventType"] for e in events["events"]] == ["START", "COMPLETE"]


#: Over the model's 300,000 characters; under them, but over the guide's 300,000 bytes.
OVERSIZED = json.dumps({"padding": "x" * 300_000})
OVER_300_000_BYTES = json.dumps(
    {**json.loads(run_event(("spark", "j"), [], [])), "note": "é" * 150_000}, ensure_ascii=False
)


@pytest.mark.parametrize(
    ("event", "named"),
    [
        ("{not json", "not valid JSON"),
        ("[]", "JSON object"),
        (json.dumps({"eventTime": "2026-12-07T00:00:00Z", "schemaURL": "u"}), "producer"),
        (
            run_event(("spark", "j"), [], [], event_type="FINISHED"),
            "eventType",
        ),
        (
            json.dumps(
                {
                    "eventTime": "2026-12-07T00:00:00Z",
                    "producer": PRODUCER,
                    "schemaURL": RUN_EVENT_URL,
                    "job": {"namespace": "spark", "name": "j"},
                }
            ),
            "Job events are not supported",
        ),
        (
            json.dumps(
                {
                    "eventTime": "2026-12-07T00:00:00Z",
                    "producer": PRODUCER,
                    "schemaURL": DATASET_EVENT_URL,
                    "dataset": {"namespace": "kafka://b:9092"},
                }
            ),
            "namespace and a name",
        ),
        (run_event(("spark", "j"), [{"namespace": "s3://b"}], []), "inputs[] needs"),
        (OVERSIZED, "less than or equal to 300000"),
        (OVER_300_000_BYTES, "at most 300,000"),
    ],
)
def test_an_event_glue_refuses_is_invalid_input_naming_what_is_wrong(glue, event, named):
    code, message, status = error_of(glue.post_lineage_event, Event=event)
    assert (code, status) == ("InvalidInputException", 400)
    assert named in message


def test_requests_are_held_to_botocore_s_model(glue):
    code, message, _ = error_of(glue.get_lineage_node, Identifier="x" * 2151)
    assert code == "InvalidInputException"
    assert "2150" in message


def test_deleting_a_table_keeps_its_lineage(glue):
    database = unique("gone")
    glue.create_database(DatabaseInput={"Name": database})
    glue.create_table(
        DatabaseName=database,
        TableInput={"Name": "t", "StorageDescriptor": {"Location": "s3://lake/gone/t"}},
    )
    glue.delete_table(DatabaseName=database, Name="t")

    assert node(glue, arn(database, "t"))["UpstreamNodes"]


def test_a_resource_link_gets_no_lineage(glue):
    database = unique("links")
    glue.create_database(DatabaseInput={"Name": database})
    glue.create_table(
        DatabaseName=database,
        TableInput={
            "Name": "t",
            "TargetTable": {"CatalogId": "111122223333", "DatabaseName": "sales", "Name": "t"},
        },
    )

    assert error_of(glue.get_lineage_node, Identifier=arn(database, "t"))[0] == (
        "EntityNotFoundException"
    )


def test_the_project_s_table_naming_lands_on_the_node_create_table_made(glue):
    """The product posts a Glue table as ``arn:aws:glue:<r>:<a>:table`` + ``<db>/<t>``; that,
    OpenLineage's Glue naming and a symlinked S3 location are all the table's one node."""
    database = unique("sinks")
    glue.create_database(DatabaseInput={"Name": database})
    glue.create_table(
        DatabaseName=database,
        TableInput={"Name": "t", "StorageDescriptor": {"Location": f"s3://lake/{database}/t"}},
    )
    made = node(glue, arn(database, "t"))["Id"]
    namespace, name = glue_dataset(REGION, ACCOUNT, database, "t")
    symlinked = {
        "namespace": "s3://lake",
        "name": f"{database}/t",
        "facets": {"symlinks": {"identifiers": [glue_table(database, "t") | {"type": "TABLE"}]}},
    }
    for output in (
        {"namespace": namespace, "name": name},
        glue_table(database, "t"),
        symlinked,
    ):
        glue.post_lineage_event(Event=run_event(("kafka-connect", unique("sink")), [], [output]))

    table = node(glue, arn(database, "t"))
    assert table["Id"] == made
    # AWS's own glue_manual run and the three sinks' runs, each job's latest.
    assert len(table["UpstreamNodes"]) == 4


def test_update_table_records_lineage_again_only_when_location_or_columns_change(glue):
    database = unique("moving")
    glue.create_database(DatabaseInput={"Name": database})
    storage = {"Location": "s3://lake/a/t", "Columns": [{"Name": "id", "Type": "bigint"}]}
    glue.create_table(DatabaseName=database, TableInput={"Name": "t", "StorageDescriptor": storage})

    def feeding_run() -> str:
        (run,) = node(glue, arn(database, "t"))["UpstreamNodes"]
        return node(glue, run["Id"])["SourceIdentifier"]

    first = feeding_run()
    glue.update_table(
        DatabaseName=database,
        TableInput={"Name": "t", "StorageDescriptor": storage, "Parameters": {"k": "v"}},
    )
    assert feeding_run() == first
    wider = {**storage, "Columns": [*storage["Columns"], {"Name": "note", "Type": "string"}]}
    glue.update_table(DatabaseName=database, TableInput={"Name": "t", "StorageDescriptor": wider})
    assert feeding_run() != first
    assert feeding_run().startswith(f"glue_manual.{database}.t/")
    schema = forms(node(glue, arn(database, "t")))["openlineage.schema"]
    assert [f["name"] for f in schema["fields"]] == ["id", "note"]


def test_a_node_shows_at_most_250_neighbours_each_way(glue):
    job, bucket = unique("wide"), f"s3://{unique('wide').replace('_', '-')}"
    inputs = [{"namespace": bucket, "name": f"/in/{n}"} for n in range(260)]
    glue.post_lineage_event(Event=run_event(("spark", job), inputs, []))

    (run,) = node(glue, f"{bucket}/in/0")["DownstreamNodes"]
    assert len(node(glue, run["Id"])["UpstreamNodes"]) == 250


def test_the_same_event_posted_twice_under_each_reading(glue, repost_reading):
    events = {"same-run": 1, "new-event": 2}[repost_reading]
    database, job, run_id = unique("repost"), unique("sink"), str(uuid.uuid4())
    event = run_event(("kafka-connect", job), [], [glue_table(database, "t")], run_id)

    glue.post_lineage_event(Event=event)
    glue.post_lineage_event(Event=event)

    assert len(node(glue, arn(database, "t"))["UpstreamNodes"]) == 1
    run = forms(node(glue, f"kafka-connect.{job}/{run_id}"))["amazon.glue.JobRunEvents"]
    assert [e["eventType"] for e in run["events"]] == ["COMPLETE"] * events


def test_access_denied_names_the_iam_action(glue, sandbox):
    sandbox.control.set_faults(FaultRule("glue", "PostLineageEvent", "access-denied"))
    try:
        code, message, status = error_of(
            glue.post_lineage_event, Event=run_event(("spark", "j"), [], [])
        )
    finally:
        sandbox.control.clear_faults()

    assert (code, status) == ("AccessDeniedException", 400)
    assert "not authorized to perform: glue:PostLineageEvent" in message


@pytest.mark.parametrize(
    ("kind", "answer"),
    [
        ("throttle", ("ThrottlingException", 400)),
        ("server-error", ("InternalServiceException", 500)),
    ],
)
def test_injected_faults_answer_with_glue_s_codes(glue, sandbox, kind, answer):
    sandbox.control.set_faults(FaultRule("glue", "GetLineageNode", kind))
    try:
        code, _, status = error_of(glue.get_lineage_node, Identifier="anything")
    finally:
        sandbox.control.clear_faults()

    assert (code, status) == answer


def test_an_event_whose_processing_fails_after_acceptance_builds_nothing(glue, sandbox):
    database = unique("lost")
    sandbox.control.set_faults(FaultRule("glue", "PostLineageEvent", "fail-after-accept"))
    try:
        glue.post_lineage_event(Event=run_event(("spark", "j"), [], [glue_table(database, "t")]))
    finally:
        sandbox.control.clear_faults()

    assert error_of(glue.get_lineage_node, Identifier=arn(database, "t"))[0] == (
        "EntityNotFoundException"
    )


def test_posts_over_the_quota_are_throttled_as_glue_answers():
    with Sandbox(quotas="glue.PostLineageEvent=1") as server:
        glue = sandbox_client(sandbox_environment(server.endpoint_url), "glue")
        event = run_event(("spark", unique("fast")), [], [])
        glue.post_lineage_event(Event=event)

        code, _, status = error_of(glue.post_lineage_event, Event=event)

    assert (code, status) == ("ThrottlingException", 400)


def test_processing_is_asynchronous_and_reads_advance_it():
    processing = 0.3
    with Sandbox(glue_lineage_processing_seconds=processing) as slow:
        glue = sandbox_client(sandbox_environment(slow.endpoint_url), "glue")
        database = unique("slow")
        glue.create_database(DatabaseInput={"Name": database})
        glue.post_lineage_event(Event=run_event(("spark", "j"), [], [glue_table(database, "t")]))
        glue.create_table(DatabaseName=database, TableInput={"Name": "made"})
        accepted = time.monotonic()  # both were accepted by now

        for table in ("t", "made"):
            with pytest.raises(ClientError, match="EntityNotFoundException"):
                node(glue, arn(database, table))
        while time.monotonic() - accepted < processing:
            time.sleep(processing / 5)

        for table in ("t", "made"):
            assert node(glue, arn(database, table))["SourceIdentifier"] == arn(database, table)


def test_the_demo_s_spark_job_lands_downstream_of_its_cdc_table_in_glue_s_graph(platform):
    """The seeded Iceberg tables carry AWS's own CreateTable lineage, and a materialization of
    the demo's daily_revenue posts what EMR posts: Glue's graph then runs from the S3 location
    through glue_manual.lakehouse.sales_orders to the table, and on through the Spark run to
    lakehouse.daily_revenue, with its column lineage."""
    from dzlineage_dagster.sandbox.demo import downstream

    glue = platform.client("glue")
    region = platform.environment["AWS_REGION"]
    account = platform.client("sts").get_caller_identity()["Account"]
    sales_orders = f"arn:aws:glue:{region}:{account}:table/lakehouse/sales_orders"
    daily_revenue = f"arn:aws:glue:{region}:{account}:table/lakehouse/daily_revenue"

    downstream.daily_revenue()

    sales = node(glue, sales_orders)
    feeding = [node(glue, ref["Id"]) for ref in sales["UpstreamNodes"]]
    assert [run["Name"] for run in feeding] == ["glue_manual.lakehouse.sales_orders"]
    (location,) = feeding[0]["UpstreamNodes"]
    assert node(glue, location["Id"])["SourceIdentifier"] == (
        f"s3://shop-lakehouse-{account}/warehouse/lakehouse.db/sales_orders"
    )
    (spark_ref,) = sales["DownstreamNodes"]
    spark = node(glue, spark_ref["Id"])
    assert spark["Name"] == "default.daily_revenue.append_data_exec_v1.lakehouse_daily_revenue"
    assert [node(glue, ref["Id"])["SourceIdentifier"] for ref in spark["DownstreamNodes"]] == [
        daily_revenue
    ]
    revenue = node(glue, daily_revenue)
    assert spark["Id"] in {ref["Id"] for ref in revenue["UpstreamNodes"]}
    column_lineage = forms(revenue)["openlineage.columnLineage"]
    assert column_lineage["fields"]["revenue"]["inputFields"][0]["field"] == "total"
    assert column_lineage["dataset"][0]["transformations"][0]["subtype"] == "GROUP_BY"


def test_the_demo_s_spark_events_are_valid_openlineage(glue):
    from dzlineage_dagster.sandbox.demo.spark_lineage import CatalogTable, spark_run_events
    from dzlineage_dagster_tests.openlineage_spec import validate_openlineage_event

    location = "s3://lake/warehouse/lakehouse.db"
    source = CatalogTable(
        "lakehouse", "sales_orders", f"{location}/sales_orders", (("id", "bigint"),)
    )
    target = CatalogTable("lakehouse", "daily_revenue", f"{location}/daily_revenue", ())
    events = spark_run_events(
        source, target, GLUE_CATALOG, str(uuid.uuid4()), datetime.now(timezone.utc)
    )

    assert [json.loads(event)["eventType"] for event in events] == ["START", "COMPLETE"]
    for event in events:
        validate_openlineage_event(event)


def test_aws_s_own_job_node_names_the_role_that_made_the_table(sandbox, glue):
    role = sandbox.client("iam").create_role(
        RoleName=unique("sink-connector"),
        AssumeRolePolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
                        "Action": "sts:AssumeRole",
                    }
                ],
            }
        ),
    )["Role"]["Arn"]
    keys = sandbox.client("sts").assume_role(RoleArn=role, RoleSessionName="sink")["Credentials"]
    as_role = sandbox_client(
        {
            **sandbox.environment(),
            "AWS_ACCESS_KEY_ID": keys["AccessKeyId"],
            "AWS_SECRET_ACCESS_KEY": keys["SecretAccessKey"],
            "AWS_SESSION_TOKEN": keys["SessionToken"],
        },
        "glue",
    )
    database = unique("by_role")
    as_role.create_database(DatabaseInput={"Name": database})
    as_role.create_table(DatabaseName=database, TableInput={"Name": "t"})

    assert node(glue, f"glue_manual.{database}.t")["Description"] == f"Created by {role}"
