"""Two registries in one code location: each scope's sensors, cursors, partitions and runs.

The demo platform (registry shop-cdc in us-east-1) and a second one, billing, with its own
registry, MSK cluster, connectors and Glue database in eu-west-1 (the sandbox keeps every
service per Region and account, as AWS does), are served by one Definitions through
DZLINEAGE_SCOPES; their topics become assets of the one DataZone project.
"""

from __future__ import annotations

import json

import pytest
import yaml
from dagster import Definitions, build_sensor_context

from dzlineage_dagster.assets.common import kafka_topics
from dzlineage_dagster.core.scopes import SCOPE_TAG
from dzlineage_dagster.definitions import build_resources, defs
from dzlineage_dagster.sandbox.demo.change_queue import create_change_queue
from dzlineage_dagster.sandbox.demo.seed import seed_platform
from dzlineage_dagster.sensors import scope_sensors
from dzlineage_dagster.sync.errors import SyncError
from dzlineage_dagster_tests.test_catalog_sync import latest_metadata, table_topics

BILLING_REGION = "eu-west-1"
BILLING_TOPICS = ["billing.ledger.invoices", "billing.ledger.refunds"]
#: A second platform: two captured tables, a sink into billing_lake, in its own cluster.
BILLING_PLATFORM = {
    "msk_cluster": {
        "name": "billing-cdc",
        "kafka_version": "3.6.0",
        "broker_count": 2,
        "subnets": ["subnet-0b0000000000000a1", "subnet-0b0000000000000a2"],
    },
    "schema_registry": {"name": "billing-cdc", "compatibility": "BACKWARD"},
    "source_tables": {
        "ledger.invoices": {"columns": {"id": "bigint not null", "amount": "numeric(12,2)"}},
        "ledger.refunds": {"columns": {"id": "bigint not null", "invoice_id": "bigint"}},
    },
    "custom_plugins": {
        "debezium": {"s3_bucket": "billing-artifacts", "s3_key": "debezium-postgres.zip"},
        "iceberg": {"s3_bucket": "billing-artifacts", "s3_key": "iceberg-sink.zip"},
    },
    "connectors": {
        "billing-debezium-source": {
            "plugin": "debezium",
            "execution_role": "billing-msk-connect",
            "config": {
                "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
                "database.hostname": "billing-db.example.internal",
                "database.dbname": "billing",
                "topic.prefix": "billing",
                "table.include.list": "ledger.invoices,ledger.refunds",
                "value.converter": (
                    "com.amazonaws.services.schemaregistry.kafkaconnect.AWSKafkaAvroConverter"
                ),
                "value.converter.region": "${region}",
                "value.converter.registry.name": "billing-cdc",
            },
        },
        "billing-iceberg-sink": {
            "plugin": "iceberg",
            "execution_role": "billing-msk-connect",
            "config": {
                "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
                "topics.regex": r"billing\.ledger\..*",
                "value.converter": (
                    "com.amazonaws.services.schemaregistry.kafkaconnect.AWSKafkaAvroConverter"
                ),
                "value.converter.region": "${region}",
                "value.converter.registry.name": "billing-cdc",
                "transforms": "debezium",
                "transforms.debezium.type": (
                    "org.apache.iceberg.connect.transforms.DebeziumTransform"
                ),
                "transforms.debezium.cdc.target.pattern": "billing_lake.{db}_{table}",
                "iceberg.tables.dynamic-enabled": "true",
                "iceberg.tables.route-field": "_cdc.target",
                "iceberg.catalog.catalog-impl": "org.apache.iceberg.aws.glue.GlueCatalog",
                "iceberg.catalog.warehouse": "s3://billing-lake-${account_id}/warehouse",
            },
        },
    },
    "glue_catalog": {
        "database": "billing_lake",
        "warehouse": "s3://billing-lake-${account_id}/warehouse",
        "tables": {
            "ledger_invoices": {"from_topic": "billing.ledger.invoices"},
            "ledger_refunds": {"from_topic": "billing.ledger.refunds"},
        },
    },
    "datazone": {"domain": "billing-unused", "project": "unused"},
}
SENSORS = ("registry_schema_sensor", "connector_config_sensor", "change_queue_sensor")


class ScopedLocation:
    """The code location with DZLINEAGE_SCOPES set: its sensors ticked in process, each with
    the cursor its last tick left, and the runs they request executed."""

    def __init__(self, platform, monkeypatch, scopes: list[dict]) -> None:
        self.platform = platform
        monkeypatch.setenv("DZLINEAGE_SCOPES", yaml.safe_dump({"scopes": scopes}))
        resources = build_resources()
        self.definitions = Definitions(
            assets=defs.assets,
            asset_checks=defs.asset_checks,
            jobs=defs.jobs,
            sensors=scope_sensors(resources["lineage_sync"].scope_names),
            resources=resources,
        )
        self.cursors: dict[str, str | None] = {}

    def tick(self, name: str):
        """One tick of the sensor ``name``; its partition requests applied, its cursor kept."""
        sensor = self.definitions.resolve_sensor_def(name)
        with build_sensor_context(
            instance=self.platform.instance,
            cursor=self.cursors.get(name),
            definitions=self.definitions,
            resources=self.definitions.resources,
            sensor_name=name,
        ) as context:
            result = sensor(context)
        self.platform.apply_partition_requests(result)
        self.cursors[name] = getattr(result, "cursor", self.cursors.get(name))
        return result

    def run(self, request):
        return self.definitions.resolve_job_def(request.job_name).execute_in_process(
            run_config=request.run_config,
            instance=self.platform.instance,
            tags=request.tags,
            raise_on_error=False,
        )

    def partition_keys(self) -> list[str]:
        return self.platform.instance.get_dynamic_partitions(kafka_topics.name)


@pytest.fixture
def billing(platform, tmp_path) -> dict[str, str]:
    """The billing platform seeded in eu-west-1 beside the demo (the same sandbox, another
    Region); its variables."""
    spec = tmp_path / "billing.yaml"
    spec.write_text(yaml.safe_dump(BILLING_PLATFORM))
    return seed_platform(platform.sandbox.endpoint_url, spec, region=BILLING_REGION)


def two_scopes(platform, billing: dict[str, str]) -> list[dict]:
    settings = platform.settings
    return [
        {
            "name": "shop",
            "registry_name": settings.registry_name,
            "msk_cluster_arn": settings.msk_cluster_arn,
            "glue_database": settings.glue_database,
        },
        {
            "name": "billing",
            "region": BILLING_REGION,
            "registry_name": billing["DZLINEAGE_REGISTRY_NAME"],
            "msk_cluster_arn": billing["DZLINEAGE_MSK_CLUSTER_ARN"],
            "glue_database": billing["DZLINEAGE_GLUE_DATABASE"],
        },
    ]


def test_two_registries_sync_from_one_code_location_each_with_its_sensors_keys_and_tags(
    platform, billing, monkeypatch
):
    location = ScopedLocation(platform, monkeypatch, two_scopes(platform, billing))
    names = {sensor.name for sensor in location.definitions.sensors}
    assert names == {f"{sensor}__{scope}" for sensor in SENSORS for scope in ("shop", "billing")}

    shop = location.tick("registry_schema_sensor__shop")
    billed = location.tick("registry_schema_sensor__billing")
    # Every partition names its scope; each scope's topics are its own registry's.
    shop_topics = platform.registry_topics()
    assert set(location.partition_keys()) == {f"shop/{t}" for t in shop_topics} | {
        f"billing/{t}" for t in BILLING_TOPICS
    }
    # Each sensor has its own cursor, listing its own registry.
    shop_cursor, billing_cursor = (
        location.cursors[f"registry_schema_sensor__{s}"] for s in ("shop", "billing")
    )
    assert "billing.ledger.invoices" in billing_cursor and "billing.ledger" not in shop_cursor
    assert "shop.sales.orders" in shop_cursor and "shop.sales.orders" not in billing_cursor

    requests = [*shop.run_requests, *billed.run_requests]
    assert [r.tags[SCOPE_TAG] for r in requests] == ["shop", "billing"]
    for request in requests:
        scope = request.tags[SCOPE_TAG]
        assert request.tags["dagster/asset_partition_range_start"].startswith(f"{scope}/")
        result = location.run(request)
        assert result.success, result.get_step_failure_events()
        assert result.dagster_run.tags[SCOPE_TAG] == scope

    # Both registries' table topics are assets of the one project, with lineage to their
    # own Glue database, materialized under keys that name their scope.
    for topic in table_topics(platform):
        assert latest_metadata(platform, "datazone_topic_asset", f"shop/{topic}")["action"] == (
            "created"
        )
    for topic in BILLING_TOPICS:
        asset = latest_metadata(platform, "datazone_topic_asset", f"billing/{topic}")
        assert asset["action"] == "created"
        lineage = latest_metadata(platform, "topic_lineage", f"billing/{topic}")
        table = "ledger_" + topic.rsplit(".", 1)[1]
        assert lineage["tables"] == [f"billing_lake.{table}"]
        assert lineage["mapping_origin"] == "connector"
    arns = {
        arn
        for arn in topic_external_identifiers(platform)
        if f":{BILLING_REGION}:" in arn and "billing-cdc" in arn
    }
    assert len(arns) == len(BILLING_TOPICS)

    # The connector sensors observe each scope's own connectors, tagged with the scope.
    for scope in ("shop", "billing"):
        [observe] = location.tick(f"connector_config_sensor__{scope}").run_requests
        assert observe.tags == {SCOPE_TAG: scope}
    # Nothing changed: the next ticks request nothing.
    assert not location.tick("registry_schema_sensor__shop").run_requests
    assert not location.tick("registry_schema_sensor__billing").run_requests


def gone_scope(platform) -> dict:
    """A scope whose registry and cluster do not exist."""
    cluster = platform.settings.msk_cluster_arn.rsplit("/", 2)[0] + "/gone/0000-1"
    return {"name": "gone", "registry_name": "gone-cdc", "msk_cluster_arn": cluster}


def topic_external_identifiers(platform) -> list[str]:
    datazone = platform.client("datazone")
    pages = datazone.get_paginator("search").paginate(
        domainIdentifier=platform.settings.domain_id,
        searchScope="ASSET",
        owningProjectIdentifier=platform.settings.project_id,
    )
    return [
        item["assetItem"]["externalIdentifier"]
        for page in pages
        for item in page["items"]
        if item["assetItem"]["typeIdentifier"] == "KafkaTopicAssetType"
    ]


def test_a_scope_whose_registry_and_cluster_are_gone_fails_only_itself(
    platform, billing, monkeypatch
):
    scopes = [*two_scopes(platform, billing)[1:], gone_scope(platform)]
    location = ScopedLocation(platform, monkeypatch, scopes)
    # Its sensor's tick fails (its registry does not exist), naming the scope and its key, as
    # the tick's error is all the UI shows of it; the other scope's ticks on.
    with pytest.raises(SyncError) as failed:
        location.tick("registry_schema_sensor__gone")
    assert str(failed.value).startswith("scope gone (registry_name='gone-cdc'): ListSchemas failed")
    assert "dzlineage doctor --scope gone" in str(failed.value)
    [billed] = location.tick("registry_schema_sensor__billing").run_requests

    # A run whose range takes in topics of both scopes: the one whose cluster is gone fails
    # its own topic, named by its key and its scope; the other's topics sync.
    platform.instance.add_dynamic_partitions(kafka_topics.name, ["gone/shop.sales.orders"])
    result = location.run(
        billed.with_replaced_attrs(
            tags={**billed.tags, "dagster/asset_partition_range_end": "gone/shop.sales.orders"}
        )
    )
    assert not result.success
    [failure] = result.get_step_failure_events()
    data = failure.step_failure_data.user_failure_data
    assert data.description.startswith("1 of 3 topics failed: scope gone: ")
    # Named by the scope's own key, as written in DZLINEAGE_SCOPES (setting the deployment's
    # DZLINEAGE_MSK_CLUSTER_ARN would not fix it).
    assert "msk_cluster_arn='arn:aws:kafka:" in data.description, data.description
    assert "does not exist" in data.description
    assert "DZLINEAGE_MSK_CLUSTER_ARN" not in data.description
    assert "`gone/shop.sales.orders` | preflight" in data.metadata["failed_topics"].value
    for topic in BILLING_TOPICS:
        assert latest_metadata(platform, "datazone_topic_asset", f"billing/{topic}")["action"] == (
            "created"
        )


def test_each_scope_drains_its_own_change_queue_in_its_region(platform, billing, monkeypatch):
    sqs = platform.sandbox.client("sqs", region_name=BILLING_REGION)
    events = platform.sandbox.client("events", region_name=BILLING_REGION)
    queue = create_change_queue(sqs, events)
    scopes = two_scopes(platform, billing)
    scopes[1] |= {"change_queue_url": queue, "change_queue_wait_seconds": 0}
    location = ScopedLocation(platform, monkeypatch, scopes)
    location.tick("registry_schema_sensor__billing")
    location.tick("registry_schema_sensor__shop")

    glue = platform.sandbox.client("glue", region_name=BILLING_REGION)
    glue.update_schema(
        SchemaId={"RegistryName": "billing-cdc", "SchemaName": "billing.ledger.refunds"},
        Compatibility="FULL",
    )
    changed = location.tick("change_queue_sensor__billing")
    [request] = changed.run_requests
    assert request.tags[SCOPE_TAG] == "billing"
    assert request.tags["dagster/asset_partition_range_start"] == "billing/billing.ledger.refunds"
    # The shop scope has no queue: its sensor says so, and its listing stays every minute.
    skipped = location.tick("change_queue_sensor__shop")
    assert "DZLINEAGE_CHANGE_QUEUE_URL is unset" in skipped.skip_message
    assert location.run(request).success


def test_without_scopes_the_sensors_keys_and_runs_are_as_before(platform):
    assert {sensor.name for sensor in defs.sensors} == {*SENSORS, "catalog_checks_after_first_sync"}
    [request] = platform.tick().run_requests
    assert SCOPE_TAG not in request.tags
    assert set(platform.instance.get_dynamic_partitions(kafka_topics.name)) == set(
        platform.registry_topics()
    )


def test_the_definitions_load_with_scopes(platform, billing, monkeypatch):
    location = ScopedLocation(platform, monkeypatch, two_scopes(platform, billing))
    Definitions.validate_loadable(location.definitions)
    description = location.definitions.resolve_sensor_def(
        "registry_schema_sensor__billing"
    ).description
    assert "scope billing" in description and json.dumps("billing/<topic>")[1:-1] in description


def test_a_scopes_deleted_schema_is_retired_with_its_own_settings(platform, billing, monkeypatch):
    location = ScopedLocation(platform, monkeypatch, two_scopes(platform, billing))
    [first] = location.tick("registry_schema_sensor__billing").run_requests
    assert location.run(first).success
    gone = f"billing/{BILLING_TOPICS[1]}"
    asset_id = latest_metadata(platform, "datazone_topic_asset", gone)["datazone_asset_id"]
    arn = latest_metadata(platform, "registry_schema", gone)["schema_arn"]
    glue = platform.sandbox.client("glue", region_name=BILLING_REGION)
    glue.delete_schema(SchemaId={"SchemaArn": arn})

    [retire] = location.tick("registry_schema_sensor__billing").run_requests
    assert retire.job_name == "retire_topics" and retire.tags == {SCOPE_TAG: "billing"}
    config = retire.run_config["ops"]["retire_topic_assets"]["config"]
    assert config == {"topics": [gone]}
    assert gone not in location.partition_keys()
    assert location.run(retire).success
    asset = platform.client("datazone").get_asset(
        domainIdentifier=platform.settings.domain_id, identifier=asset_id
    )
    assert asset["description"].startswith(f"DEPRECATED: schema {arn} was deleted")


def test_the_catalog_checks_go_scope_by_scope_and_name_a_scope_they_cannot_read(
    platform, billing, monkeypatch
):
    scopes = [*two_scopes(platform, billing)[1:], gone_scope(platform)]
    location = ScopedLocation(platform, monkeypatch, scopes)
    [first] = location.tick("registry_schema_sensor__billing").run_requests
    assert location.run(first).success
    checks = location.definitions.resolve_job_def("catalog_checks").execute_in_process(
        instance=platform.instance, raise_on_error=False
    )
    results = {e.check_name: e for e in checks.get_asset_check_evaluations()}
    tables = results["lineage_tables_exist_in_glue"]
    # billing's two tables exist; gone's registry cannot be read, and says so.
    assert not tables.passed
    assert tables.description.startswith("1 of 2 lineage output tables: gone: not checked: ")
    assert "EntityNotFoundException" in tables.description
    # The mapping holds both scopes' records: each scope checks its own registry's.
    mappings = results["ssm_mappings_point_at_existing_assets"]
    assert mappings.metadata["checked"].value == len(BILLING_TOPICS)
    assert mappings.description.startswith("1 of 2 mappings: gone: not checked: ListSchemas")
    landed = results["lineage_landed_on_datazone_nodes"]
    assert "billing" not in landed.description


def test_the_topology_and_the_reconcile_go_scope_by_scope(platform, billing, monkeypatch):
    scopes = [*two_scopes(platform, billing), gone_scope(platform)]
    location = ScopedLocation(platform, monkeypatch, scopes)
    [first] = location.tick("registry_schema_sensor__billing").run_requests
    assert location.run(first).success

    # One observation of every scope's connectors; the one that cannot be read is named, and
    # fails the run after the others were observed.
    [observe] = location.tick("connector_config_sensor__billing").run_requests
    observed = location.run(observe)
    assert not observed.success
    [observation] = [
        event.asset_observation_data.asset_observation
        for event in observed.all_events
        if event.event_type_value == "ASSET_OBSERVATION"
    ]
    metadata = {key: value.value for key, value in observation.metadata.items()}
    assert metadata["billing/sources"] == ["billing-debezium-source"]
    assert metadata["shop/connector_count"] == 3
    assert list(metadata["unreadable_scopes"]) == ["gone"]
    [failure] = observed.get_step_failure_events()
    assert "scope gone: " in failure.step_failure_data.user_failure_data.description

    # The reconcile of the run's scope (its tag) reads that scope's registry only.
    reconcile = location.definitions.resolve_job_def("catalog_reconcile").execute_in_process(
        instance=platform.instance,
        run_config={"ops": {"reconcile_catalog": {"config": {"dry_run": True}}}},
        tags={SCOPE_TAG: "billing"},
    )
    [output] = [
        e.event_specific_data.metadata
        for e in reconcile.all_events
        if e.event_type_value == "STEP_OUTPUT"
    ]
    assert output["billing/repair_count"].value == 0
    assert not any(key.startswith("shop/") for key in output)
