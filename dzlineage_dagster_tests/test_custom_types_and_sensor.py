"""Custom types stay immutable-but-current; the sensor batches many topics into few runs."""

from __future__ import annotations

from dzlineage_dagster.core.catalog.forms import KAFKA_SCHEMA_FORM, KAFKA_TOPIC_ASSET_TYPE
from dzlineage_dagster.sandbox.demo.seed import Column
from dzlineage_dagster.sensors import MAX_RUNS_PER_TICK
from dzlineage_dagster_tests.platform import writes
from dzlineage_dagster_tests.test_catalog_sync import latest_metadata, table_topics


def test_types_are_written_once_and_a_drifted_form_type_gets_a_new_revision_assets_keep_theirs(
    platform,
):
    assert platform.sync().success
    platform.control.clear_calls()
    assert platform.sync().success
    assert writes(platform.control.call_counts(), "datazone") == {}
    metadata = latest_metadata_unpartitioned(platform, "datazone_custom_types")
    assert metadata["asset_type_revision"] == "1"

    # Someone replaces the form type in DataZone with another model: the latest revision lacks
    # the product's kafka_topic, so the next sync makes a new revision from it with the field
    # put back (and theirs kept). The asset type still pins the product's revision 1, which
    # holds everything: it stays, and so do the assets, whose content did not change.
    datazone = platform.client("datazone")
    settings = platform.settings
    drifted = KAFKA_SCHEMA_FORM.smithy_model().replace("kafka_topic", "topic_name")
    datazone.create_form_type(
        domainIdentifier=settings.domain_id,
        name=KAFKA_SCHEMA_FORM.name,
        model={"smithy": drifted},
        owningProjectIdentifier=settings.project_id,
        status="ENABLED",
    )
    platform.control.clear_calls()
    assert platform.sync().success
    counts = platform.control.call_counts()
    assert counts[("datazone", "CreateFormType")] == 1
    assert counts[("datazone", "CreateAssetType")] == 0
    assert counts[("datazone", "CreateAssetRevision")] == 0
    form_type = datazone.get_form_type(
        domainIdentifier=settings.domain_id, formTypeIdentifier=KAFKA_SCHEMA_FORM.name
    )
    assert form_type["revision"] == "3"
    assert "kafka_topic: String" in form_type["model"]["smithy"]
    assert "topic_name: String" in form_type["model"]["smithy"]
    asset_type = datazone.get_asset_type(
        domainIdentifier=settings.domain_id, identifier=KAFKA_TOPIC_ASSET_TYPE.name
    )
    assert asset_type["revision"] == "1"
    for topic in table_topics(platform):
        assert (
            latest_metadata(platform, "datazone_topic_asset", topic)["asset_type_revision"] == "1"
        )


def latest_metadata_unpartitioned(platform, asset: str) -> dict:
    from dagster import AssetKey

    event = platform.instance.get_latest_materialization_event(AssetKey(asset))
    return {k: v.value for k, v in event.asset_materialization.metadata.items()}


def test_partition_metadata_shows_columns_asset_link_and_why_a_topic_has_no_edge(platform):
    assert platform.sync().success
    topic = "shop.inventory.customers"
    schema = latest_metadata(platform, "registry_schema", topic)
    columns = [c.name for c in schema["dagster/column_schema"].columns]
    assert "id" in columns and "before" not in columns and "op" not in columns
    asset = latest_metadata(platform, "datazone_topic_asset", topic)
    assert asset["action"] == "created"
    assert asset["datazone_asset_url"].endswith(asset["datazone_asset_id"])
    lineage = latest_metadata(platform, "topic_lineage", topic)
    # The demo's connectors decide both hops: nothing is a guess any more.
    assert lineage["mapping_origin"] == "connector" and "mapping_is_guess" not in lineage
    assert lineage["source_tables"] == ["shop.inventory.customers"]
    assert lineage["jobs"] == [
        "kafka-connect.shop-debezium-source/shop.inventory.customers",
        "kafka-connect.shop-iceberg-sink/shop.inventory.customers",
    ]
    deps = lineage["dagster/column_lineage"].deps_by_column
    assert [d.column_name for d in deps["email"]] == ["email"]
    heartbeat = latest_metadata(platform, "topic_lineage", "__debezium-heartbeat.shop")
    assert "no edge" in heartbeat["edge"] and "heartbeat" in heartbeat["edge"]
    not_cataloged = latest_metadata(platform, "datazone_topic_asset", "__debezium-heartbeat.shop")
    assert not_cataloged["action"] == "not-cataloged" and "heartbeat" in not_cataloged["reason"]


def register_topics(platform, count: int) -> list[str]:
    topics = [f"bulk.public.table_{i:04d}" for i in range(count)]
    for topic in topics:
        platform.create_table_topic(topic, [Column("id", "bigint", nullable=False)])
    return topics


def test_a_thousand_new_topics_become_one_run_and_scattered_changes_few(platform):
    register_topics(platform, 1000)
    platform.control.clear_calls()
    first = platform.tick()
    assert len(platform.instance.get_dynamic_partitions("kafka_topics")) == 1000 + 8  # + demo
    [run] = first.run_requests
    keys = platform.instance.get_dynamic_partitions("kafka_topics")
    assert run.tags["dagster/asset_partition_range_start"] == keys[0]
    assert run.tags["dagster/asset_partition_range_end"] == keys[-1]
    # 1,008 schemas in list pages of 100, and the version sweep's slice of 20 topics (its size
    # while the registry has not shown whether UpdatedTime moves): their mapping records by
    # name; none is synced yet, so no GetSchema. The packed layout (the default) reads the root
    # bucket (absent: no bucket below it is read) and, no root saying the one-per-topic records
    # were all moved, the 20 topics' two one-per-topic names: 41 names in 5 calls (16 when each
    # topic's whole chain of 8 buckets was read; the one-per-topic layout reads 40 names in 4).
    assert dict(platform.control.call_counts()) == {
        ("glue", "ListSchemas"): 11,
        ("ssm", "GetParameters"): 5,
    }

    changed = keys[5::97][: MAX_RUNS_PER_TICK * 3]
    for topic in changed:
        platform.register_new_version(topic, "scattered_change")
    second = platform.tick(cursor=first.cursor)
    assert 1 < len(second.run_requests) <= MAX_RUNS_PER_TICK
    covered = set()
    for request in second.run_requests:
        start = keys.index(request.tags["dagster/asset_partition_range_start"])
        end = keys.index(request.tags["dagster/asset_partition_range_end"])
        covered.update(keys[start : end + 1])
    assert set(changed) <= covered


def stale_status(platform, asset: str, partition: str | None = None):
    """What Dagster's UI shows of ``asset``'s partition: FRESH, or STALE ("Unsynced")."""
    from dagster import AssetKey
    from dagster._core.asset_graph_view.asset_graph_view import (
        AssetGraphView,
        TemporalContext,
    )
    from dagster._core.definitions.data_version import CachingStaleStatusResolver
    from dagster._time import get_current_datetime

    from dzlineage_dagster.definitions import defs

    graph = defs.resolve_asset_graph()
    view = AssetGraphView(
        temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None),
        instance=platform.instance,
        asset_graph=graph,
    )
    resolver = CachingStaleStatusResolver(platform.instance, graph, loading_context=view)
    return resolver.get_status(AssetKey(asset), partition).value


def test_a_later_sync_of_one_topic_leaves_the_other_topics_synced(platform):
    """Every catalog_sync materializes the custom types again; while their revisions do not
    change, the topics synced before must not read "Unsynced" in the UI."""
    assert platform.sync().success
    first = table_topics(platform)[0]
    others = [t for t in platform.instance.get_dynamic_partitions("kafka_topics") if t != first]
    assert {stale_status(platform, "datazone_topic_asset", t) for t in others} == {"FRESH"}
    platform.register_new_version(first, "added_later")
    assert platform.sync([first]).success
    assert {stale_status(platform, "datazone_topic_asset", t) for t in others} == {"FRESH"}
    assert stale_status(platform, "datazone_topic_asset", first) == "FRESH"
