"""Which Glue Schema Registry each connector's converters use, and what a topic's schema in a
registry its connectors do not use gets: no asset kind of its own and no edge from them."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.connectors.report import converter_registries_label
from dzlineage_dagster.core.connectors.topics import TopicKind
from dzlineage_dagster.core.connectors.topology import (
    GSR_DEFAULT_REGISTRY,
    ConnectorDefinition,
    build_topology,
)

AVRO = "com.amazonaws.services.schemaregistry.kafkaconnect.AWSKafkaAvroConverter"
TOPIC = "shop.sales.orders"
SOURCE = {
    "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
    "topic.prefix": "shop",
    "database.hostname": "db.internal",
    "database.port": "5432",
    "database.dbname": "shop",
    "table.include.list": "sales.orders",
}
SINK = {
    "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
    "topics": TOPIC,
    "iceberg.tables": "lakehouse.orders",
    "iceberg.catalog.type": "glue",
}


def converters(value: str | None, key: str | None = None) -> dict[str, str]:
    """GSR Avro converter settings: a registry name each, or the converter without one ("")."""
    config: dict[str, str] = {}
    for role, registry in (("value", value), ("key", key)):
        if registry is None:
            continue
        config[f"{role}.converter"] = AVRO
        if registry:
            config[f"{role}.converter.registry.name"] = registry
    return config


def topology(registry: str | None, source: dict[str, str], sink: dict[str, str]):
    connectors = [
        ConnectorDefinition("source", {**SOURCE, **source}),
        ConnectorDefinition("sink", {**SINK, **sink}),
    ]
    return build_topology(connectors, [TOPIC], registry_name=registry)


def test_the_converter_registry_comes_from_its_setting_or_the_converters_default():
    connector = ConnectorDefinition("c", {**converters("values", ""), "other": "x"})
    value, key = connector.converter_registry("value"), connector.converter_registry("key")
    assert (value.registry, value.known, value.evidence) == (
        "values",
        True,
        "value.converter.registry.name=values",
    )
    assert (key.registry, key.known) == (GSR_DEFAULT_REGISTRY, True)
    assert key.evidence == "no key.converter.registry.name: the converter's default-registry"


def test_a_converter_of_no_registry_is_known_and_an_unset_one_is_the_workers():
    json_converter = ConnectorDefinition(
        "c", {"value.converter": "org.apache.kafka.connect.json.JsonConverter"}
    ).converter_registry("value")
    assert (json_converter.registry, json_converter.known) == (None, True)
    unset = ConnectorDefinition("c", {}).converter_registry("value")
    assert (unset.registry, unset.known) == (None, False)
    assert "the worker's applies" in unset.evidence


def test_the_key_registrys_schema_of_a_topic_gets_neither_asset_kind_nor_edges():
    lineage = topology(
        "keys", converters("values", "keys"), converters("values", "keys")
    ).lineage_for(TOPIC)
    assert lineage.kind is TopicKind.OTHER_REGISTRY
    assert (lineage.sources, lineage.sinks, lineage.source_connector) == ((), (), None)
    assert lineage.reason == (
        "keys is the key registry of connectors 'source', 'sink' "
        "(key.converter.registry.name=keys; value.converter.registry.name=values): "
        "'shop.sales.orders' is cataloged from its value schema in values, not from registry keys"
    )


def test_the_value_registry_keeps_every_edge():
    lineage = topology(
        "values", converters("values", "keys"), converters("values", "keys")
    ).lineage_for(TOPIC)
    assert lineage.kind is TopicKind.TABLE
    assert [t.qualified for t in lineage.source_tables] == ["shop.sales.orders"]
    assert [str(t.ref) for t in lineage.tables] == ["lakehouse.orders"]


def test_a_connector_that_keeps_its_values_elsewhere_claims_no_edge_and_is_named():
    lineage = topology("values", converters("values"), converters("archive")).lineage_for(TOPIC)
    assert lineage.kind is TopicKind.TABLE
    assert [t.qualified for t in lineage.source_tables] == ["shop.sales.orders"]
    assert (lineage.sinks, lineage.sink_connectors) == ((), ())
    assert lineage.reason.endswith(
        "; no edge claimed from the connectors that do not use registry values: values is not "
        "the value registry of connector 'sink' (value.converter.registry.name=archive)"
    )


def test_connectors_whose_converters_the_config_does_not_name_keep_their_edges():
    lineage = topology("anything", {}, {}).lineage_for(TOPIC)
    assert lineage.kind is TopicKind.TABLE
    assert lineage.sources and lineage.sinks


def test_a_topic_no_connector_touches_is_a_table_topic_still():
    lineage = topology("values", converters("other"), converters("other")).lineage_for(
        "crm.sales.leads"
    )
    assert lineage.kind is TopicKind.TABLE


def test_without_a_registry_name_every_connector_claims_its_edges():
    lineage = topology(None, converters("a"), converters("b")).lineage_for(TOPIC)
    assert lineage.sources and lineage.sinks


REGISTRIES = st.sampled_from(["values", "keys", "archive", ""])


@given(synced=REGISTRIES, source=REGISTRIES, sink=REGISTRIES)
def test_an_edge_is_claimed_exactly_by_the_connectors_whose_values_are_in_the_registry(
    synced: str, source: str, sink: str
):
    synced = synced or GSR_DEFAULT_REGISTRY
    lineage = topology(synced, converters(source), converters(sink)).lineage_for(TOPIC)
    source_uses = (source or GSR_DEFAULT_REGISTRY) == synced
    sink_uses = (sink or GSR_DEFAULT_REGISTRY) == synced
    assert bool(lineage.sources) == source_uses
    assert bool(lineage.sinks) == sink_uses
    assert (lineage.kind is TopicKind.OTHER_REGISTRY) == (not source_uses and not sink_uses)


def test_an_override_does_not_make_a_key_schema_catalog_its_topic():
    connectors = [
        ConnectorDefinition("source", {**SOURCE, **converters("values", "keys")}),
        ConnectorDefinition("sink", {**SINK, **converters("values", "keys")}),
    ]
    overrides = {"topics": {TOPIC: {"tables": ["lakehouse.orders_copy"]}}}
    lineage = build_topology(
        connectors, [TOPIC], registry_name="keys", overrides=overrides
    ).lineage_for(TOPIC)
    assert (lineage.kind, lineage.sinks) == (TopicKind.OTHER_REGISTRY, ())


def test_the_topology_report_labels_each_connectors_key_and_value_registries():
    gsr = ConnectorDefinition("gsr", converters("values", ""))
    other = ConnectorDefinition(
        "other", {"value.converter": "org.apache.kafka.connect.json.JsonConverter"}
    )
    assert converter_registries_label(gsr) == "default-registry / values"
    assert converter_registries_label(other) == "worker's / none"


def test_connectors_of_no_registry_say_so_for_a_topic_of_the_synced_registry():
    json_values = {"value.converter": "org.apache.kafka.connect.json.JsonConverter"}
    lineage = topology("values", json_values, json_values).lineage_for(TOPIC)
    assert lineage.kind is TopicKind.OTHER_REGISTRY
    assert lineage.reason == (
        "values is not the value registry of connectors 'source', 'sink' (value.converter="
        "org.apache.kafka.connect.json.JsonConverter, no Glue Schema Registry): its connectors "
        "keep no value schema of 'shop.sales.orders' in a Glue Schema Registry"
    )
