"""Weird names and oversized schemas sync cleanly, and rerun without writes."""

from __future__ import annotations

from dzlineage_dagster.assets.topics import lineage_metadata
from dzlineage_dagster.sandbox.demo.seed import Column
from dzlineage_dagster_tests.platform import writes
from dzlineage_dagster_tests.test_catalog_sync import latest_metadata, topic_assets
from dzlineage_dagster_tests.test_connector_lineage import sync

WEIRD_TOPICS = [
    "shop.a__b.c__d",  # double underscores: the SSM escape character, twice
    "shop.x$y.we#ird",  # GSR allows $ and #; SSM does not
    "shop.Case.Table",
    "shop.case.table",  # differs from the previous one only in case
    "shop.public." + "t" * 243,  # the longest schema name GSR accepts (255)
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


def test_a_schema_too_wide_for_one_lineage_event_still_gets_its_asset_and_edge(platform, tmp_path):
    # 640 columns with 200-character names fit GSR's 170,000-character definition, but their
    # schema and column-lineage facets take each hop's event past DataZone's 300,000 bytes.
    topic = "shop.public.very_wide"
    columns = [Column(f"c{i:05d}".ljust(200, "x"), "text", nullable=True) for i in range(640)]
    platform.create_table_topic(topic, columns)
    # No connector captures or sinks this table: an override gives both hops.
    overrides = tmp_path / "overrides.yaml"
    overrides.write_text(
        f"topics:\n  {topic}:\n    tables: [lakehouse.very_wide]\n"
        "    sources: [{connector: shop-debezium-source, table: public.very_wide}]\n"
    )
    _, outcomes = sync(platform, [topic], lineage_overrides=str(overrides))
    lineage = lineage_metadata(outcomes[topic].lineage)
    assert lineage["events_split"] is True and lineage["events_posted"] > 2
    assert lineage["tables"] == ["lakehouse.very_wide"]
    assert lineage["source_tables"] == ["shop.public.very_wide"]
    assert outcomes[topic].asset.action == "created"
    result = platform.sync()
    assert result.success, [
        e.step_failure_data.error.message for e in result.get_step_failure_events()
    ]
    assert latest_metadata(platform, "datazone_topic_asset", topic)["action"] == "unchanged"
    schema = latest_metadata(platform, "registry_schema", topic)
    assert len(schema["dagster/column_schema"].columns) == 640
