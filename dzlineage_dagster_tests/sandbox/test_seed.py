"""Seeding the demo CDC platform, read back through boto3 as the project would see it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from dzlineage_dagster.sandbox.demo.seed import (
    COLUMN_SHOWCASE,
    DEMO_PLATFORM,
    PlatformSpecError,
    load_platform_spec,
    seed_platform,
)

#: Each seeding gets a region of its own: moto and the emulators keep state per region, so the
#: platform is the only thing there even though the session's sandbox is shared.
REGION = "eu-west-1"
OTHER_REGION = "eu-central-1"

TABLE_TOPICS = [
    "shop.inventory.customers",
    "shop.inventory.products",
    "shop.inventory.stock_levels",
    "shop.sales.orders",
    "shop.sales.order_lines",
    "shop.sales.payments",
]
HEARTBEAT_TOPIC = "__debezium-heartbeat.shop"
#: Two yearly shards that the source connector's ToLogicalTopicRouter merges into one topic.
ARCHIVE_SHARDS = ["sales.orders_archive_2025", "sales.orders_archive_2026"]
ARCHIVE_TOPIC = "shop.archive.orders"


def read_platform(sandbox, region: str) -> dict:
    """Everything the seeder created in ``region``, as boto3 answers it."""
    glue = sandbox.client("glue", region_name=region)
    kafkaconnect = sandbox.client("kafkaconnect", region_name=region)
    schemas = {}
    for page in glue.get_paginator("list_schemas").paginate(
        RegistryId={"RegistryName": "shop-cdc"}
    ):
        for item in page["Schemas"]:
            versions = glue.list_schema_versions(SchemaId={"SchemaArn": item["SchemaArn"]})
            schemas[item["SchemaName"]] = [
                json.loads(
                    glue.get_schema_version(SchemaVersionId=v["SchemaVersionId"])[
                        "SchemaDefinition"
                    ]
                )
                for v in versions["Schemas"]
            ]
    connectors = {
        c["connectorName"]: kafkaconnect.describe_connector(connectorArn=c["connectorArn"])
        for c in kafkaconnect.list_connectors()["connectors"]
    }
    tables = {t["Name"]: t for t in glue.get_tables(DatabaseName="lakehouse")["TableList"]}
    return {"schemas": schemas, "connectors": connectors, "tables": tables}


def after_fields(envelope: dict) -> list[str]:
    before = next(f for f in envelope["fields"] if f["name"] == "before")
    row = next(branch for branch in before["type"] if branch != "null")
    return [field["name"] for field in row["fields"]]


@pytest.fixture(scope="module")
def seeded(sandbox) -> dict[str, str]:
    return seed_platform(sandbox.endpoint_url, region=REGION)


@pytest.fixture(scope="module")
def platform(sandbox, seeded) -> dict:
    return read_platform(sandbox, REGION)


def test_the_environment_names_what_was_created(sandbox, seeded):
    datazone = sandbox.client("datazone", region_name=REGION)
    kafka = sandbox.client("kafka", region_name=REGION)

    domain = datazone.get_domain(identifier=seeded["DZLINEAGE_DOMAIN_ID"])
    project = datazone.get_project(
        domainIdentifier=seeded["DZLINEAGE_DOMAIN_ID"], identifier=seeded["DZLINEAGE_PROJECT_ID"]
    )
    cluster = kafka.describe_cluster_v2(ClusterArn=seeded["DZLINEAGE_MSK_CLUSTER_ARN"])

    assert set(seeded) == {
        "DZLINEAGE_DOMAIN_ID",
        "DZLINEAGE_PROJECT_ID",
        "DZLINEAGE_REGISTRY_NAME",
        "DZLINEAGE_MSK_CLUSTER_ARN",
        "DZLINEAGE_GLUE_DATABASE",
    }
    assert (domain["name"], project["name"]) == ("shop-data", "cdc-lineage")
    assert cluster["ClusterInfo"]["ClusterName"] == "cdc-demo"
    assert seeded["DZLINEAGE_REGISTRY_NAME"] == "shop-cdc"
    assert seeded["DZLINEAGE_GLUE_DATABASE"] == "lakehouse"


def test_the_registry_holds_a_value_schema_per_topic_with_its_versions(platform):
    schemas = platform["schemas"]

    assert sorted(schemas) == sorted([*TABLE_TOPICS, ARCHIVE_TOPIC, HEARTBEAT_TOPIC])
    assert {topic: len(versions) for topic, versions in schemas.items()} == {
        **dict.fromkeys(TABLE_TOPICS, 1),
        ARCHIVE_TOPIC: 1,
        HEARTBEAT_TOPIC: 1,
        "shop.inventory.customers": 3,
        "shop.inventory.products": 2,
    }


def test_value_schemas_are_debezium_envelopes(platform):
    envelope = platform["schemas"]["shop.sales.orders"][0]

    assert envelope["name"] == "Envelope"
    assert [f["name"] for f in envelope["fields"]] == [
        "before",
        "after",
        "source",
        "op",
        "ts_ms",
        "transaction",
    ]
    assert envelope["fields"][1]["type"] == ["null", "Value"]
    assert after_fields(envelope) == ["id", "customer_id", "order_date", "status", "total"]
    assert envelope["fields"][2]["type"]["namespace"] == "io.debezium.connector.postgresql"


def test_later_versions_add_nullable_columns(platform):
    versions = platform["schemas"]["shop.inventory.customers"]

    columns = [after_fields(v) for v in versions]
    first_row = next(b for b in versions[0]["fields"][0]["type"] if b != "null")
    last_row = next(b for b in versions[-1]["fields"][0]["type"] if b != "null")
    added = [f for f in last_row["fields"] if f["name"] not in columns[0]]

    assert columns[1] == [*columns[0], "phone"]
    assert columns[2] == [*columns[1], "loyalty_tier", "marketing_opt_in"]
    assert all(f["type"][0] == "null" and f["default"] is None for f in added)
    assert first_row["fields"] == last_row["fields"][: len(first_row["fields"])]


def test_the_heartbeat_topic_has_debeziums_heartbeat_schema(platform):
    (heartbeat,) = platform["schemas"][HEARTBEAT_TOPIC]
    assert heartbeat["name"] == "Heartbeat"
    assert heartbeat["fields"] == [{"name": "ts_ms", "type": "long"}]


def test_the_connectors_carry_their_configs(sandbox, seeded, platform):
    kafka = sandbox.client("kafka", region_name=REGION)
    brokers = kafka.get_bootstrap_brokers(ClusterArn=seeded["DZLINEAGE_MSK_CLUSTER_ARN"])
    source = platform["connectors"]["shop-debezium-source"]
    sink = platform["connectors"]["shop-iceberg-sink"]
    source_config, sink_config = source["connectorConfiguration"], sink["connectorConfiguration"]

    assert set(platform["connectors"]) == {
        "shop-debezium-source",
        "shop-iceberg-sink",
        "shop-archive-sink",
    }
    assert source_config["connector.class"] == (
        "io.debezium.connector.postgresql.PostgresConnector"
    )
    assert source_config["topic.prefix"] == "shop"
    assert (
        source_config["table.include.list"].split(",")
        == [topic.removeprefix("shop.") for topic in TABLE_TOPICS] + ARCHIVE_SHARDS
    )
    assert source_config["value.converter.registry.name"] == "shop-cdc"
    assert source_config["value.converter.region"] == REGION
    assert source_config["heartbeat.interval.ms"] == "10000"
    assert sink_config["connector.class"] == "org.apache.iceberg.connect.IcebergSinkConnector"
    assert sink_config["iceberg.tables.dynamic-enabled"] == "true"
    assert sink_config["iceberg.tables.route-field"] == "_cdc.target"
    assert sink_config["transforms.debezium.type"].endswith(".DebeziumTransform")
    assert sink_config["transforms.debezium.cdc.target.pattern"] == "lakehouse.{db}_{table}"
    assert sink_config["iceberg.catalog.catalog-impl"] == "org.apache.iceberg.aws.glue.GlueCatalog"
    assert sink_config["iceberg.catalog.warehouse"] == "s3://shop-lakehouse-123456789012/warehouse"
    for connector in (source, sink):
        assert (
            connector["kafkaCluster"]["apacheKafkaCluster"]["bootstrapServers"]
            == (brokers["BootstrapBrokerStringSaslIam"])
        )
        assert not [v for v in connector["connectorConfiguration"].values() if "${region}" in v]


def test_the_catalog_has_an_iceberg_table_per_topic_and_one_fed_by_none(platform):
    tables = platform["tables"]
    customers = tables["inventory_customers"]
    columns = {c["Name"]: c["Type"] for c in customers["StorageDescriptor"]["Columns"]}
    latest = platform["schemas"]["shop.inventory.customers"][-1]
    revenue = [c["Name"] for c in tables["daily_revenue"]["StorageDescriptor"]["Columns"]]

    assert sorted(tables) == sorted(
        [topic.removeprefix("shop.").replace(".", "_") for topic in TABLE_TOPICS]
        + ["orders_history", "daily_revenue"]
    )
    assert customers["Parameters"]["table_type"] == "ICEBERG"
    assert customers["Parameters"]["metadata_location"].endswith(".metadata.json")
    assert list(columns) == [*after_fields(latest), "_cdc"]
    assert columns["id"] == "int" and columns["created_at"] == "timestamp"
    assert columns["_cdc"].startswith("struct<op:string")
    prices = tables["inventory_products"]["StorageDescriptor"]["Columns"]
    assert {c["Name"]: c["Type"] for c in prices}["price"] == "decimal(10,2)"
    assert revenue == ["day", "revenue", "order_count"]


def test_the_same_file_on_a_fresh_region_gives_the_same_platform(sandbox, platform):
    seed_platform(sandbox.endpoint_url, region=OTHER_REGION)
    again = read_platform(sandbox, OTHER_REGION)

    def comparable(platform: dict, region: str) -> dict:
        return {
            "schemas": platform["schemas"],
            "configs": {
                name: json.loads(json.dumps(c["connectorConfiguration"]).replace(region, "R"))
                for name, c in platform["connectors"].items()
            },
            "tables": {
                name: t["StorageDescriptor"]["Columns"] for name, t in platform["tables"].items()
            },
        }

    assert comparable(again, OTHER_REGION) == comparable(platform, REGION)


# --- malformed platform files ------------------------------------------------------------------


def test_the_bundled_demo_is_a_valid_platform():
    spec = load_platform_spec()

    # Six tables with a topic each, and two yearly shards merged into one topic.
    assert len(spec.source_tables) == 8
    assert len({spec.topic(t) for t in spec.source_tables}) == 7
    assert {t.schema for t in spec.source_tables} == {"inventory", "sales"}
    assert any(len(t.column_versions()) > 1 for t in spec.source_tables)
    assert spec.heartbeat_topic == HEARTBEAT_TOPIC


def demo_with(tmp_path: Path, change) -> Path:
    document = yaml.safe_load(DEMO_PLATFORM.read_text())
    change(document)
    path = tmp_path / "platform.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def set_in(document: dict, keys: str, value) -> None:
    *parents, last = keys.split("/")
    for key in parents:
        document = document[key]
    document[last] = value


MALFORMED = {
    "missing section": (
        lambda d: d.pop("datazone"),
        "datazone: expected a mapping",
    ),
    "unknown section": (
        lambda d: set_in(d, "topics", {}),
        "unknown sections ['topics']",
    ),
    "unknown column type": (
        lambda d: set_in(d, "source_tables/sales.orders/columns/status", "txt"),
        "source_tables.sales.orders.columns.status: unknown type 'txt'",
    ),
    "table name without schema": (
        lambda d: set_in(d, "source_tables/orders", {"columns": {"id": "integer"}}),
        "source_tables.orders: name it <schema>.<table>",
    ),
    "added column not null": (
        lambda d: set_in(
            d, "source_tables/inventory.products/added_columns", [{"brand": "text not null"}]
        ),
        "must be nullable",
    ),
    "include list out of step": (
        lambda d: set_in(
            d, "connectors/shop-debezium-source/config/table.include.list", "sales.orders"
        ),
        "table.include.list must list exactly the source_tables",
    ),
    "value registry out of step": (
        lambda d: set_in(
            d, "connectors/shop-debezium-source/config/value.converter.registry.name", "other"
        ),
        "value.converter.registry.name is 'other'",
    ),
    "unknown plugin": (
        lambda d: set_in(d, "connectors/shop-iceberg-sink/plugin", "nope"),
        "connectors.shop-iceberg-sink.plugin: no custom plugin 'nope'",
    ),
    "table from an unknown topic": (
        lambda d: set_in(d, "glue_catalog/tables/x", {"from_topic": "shop.x.y"}),
        "glue_catalog.tables.x.from_topic: 'shop.x.y' is not a topic",
    ),
}


@pytest.mark.parametrize(("change", "message"), MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_file_says_where_and_what(tmp_path, change, message):
    path = demo_with(tmp_path, change)

    with pytest.raises(PlatformSpecError) as excinfo:
        load_platform_spec(path)

    assert str(excinfo.value).startswith(f"{path}: ")
    assert message in str(excinfo.value)


def test_a_file_that_is_not_yaml_is_refused(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("msk_cluster: [unclosed\n")

    with pytest.raises(PlatformSpecError, match="cannot read it as YAML"):
        load_platform_spec(path)


def test_seeding_a_malformed_file_fails_before_creating_anything(sandbox, tmp_path):
    path = demo_with(tmp_path, lambda d: set_in(d, "glue_catalog/tables/x", {"columns": {}}))

    with pytest.raises(PlatformSpecError, match="list at least one column"):
        seed_platform(sandbox.endpoint_url, path, region="eu-north-1")

    kafka = sandbox.client("kafka", region_name="eu-north-1")
    assert kafka.list_clusters_v2()["ClusterInfoList"] == []


def test_the_column_showcase_is_seeded_only_when_asked(sandbox):
    """`dzlineage demo` asks for it (docs/columns.md); the tests' platform does not."""
    region = "ap-southeast-2"
    plain = seed_platform(sandbox.endpoint_url, region=region)
    glue = sandbox.client("glue", region_name=region)

    def formats() -> dict[str, str]:
        listed = glue.list_schemas(RegistryId={"RegistryName": plain["DZLINEAGE_REGISTRY_NAME"]})
        return {
            s["SchemaName"]: glue.get_schema(SchemaId={"SchemaArn": s["SchemaArn"]})["DataFormat"]
            for s in listed["Schemas"]
        }

    assert not set(COLUMN_SHOWCASE) & set(formats())
    showcase_region = "ca-central-1"
    seed_platform(sandbox.endpoint_url, region=showcase_region, column_showcase=True)
    glue = sandbox.client("glue", region_name=showcase_region)
    seeded_formats = formats()
    assert {topic: seeded_formats[topic] for topic in COLUMN_SHOWCASE} == {
        topic: data_format for topic, (data_format, _) in COLUMN_SHOWCASE.items()
    }
