"""End to end with the topics and settings the demo does not use by default.

Debezium's transaction and schema-change topics sit in the same registry as the table topics;
a custom DZLINEAGE_TABLE_NAME_PATTERN and DZLINEAGE_TOPIC_NAMESPACE_STYLE=cluster change every
edge. Expected names are written out. The runs go through `dzlineage sync`, which reads its
settings when it starts (a Dagster code location reads optional ones when it loads).
"""

from __future__ import annotations

import pytest

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster_tests.platform import fresh_platform
from dzlineage_dagster_tests.test_catalog_sync import DEMO_TABLE_TOPICS, topic_assets

#: What the Debezium Postgres connector registers for its `<prefix>.transaction` topic (trimmed).
TRANSACTION_VALUE = {
    "type": "record",
    "name": "TransactionMetadataValue",
    "namespace": "io.debezium.connector.common",
    "fields": [
        {"name": "status", "type": "string"},
        {"name": "id", "type": "string"},
        {"name": "event_count", "type": ["null", "long"], "default": None},
        {"name": "ts_ms", "type": "long"},
    ],
}
#: What a connector with a schema-change topic registers for the topic named as its prefix.
SCHEMA_CHANGE_VALUE = {
    "type": "record",
    "name": "SchemaChangeValue",
    "namespace": "io.debezium.connector.schema",
    "fields": [
        {"name": "databaseName", "type": "string"},
        {"name": "ddl", "type": ["null", "string"], "default": None},
        {"name": "ts_ms", "type": "long"},
    ],
}


@pytest.fixture
def platform(sandbox, monkeypatch):
    platform = fresh_platform(sandbox, monkeypatch)
    yield platform
    sandbox.control.clear_faults()


def delete_sink_connectors(platform) -> None:
    """Leave the platform without Iceberg sinks, so the table naming convention (the fallback
    when no sink connector decides a topic's tables) is what names every output table."""
    kafkaconnect = platform.client("kafkaconnect")
    for connector in kafkaconnect.list_connectors()["connectors"]:
        config = kafkaconnect.describe_connector(connectorArn=connector["connectorArn"])
        if config["connectorConfiguration"]["connector.class"].endswith("IcebergSinkConnector"):
            kafkaconnect.delete_connector(connectorArn=connector["connectorArn"])


def topic_nodes(edges) -> set[tuple[str, str]]:
    """(namespace, name) of every Kafka topic an edge reaches (as input or output); source
    tables carry their database's namespace (Debezium names them like the topics)."""
    ends = {(ns, name) for ns, name, _, _ in edges} | {(ns, name) for _, _, ns, name in edges}
    return {(ns, name) for ns, name in ends if ns.startswith("kafka://")}


def lineage_edges(platform) -> set[tuple[str, str, str, str]]:
    """(input namespace, input name, output namespace, output name) of every posted event."""
    datazone = platform.client("datazone")
    pages = datazone.get_paginator("list_lineage_events").paginate(
        domainIdentifier=platform.settings.domain_id
    )
    edges = set()
    for page in pages:
        for item in page["items"]:
            summary = item["eventSummary"]["openLineageRunEventSummary"]
            for source in summary["inputs"]:
                for target in summary["outputs"]:
                    edges.add(
                        (source["namespace"], source["name"], target["namespace"], target["name"])
                    )
    return edges


def test_transaction_and_schema_change_topics_get_no_asset_and_no_edge(platform, capsys):
    platform.create_schema("shop.transaction", TRANSACTION_VALUE, compatibility="NONE")
    platform.create_schema("shop", SCHEMA_CHANGE_VALUE, compatibility="NONE")
    assert dzlineage(["sync"]) == 0
    report = capsys.readouterr().out
    # The demo's 8 topics (7 table topics and the heartbeat) and the two plumbing topics.
    assert "10 topics, 0 failed" in report

    assets = topic_assets(platform)
    assert sorted(assets) == sorted(platform.schema_arn(t) for t in DEMO_TABLE_TOPICS)
    edges = lineage_edges(platform)
    assert {name for _, name in topic_nodes(edges)} == set(DEMO_TABLE_TOPICS)
    edge_ends = {name for _, name, _, _ in edges} | {name for _, _, _, name in edges}
    assert not edge_ends & {"shop", "shop.transaction"}
    rows = {line.split()[0]: line for line in report.splitlines() if line.startswith("shop")}
    for plumbing in ("shop", "shop.transaction"):
        assert "no edge" in rows[plumbing], rows[plumbing]
        assert "created" not in rows[plumbing], rows[plumbing]


def test_a_custom_table_name_pattern_names_every_output_table(platform, monkeypatch):
    monkeypatch.setenv("DZLINEAGE_TABLE_NAME_PATTERN", "cdc_{prefix}__{schema}__{table}")
    delete_sink_connectors(platform)
    assert dzlineage(["sync"]) == 0
    outputs = {
        (name, output)
        for namespace, name, _, output in lineage_edges(platform)
        if namespace.startswith("kafka://")
    }
    assert outputs == {
        ("shop.archive.orders", "lakehouse/cdc_shop__archive__orders"),
        ("shop.inventory.customers", "lakehouse/cdc_shop__inventory__customers"),
        ("shop.inventory.products", "lakehouse/cdc_shop__inventory__products"),
        ("shop.inventory.stock_levels", "lakehouse/cdc_shop__inventory__stock_levels"),
        ("shop.sales.order_lines", "lakehouse/cdc_shop__sales__order_lines"),
        ("shop.sales.orders", "lakehouse/cdc_shop__sales__orders"),
        ("shop.sales.payments", "lakehouse/cdc_shop__sales__payments"),
    }


def test_the_cluster_namespace_style_names_topics_by_the_msk_cluster(platform, monkeypatch):
    monkeypatch.setenv("DZLINEAGE_TOPIC_NAMESPACE_STYLE", "cluster")
    assert dzlineage(["sync"]) == 0
    # The demo's source connector names no bootstrap servers of its own, so the setting decides
    # the namespace of every topic node, on the source hop (output) and the sink hop (input).
    assert topic_nodes(lineage_edges(platform)) == {
        ("kafka://cdc-demo", topic) for topic in DEMO_TABLE_TOPICS
    }
    # The asset carries the same name, so DataZone links the topic's lineage node to it.
    datazone = platform.client("datazone")
    domain = platform.settings.domain_id
    for asset_ids in topic_assets(platform).values():
        [asset_id] = asset_ids
        asset = datazone.get_asset(domainIdentifier=domain, identifier=asset_id)
        [details] = [f for f in asset["formsOutput"] if f["formName"] == "AssetCommonDetailsForm"]
        assert "kafka://cdc-demo" in details["content"], details
