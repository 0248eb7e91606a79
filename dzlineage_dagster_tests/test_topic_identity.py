"""One topic, one asset; and a sync pointed at another project's assets refused up front
(issue 17, cases 6 and 7), on the seeded sandbox through `dzlineage sync`."""

from __future__ import annotations

import json

from dzlineage_dagster.assets.common import kafka_topics
from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sandbox.demo.seed import Column, debezium_value_schema
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.catalog.custom_types import ensure_custom_types
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.runner import sync_topics
from dzlineage_dagster_tests.platform import writes
from dzlineage_dagster_tests.test_catalog_operators import rows_of, sync_output
from dzlineage_dagster_tests.test_catalog_sync import latest_metadata, table_topics, topic_assets

#: The demo connectors' key converter registry (demo_platform.yaml).
KEY_REGISTRY = "shop-cdc-keys"
AVRO_CONVERTER = "com.amazonaws.services.schemaregistry.kafkaconnect.AWSKafkaAvroConverter"


def register_key_schemas(platform, topics: list[str]) -> None:
    """What the Glue Schema Registry converter registers for the demo's keys: a schema named
    after the topic (its default naming strategy) in the key converter's registry."""
    glue = platform.client("glue")
    for topic in topics:
        key = debezium_value_schema(topic, [])
        key.update(name="Key", fields=[{"name": "id", "type": "long"}])
        glue.create_schema(
            RegistryId={"RegistryName": KEY_REGISTRY},
            SchemaName=topic,
            DataFormat="AVRO",
            Compatibility="BACKWARD",
            SchemaDefinition=json.dumps(key),
        )


def test_a_key_registrys_topics_get_no_second_asset_and_no_connector_lineage(
    platform, monkeypatch, capsys
):
    sync_output(capsys)
    topics = table_topics(platform)
    first = topic_assets(platform)
    register_key_schemas(platform, topics)
    monkeypatch.setenv("DZLINEAGE_REGISTRY_NAME", KEY_REGISTRY)
    platform.control.clear_calls()

    out = sync_output(capsys)

    for topic in topics:
        [[_, action, detail]] = rows_of(out, topic)
        assert action == "not-cataloged", out
        assert detail.startswith(
            f"no edge: {KEY_REGISTRY} is the key registry of connectors 'shop-debezium-source', "
        ), out
        assert "(key.converter.registry.name=shop-cdc-keys; value.converter." in detail, out
        assert detail.endswith(
            f"{topic!r} is cataloged from its value schema in shop-cdc, not from registry "
            f"{KEY_REGISTRY}"
        ), out
    assert topic_assets(platform) == first, "no second asset for any topic"
    counts = platform.control.call_counts()
    assert ("datazone", "PostLineageEvent") not in counts, "no lineage claimed from connectors"
    assert not writes(counts, "datazone")


def create_crm_registries(platform, topics: list[str]) -> None:
    """Two registries with the same table topics, which no demo connector writes or reads."""
    glue = platform.client("glue")
    for registry in ("crm-cdc", "crm-cdc-copy"):
        glue.create_registry(RegistryName=registry)
        for topic in topics:
            glue.create_schema(
                RegistryId={"RegistryName": registry},
                SchemaName=topic,
                DataFormat="AVRO",
                Compatibility="BACKWARD",
                SchemaDefinition=json.dumps(
                    debezium_value_schema(topic, [Column("id", "bigint", nullable=False)])
                ),
            )


def test_a_topic_cataloged_from_another_registry_gets_no_second_asset_and_is_named(
    platform, monkeypatch, capsys
):
    """No connector writes this topic, so none says which registry holds its value schemas:
    the mapping of the first registry's schema does."""
    create_crm_registries(platform, ["crm.sales.leads"])
    monkeypatch.setenv("DZLINEAGE_REGISTRY_NAME", "crm-cdc")
    sync_output(capsys)
    [first] = [ids for arn, ids in topic_assets(platform).items() if "/crm-cdc/" in arn]
    monkeypatch.setenv("DZLINEAGE_REGISTRY_NAME", "crm-cdc-copy")

    assert dzlineage(["sync", "--dry-run"]) == 1
    planned = capsys.readouterr().out
    assert dzlineage(["sync"]) == 1
    out = capsys.readouterr().out

    named = (
        f"crm.sales.leads: already cataloged as asset {first[0]} from schema "
        "arn:aws:glue:us-east-1:123456789012:schema/crm-cdc/crm.sales.leads of registry crm-cdc: "
        "no second asset for the same topic"
    )
    # An error row has no schema version: the detail follows the action.
    [[_, action, detail]] = rows_of(planned, "crm.sales.leads")
    assert (action, detail.startswith(named)) == ("FAILED", True), planned
    [[_, action, detail]] = rows_of(out, "crm.sales.leads")
    assert (action, detail.startswith(f"asset: {named}")) == ("FAILED", True), out
    assert [ids for arn, ids in topic_assets(platform).items() if "crm.sales.leads" in arn] == [
        first
    ]


def test_a_run_over_a_few_topics_finds_the_other_registrys_asset_by_name(platform, monkeypatch):
    """A run over one of three topics reads mappings by name: the topic's schema name in the
    registries the connectors' converters name is among them."""
    topics = ["crm.sales.accounts", "crm.sales.leads", "crm.sales.offers"]
    create_crm_registries(platform, topics)
    monkeypatch.setenv("DZLINEAGE_REGISTRY_NAME", "crm-cdc")
    assert dzlineage(["sync"]) == 0
    [first] = [
        ids
        for arn, ids in topic_assets(platform).items()
        if arn.endswith("/crm-cdc/crm.sales.leads")
    ]
    # A connector of another team names crm-cdc as its value registry (it reads another topic).
    demo_sink = platform.client("kafkaconnect").list_connectors()["connectors"][0]
    described = platform.client("kafkaconnect").describe_connector(
        connectorArn=demo_sink["connectorArn"]
    )
    platform.client("kafkaconnect").create_connector(
        connectorName="crm-sink",
        connectorConfiguration={
            "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
            "topics": "crm.other.notes",
            "iceberg.tables": "lakehouse.crm_notes",
            "iceberg.catalog.type": "glue",
            "value.converter": AVRO_CONVERTER,
            "value.converter.registry.name": "crm-cdc",
        },
        **{
            key: described[key]
            for key in (
                "kafkaConnectVersion",
                "capacity",
                "kafkaCluster",
                "kafkaClusterClientAuthentication",
                "kafkaClusterEncryptionInTransit",
                "plugins",
                "serviceExecutionRoleArn",
            )
        },
    )
    monkeypatch.setenv("DZLINEAGE_REGISTRY_NAME", "crm-cdc-copy")
    settings = LineageSettings.from_env()
    run = SyncRun(LineageSyncResource.with_settings(settings))
    ensure_custom_types(run)
    platform.control.clear_calls()

    [outcome] = sync_topics(run, ["crm.sales.leads"])

    assert outcome.error.startswith(
        f"crm.sales.leads: already cataloged as asset {first[0]} from schema "
    ), outcome.error
    counts = platform.control.call_counts()
    assert counts[("ssm", "GetParametersByPath")] == 0, "read by name, not the whole mapping"
    assert writes(counts, "datazone") == {}


def test_a_catalog_sync_run_of_the_key_registry_reports_each_topic_not_cataloged(
    platform, monkeypatch
):
    topics = table_topics(platform)
    register_key_schemas(platform, topics)
    monkeypatch.setenv("DZLINEAGE_REGISTRY_NAME", KEY_REGISTRY)
    platform.instance.add_dynamic_partitions(kafka_topics.name, topics)

    assert platform.sync().success

    assert topic_assets(platform) == {}
    for topic in topics:
        asset = latest_metadata(platform, "datazone_topic_asset", topic)
        assert asset["action"] == "not-cataloged"
        assert asset["reason"].startswith(f"{KEY_REGISTRY} is the key registry of connectors")
        lineage = latest_metadata(platform, "topic_lineage", topic)
        assert lineage["edge"].startswith("no edge: ") and lineage["jobs"] == []
        assert lineage["mapping_reason"] == asset["reason"]
    assert ("datazone", "PostLineageEvent") not in platform.control.call_counts()


def test_a_sync_of_another_projects_assets_is_refused_once_before_any_write(
    platform, monkeypatch, capsys
):
    sync_output(capsys)
    owner = platform.settings.project_id
    datazone = platform.client("datazone")
    other = datazone.create_project(domainIdentifier=platform.settings.domain_id, name="analytics")
    monkeypatch.setenv("DZLINEAGE_PROJECT_ID", other["id"])
    platform.control.clear_calls()

    planned = dzlineage(["sync", "--dry-run"])
    dry = capsys.readouterr()
    assert planned == 1, dry.out
    assert dry.out == ""
    assert dzlineage(["sync"]) == 1
    run = capsys.readouterr()

    for captured in (dry, run):
        [line] = captured.err.splitlines()
        assert line.startswith(
            f"dzlineage sync: could not start: DZLINEAGE_PROJECT_ID={other['id']!r}: the assets "
            f"of registry shop-cdc's schemas belong to project 'cdc-lineage' ({owner}) (all 3 "
            "sampled: shop.archive.orders, shop.inventory.stock_levels, shop.sales.payments)"
        ), line
        assert f"set DZLINEAGE_PROJECT_ID={owner};" in line
        assert "aws datazone update-asset-owner" in line
    assert run.out == ""
    counts = platform.control.call_counts()
    assert writes(counts, "datazone", "ssm") == {}, "nothing written"
    # Bounded: a constant number of Searches for both commands, not one per topic.
    assert counts[("datazone", "Search")] == 6
    assert counts[("datazone", "GetProject")] == 2 + 2  # the start-up check, the owner's name


def test_a_catalog_sync_run_of_another_projects_assets_fails_once_naming_the_owner(
    platform, monkeypatch
):
    assert platform.sync().success
    owner = platform.settings.project_id
    other = platform.client("datazone").create_project(
        domainIdentifier=platform.settings.domain_id, name="analytics"
    )
    monkeypatch.setenv("DZLINEAGE_PROJECT_ID", other["id"])
    platform.control.clear_calls()

    result = platform.sync()

    assert not result.success
    [failure] = [e.step_failure_data.error.message for e in result.get_step_failure_events()]
    assert f"belong to project 'cdc-lineage' ({owner})" in failure, failure
    assert writes(platform.control.call_counts(), "datazone", "ssm") == {}


def test_the_connector_topology_says_which_registries_each_demo_connector_uses(platform):
    from dzlineage_dagster.definitions import defs

    result = defs.resolve_job_def("connector_topology_refresh").execute_in_process(
        instance=platform.instance
    )
    assert result.success
    [observation] = result.asset_observations_for_node("connector_topology")
    table = observation.metadata["connectors"].value
    for connector in ("shop-debezium-source", "shop-iceberg-sink", "shop-archive-sink"):
        assert f"| {connector} |" in table
    assert table.count(" | shop-cdc-keys / shop-cdc |") == 3, table
