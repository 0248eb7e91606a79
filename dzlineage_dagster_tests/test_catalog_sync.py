"""The asset graph end to end against the seeded demo platform, counted from the sandbox log."""

from __future__ import annotations

import json

from dagster import AssetKey

from dzlineage_dagster.assets.common import kafka_topics
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sandbox.demo.seed import COLUMN_SHOWCASE, register_column_showcase
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster.sync.catalog.custom_types import ensure_custom_types
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.runner import Stage, sync_topic
from dzlineage_dagster_tests.openlineage_spec import validate_openlineage_event
from dzlineage_dagster_tests.platform import writes
from dzlineage_dagster_tests.stored_mapping import stored_mappings

#: What a registry sensor tick may call: the listing and the version sweep's reads.
#: A tick's reads: the listing, the version sweep's GetSchema and mapping records, and (while
#: the registry has not shown whether UpdatedTime moves) its probe of a two-version schema.
SENSOR_READS = {"ListSchemas", "GetSchema", "GetSchemaVersion", "GetParameters"}

#: The seeded demo platform's table topics (its other topic is a heartbeat), written out rather
#: than derived with the classification under test.
DEMO_TABLE_TOPICS = [
    "shop.archive.orders",
    "shop.inventory.customers",
    "shop.inventory.products",
    "shop.inventory.stock_levels",
    "shop.sales.order_lines",
    "shop.sales.orders",
    "shop.sales.payments",
]


def table_topics(platform) -> list[str]:
    """The demo's table topics still in the registry (a test may delete one)."""
    listed = set(platform.registry_topics())
    return [topic for topic in DEMO_TABLE_TOPICS if topic in listed]


def topic_assets(platform) -> dict[str, list[str]]:
    """externalIdentifier (schema ARN) -> ids of the assets that carry it."""
    datazone = platform.client("datazone")
    settings = platform.settings
    found: dict[str, list[str]] = {}
    pages = datazone.get_paginator("search").paginate(
        domainIdentifier=settings.domain_id,
        searchScope="ASSET",
        owningProjectIdentifier=settings.project_id,
    )
    for page in pages:
        for item in page["items"]:
            asset = item["assetItem"]
            if asset["typeIdentifier"] == "KafkaTopicAssetType":
                found.setdefault(asset["externalIdentifier"], []).append(asset["identifier"])
    return found


def latest_metadata(platform, asset: str, topic: str) -> dict:
    event = platform.instance.get_latest_materialization_event(AssetKey(asset))
    records = platform.instance.fetch_materializations(AssetKey(asset), limit=1000).records
    for record in records:
        materialization = record.asset_materialization
        if materialization.partition == topic:
            return {k: v.value for k, v in materialization.metadata.items()}
    raise AssertionError(f"no materialization of {asset} for {topic} (latest: {event})")


def test_first_sync_creates_one_asset_per_table_topic_and_links_each_table(platform):
    result = platform.sync()
    assert result.success, result.get_step_failure_events()
    tables = table_topics(platform)
    assert tables, "the demo platform has table topics"

    assets = topic_assets(platform)
    assert sorted(assets) == sorted(platform.schema_arn(t) for t in tables)
    assert all(len(ids) == 1 for ids in assets.values())
    counts = platform.control.call_counts()
    assert counts[("datazone", "CreateAsset")] == len(tables)
    assert counts[("datazone", "PostLineageEvent")] == 2 * len(tables)  # START + COMPLETE

    datazone = platform.client("datazone")
    for topic in tables:
        metadata = latest_metadata(platform, "topic_lineage", topic)
        node = datazone.get_lineage_node(
            domainIdentifier=platform.settings.domain_id,
            identifier=metadata["output_source_identifier"],
        )
        upstream = platform.upstream_source_identifiers(node, depth=2)
        assert any(source.endswith(f"/{topic}") for source in upstream), (topic, upstream)


def test_second_sync_makes_no_datazone_or_ssm_writes(platform):
    assert platform.sync().success
    platform.control.clear_calls()
    assert platform.sync().success
    assert writes(platform.control.call_counts(), "datazone", "ssm") == {}
    # Known unchanged from the registry token alone, the partition still links its asset.
    settings = platform.settings
    portal = platform.client("datazone").get_domain(identifier=settings.domain_id)["portalUrl"]
    for topic in table_topics(platform):
        metadata = latest_metadata(platform, "datazone_topic_asset", topic)
        assert metadata["action"] == "unchanged"
        assert metadata["datazone_asset_url"] == (
            f"{portal.rstrip('/')}/projects/{settings.project_id}/data/inventory/"
            f"{metadata['datazone_asset_id']}"
        )


def test_new_schema_version_is_sensed_for_exactly_that_topic_and_revised_once(platform):
    first = platform.tick()
    assert platform.sync().success
    topic = table_topics(platform)[0]
    platform.register_new_version(topic, "added_in_test")

    platform.control.clear_calls()
    second = platform.tick(cursor=first.cursor)
    assert [r.tags["dagster/asset_partition_range_start"] for r in second.run_requests] == [topic]
    assert [r.tags["dagster/asset_partition_range_end"] for r in second.run_requests] == [topic]
    assert second.run_requests[0].tags["dagster/max_retries"] == "2"
    # A tick makes only the listing calls and the version sweep's reads (a slice's GetSchema
    # and mapping records).
    assert {op for (_, op) in platform.control.call_counts()} <= SENSOR_READS

    platform.control.clear_calls()
    assert platform.sync([topic]).success
    counts = platform.control.call_counts()
    assert counts[("datazone", "CreateAssetRevision")] == 1
    assert counts[("datazone", "CreateAsset")] == 0


def test_a_quiet_tick_requests_nothing_and_only_reads(platform):
    first = platform.tick()
    assert first.run_requests
    platform.control.clear_calls()
    second = platform.tick(cursor=first.cursor)
    assert not second.run_requests
    assert {op for (_, op) in platform.control.call_counts()} <= SENSOR_READS


def test_a_crash_between_create_asset_and_put_parameter_leaves_no_duplicate(platform):
    # Every PutParameter fails, retries included: the run dies after CreateAsset succeeded.
    platform.control.set_faults(
        FaultRule(service="ssm", operation="PutParameter", kind="server-error")
    )
    crashed = platform.sync()
    assert not crashed.success
    assert platform.control.call_counts()[("datazone", "CreateAsset")] > 0
    platform.control.clear_faults()

    assert platform.sync().success
    assets = topic_assets(platform)
    assert all(len(ids) == 1 for ids in assets.values()), assets
    assert len(assets) == len(table_topics(platform))
    mapped = stored_mappings(platform.settings)
    assert {arn: [record.asset_id] for arn, record in mapped.items()} == assets, "mapped on rerun"


def test_throttling_on_30_percent_of_datazone_calls_still_converges(platform):
    platform.control.set_faults(FaultRule(service="datazone", kind="throttle", rate=0.3, seed=3))
    for _ in range(3):
        if platform.sync().success:
            break
    platform.control.clear_faults()
    assert platform.control.calls(), "calls were made"
    assert any(c.injected for c in platform.control.calls()), "throttling actually happened"
    platform.control.clear_calls()
    assert platform.sync().success
    assert writes(platform.control.call_counts(), "datazone", "ssm") == {}
    assets = topic_assets(platform)
    assert len(assets) == len(table_topics(platform))
    assert all(len(ids) == 1 for ids in assets.values())


def test_invalid_avro_fails_its_partition_with_a_clear_message_and_others_succeed(platform):
    # The registry (like fastavro) lets a field name with a dash through; Avro forbids it.
    broken = {
        "type": "record",
        "name": "broken",
        "fields": [{"name": "bad-name", "type": "string"}],
    }
    platform.create_schema("shop.inventory.broken", broken, compatibility="NONE")
    platform.instance.add_dynamic_partitions(kafka_topics.name, platform.registry_topics())
    result = platform.sync()
    assert not result.success
    failure = result.get_step_failure_events()[0].step_failure_data.error.message
    assert "shop.inventory.broken" in failure and "Avro" in failure
    for topic in table_topics(platform):
        if topic != "shop.inventory.broken":
            assert latest_metadata(platform, "datazone_topic_asset", topic)["action"] == "created"


def test_every_emitted_event_validates_against_the_official_openlineage_schemas(platform):
    assert platform.sync().success
    datazone = platform.client("datazone")
    domain = platform.settings.domain_id
    events = [
        e
        for page in datazone.get_paginator("list_lineage_events").paginate(domainIdentifier=domain)
        for e in page["items"]
    ]
    assert len(events) == 2 * len(table_topics(platform))
    for summary in events:
        event = datazone.get_lineage_event(domainIdentifier=domain, identifier=summary["id"])
        validate_openlineage_event(event["event"].read().decode())


def ssm_calls(control) -> dict[str, int]:
    return {op: n for (service, op), n in control.call_counts().items() if service == "ssm"}


def test_the_first_sync_writes_each_topic_mapping_once(platform):
    assert platform.sync().success
    # The asset stage and the lineage stage both change a new topic's record: one write.
    assert ssm_calls(platform.control)["PutParameter"] == len(table_topics(platform))


def test_a_run_over_one_topic_reads_only_that_topics_mapping(platform):
    assert platform.sync().success
    topic = table_topics(platform)[0]
    platform.register_new_version(topic, "read_by_name")
    platform.control.clear_calls()
    assert platform.sync([topic]).success
    # The topic's record, and the headless sync's registry digest dropped after a write.
    assert ssm_calls(platform.control) == {
        "GetParameters": 1,
        "PutParameter": 1,
        "DeleteParameter": 1,
    }


def test_a_failed_mapping_write_fails_the_stage_whose_change_it_held(platform):
    run = SyncRun(LineageSyncResource.with_settings(platform.settings))
    ensure_custom_types(run)
    topic = table_topics(platform)[0]
    platform.control.set_faults(
        FaultRule(service="ssm", operation="PutParameter", kind="server-error")
    )
    outcome = sync_topic(run, topic)
    assert outcome.failed_stage is Stage.ASSET and "PutParameter" in outcome.error
    assert outcome.completed == {Stage.SCHEMA}
    assert not run.mappings.is_staged(platform.schema_arn(topic))

    platform.control.clear_faults()
    rerun = sync_topic(SyncRun(LineageSyncResource.with_settings(platform.settings)), topic)
    assert rerun.ok and rerun.completed == set(Stage)
    # The rerun's CreateAsset replayed the crashed one's client token: one asset, now mapped,
    # and the outcome says nothing new was made.
    assert rerun.asset.action == "replayed"
    assert rerun.asset.record.asset_id == outcome.asset.record.asset_id


def test_a_garbage_mapping_parameter_is_warned_about_in_the_dagster_runs_log(platform):
    assert platform.sync().success
    ssm = platform.client("ssm")
    pages = ssm.get_paginator("get_parameters_by_path").paginate(
        Path=platform.settings.ssm_prefix, Recursive=True
    )
    name = next(p["Name"] for page in pages for p in page["Parameters"])
    ssm.put_parameter(Name=name, Value="{hand edited", Overwrite=True, Type="String")

    result = platform.sync()
    assert result.success
    warnings = [
        entry.user_message
        for entry in platform.instance.all_logs(result.run_id)
        # "mapping parameter" (one-per-topic layout) or "mapping bucket" (packed)
        if entry.user_message.startswith("ignoring unreadable mapping ")
    ]
    assert warnings and all(name in warning for warning in warnings), warnings


def test_nested_enum_ref_and_protobuf_columns_reach_the_assets_schema_form(platform):
    register_column_showcase(platform.client("glue"), platform.settings.registry_name)
    topics = list(COLUMN_SHOWCASE)
    platform.instance.add_dynamic_partitions(kafka_topics.name, topics)
    assert platform.sync(topics).success
    assets = topic_assets(platform)
    datazone = platform.client("datazone")

    def table_form(topic: str) -> dict[str, dict]:
        [asset_id] = assets[platform.schema_arn(topic)]
        asset = datazone.get_asset(
            domainIdentifier=platform.settings.domain_id, identifier=asset_id
        )
        form = next(f for f in asset["formsOutput"] if f["formName"] == "RelationalTableForm")
        return {c["columnName"]: c for c in json.loads(form["content"])["columns"]}

    avro = table_form("shop.profiles.customer_profiles")
    address = "struct<street:string,geo:struct<lat:double,lon:double>>"
    assert [(name, c["dataType"]) for name, c in avro.items()] == [
        ("id", "long"),
        ("address", address),
        ("tier", "enum"),
        ("past_addresses", f"array<{address}>"),
        ("joined", "date"),
    ]
    assert avro["tier"]["description"] == "loyalty tier\nSymbols: BRONZE, SILVER, GOLD"
    assert avro["address"]["description"] == (
        "address.geo.lat: degrees north\naddress.geo.lon: degrees east"
    )

    refunds = table_form("shop.payments.refunds")
    assert {name: c["dataType"] for name, c in refunds.items()} == {
        "id": "integer",
        "amount": "struct<units:number,currency:string>",
        "reason": "string",
        "refunded_to": "struct<iban:string,holder:string>",
    }
    assert refunds["reason"]["description"] == "Symbols: DAMAGED, LATE, OTHER"
    assert refunds["amount"]["description"] == "amount.currency: ISO 4217 code"

    shipments = table_form("shop.logistics.shipments")
    assert {name: c["dataType"] for name, c in shipments.items()} == {
        "id": "long",
        "destination": "struct<city:string,postal_code:string>",
        "parcel_service": "string",
        "own_fleet_vehicle": "string",
        "labels": "map<string,string>",
        "status": "enum",
        "shipped_at": "timestamp",
    }
    assert shipments["destination"]["description"] == "Where it goes."
    assert shipments["status"]["description"] == (
        "Symbols: STATUS_UNSPECIFIED, PACKED, IN_TRANSIT, DELIVERED"
    )
    assert shipments["parcel_service"]["description"] == "oneof carrier"

    # Dagster's column schema says the same, nested fields described on their column.
    schema = latest_metadata(platform, "registry_schema", "shop.profiles.customer_profiles")[
        "dagster/column_schema"
    ]
    tier = next(c for c in schema.columns if c.name == "tier")
    assert (tier.type, tier.description) == ("enum", avro["tier"]["description"])
