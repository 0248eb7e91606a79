"""Lineage that tells the truth now (issue 17, cases 4 and 5), on the seeded demo through
`dzlineage sync`, `trace` and `orphans`, and DataZone's timestamp view read back with
GetLineageNode's `eventTimestamp`: a re-routed, deleted or re-added sink and a deleted topic
change what the graph shows, and a sink with many topics shows every topic's edge."""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from datetime import datetime, timezone

import pytest
from openlineage.client.event_v2 import RunState

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.core.identity.glue import glue_dataset
from dzlineage_dagster.core.lineage.openlineage import (
    DatasetSpec,
    build_run_events,
    event_json,
    glue_source_identifier,
)
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster_tests.openlineage_spec import validate_openlineage_event
from dzlineage_dagster_tests.stored_mapping import put_mapping, stored_mappings
from dzlineage_dagster_tests.test_connector_lineage import create_connector, posted_events
from dzlineage_dagster_tests.test_lineage_cli import trace

TOPIC = "shop.archive.orders"
SINK = "shop-archive-sink"
OLD, NEW = "orders_history", "orders_history_v2"


@pytest.fixture
def demo(platform, capsys):
    assert dzlineage(["sync"]) == 0
    capsys.readouterr()
    return platform


def archive_sink(platform) -> tuple[str, dict[str, str]]:
    kafkaconnect = platform.client("kafkaconnect")
    (summary,) = [
        c for c in kafkaconnect.list_connectors()["connectors"] if c["connectorName"] == SINK
    ]
    described = kafkaconnect.describe_connector(connectorArn=summary["connectorArn"])
    return summary["connectorArn"], described["connectorConfiguration"]


def delete_archive_sink(platform) -> dict[str, str]:
    arn, config = archive_sink(platform)
    platform.client("kafkaconnect").delete_connector(connectorArn=arn)
    return config


def sync(capsys) -> str:
    assert dzlineage(["sync"]) == 0
    return capsys.readouterr().out


def downstream_tables(capsys, topic: str = TOPIC) -> set[str]:
    code, out, err = trace(capsys, topic, "--downstream", "--format", "json")
    assert code == 0, err
    return {n["label"] for n in json.loads(out)["nodes"] if n["kind"] == "glue_table"}


def orphans(capsys) -> dict[str, list[str]]:
    assert dzlineage(["orphans", "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)
    found["tables_without_upstream"] = sorted(
        t.rsplit("/", 1)[-1] for t in found["tables_without_upstream"]
    )
    return found


def table_id(platform, table: str) -> str:
    region, account = platform.settings.msk_cluster_arn.split(":")[3:5]
    return glue_source_identifier(region, account, platform.settings.glue_database, table)


def timestamp_view_neighbours(platform, identifier: str, direction: str) -> set[str]:
    """The datasets one run away from the node in DataZone's timestamp view now."""
    datazone = platform.client("datazone")
    at = {"domainIdentifier": platform.settings.domain_id, "eventTimestamp": now()}
    found = set()
    for reference in datazone.get_lineage_node(**at, identifier=identifier)[f"{direction}Nodes"]:
        run = datazone.get_lineage_node(**at, identifier=reference["id"])
        for far in run.get(f"{direction}Nodes", []):
            found.add(datazone.get_lineage_node(**at, identifier=far["id"])["sourceIdentifier"])
    return found


def now() -> datetime:
    return datetime.now(timezone.utc)


def test_a_re_routed_sink_leaves_only_its_new_table_in_trace_orphans_and_datazone(demo, capsys):
    assert downstream_tables(capsys) == {f"lakehouse.{OLD}"}
    demo.client("glue").create_table(DatabaseName="lakehouse", TableInput={"Name": NEW})
    config = delete_archive_sink(demo)
    create_connector(demo, SINK, {**config, "iceberg.tables": f"lakehouse.{NEW}"})
    sync(capsys)

    assert downstream_tables(capsys) == {f"lakehouse.{NEW}"}
    found = orphans(capsys)
    assert found["tables_without_upstream"] == ["daily_revenue", OLD]
    assert TOPIC not in found["topics_without_downstream_table"]
    # DataZone's own timestamp view agrees: the old table has nothing upstream any more.
    assert timestamp_view_neighbours(demo, table_id(demo, OLD), "upstream") == set()
    topic_id = "/".join(demo_topic(demo))
    assert timestamp_view_neighbours(demo, topic_id, "downstream") == {table_id(demo, NEW)}


def update_connector(platform, name: str, config: dict[str, str]) -> None:
    """UpdateConnector of the connector's whole configuration, at its current version."""
    kafkaconnect = platform.client("kafkaconnect")
    (summary,) = [
        c for c in kafkaconnect.list_connectors()["connectors"] if c["connectorName"] == name
    ]
    kafkaconnect.update_connector(
        connectorArn=summary["connectorArn"],
        currentVersion=summary["currentVersion"],
        connectorConfiguration=config,
    )


def test_a_sink_re_routed_in_place_by_update_connector_is_picked_up_by_the_next_sync(demo, capsys):
    """The same connector (same ARN, a new currentVersion): its new table replaces the old one
    under its job, and a topic it no longer subscribes to has its hop closed."""
    demo.client("glue").create_table(DatabaseName="lakehouse", TableInput={"Name": NEW})
    _, config = archive_sink(demo)
    update_connector(demo, SINK, {**config, "iceberg.tables": f"lakehouse.{NEW}"})
    sync(capsys)
    assert downstream_tables(capsys) == {f"lakehouse.{NEW}"}
    assert timestamp_view_neighbours(demo, table_id(demo, OLD), "upstream") == set()

    sales = "shop.sales.orders"
    assert downstream_tables(capsys, sales) == {"lakehouse.sales_orders"}
    sink = demo.client("kafkaconnect").describe_connector(
        connectorArn=next(
            c["connectorArn"]
            for c in demo.client("kafkaconnect").list_connectors()["connectors"]
            if c["connectorName"] == "shop-iceberg-sink"
        )
    )
    inventory_only = {**sink["connectorConfiguration"], "topics.regex": r"shop\.inventory\..*"}
    update_connector(demo, "shop-iceberg-sink", inventory_only)
    out = sync(capsys)
    assert f"closed [kafka-connect.shop-iceberg-sink/{sales}]" in out, out
    assert downstream_tables(capsys, sales) == set()
    assert downstream_tables(capsys, "shop.inventory.products") == {"lakehouse.inventory_products"}


def demo_topic(platform, topic: str = TOPIC) -> tuple[str, str]:
    """The topic's (namespace, name), as the sync names it."""
    return SyncRun(LineageSyncResource.with_settings(platform.settings)).topic_dataset(topic)


def test_a_deleted_sink_s_edge_goes_and_comes_back_when_the_sink_is_re_added(demo, capsys):
    config = delete_archive_sink(demo)
    out = sync(capsys)
    assert f"closed [kafka-connect.{SINK}/{TOPIC}]" in out, out
    runs = [e for e in posted_events(demo) if e["job"]["name"] == f"{SINK}/{TOPIC}"]
    assert len(runs) == 2  # the hop's run, then its closing run: the topic in, nothing out
    (closing,) = [e for e in runs if not e["outputs"]]
    assert [d["name"] for d in closing["inputs"]] == [TOPIC]
    validate_openlineage_event(json.dumps(closing))
    assert downstream_tables(capsys) == set()
    found = orphans(capsys)
    assert TOPIC in found["topics_without_downstream_table"]
    assert OLD in found["tables_without_upstream"]
    # The source hop is untouched: the shards still feed the topic.
    code, out, _ = trace(capsys, TOPIC, "--format", "json")
    assert code == 0 and sum(n["kind"] == "source_table" for n in json.loads(out)["nodes"]) == 2

    # Re-added, and synced by the Dagster job this time (the connector sensor's catalog_sync).
    create_connector(demo, SINK, config)
    assert demo.sync([TOPIC]).success
    assert downstream_tables(capsys) == {f"lakehouse.{OLD}"}
    assert OLD not in orphans(capsys)["tables_without_upstream"]


def test_a_deleted_topic_s_retirement_closes_its_jobs(demo, capsys):
    glue = demo.client("glue")
    topic_id = "/".join(demo_topic(demo))
    glue.delete_schema(SchemaId={"SchemaArn": demo.schema_arn(TOPIC)})
    sync(capsys)
    # Neither hop draws its edge any more: the table has nothing upstream, the source tables
    # feed nothing, though the topic's node stays (DataZone keeps nodes).
    assert timestamp_view_neighbours(demo, table_id(demo, OLD), "upstream") == set()
    assert timestamp_view_neighbours(demo, topic_id, "upstream") == set()
    assert timestamp_view_neighbours(demo, topic_id, "downstream") == set()
    assert OLD in orphans(capsys)["tables_without_upstream"]


DEMO_TABLES = {
    "shop.inventory.customers": "inventory_customers",
    "shop.inventory.products": "inventory_products",
    "shop.inventory.stock_levels": "inventory_stock_levels",
    "shop.sales.orders": "sales_orders",
    "shop.sales.order_lines": "sales_order_lines",
    "shop.sales.payments": "sales_payments",
    TOPIC: OLD,
}


def test_a_sink_with_many_topics_shows_every_topic_s_edge_in_the_timestamp_view(demo):
    many_topic_sink = {t: table for t, table in DEMO_TABLES.items() if t != TOPIC}
    for topic, table in many_topic_sink.items():
        topic_id = "/".join(demo_topic(demo, topic))
        assert timestamp_view_neighbours(demo, topic_id, "downstream") == {table_id(demo, table)}


def test_an_earlier_version_s_per_connector_job_is_closed_when_its_topic_is_re_posted(demo):
    # What the earlier version left: one job per connector, its last run this topic's edge
    # (here to a table the sink no longer writes), and a record keeping only the run id.
    region, account = demo.settings.msk_cluster_arn.split(":")[3:5]
    legacy_run = str(uuid.uuid4())
    (event,) = build_run_events(
        job_namespace="kafka-connect",
        job_name=SINK,
        inputs=[DatasetSpec(*demo_topic(demo))],
        outputs=[DatasetSpec(*glue_dataset(region, account, "lakehouse", "orders_legacy"))],
        run_id=legacy_run,
        event_time=now(),
        producer="https://github.com/dzlineage/dzlineage-dagster/tree/0.1.0",
        event_types=(RunState.COMPLETE,),
    )
    demo.client("datazone").post_lineage_event(
        domainIdentifier=demo.settings.domain_id, event=event_json(event).encode()
    )
    [record] = [r for r in stored_mappings(demo.settings).values() if r.topic == TOPIC]
    put_mapping(demo.settings, replace(record, lineage_fingerprint=legacy_run, registry_token=""))
    topic_id = "/".join(demo_topic(demo))
    assert table_id(demo, "orders_legacy") in timestamp_view_neighbours(
        demo, topic_id, "downstream"
    )

    assert demo.sync([TOPIC]).success
    assert timestamp_view_neighbours(demo, topic_id, "downstream") == {table_id(demo, OLD)}


def test_each_demo_iceberg_table_s_arn_node_has_its_topic_upstream(
    platform, glue_node_naming, capsys
):
    """The issue's measure: of the demo's 7 Iceberg tables, how many the posted events name so
    that DataZone's rule yields their ARN (0 before), and that node has the topic upstream."""
    sync(capsys)
    region, account = platform.settings.msk_cluster_arn.split(":")[3:5]
    database = platform.settings.glue_database

    def arn(table: str) -> str:  # The Glue table's ARN, as AWS writes it (not the product).
        return f"arn:aws:glue:{region}:{account}:table/{database}/{table}"

    posted = {
        f"{d['namespace']}/{d['name']}"
        for event in posted_events(platform)
        for d in event["outputs"]
        if d["namespace"].startswith("arn:aws:glue:")
    }
    arns = {arn(table) for table in DEMO_TABLES.values()}
    assert arns <= posted, arns - posted
    datazone = platform.client("datazone")
    for topic, table in DEMO_TABLES.items():
        table_node = datazone.get_lineage_node(
            domainIdentifier=platform.settings.domain_id, identifier=arn(table)
        )
        upstream = platform.upstream_source_identifiers(table_node, 2)
        assert "/".join(demo_topic(platform, topic)) in upstream, (glue_node_naming, table)


def test_trace_history_shows_when_a_re_routed_sink_changed_what_the_topic_feeds(demo, capsys):
    demo.client("glue").create_table(DatabaseName="lakehouse", TableInput={"Name": NEW})
    config = delete_archive_sink(demo)
    create_connector(demo, SINK, {**config, "iceberg.tables": f"lakehouse.{NEW}"})
    sync(capsys)

    code, out, err = trace(capsys, TOPIC, "--downstream", "--history", "--format", "json")
    assert code == 0, err
    history = json.loads(out)["history"]
    # Newest first: the new table since the re-route, the old one before it.
    assert [[d["label"] for d in period["datasets"]] for period in history] == [
        [f"lakehouse.{NEW}"],
        [f"lakehouse.{OLD}"],
    ]
    assert history[0]["since"] > history[1]["since"]
    code, out, _ = trace(capsys, TOPIC, "--downstream", "--history")
    lines = out.splitlines()
    assert lines[1] == "downstream, newest first:"
    assert lines[2].endswith(f"-> Glue table lakehouse.{NEW}  via kafka-connect.{SINK}/{TOPIC}")
    assert lines[3].endswith(f"-> Glue table lakehouse.{OLD}  via kafka-connect.{SINK}/{TOPIC}")
    code, _, err = trace(capsys, TOPIC, "--history", "--format", "dot")
    assert code == 2 and "--history prints text or json" in err
