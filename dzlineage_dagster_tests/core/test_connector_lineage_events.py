"""The two hops of a connector topology as OpenLineage events: names, column lineage, size."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dzlineage_dagster.core.connectors.debezium import SourceEngine, SourceTable
from dzlineage_dagster.core.connectors.topology import build_topology
from dzlineage_dagster.core.identity.glue import glue_dataset
from dzlineage_dagster.core.identity.kafka import KafkaCluster
from dzlineage_dagster.core.identity.sources import source_table_dataset
from dzlineage_dagster.core.lineage.openlineage import (
    DatasetSpec,
    FieldRef,
    build_fitted_run_events,
    build_run_events,
    event_json,
    hop_job,
    sink_hop_column_lineage,
    source_hop_column_lineage,
)
from dzlineage_dagster.core.schemas.avro import Column
from dzlineage_dagster_tests.core.test_topology import fixture_connectors
from dzlineage_dagster_tests.openlineage_spec import validate_openlineage_event

PRODUCER = "https://github.com/dzlineage/dzlineage-dagster/tree/0.1.0"
EVENT_TIME = datetime(2026, 12, 2, 18, 0, tzinfo=timezone.utc)
CLUSTER = KafkaCluster.of(
    name="demo",
    broker_strings={
        "BootstrapBrokerStringSaslIam": (
            "b-2.demo.kafka.us-east-1.amazonaws.com:9098,b-1.demo.kafka.us-east-1.amazonaws.com:9098"
        )
    },
)


def table(engine: SourceEngine, database: str, schema: str | None, name: str) -> SourceTable:
    return SourceTable(engine, database, schema, name, "db.internal", "5432", "c")


@pytest.mark.parametrize(
    ("source", "scheme", "expected"),
    [
        (
            table(SourceEngine.POSTGRES, "shop", "sales", "orders"),
            "sqlserver",
            ("postgres://db.internal:5432", "shop.sales.orders"),
        ),
        (
            table(SourceEngine.MYSQL, "erp", None, "orders"),
            "sqlserver",
            ("mysql://db.internal:5432", "erp.orders"),
        ),
        (
            table(SourceEngine.SQLSERVER, "hr", "dbo", "emp"),
            "sqlserver",
            ("sqlserver://db.internal:5432", "hr.dbo.emp"),
        ),
        (
            table(SourceEngine.SQLSERVER, "hr", "dbo", "emp"),
            "mssql",
            ("mssql://db.internal:5432", "hr.dbo.emp"),
        ),
        (
            table(SourceEngine.ORACLE, "ORCLPDB1", "CRM", "ACCOUNTS"),
            "sqlserver",
            ("oracle://db.internal:5432", "ORCLPDB1.CRM.ACCOUNTS"),
        ),
    ],
)
def test_source_tables_are_named_as_debezium_names_them(
    source: SourceTable, scheme: str, expected: tuple[str, str]
) -> None:
    assert source_table_dataset(source, sqlserver_scheme=scheme) == expected


def test_bad_naming_settings_are_refused_with_the_subject() -> None:
    with pytest.raises(ValueError, match="sqlserver_scheme"):
        source_table_dataset(table(SourceEngine.SQLSERVER, "a", "b", "c"), sqlserver_scheme="x")
    nameless = SourceTable(SourceEngine.MYSQL, "a", None, "b", "", "3306", "erp")
    with pytest.raises(ValueError, match=r"'erp' has no database\.hostname"):
        source_table_dataset(nameless)


def test_topics_are_named_by_the_cluster_whatever_bootstrap_servers_their_connector_names() -> None:
    """The ERP connector names another cluster's brokers in its bootstrap property: its topic is
    still the cluster's (a property changed must not move a topic's node), and the property is
    what :meth:`KafkaCluster.foreign_servers` points at."""
    topology = build_topology(fixture_connectors(), ["erp.erp.orders", "pg.public.orders"])
    erp = next(s for s in topology.sources if s.name == "erp-mysql-source")
    assert CLUSTER.topic_dataset("erp.erp.orders") == (
        "kafka://b-1.demo.kafka.us-east-1.amazonaws.com:9098",
        "erp.erp.orders",
    )
    assert CLUSTER.foreign_servers(erp.lineage_bootstrap_servers or "") == [
        "b-1.erp.ab12cd.c3.kafka.eu-west-1.amazonaws.com:9098",
        "b-2.erp.ab12cd.c3.kafka.eu-west-1.amazonaws.com:9098",
    ]


COLUMNS = [Column("id", "long", False, None), Column("total", "bytes", False, "decimal(12,2)")]


def two_hop_events() -> tuple[list, list]:
    """The merged erp.erp.orders topic: two MySQL tables -> topic -> one Iceberg table."""
    topology = build_topology(fixture_connectors(), ["erp.erp.orders"])
    lineage = topology.lineage_for("erp.erp.orders")
    source = next(s for s in topology.sources if s.name == lineage.source_connector)
    sources = [DatasetSpec(*source_table_dataset(edge.table), COLUMNS) for edge in lineage.sources]
    topic = DatasetSpec(*CLUSTER.topic_dataset(lineage.topic), COLUMNS)
    topic = DatasetSpec(
        topic.namespace, topic.name, COLUMNS, source_hop_column_lineage(COLUMNS, sources)
    )
    (sink,) = lineage.tables
    table_columns = [*COLUMNS, Column("_cdc", "record", False, None)]
    output = DatasetSpec(
        *glue_dataset("eu-west-1", "123456789012", sink.database, sink.table),
        table_columns,
        sink_hop_column_lineage(table_columns, topic),
    )
    source_hop = build_run_events(
        job_namespace=hop_job(source.name, lineage.topic)[0],
        job_name=hop_job(source.name, lineage.topic)[1],
        inputs=sources,
        outputs=[topic],
        run_id="00000000-0000-5000-8000-000000000001",
        event_time=EVENT_TIME,
        producer=PRODUCER,
    )
    sink_hop = build_run_events(
        job_namespace=hop_job(sink.connector, lineage.topic)[0],
        job_name=hop_job(sink.connector, lineage.topic)[1],
        inputs=[DatasetSpec(topic.namespace, topic.name, COLUMNS)],
        outputs=[output],
        run_id="00000000-0000-5000-8000-000000000002",
        event_time=EVENT_TIME,
        producer=PRODUCER,
    )
    return source_hop, sink_hop


def test_both_hops_carry_column_lineage_and_follow_the_specification() -> None:
    source_hop, sink_hop = two_hop_events()
    for event in (*source_hop, *sink_hop):
        validate_openlineage_event(event_json(event))
    topic_output = json.loads(event_json(source_hop[1]))["outputs"][0]
    total = topic_output["facets"]["columnLineage"]["fields"]["after.total"]["inputFields"]
    assert {(f["name"], f["field"]) for f in total} == {
        ("erp.orders_2024", "total"),
        ("erp.orders_2025", "total"),
    }
    assert {f["namespace"] for f in total} == {
        "mysql://erp-db.cluster-c8a1b2c3d4e5.eu-west-1.rds.amazonaws.com:3306"
    }
    assert total[0]["transformations"] == [{"type": "DIRECT", "subtype": "IDENTITY"}]
    table_output = json.loads(event_json(sink_hop[1]))["outputs"][0]
    assert table_output["name"] == "erp_lake/orders"
    fields = table_output["facets"]["columnLineage"]["fields"]
    assert set(fields) == {"id", "total"}  # _cdc comes from no topic field
    assert fields["id"]["inputFields"][0]["field"] == "after.id"
    job = json.loads(event_json(sink_hop[0]))["job"]
    assert (job["namespace"], job["name"]) == ("kafka-connect", "erp-iceberg-sink/erp.erp.orders")


def test_inputs_keep_no_column_lineage_facet() -> None:
    _, sink_hop = two_hop_events()
    assert "columnLineage" not in json.loads(event_json(sink_hop[0]))["inputs"][0]["facets"]


def wide_table(width: int, description: str) -> tuple[DatasetSpec, DatasetSpec]:
    columns = [Column(f"column_{i:05d}", "string", True, description) for i in range(width)]
    topic = DatasetSpec("kafka://b-1:9098", "t", columns)
    table = DatasetSpec(
        *glue_dataset("us-east-1", "123456789012", "lake", "t"),
        columns,
        sink_hop_column_lineage(columns, topic),
    )
    return topic, table


def fitted(topic: DatasetSpec, table: DatasetSpec, limit: int):
    return build_fitted_run_events(
        job_namespace="kafka-connect",
        job_name="sink",
        inputs=[topic],
        outputs=[table],
        run_id="00000000-0000-5000-8000-000000000003",
        event_time=EVENT_TIME,
        producer=PRODUCER,
        limit=limit,
    )


def test_events_that_fit_are_left_alone() -> None:
    result = fitted(*wide_table(3, "short"), limit=300_000)
    assert (len(result.events), result.split, result.trimmed) == (2, False, False)


def test_an_oversized_event_is_split_over_events_of_one_run_keeping_every_column() -> None:
    topic, table = wide_table(2_000, "x" * 100)
    assert len(event_json(fitted(topic, table, 10**9).events[0]).encode()) > 300_000
    result = fitted(topic, table, 300_000)
    assert result.split and not result.trimmed
    # One run (a consumer that shows a job's latest run sees every part), one event per part:
    # START first, COMPLETE last, RUNNING between.
    assert {str(event.run.runId) for event in result.events} == {
        "00000000-0000-5000-8000-000000000003"
    }
    states = [event.eventType.value for event in result.events]
    assert len(states) == result.parts > 2
    assert states == ["START", *["RUNNING"] * (result.parts - 2), "COMPLETE"]
    lineage_columns: list[str] = []
    for event in result.events:
        text = event_json(event)
        assert len(text.encode()) <= 300_000
        validate_openlineage_event(text)
        lineage_columns += json.loads(text)["outputs"][0]["facets"]["columnLineage"]["fields"]
    assert sorted(lineage_columns) == sorted(c.name for c in table.columns or ())


def test_an_event_that_cannot_be_split_enough_is_trimmed_not_dropped() -> None:
    topic, table = wide_table(1, "y" * 20_000)
    result = fitted(topic, table, 15_000)
    assert result.trimmed and not result.split
    (_start, complete) = result.events
    document = json.loads(event_json(complete))
    assert [d["name"] for d in document["inputs"]] == ["t"]
    assert [d["name"] for d in document["outputs"]] == ["lake/t"]
    assert "columnLineage" not in (document["outputs"][0].get("facets") or {})


@settings(max_examples=25)
@given(
    width=st.integers(min_value=1, max_value=60),
    description=st.text(max_size=80),
    limit=st.integers(min_value=6_000, max_value=40_000),
)
def test_fitted_events_always_fit_and_keep_the_datasets(
    width: int, description: str, limit: int
) -> None:
    topic, table = wide_table(width, description)
    result = fitted(topic, table, limit)
    for event in result.events:
        text = event_json(event)
        assert len(text.encode()) <= limit
        document = json.loads(text)
        assert [d["name"] for d in document["outputs"]] == ["lake/t"]


def test_source_hop_lineage_skips_columns_a_source_lacks() -> None:
    with_id = DatasetSpec("mysql://h:3306", "a.t", [Column("id", "long", False, None)])
    unknown = DatasetSpec("mysql://h:3306", "b.t")
    lineage = source_hop_column_lineage(COLUMNS, [with_id, unknown])
    assert lineage["after.id"] == [
        FieldRef("mysql://h:3306", "a.t", "id"),
        FieldRef("mysql://h:3306", "b.t", "id"),
    ]
    assert lineage["after.total"] == [FieldRef("mysql://h:3306", "b.t", "total")]


def test_unwrapped_topics_name_their_fields_without_the_envelope() -> None:
    source = DatasetSpec("postgres://h:5432", "app.public.t", COLUMNS)
    assert set(source_hop_column_lineage(COLUMNS, [source], field_prefix="")) == {"id", "total"}
    topic = DatasetSpec("kafka://b:9098", "app.public.t", COLUMNS)
    lineage = sink_hop_column_lineage(COLUMNS, topic, field_prefix="")
    assert lineage["id"] == [FieldRef("kafka://b:9098", "app.public.t", "id")]
