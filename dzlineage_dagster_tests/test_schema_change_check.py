"""The `schema_change_is_compatible` check of a topic's partition on the seeded demo: the
catalog sync that reads a breaking version reports ERROR naming the Iceberg columns, the assets
downstream (the table's Dagster key and the team's model DataZone shows downstream of it) and
the owners (the schema's `owner` tag, the sink connector's `dzlineage.owners`, DataZone's
project), and why and what to do; an additive version passes, naming its new columns and what
they reach; an unchanged one is not evaluated again."""

from __future__ import annotations

import json
import uuid

import pytest
from dagster import (
    AssetCheckKey,
    AssetCheckSeverity,
    AssetKey,
)

from dzlineage_dagster.definitions import defs
from dzlineage_dagster_tests.test_connector_lineage import create_connector, posted_events
from dzlineage_dagster_tests.test_impact_cli import TOPIC, register_breaking_version

CHECK = AssetCheckKey(AssetKey("registry_schema"), "schema_change_is_compatible")
SINK = "shop-iceberg-sink"
MODEL = "lakehouse.daily_revenue"


def evaluations(result) -> list:
    return [e for e in result.get_asset_check_evaluations() if e.asset_check_key == CHECK]


def set_sink_owners(platform, owners: str) -> None:
    """The sink connector re-created with `dzlineage.owners` (MSK Connect updates capacity
    only, so an operator changes a configuration by re-creating the connector)."""
    kafkaconnect = platform.client("kafkaconnect")
    (summary,) = [
        c for c in kafkaconnect.list_connectors()["connectors"] if c["connectorName"] == SINK
    ]
    config = kafkaconnect.describe_connector(connectorArn=summary["connectorArn"])[
        "connectorConfiguration"
    ]
    kafkaconnect.delete_connector(connectorArn=summary["connectorArn"])
    create_connector(platform, SINK, {**config, "dzlineage.owners": owners})


def post_downstream_model(platform) -> None:
    """A team's job reading lakehouse.sales_orders into its model, posted to DataZone as the
    OpenLineage run event such a job emits (the table named as the sync names it)."""
    table = next(
        output
        for event in posted_events(platform)
        for output in event["outputs"]
        if output["name"].endswith("sales_orders")
    )
    event = {
        "eventType": "COMPLETE",
        "eventTime": "2026-01-02T00:00:00Z",
        "run": {"runId": str(uuid.uuid4())},
        "job": {"namespace": "spark://analytics", "name": "daily_revenue_job"},
        "inputs": [{"namespace": table["namespace"], "name": table["name"]}],
        "outputs": [{"namespace": table["namespace"], "name": MODEL}],
        "producer": "https://example.invalid/analytics",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }
    platform.client("datazone").post_lineage_event(
        domainIdentifier=platform.settings.domain_id, event=json.dumps(event).encode()
    )


@pytest.fixture
def synced(platform):
    """The demo synced once, its owners configured, a team's model downstream of the table."""
    assert platform.sync().success
    platform.client("glue").tag_resource(
        ResourceArn=platform.schema_arn(TOPIC), TagsToAdd={"owner": "alice@example.com"}
    )
    set_sink_owners(platform, "team:lakehouse, bob@example.com")
    post_downstream_model(platform)
    return platform


def test_a_breaking_version_fails_the_topic_check_with_error_naming_columns_assets_owners(
    synced,
):
    register_breaking_version(synced)
    result = synced.sync([TOPIC])
    assert result.success
    (evaluation,) = evaluations(result)
    assert evaluation.partition == TOPIC
    assert not evaluation.passed and evaluation.severity == AssetCheckSeverity.ERROR
    project = synced.client("datazone").get_project(
        domainIdentifier=synced.settings.domain_id, identifier=synced.settings.project_id
    )
    described = evaluation.description
    for named in (
        "lakehouse.sales_orders.status",
        "lakehouse.sales_orders.total",
        "iceberg/lakehouse/sales_orders (Dagster)",
        MODEL,
        "alice@example.com",
        "team:lakehouse",
        "bob@example.com",
        f"team:{project['name']}",
    ):
        assert named in described, (named, described)
    metadata = evaluation.metadata
    assert {(a["column"], a["change"]) for a in metadata["affected_columns"].value} == {
        ("status", "removed"),
        ("total", "type_changed"),
    }
    downstream = {(d["system"], d["name"]) for d in metadata["downstream_assets"].value}
    assert downstream == {("dagster", "iceberg/lakehouse/sales_orders"), ("datazone", MODEL)}
    owners = {(o["name"], o["source"]) for o in metadata["owners"].value}
    assert {
        ("alice@example.com", "glue-schema-tag:owner"),
        ("team:lakehouse", f"connector:{SINK}"),
        (f"team:{project['name']}", "datazone-project"),
    } <= owners
    # The project's creator, its only owner, is the principal the sync runs as: no one to tell.
    assert not any(source == "datazone-project-owner" for _, source in owners)
    assert "| `status` | removed | yes |" in metadata["impact"].value
    assert {"why", "what to do"} <= set(metadata)


def test_an_additive_version_passes_and_an_unchanged_topic_is_not_evaluated_again(platform):
    """A column added is compatible (the sink adds it to the table): no yellow "Failed" in
    the UI, but the description names the column and the metadata what it reaches."""
    assert platform.sync().success
    platform.register_new_version(TOPIC, "coupon")
    (evaluation,) = evaluations(platform.sync([TOPIC]))
    assert evaluation.passed
    assert evaluation.description == f"{TOPIC} v1 -> v2: additive (coupon)"
    assert evaluation.metadata["verdict"].value == "additive"
    assert [c["column"] for c in evaluation.metadata["changes"].value] == ["coupon"]
    assert evaluations(platform.sync([TOPIC])) == []


def test_the_check_runs_by_hand_for_one_topic_as_the_ui_launches_it(synced):
    """The UI's "Execute" on the check of one partition launches the location's implicit asset
    job, subset to that check alone, tagged with the partition: the same evaluation as the
    sync's, without a sync."""
    register_breaking_version(synced)
    synced.instance.add_dynamic_partitions("kafka_topics", [TOPIC])
    job = defs.resolve_implicit_global_asset_job_def()
    by_hand = job.get_subset(asset_selection=set(), asset_check_selection={CHECK})
    result = by_hand.execute_in_process(instance=synced.instance, partition_key=TOPIC)
    (evaluation,) = evaluations(result)
    assert evaluation.partition == TOPIC
    assert not evaluation.passed and evaluation.severity == AssetCheckSeverity.ERROR
    assert "lakehouse.sales_orders.status" in evaluation.description
    # Nothing was materialized: the check reads, the sync writes.
    assert result.get_asset_materialization_events() == []
