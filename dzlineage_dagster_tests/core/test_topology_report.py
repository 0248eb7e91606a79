"""The topology's report, checks and change detection, from realistic connector configs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.connectors import report as report
from dzlineage_dagster.core.connectors.table_mapping import NamingConventionMapper
from dzlineage_dagster.core.connectors.topology import ConnectorDefinition, build_topology

SOURCE = {
    "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
    "database.hostname": "shop-db",
    "database.port": "5432",
    "database.dbname": "shop",
    "topic.prefix": "shop",
    "table.include.list": "sales.orders,sales.refunds",
}
DYNAMIC_SINK = {
    "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
    "topics": "shop.sales.orders",
    "transforms": "debezium",
    "transforms.debezium.type": "org.apache.iceberg.connect.transforms.DebeziumTransform",
    "transforms.debezium.cdc.target.pattern": "lakehouse.{db}_{table}",
    "iceberg.tables.dynamic-enabled": "true",
    "iceberg.tables.route-field": "_cdc.target",
    "iceberg.catalog.type": "glue",
}
CONVENTION = NamingConventionMapper("lakehouse")
TOPICS = ["shop.sales.orders", "shop.sales.refunds"]


def topology(sink: dict[str, str] = DYNAMIC_SINK, extra: dict[str, dict[str, str]] | None = None):
    connectors = [ConnectorDefinition("src", SOURCE), ConnectorDefinition("sink", sink)]
    connectors += [ConnectorDefinition(n, c) for n, c in (extra or {}).items()]
    return build_topology(connectors, TOPICS, fallback=CONVENTION)


def test_edges_name_sources_topic_tables_origin_and_connectors():
    assert report.edge_rows(topology()) == [
        (
            "shop.sales.orders",
            "shop.sales.orders",
            "lakehouse.sales_orders",
            "connector",
            "src, sink",
        ),
        ("shop.sales.refunds", "shop.sales.refunds", "-", "connector", "src"),
    ]


def test_drift_names_the_topic_and_both_answers_only_when_they_differ():
    assert report.drift(topology(), CONVENTION) == []
    renamed = {**DYNAMIC_SINK, "transforms.debezium.cdc.target.pattern": "lakehouse.{table}"}
    assert report.drift(topology(renamed), CONVENTION) == [
        "shop.sales.orders: connector says lakehouse.orders, the naming convention says "
        "lakehouse.sales_orders"
    ]


def test_unconsumed_topics_unfed_tables_and_unknown_connectors():
    current = topology(extra={"s3": {"connector.class": "io.confluent.connect.s3.S3SinkConnector"}})
    assert report.table_topics_without_sink(current) == [
        "shop.sales.refunds: no Iceberg sink connector consumes it"
    ]
    assert report.fed_tables(current) == {("lakehouse", "sales_orders")}
    assert report.unknown_connectors(current)[0].startswith("s3 (io.confluent.connect.s3.")


def test_an_ambiguous_static_sink_is_listed_with_its_reason():
    static = {
        "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
        "topics": "shop.sales.orders,shop.sales.refunds",
        "iceberg.tables": "lakehouse.a,lakehouse.b",
        "iceberg.catalog.type": "glue",
    }
    problems = report.ambiguous_edges(topology(static))
    assert len(problems) == 2
    assert all("does not say which topic is which table" in p for p in problems)


def test_only_topics_whose_mapping_changed_are_reported():
    before = report.lineage_signatures(topology())
    renamed = {**DYNAMIC_SINK, "transforms.debezium.cdc.target.pattern": "lakehouse.{table}"}
    after = report.lineage_signatures(topology(renamed))
    assert report.changed_topics(before, after) == ["shop.sales.orders"]
    assert report.changed_topics(before, before) == []


@given(st.lists(st.tuples(st.text(), st.text(), st.text()), max_size=6))
def test_the_connectors_digest_ignores_order_and_sees_every_change(items):
    assert report.connectors_digest(items) == report.connectors_digest(list(reversed(items)))
    changed = [*items, ("new", "arn", "v1")]
    assert report.connectors_digest(changed) != report.connectors_digest(items)


def test_markdown_cells_escape_the_pipe_of_a_regex():
    table = report.markdown_table(("a", "b"), [("x|y", "z")])
    assert table.splitlines() == ["| a | b |", "|---|---|", "| x\\|y | z |"]


def test_debezium_connectors_whose_openlineage_names_topics_unknown_are_listed():
    enabled = {**SOURCE, "openlineage.integration.enabled": "TRUE"}
    connectors = [
        ConnectorDefinition("on-no-property", enabled),
        ConnectorDefinition(
            "on-blank-property",
            {**enabled, "openlineage.integration.dataset.kafka.bootstrap.servers": " "},
        ),
        ConnectorDefinition(
            "on-with-history",
            {**enabled, "schema.history.internal.kafka.bootstrap.servers": "b-1:9098,b-2:9098"},
        ),
        ConnectorDefinition(
            "on-with-property",
            {**enabled, "openlineage.integration.dataset.kafka.bootstrap.servers": "b-1:9098"},
        ),
        ConnectorDefinition("off", SOURCE),
        # Not a Debezium source: the setting means nothing to the platform's topics here.
        ConnectorDefinition("sink", {**DYNAMIC_SINK, "openlineage.integration.enabled": "true"}),
    ]
    assert report.openlineage_without_kafka_namespace(connectors) == [
        "on-no-property",
        "on-blank-property",
    ]
