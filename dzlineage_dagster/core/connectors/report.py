"""What the connector topology shows and what its checks find, as plain data.

The ``connector_topology`` asset renders these as Markdown tables; the asset checks list the
offenders; the connector sensor compares :func:`lineage_signatures` between ticks to request
the lineage of exactly the topics whose mapping changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence

from dzlineage_dagster.core.connectors.debezium import is_debezium_source
from dzlineage_dagster.core.connectors.table_mapping import TopicTableMapper
from dzlineage_dagster.core.connectors.topics import TopicKind
from dzlineage_dagster.core.connectors.topology import (
    ConnectorDefinition,
    ConverterRegistry,
    TopicLineage,
    Topology,
)


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table; ``|`` inside a cell is escaped so a regex cannot break the layout."""

    def cell(value: object) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(cell(v) for v in row) + " |" for row in rows),
    ]
    return "\n".join(lines)


def converter_registries_label(connector: ConnectorDefinition) -> str:
    """``<key registry> / <value registry>`` as the connector's converters name them: ``none``
    for a converter of no Glue Schema Registry, ``worker's`` for one its config does not set."""

    def label(registry: ConverterRegistry) -> str:
        if registry.registry is not None:
            return registry.registry
        return "none" if registry.known else "worker's"

    return " / ".join(label(connector.converter_registry(role)) for role in ("key", "value"))


def edge_rows(topology: Topology) -> list[tuple[str, str, str, str, str]]:
    """(source tables, topic, tables, origin, connectors) per topic with at least one edge."""
    rows = []
    for lineage in topology.lineages():
        if not lineage.sources and not lineage.sinks:
            continue
        connectors = [c for c in (lineage.source_connector, *lineage.sink_connectors) if c]
        rows.append(
            (
                ", ".join(t.qualified for t in lineage.source_tables) or "-",
                lineage.topic,
                ", ".join(str(t.ref) for t in lineage.tables) or "-",
                lineage.origin,
                ", ".join(dict.fromkeys(connectors)) or "-",
            )
        )
    return rows


def lineage_signature(lineage: TopicLineage) -> str:
    """What a topic's lineage is made of (kind, sources, tables, connectors, origins): equal
    signatures mean the posted hops need no change."""
    content = [
        lineage.kind.value,
        sorted([e.table.qualified, e.table.connector, e.origin] for e in lineage.sources),
        sorted([str(e.table.ref), e.table.connector, e.origin] for e in lineage.sinks),
        lineage.source_connector,
        sorted(lineage.sink_connectors),
    ]
    return hashlib.sha256(json.dumps(content).encode()).hexdigest()[:16]


def lineage_signatures(topology: Topology) -> dict[str, str]:
    return {lineage.topic: lineage_signature(lineage) for lineage in topology.lineages()}


def changed_topics(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """Topics whose signature changed, appeared or went, sorted."""
    return sorted(t for t in {*before, *after} if before.get(t) != after.get(t))


def connectors_digest(items: Iterable[Sequence[object]]) -> str:
    """A digest of what identifies every connector's current configuration (MSK Connect:
    name, ARN, ``currentVersion``, creation time; Kafka Connect: name and config)."""
    canonical = sorted(json.dumps(list(item), sort_keys=True, default=str) for item in items)
    return hashlib.sha256("\n".join(canonical).encode()).hexdigest()


def drift(topology: Topology, convention: TopicTableMapper) -> list[str]:
    """Table topics whose connector- or override-derived tables differ from the convention's
    guess: where the convention would have shown wrong lineage."""
    offenders = []
    for lineage in topology.lineages():
        decided = [e for e in lineage.sinks if e.origin in ("connector", "override")]
        if lineage.kind is not TopicKind.TABLE or not decided:
            continue  # a topic no sink consumes is the unconsumed-topic check's offender
        guess = convention.map_topic(lineage.topic).table
        derived = sorted(str(e.table.ref) for e in decided)
        if guess is None or [str(guess)] != derived:
            offenders.append(
                f"{lineage.topic}: {decided[0].origin} says {', '.join(derived)}, "
                f"the naming convention says {guess or 'no table'}"
            )
    return offenders


def table_topics_without_sink(topology: Topology) -> list[str]:
    """Table topics that no sink consumes (only meaningful once sink connectors are known)."""
    return [
        f"{lineage.topic}: no Iceberg sink connector consumes it"
        for lineage in topology.lineages()
        if lineage.kind is TopicKind.TABLE and not lineage.sink_connectors and not lineage.sinks
    ]


def fed_tables(topology: Topology) -> set[tuple[str, str]]:
    """(database, table) of every table some topic feeds, lower-cased as Glue stores them."""
    return {
        (edge.table.database.lower(), edge.table.table.lower())
        for lineage in topology.lineages()
        for edge in lineage.sinks
    }


def ambiguous_edges(topology: Topology) -> list[str]:
    return [
        f"{item.subject}"
        + (f" (connector {item.connector})" if item.connector else "")
        + f": {item.reason}"
        for item in topology.unresolved
    ]


def unknown_connectors(topology: Topology) -> list[str]:
    return [
        f"{item.name} ({item.connector_class or 'no connector.class'}): "
        + (f"{REFUSED}: {item.reason}" if item.refused else item.reason)
        for item in topology.unknown_connectors
    ]


#: How a connector whose configuration the platform refuses is shown.
REFUSED = "failing, the platform refuses its configuration (no lineage from it)"


def refused_connectors(topology: Topology) -> list[str]:
    """One line per connector that cannot run as configured, with the reason."""
    return [f"{item.name}: {item.reason}" for item in topology.unknown_connectors if item.refused]


def connector_role(topology: Topology, connector: ConnectorDefinition) -> str:
    """How the topology understood ``connector``, for the connectors table."""
    for source in topology.sources:
        if source.name == connector.name:
            return f"Debezium {source.engine.value} source ({source.naming.short_name})"
    for sink in topology.sinks:
        if sink.name == connector.name:
            return f"Iceberg sink ({sink.catalog} catalog)"
    refused = any(u.refused and u.name == connector.name for u in topology.unknown_connectors)
    return "failing: configuration refused" if refused else "not understood"


#: Debezium's switch for its own OpenLineage integration (default ``false``).
OPENLINEAGE_ENABLED = "openlineage.integration.enabled"
#: Where Debezium's ``KafkaDatasetNamespaceResolver`` takes its topics' Kafka namespace from,
#: first set wins; with neither, it names them ``kafka://unknown:unknown``.
OPENLINEAGE_KAFKA_NAMESPACE_PROPERTIES = (
    "openlineage.integration.dataset.kafka.bootstrap.servers",
    "schema.history.internal.kafka.bootstrap.servers",
)


def openlineage_without_kafka_namespace(connectors: Iterable[ConnectorDefinition]) -> list[str]:
    """The Debezium source connectors whose own OpenLineage is on
    (``openlineage.integration.enabled=true``) and which set neither property of
    :data:`OPENLINEAGE_KAFKA_NAMESPACE_PROPERTIES`: their topic events name
    ``kafka://unknown:unknown``, lineage nodes apart from the platform's topics."""
    return [
        connector.name
        for connector in connectors
        if is_debezium_source(connector.config)
        and (connector.config.get(OPENLINEAGE_ENABLED) or "").strip().lower() == "true"
        and not any(
            (connector.config.get(key) or "").strip()
            for key in OPENLINEAGE_KAFKA_NAMESPACE_PROPERTIES
        )
    ]


def openlineage_namespace_fix(connector: str) -> str:
    """What makes a connector of :func:`openlineage_without_kafka_namespace` name its topics by
    the cluster (the relay maps any broker of it, on any listener, to the topic's node)."""
    return (
        f"set {OPENLINEAGE_KAFKA_NAMESPACE_PROPERTIES[0]}=<a broker of the cluster> on connector "
        f"{connector}"
    )
