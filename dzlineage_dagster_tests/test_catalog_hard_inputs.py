"""Weird names and oversized schemas sync cleanly, and rerun without writes."""

from __future__ import annotations

import json

from dzlineage_dagster.assets.topics import lineage_metadata
from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.core.connectors.topics import MAX_TOPIC_NAME_LENGTH
from dzlineage_dagster.core.lineage.openlineage import MAX_EVENT_BYTES, glue_source_identifier
from dzlineage_dagster.sandbox.demo.seed import Column
from dzlineage_dagster_tests.openlineage_spec import validate_openlineage_event
from dzlineage_dagster_tests.platform import writes
from dzlineage_dagster_tests.test_catalog_sync import latest_metadata, topic_assets
from dzlineage_dagster_tests.test_connector_lineage import create_connector, sync
from dzlineage_dagster_tests.test_name_limits import SOURCE, dynamic_sink

WEIRD_TOPICS = [
    "shop.a__b.c__d",  # double underscores: the SSM escape character, twice
    "shop.x-y.we_ird",  # hyphens and underscores: Kafka's other legal characters
    "shop.Case.Table",
    "shop.case.table",  # differs from the previous one only in case
    # The longest topic name Kafka allows (249); test_name_limits.py has its `-value` schema
    # at GSR's 255 and the topic one past.
    "shop.public." + "t" * (MAX_TOPIC_NAME_LENGTH - len("shop.public.")),
]


def test_weird_topic_names_each_get_one_asset_and_a_valid_mapping(platform):
    for topic in WEIRD_TOPICS:
        platform.create_table_topic(topic, [Column("id", "bigint", nullable=False)])
    result = platform.sync()
    assert result.success, [
        e.step_failure_data.error.message for e in result.get_step_failure_events()
    ]
    assets = topic_assets(platform)
    for topic in WEIRD_TOPICS:
        assert assets[platform.schema_arn(topic)] == [
            latest_metadata(platform, "datazone_topic_asset", topic)["datazone_asset_id"]
        ]
    platform.control.clear_calls()
    assert platform.sync().success
    assert writes(platform.control.call_counts(), "datazone", "ssm") == {}


def test_a_schema_name_kafka_forbids_as_a_topic_name_is_reported_once_a_run_and_fails_none(
    platform, capsys, caplog
):
    """GSR allows `$` and `#` in schema names; Kafka's Topic.validate does not in topic names:
    no such topic can exist, so no asset stands for one, and since nothing but deleting the
    schema changes that, a run names it (once) and goes on: no failure, no partition."""
    forbidden = "shop.x$y.we#ird"
    platform.create_table_topic(forbidden, [Column("id", "bigint", nullable=False)])
    why = (
        "shop.x$y.we#ird: topic name 'shop.x$y.we#ird' has '#', '$', which Kafka forbids in "
        "topic names (only a-z, A-Z, 0-9, '.', '_' and '-'): its schema names no topic that "
        "can exist (not cataloged)"
    )
    note = (
        "1 registry schemas are not a topic (not cataloged, not a failure; deleting the schema "
        f"is the fix):\n  {why}"
    )
    for run in ("first", "idle"):
        caplog.clear()
        assert dzlineage(["sync"]) == 0, run
        out = capsys.readouterr().out
        assert out.count(note) == 1, (run, out)
        warned = [r.getMessage() for r in caplog.records if "is not a topic" in r.getMessage()]
        assert len(warned) == 1, (run, warned)
    assert "nothing to do" in out
    assert platform.schema_arn(forbidden) not in topic_assets(platform)

    platform.tick()
    assert forbidden not in platform.instance.get_dynamic_partitions("kafka_topics")
    assert "shop.sales.orders" in platform.instance.get_dynamic_partitions("kafka_topics")


def wide_pipeline(platform) -> None:
    """A Postgres source and a dynamic Iceberg sink for the `wide.public.*` topics, so both
    hops come from connectors and carry column lineage."""
    create_connector(platform, "wide-source", {**SOURCE, "topic.prefix": "wide"})
    create_connector(platform, "wide-sink", dynamic_sink(r"wide\..*", "lakehouse.{db}_{table}"))


def hop_events(platform) -> dict[str, list[tuple[int, dict]]]:
    """Job name -> (bytes as DataZone holds it, event) of every posted event."""
    datazone = platform.client("datazone")
    domain = platform.settings.domain_id
    by_job: dict[str, list[tuple[int, dict]]] = {}
    for page in datazone.get_paginator("list_lineage_events").paginate(domainIdentifier=domain):
        for summary in page["items"]:
            blob = datazone.get_lineage_event(domainIdentifier=domain, identifier=summary["id"])
            body = blob["event"].read()
            event = json.loads(body)
            by_job.setdefault(event["job"]["name"], []).append((len(body), event))
    return by_job


def column_lineage_fields(events: list[tuple[int, dict]]) -> set[str]:
    return {
        field
        for _, event in events
        for output in event["outputs"]
        for field in output.get("facets", {}).get("columnLineage", {}).get("fields", {})
    }


def assert_both_hops_in_the_graph(platform, topic: str, table: str) -> None:
    """The Glue table's node has the topic and the source table upstream (DataZone's graph)."""
    region, account = platform.settings.msk_cluster_arn.split(":")[3:5]
    node = platform.client("datazone").get_lineage_node(
        domainIdentifier=platform.settings.domain_id,
        identifier=glue_source_identifier(region, account, "lakehouse", table),
    )
    upstream = platform.upstream_source_identifiers(node, 4)
    assert any(i.endswith(f"/{topic}") for i in upstream), upstream
    source_table = topic.split(".", 1)[1]
    assert f"postgres://lim-db.internal:5432/lim.{source_table}" in upstream, upstream


def test_a_schema_too_wide_for_one_lineage_event_splits_each_hop_and_keeps_every_edge(platform):
    # 640 columns with 200-character names fit GSR's 170,000-character definition, but their
    # schema and column-lineage facets take each hop's event past DataZone's 300,000 bytes.
    topic = "wide.public.very_wide"
    columns = [Column(f"c{i:05d}".ljust(200, "x"), "text", nullable=True) for i in range(640)]
    wide_pipeline(platform)
    platform.create_table_topic(topic, columns)
    _, outcomes = sync(platform, [topic])
    outcome = outcomes[topic].lineage
    assert outcomes[topic].asset.action == "created"

    by_job = hop_events(platform)
    source_events, sink_events = by_job[f"wide-source/{topic}"], by_job[f"wide-sink/{topic}"]
    # Each hop was split (several events of its one run, so DataZone's latest-run view keeps
    # every part), and no event DataZone holds passes its limit.
    assert len(source_events) > 1 and len(sink_events) > 1
    for events in (source_events, sink_events):
        assert len({event["run"]["runId"] for _, event in events}) == 1
        assert {event["eventType"] for _, event in events} == {"RUNNING", "COMPLETE"}
    for size, event in source_events + sink_events:
        assert size <= MAX_EVENT_BYTES
        validate_openlineage_event(json.dumps(event))
    # Splitting lost no column: every column's lineage is in one of the parts, on both hops.
    names = {column.name for column in columns}
    assert column_lineage_fields(sink_events) == names
    assert column_lineage_fields(source_events) == {f"after.{name}" for name in names}
    assert_both_hops_in_the_graph(platform, topic, "public_very_wide")

    # The run says so for the topic: which hop, over which limit, what was done.
    assert [hop.split(" ", 1)[0] for hop in outcome.oversized_hops] == ["source", "sink"]
    assert all(
        f"over DataZone's {MAX_EVENT_BYTES} bytes: columns split over" in hop
        for hop in outcome.oversized_hops
    )
    metadata = lineage_metadata(outcome)
    assert metadata["events_split"] is True and "column_facets_dropped" not in metadata
    assert metadata["oversized_hops"] == list(outcome.oversized_hops)
    assert all(hop in outcome.summary for hop in outcome.oversized_hops)

    result = platform.sync()
    assert result.success, [
        e.step_failure_data.error.message for e in result.get_step_failure_events()
    ]
    assert latest_metadata(platform, "datazone_topic_asset", topic)["action"] == "unchanged"
    schema = latest_metadata(platform, "registry_schema", topic)
    assert len(schema["dagster/column_schema"].columns) == 640


def test_a_column_too_long_for_one_event_drops_the_sink_hop_s_facets_and_keeps_its_edge(platform):
    # One column whose name alone takes the sink hop's event (the name in the topic's schema,
    # the table's schema and both ends of its column lineage) past the limit, though the
    # source hop (three mentions) still fits: only the sink hop loses its facets.
    topic = "wide.public.long_column"
    name_length = MAX_EVENT_BYTES * 2 // 7
    wide_pipeline(platform)
    platform.create_table_topic(topic, [Column("c" * name_length, "text", nullable=True)])
    _, outcomes = sync(platform, [topic])
    outcome = outcomes[topic].lineage

    by_job = hop_events(platform)
    source_events, sink_events = by_job[f"wide-source/{topic}"], by_job[f"wide-sink/{topic}"]
    assert len(source_events) == 1 and len(sink_events) == 1
    for size, event in source_events + sink_events:
        assert size <= MAX_EVENT_BYTES
        validate_openlineage_event(json.dumps(event))
    assert column_lineage_fields(source_events) == {"after." + "c" * name_length}
    ((_, sink_event),) = sink_events
    assert [d["name"] for d in sink_event["outputs"]] and not column_lineage_fields(sink_events)
    assert_both_hops_in_the_graph(platform, topic, "public_long_column")

    (hop,) = outcome.oversized_hops
    assert hop.startswith(f"sink hop [kafka-connect.wide-sink/{topic}]")
    assert "facets left out, datasets kept" in hop and hop in outcome.summary
    assert lineage_metadata(outcome)["column_facets_dropped"] is True
