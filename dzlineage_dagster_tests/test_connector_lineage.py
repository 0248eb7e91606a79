"""Connector-derived lineage against the sandbox: connectors created through MSK Connect's
CreateConnector (real boto3), the sync's events read back through GetLineageNode and
GetLineageEvent, and the checks and sensor over the same platform."""

from __future__ import annotations

import io
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from dagster import build_sensor_context

from dzlineage_dagster import checks
from dzlineage_dagster.assets.topics import lineage_metadata
from dzlineage_dagster.core.connectors.topics import TopicKind
from dzlineage_dagster.core.lineage.openlineage import glue_source_identifier
from dzlineage_dagster.definitions import defs
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sandbox.demo.seed import Column
from dzlineage_dagster.sensors import connector_config_sensor
from dzlineage_dagster.sync.catalog.custom_types import ensure_custom_types
from dzlineage_dagster.sync.errors import SyncError
from dzlineage_dagster.sync.headless import run_headless_sync
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.runner import sync_topics
from dzlineage_dagster_tests.openlineage_spec import validate_openlineage_event

FIXTURES = Path(__file__).parent / "core" / "fixtures"
COLUMNS = [Column("id", "bigint", False), Column("amount", "numeric(12,2)", True)]
ERP_BOOTSTRAP = "b-1.erp-kafka.internal:9092,b-2.erp-kafka.internal:9092"

MYSQL_SOURCE = {
    "connector.class": "io.debezium.connector.mysql.MySqlConnector",
    "database.hostname": "erp-db.internal",
    "database.port": "3306",
    "database.user": "debezium",
    "database.server.id": "184054",
    "topic.prefix": "erp",
    "database.include.list": "erp",
    "table.include.list": "erp.invoices,erp.customers_eu,erp.customers_us",
    "schema.history.internal.kafka.topic": "schemahistory.erp",
    "schema.history.internal.kafka.bootstrap.servers": ERP_BOOTSTRAP,
    "heartbeat.interval.ms": "5000",
    "provide.transaction.metadata": "true",
    "transforms": "rename,merge",
    "transforms.rename.type": "org.apache.kafka.connect.transforms.RegexRouter",
    "transforms.rename.regex": r"erp\.erp\.(invoices)",
    "transforms.rename.replacement": "erp.billing.$1",
    "transforms.merge.type": "io.debezium.transforms.ByLogicalTableRouter",
    "transforms.merge.topic.regex": r"erp\.erp\.customers_(eu|us)",
    "transforms.merge.topic.replacement": "erp.erp.customers",
}
#: Static routing with route regexes on the DebeziumTransform's `_cdc.source` ({db}.{table}).
MYSQL_SINK = {
    "connector.class": "io.tabular.iceberg.connect.IcebergSinkConnector",
    "topics": "erp.billing.invoices,erp.erp.customers",
    "transforms": "debezium",
    "transforms.debezium.type": "io.tabular.iceberg.connect.transforms.DebeziumTransform",
    "iceberg.tables": "finance.invoices,crm.customers",
    "iceberg.tables.route-field": "_cdc.source",
    "iceberg.table.finance.invoices.route-regex": r"erp\.invoices",
    "iceberg.table.crm.customers.route-regex": r"erp\.customers_\w+",
    "iceberg.catalog.type": "glue",
    # The sandbox's Glue catalog has none of these tables: the sink creates them.
    "iceberg.tables.auto-create-enabled": "true",
}
SQLSERVER_SOURCE = {
    "connector.class": "io.debezium.connector.sqlserver.SqlServerConnector",
    "database.hostname": "wms-db.internal",
    "database.port": "1433",
    "database.names": "wms",
    "topic.prefix": "wms",
    "table.include.list": "dbo.shipments",
    "schema.history.internal.kafka.topic": "schemahistory.wms",
    "schema.history.internal.kafka.bootstrap.servers": "b-1.wms-kafka.internal:9092",
}
#: Dynamic routing by the DebeziumTransform's `_cdc.target`.
SQLSERVER_SINK = {
    "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
    "topics.regex": r"wms\.wms\..*",
    "transforms": "debezium",
    "transforms.debezium.type": "org.apache.iceberg.connect.transforms.DebeziumTransform",
    "transforms.debezium.cdc.target.pattern": "warehouse.{db}_{table}",
    "iceberg.tables.dynamic-enabled": "true",
    "iceberg.tables.route-field": "_cdc.target",
    "iceberg.catalog.catalog-impl": "org.apache.iceberg.aws.glue.GlueCatalog",
    "iceberg.tables.auto-create-enabled": "true",
}
#: Two topics, two tables, no route field: the config does not say which is which.
AMBIGUOUS_SOURCE = {
    "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
    "database.hostname": "crm-db.internal",
    "database.port": "5432",
    "database.dbname": "crm",
    "topic.prefix": "crm",
    "table.include.list": "public.leads,public.deals",
}
AMBIGUOUS_SINK = {
    "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
    "topics": "crm.public.leads,crm.public.deals",
    "iceberg.tables": "crm.leads,crm.deals",
    "iceberg.catalog.type": "glue",
}
NEW_TOPICS = [
    "erp.billing.invoices",
    "erp.erp.customers",
    "wms.wms.dbo.shipments",
    "crm.public.leads",
    "crm.public.deals",
]
PLUMBING = {
    "__debezium-heartbeat.erp": TopicKind.HEARTBEAT,
    "erp.transaction": TopicKind.TRANSACTION,
    "erp": TopicKind.SCHEMA_CHANGE,
}


def create_connector(platform, name: str, config: dict[str, str]) -> str:
    """A connector through MSK Connect's own API, as an operator would create it."""
    response = platform.client("kafkaconnect").create_connector(
        connectorName=name,
        connectorConfiguration=config,
        capacity={"provisionedCapacity": {"mcuCount": 1, "workerCount": 1}},
        kafkaCluster={
            "apacheKafkaCluster": {
                "bootstrapServers": "b-1.cdc-demo.kafka:9098",
                "vpc": {"subnets": ["subnet-0a1b2c3d4e5f60001"], "securityGroups": []},
            }
        },
        kafkaClusterClientAuthentication={"authenticationType": "IAM"},
        kafkaClusterEncryptionInTransit={"encryptionType": "TLS"},
        kafkaConnectVersion="3.7.x",
        plugins=[
            {
                "customPlugin": {
                    "customPluginArn": "arn:aws:kafkaconnect:us-east-1:123456789012:"
                    "custom-plugin/debezium/11111111-2222-3333-4444-555555555555-1",
                    "revision": 1,
                }
            }
        ],
        serviceExecutionRoleArn="arn:aws:iam::123456789012:role/msk-connect",
    )
    return response["connectorArn"]


@pytest.fixture
def connectors_platform(platform):
    """The demo platform plus MySQL, SQL Server and an ambiguous Postgres pipeline."""
    for name, config in {
        "erp-mysql-source": MYSQL_SOURCE,
        "erp-iceberg-sink": MYSQL_SINK,
        "wms-sqlserver-source": SQLSERVER_SOURCE,
        "wms-iceberg-sink": SQLSERVER_SINK,
        "crm-postgres-source": AMBIGUOUS_SOURCE,
        "crm-iceberg-sink": AMBIGUOUS_SINK,
    }.items():
        create_connector(platform, name, config)
    for topic in NEW_TOPICS:
        platform.create_table_topic(topic, COLUMNS)
    for topic in PLUMBING:
        platform.create_schema(topic, {"type": "record", "name": "x", "fields": []}, "NONE")
    return platform


def new_run(platform, **settings) -> SyncRun:
    return SyncRun(LineageSyncResource.with_settings(platform.settings.model_copy(update=settings)))


def sync(platform, topics, **settings):
    run = new_run(platform, **settings)
    ensure_custom_types(run)
    outcomes = {o.topic: o for o in sync_topics(run, topics)}
    assert all(o.ok for o in outcomes.values()), {t: o.error for t, o in outcomes.items()}
    return run, outcomes


def posted_events(platform) -> list[dict]:
    datazone = platform.client("datazone")
    domain = platform.settings.domain_id
    events = []
    for page in datazone.get_paginator("list_lineage_events").paginate(domainIdentifier=domain):
        for summary in page["items"]:
            body = datazone.get_lineage_event(domainIdentifier=domain, identifier=summary["id"])
            events.append(json.loads(body["event"].read()))
    return events


def node(platform, source_identifier: str) -> dict:
    return platform.client("datazone").get_lineage_node(
        domainIdentifier=platform.settings.domain_id, identifier=source_identifier
    )


def glue_arn(platform, database: str, table: str) -> str:
    arn = platform.settings.msk_cluster_arn.split(":")
    return glue_source_identifier(arn[3], arn[4], database, table)


def test_source_table_to_topic_to_table_for_mysql_sqlserver_and_postgres(
    connectors_platform, glue_node_naming
):
    platform = connectors_platform
    topics = [*NEW_TOPICS, "shop.archive.orders", "shop.sales.orders"]
    run, outcomes = sync(platform, topics)
    events = posted_events(platform)
    assert {e["eventType"] for e in events} == {"COMPLETE"}  # one event per hop, no START
    by_job = {}
    for event in events:
        by_job.setdefault(event["job"]["name"], []).append(event)

    expected = {
        # MySQL, renamed by a RegexRouter with $1, static sink with route regexes.
        "erp.billing.invoices": (
            ["mysql://erp-db.internal:3306/erp.invoices"],
            "finance",
            "invoices",
        ),
        # MySQL, two tables merged by ByLogicalTableRouter, routed by regex.
        "erp.erp.customers": (
            [
                "mysql://erp-db.internal:3306/erp.customers_eu",
                "mysql://erp-db.internal:3306/erp.customers_us",
            ],
            "crm",
            "customers",
        ),
        # SQL Server, dynamic sink on _cdc.target = warehouse.{db}_{table}.
        "wms.wms.dbo.shipments": (
            ["sqlserver://wms-db.internal:1433/wms.dbo.shipments"],
            "warehouse",
            "dbo_shipments",
        ),
        # Postgres (the demo): two shards merged by ToLogicalTopicRouter, static sink.
        "shop.archive.orders": (None, "lakehouse", "orders_history"),
    }
    for topic, (sources, database, table) in expected.items():
        namespace, name = run.topic_dataset(topic)
        table_node = node(platform, glue_arn(platform, database, table))
        assert f"{namespace}/{name}" in platform.upstream_source_identifiers(table_node, 2), topic
        topic_node = node(platform, f"{namespace}/{name}")
        upstream = platform.upstream_source_identifiers(topic_node, 2)
        if sources:
            assert set(sources) <= upstream, (topic, upstream)
        assert outcomes[topic].lineage.lineage.origin == "connector"

    # Every topic takes the cluster's one namespace, whatever bootstrap string its connector
    # names (ERP's names brokers of no cluster of the platform): a property never moves a topic.
    assert run.topic_dataset("erp.erp.customers")[0] == run.topic_namespace
    assert run.topic_namespace == run.kafka_cluster.bootstrap_namespace
    shards = node(platform, "/".join(run.topic_dataset("shop.archive.orders")))
    assert {
        s.rsplit("/", 1)[-1]
        for s in platform.upstream_source_identifiers(shards, 2)
        if s.startswith("postgres://")
    } == {"shop.sales.orders_archive_2025", "shop.sales.orders_archive_2026"}
    # One job per hop, named by its connector and topic.
    assert {
        "erp-mysql-source/erp.erp.customers",
        "erp-iceberg-sink/erp.erp.customers",
        "erp-iceberg-sink/erp.billing.invoices",
        "wms-sqlserver-source/wms.wms.dbo.shipments",
    } <= set(by_job)
    assert all(e["job"]["namespace"] == "kafka-connect" for e in events)
    for event in events:
        validate_openlineage_event(json.dumps(event))
    # Every posted Glue table lands on its ARN by DataZone's documented <namespace>/<name>.
    glue_tables = [d for e in events for d in e["outputs"] if "arn:aws:glue:" in d["namespace"]]
    assert glue_tables
    for dataset in glue_tables:
        arn = f"{dataset['namespace']}/{dataset['name']}"
        assert re.fullmatch(r"arn:aws:glue:[a-z0-9-]+:\d{12}:table/[^/]+/[^/]+", arn), arn
        assert node(platform, arn)["sourceIdentifier"] == arn


def test_column_lineage_on_both_hops(connectors_platform):
    platform = connectors_platform
    run, _ = sync(platform, ["erp.billing.invoices"])
    events = posted_events(platform)
    namespace, name = run.topic_dataset("erp.billing.invoices")
    source_hop = next(
        e for e in events if e["job"]["name"] == "erp-mysql-source/erp.billing.invoices"
    )
    (topic_output,) = source_hop["outputs"]
    fields = topic_output["facets"]["columnLineage"]["fields"]
    assert fields["after.amount"]["inputFields"] == [
        {
            "namespace": "mysql://erp-db.internal:3306",
            "name": "erp.invoices",
            "field": "amount",
            "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
        }
    ]
    sink_hop = next(
        e for e in events if e["job"]["name"] == "erp-iceberg-sink/erp.billing.invoices"
    )
    (table_output,) = sink_hop["outputs"]
    assert table_output["name"] == "finance/invoices"
    assert table_output["facets"]["symlinks"]["identifiers"][0]["name"] == (
        "table/finance/invoices"
    )
    inputs = table_output["facets"]["columnLineage"]["fields"]["id"]["inputFields"]
    assert [(i["namespace"], i["name"], i["field"]) for i in inputs] == [
        (namespace, name, "after.id")
    ]


def test_plumbing_topics_are_classified_from_the_connector_config(connectors_platform):
    platform = connectors_platform
    _, outcomes = sync(platform, list(PLUMBING))
    for topic, kind in PLUMBING.items():
        assert outcomes[topic].schema.kind is kind, topic
        assert outcomes[topic].asset is None  # not cataloged
        assert not outcomes[topic].lineage.plan.hops
    assert posted_events(platform) == []


def test_an_ambiguous_static_sink_is_reported_not_guessed(connectors_platform):
    platform = connectors_platform
    _, outcomes = sync(platform, ["crm.public.leads", "crm.public.deals"])
    for topic in ("crm.public.leads", "crm.public.deals"):
        lineage = outcomes[topic].lineage
        assert lineage.lineage.tables == ()
        assert "does not say which topic is which table" in lineage.lineage.ambiguous_reason
        assert [hop.side for hop in lineage.plan.hops] == ["source"]  # the decided hop only
        metadata = lineage_metadata(lineage)
        assert "which topic is which table" in metadata["ambiguous_reason"]
    assert not any(
        e["job"]["name"].startswith("crm-iceberg-sink/") for e in posted_events(platform)
    )
    result = checks.no_ambiguous_edges(LineageSyncResource.with_settings(platform.settings))
    assert not result.passed
    assert any("crm.public.leads" in p for p in result.metadata["problems"].value)


def test_the_drift_check_fails_on_a_mismatch_and_passes_once_fixed(platform):
    resource = LineageSyncResource.with_settings(platform.settings)
    result = checks.connector_mapping_matches_convention(resource)
    assert not result.passed
    assert result.metadata["problems"].value == [
        "shop.archive.orders: connector says lakehouse.orders_history, the naming convention "
        "says lakehouse.archive_orders"
    ]
    # Fixed: the archive sink now writes the table the convention expects.
    kafkaconnect = platform.client("kafkaconnect")
    archive = next(
        c
        for c in kafkaconnect.list_connectors()["connectors"]
        if c["connectorName"] == "shop-archive-sink"
    )
    config = kafkaconnect.describe_connector(connectorArn=archive["connectorArn"])
    kafkaconnect.delete_connector(connectorArn=archive["connectorArn"])
    create_connector(
        platform,
        "shop-archive-sink",
        {**config["connectorConfiguration"], "iceberg.tables": "lakehouse.archive_orders"},
    )
    result = checks.connector_mapping_matches_convention(resource)
    assert result.passed, result.metadata["problems"].value


def test_other_topology_checks_list_their_offenders(connectors_platform):
    platform = connectors_platform
    create_connector(
        platform, "s3-sink", {"connector.class": "io.confluent.connect.s3.S3SinkConnector"}
    )
    resource = LineageSyncResource.with_settings(platform.settings)
    unknown = checks.every_connector_is_understood(resource)
    assert not unknown.passed
    assert unknown.metadata["problems"].value[0].startswith("s3-sink (io.confluent")
    unfed = checks.every_iceberg_table_is_fed_by_a_topic(resource)
    assert not unfed.passed
    assert unfed.metadata["problems"].value == [
        "lakehouse.daily_revenue: no topic feeds this Iceberg table"
    ]
    assert checks.every_table_topic_has_a_sink(resource).passed
    platform.create_table_topic("shop.inventory.returns", COLUMNS)  # a table not yet captured
    unconsumed = checks.every_table_topic_has_a_sink(resource)
    assert unconsumed.passed  # the dynamic sink's regex consumes it
    platform.create_table_topic("erp.erp.refunds", COLUMNS)
    unconsumed = checks.every_table_topic_has_a_sink(
        LineageSyncResource.with_settings(platform.settings)
    )
    assert not unconsumed.passed
    assert unconsumed.metadata["problems"].value == [
        "erp.erp.refunds: no Iceberg sink connector consumes it"
    ]


def sensor_tick(platform, cursor):
    with build_sensor_context(
        instance=platform.instance, cursor=cursor, definitions=defs, resources=defs.resources
    ) as context:
        return connector_config_sensor(context)


def test_dynamic_routing_to_a_missing_table_without_auto_create_posts_no_edge(platform):
    """IcebergWriterFactory: a table that does not exist, with auto-create off, gets a no-op
    writer under dynamic routing; the edge appears once the table is in Glue."""
    create_connector(platform, "wms-sqlserver-source", SQLSERVER_SOURCE)
    no_create = {k: v for k, v in SQLSERVER_SINK.items() if "auto-create" not in k}
    create_connector(platform, "wms-iceberg-sink", no_create)
    platform.create_table_topic("wms.wms.dbo.shipments", COLUMNS)
    platform.control.clear_calls()
    _, outcomes = sync(platform, ["wms.wms.dbo.shipments"])
    lineage = outcomes["wms.wms.dbo.shipments"].lineage
    assert lineage.lineage.tables == ()
    assert "warehouse.dbo_shipments, which is not in the Glue Data Catalog" in (
        lineage.lineage.reason
    )
    assert "dynamic routing writes nothing to it" in lineage.lineage.reason
    assert [hop.side for hop in lineage.plan.hops] == ["source"]
    # One GetTables for the one database the sink routes to, per run.
    assert platform.control.call_counts()[("glue", "GetTables")] == 1

    glue = platform.client("glue")
    glue.create_database(DatabaseInput={"Name": "warehouse"})
    glue.create_table(DatabaseName="warehouse", TableInput={"Name": "dbo_shipments"})
    _, outcomes = sync(platform, ["wms.wms.dbo.shipments"])
    assert [str(t.ref) for t in outcomes["wms.wms.dbo.shipments"].lineage.lineage.tables] == [
        "warehouse.dbo_shipments"
    ]


def test_a_connector_the_platform_refuses_is_failing_everywhere_and_gives_no_lineage(platform):
    """Debezium's RegExSplitter splits `t{1,3}` into two patterns, `t{1` does not compile:
    the connector never runs, so it is reported as failing and none of its edges is posted."""
    refused = {**SQLSERVER_SOURCE, "table.include.list": "dbo.shipments_{1,3}"}
    create_connector(platform, "wms-sqlserver-source", refused)
    create_connector(platform, "wms-iceberg-sink", SQLSERVER_SINK)
    platform.create_table_topic("wms.wms.dbo.shipments_1", COLUMNS)
    reason = (
        "connector 'wms-sqlserver-source', table.include.list: invalid Java regex "
        "'dbo.shipments_{1': illegal repetition at 14"
    )

    result = defs.resolve_job_def("connector_topology_refresh").execute_in_process(
        instance=platform.instance
    )
    [observation] = result.asset_observations_for_node("connector_topology")
    metadata = observation.metadata
    assert metadata["refused_connectors"].value == f"- wms-sqlserver-source: {reason}"
    assert metadata["refused_connector_count"].value == 1
    assert (
        "| wms-sqlserver-source | io.debezium.connector.sqlserver.SqlServerConnector | "
        "failing: configuration refused |" in metadata["connectors"].value
    )

    out = io.StringIO()
    run_headless_sync(platform.settings, dry_run=False, out=out)
    summary = out.getvalue()
    assert (
        "1 connectors fail: the platform refuses their configuration (no lineage from them):\n"
        f"  wms-sqlserver-source: {reason}"
    ) in summary
    assert not any(
        e["job"]["name"].startswith("wms-sqlserver-source/") for e in posted_events(platform)
    )


def test_the_topology_names_a_debezium_connector_whose_openlineage_names_topics_unknown(
    platform,
):
    """Debezium's own OpenLineage on and no bootstrap property: its topic events would name
    `kafka://unknown:unknown`; the connector_topology observation says which and what to set."""

    def observed() -> str:
        result = defs.resolve_job_def("connector_topology_refresh").execute_in_process(
            instance=platform.instance
        )
        [observation] = result.asset_observations_for_node("connector_topology")
        return observation.metadata["openlineage_unknown_namespace"].value

    assert observed() == "none"
    create_connector(
        platform,
        "crm-postgres-source",
        {**AMBIGUOUS_SOURCE, "openlineage.integration.enabled": "true"},
    )
    assert observed() == (
        "- crm-postgres-source: its own OpenLineage names its topics kafka://unknown:unknown; "
        "set openlineage.integration.dataset.kafka.bootstrap.servers=<a broker of the cluster> "
        "on connector crm-postgres-source"
    )


def test_a_merged_topic_behind_a_regex_include_list_and_a_nameless_connector_are_explained(
    platform,
):
    """The merged topic's tables hide behind a regex include list (its value schema is the
    merged name's): its row says why it has no source. A connector with no connector.class
    cannot run: the sync and connector_topology name it."""
    regex_shards = {**MYSQL_SOURCE, "table.include.list": r"erp.invoices,erp\.customers_.*"}
    create_connector(platform, "erp-mysql-source", regex_shards)
    static_sink = {
        "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
        "topics": "erp.erp.customers",
        "iceberg.tables": "crm.customers",
        "iceberg.catalog.type": "glue",
        "iceberg.tables.auto-create-enabled": "true",
    }
    create_connector(platform, "erp-iceberg-sink", static_sink)
    create_connector(platform, "nameless", {"tasks.max": "1"})
    platform.create_table_topic("erp.erp.customers", COLUMNS)
    cannot_run = (
        "nameless: its configuration has no connector.class, which Kafka Connect requires "
        "(no default): it cannot run"
    )

    plan = io.StringIO()
    run_headless_sync(platform.settings, dry_run=True, out=plan)
    [planned] = [line for line in plan.getvalue().splitlines() if line.startswith("erp.erp.")]
    assert "; no source: transform 'merge' of connector 'erp-mysql-source'" in planned, planned

    out = io.StringIO()
    run_headless_sync(platform.settings, dry_run=False, out=out)
    summary = out.getvalue()
    [row] = [line for line in summary.splitlines() if line.startswith("erp.erp.customers ")]
    assert "posted: no source -> erp.erp.customers -> crm.customers (connector; no source: " in row
    assert "transform 'merge' of connector 'erp-mysql-source' may have named this topic" in row, row
    assert (
        f"connectors fail: the platform refuses their configuration (no lineage from them):\n  {cannot_run}"
        in summary
    )

    result = defs.resolve_job_def("connector_topology_refresh").execute_in_process(
        instance=platform.instance
    )
    [observation] = result.asset_observations_for_node("connector_topology")
    assert f"- {cannot_run}" in observation.metadata["refused_connectors"].value


def test_a_changed_connector_config_rederives_only_the_affected_topics(connectors_platform):
    platform = connectors_platform
    platform.tick()  # the registry sensor adds the partitions
    first = sensor_tick(platform, None)
    # The first tick has the topology observed, and requests no sync (the registry's does).
    assert [r.job_name for r in first.run_requests] == ["connector_topology_refresh"]
    platform.control.clear_calls()
    idle = sensor_tick(platform, first.cursor)
    assert not idle.run_requests
    assert {op for (_, op) in platform.control.call_counts()} == {"ListConnectors"}

    kafkaconnect = platform.client("kafkaconnect")
    (sink,) = [
        c
        for c in kafkaconnect.list_connectors()["connectors"]
        if c["connectorName"] == "wms-iceberg-sink"
    ]
    kafkaconnect.delete_connector(connectorArn=sink["connectorArn"])
    changed = {**SQLSERVER_SINK, "transforms.debezium.cdc.target.pattern": "wms.{table}"}
    create_connector(platform, "wms-iceberg-sink", changed)
    result = sensor_tick(platform, first.cursor)
    syncs = [r for r in result.run_requests if r.job_name == "catalog_sync"]
    assert [
        (r.tags["dagster/asset_partition_range_start"], r.tags["dagster/asset_partition_range_end"])
        for r in syncs
    ] == [("wms.wms.dbo.shipments", "wms.wms.dbo.shipments")]
    assert any(r.job_name == "connector_topology_refresh" for r in result.run_requests)

    sync(platform, ["wms.wms.dbo.shipments"])
    table = node(platform, glue_arn(platform, "wms", "shipments"))
    assert any("wms.wms.dbo.shipments" in s for s in platform.upstream_source_identifiers(table, 2))


def test_an_unchanged_edge_is_not_reposted(connectors_platform):
    platform = connectors_platform
    sync(platform, ["erp.erp.customers"])
    platform.control.clear_calls()
    _, outcomes = sync(platform, ["erp.erp.customers"])
    assert not outcomes["erp.erp.customers"].lineage.posted
    assert platform.control.call_counts()[("datazone", "PostLineageEvent")] == 0


def test_an_override_file_wins_and_a_bad_one_names_the_setting(platform, tmp_path):
    overrides = tmp_path / "overrides.yaml"
    overrides.write_text(
        "topics:\n"
        "  shop.sales.orders:\n"
        "    tables: [lakehouse.orders_curated]\n"
        "    reason: curated by a stream processor\n"
    )
    _, outcomes = sync(platform, ["shop.sales.orders"], lineage_overrides=str(overrides))
    lineage = outcomes["shop.sales.orders"].lineage
    assert [str(t.ref) for t in lineage.lineage.tables] == ["lakehouse.orders_curated"]
    assert lineage.lineage.origin == "connector"  # the source hop stays connector-derived
    assert {hop.side: hop.origin for hop in lineage.plan.hops} == {
        "source": "connector",
        "sink": "override",
    }

    overrides.write_text("topics:\n  shop.sales.orders:\n    table: [x]\n")
    run = new_run(platform, lineage_overrides=str(overrides))
    with pytest.raises(SyncError, match=r"DZLINEAGE_LINEAGE_OVERRIDES=.*unknown keys"):
        run.topology  # noqa: B018


class _KafkaConnectHandler(BaseHTTPRequestHandler):
    document = b""

    def do_GET(self):
        if not self.path.startswith("/connectors?expand=info"):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(self.document)

    def log_message(self, *args):
        pass


def test_connectors_from_a_kafka_connect_rest_endpoint(platform):
    _KafkaConnectHandler.document = (
        FIXTURES / "kafka_connect_connectors_expand_info.json"
    ).read_bytes()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _KafkaConnectHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}"
        run = new_run(platform, kafka_connect_url=url)
        expected = json.loads(_KafkaConnectHandler.document)
        assert {c.name for c in run.connectors} == set(expected)
        platform.control.clear_calls()
        assert "inventory-postgres" in {s.name for s in run.topology.sources}
        assert ("kafkaconnect", "ListConnectors") not in platform.control.call_counts()
        broken = new_run(platform, kafka_connect_url=f"http://127.0.0.1:{server.server_port}/x/")
        with pytest.raises(SyncError, match="DZLINEAGE_KAFKA_CONNECT_URL"):
            broken.connectors  # noqa: B018
    finally:
        server.shutdown()


def test_a_nested_record_is_one_column_on_both_sides_of_the_sink_hop(connectors_platform):
    """The Iceberg sink keeps a nested record as one struct column (its SchemaUtils maps a
    Connect STRUCT to an Iceberg struct; GlueCatalog shows it as ``struct<...>``): the
    sink hop's column lineage maps that column to the topic's ``after.<field>``."""
    platform = connectors_platform
    glue = platform.client("glue")
    schema_id = {"SchemaArn": platform.schema_arn("erp.billing.invoices")}
    latest = glue.get_schema_version(
        SchemaId=schema_id, SchemaVersionNumber={"LatestVersion": True}
    )
    envelope = json.loads(latest["SchemaDefinition"])
    before = next(f for f in envelope["fields"] if f["name"] == "before")
    row = next(branch for branch in before["type"] if isinstance(branch, dict))
    geo = {"type": "record", "name": "Geo", "fields": [{"name": "lat", "type": "double"}]}
    address = {
        "type": "record",
        "name": "Address",
        "fields": [{"name": "street", "type": "string"}, {"name": "geo", "type": geo}],
    }
    row["fields"].append({"name": "billing_address", "type": ["null", address], "default": None})
    glue.register_schema_version(SchemaId=schema_id, SchemaDefinition=json.dumps(envelope))

    run, _ = sync(platform, ["erp.billing.invoices"])
    namespace, name = run.topic_dataset("erp.billing.invoices")
    sink_hop = next(
        e
        for e in posted_events(platform)
        if e["job"]["name"] == "erp-iceberg-sink/erp.billing.invoices"
    )
    validate_openlineage_event(json.dumps(sink_hop))
    (table_output,) = sink_hop["outputs"]
    # What Iceberg's GlueCatalog writes as the table column's Glue type for this struct.
    glue_type = "struct<street:string,geo:struct<lat:double>>"
    column = next(
        f for f in table_output["facets"]["schema"]["fields"] if f["name"] == "billing_address"
    )
    assert column["type"] == glue_type
    assert [(f["name"], f["type"]) for f in column["fields"]] == [
        ("street", "string"),
        ("geo", "struct<lat:double>"),
    ]
    inputs = table_output["facets"]["columnLineage"]["fields"]["billing_address"]["inputFields"]
    assert [(i["namespace"], i["name"], i["field"]) for i in inputs] == [
        (namespace, name, "after.billing_address")
    ]
