"""Source table -> topic -> Iceberg table, derived from the connectors the platform runs.

Input: the connector definitions (name and ``connectorConfiguration`` as MSK Connect's
``DescribeConnector`` or Kafka Connect's ``GET /connectors?expand=info`` return them) and the
registry's topic names. :func:`build_topology` parses every Debezium source and Iceberg sink,
derives which source tables feed which topic and which tables each topic reaches, and keeps
what it could not decide (with the reason) instead of guessing. :meth:`Topology.lineage_for`
answers for one topic, with precedence override > connector > convention; every edge says
which of them decided it. The naming convention (``fallback``) is asked only when no Iceberg
sink connector is known at all: once the sinks are known, a topic none of them consumes feeds
no table, and a guess would hide exactly what the checks look for.

Override format (a mapping, e.g. loaded from YAML by the caller)::

    topics:
      shop.sales.orders_all:            # the topic
        tables: [lakehouse.orders]      # '<database>.<table>'; [] = feeds no table
        sources:                        # optional; each either a connector's table ...
          - {connector: shop-debezium-source, table: sales.orders}
          # ... or a full source table
          - {engine: mysql, host: db.internal, port: 3306, database: shop, table: orders}
        reason: merged by a stream processor   # optional, shown with the edge

A topic's ``tables`` or ``sources`` given in the override replace the derived ones; a part
left out stays derived.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from dzlineage_dagster.core.connectors.debezium import (
    DEFAULT_DEBEZIUM_VERSION,
    DebeziumSource,
    SourceEngine,
    SourceTable,
    is_debezium_source,
    parse_debezium_source,
)
from dzlineage_dagster.core.connectors.iceberg_sink import (
    IcebergSink,
    SinkTable,
    is_iceberg_sink,
    parse_iceberg_sink,
)
from dzlineage_dagster.core.connectors.java_regex import compile_java_regex
from dzlineage_dagster.core.connectors.table_mapping import (
    MappingOrigin,
    TableRef,
    TopicTableMapper,
    TopicTableMapping,
)
from dzlineage_dagster.core.connectors.topics import TopicKind, classify_topic
from dzlineage_dagster.core.connectors.transforms import ConnectorConfigError

EdgeOrigin = Literal["override", "connector", "convention"]
#: Weakest first: a topic's overall origin is the weakest of its edges'.
_ORIGIN_STRENGTH = {"convention": 0, "connector": 1, "override": 2}

#: The Kafka Connect converters of the AWS Glue Schema Registry (awslabs/aws-glue-schema-registry:
#: Avro, JSON Schema, Protobuf). Kafka Connect hands each the settings under its prefix
#: (``value.converter.registry.name`` reaches it as ``registry.name``).
GSR_CONVERTER_CLASSES = frozenset(
    {
        "com.amazonaws.services.schemaregistry.kafkaconnect.AWSKafkaAvroConverter",
        "com.amazonaws.services.schemaregistry.kafkaconnect.jsonschema.JsonSchemaConverter",
        "com.amazonaws.services.schemaregistry.kafkaconnect.protobuf.ProtobufSchemaConverter",
    }
)
#: The registry such a converter uses when ``registry.name`` is not set
#: (``AWSSchemaRegistryConstants.DEFAULT_REGISTRY_NAME``).
GSR_DEFAULT_REGISTRY = "default-registry"
ConverterRole = Literal["key", "value"]


@dataclass(frozen=True)
class ConverterRegistry:
    """The Glue Schema Registry one of a connector's converters uses, and how that is known."""

    role: ConverterRole
    #: None when the converter is not a Glue Schema Registry converter or is not known.
    registry: str | None
    #: False when the connector config names no converter: the Connect worker's applies, and
    #: the worker configuration is not read.
    known: bool
    #: The setting that says so, for messages (``value.converter.registry.name=shop-cdc``).
    evidence: str


@dataclass(frozen=True)
class ConnectorDefinition:
    """A connector as the platform reports it."""

    name: str
    config: Mapping[str, str]

    @property
    def connector_class(self) -> str:
        return (self.config.get("connector.class") or "").strip()

    def converter_registry(self, role: ConverterRole) -> ConverterRegistry:
        """Which registry the connector's key or value converter registers and reads in."""
        converter = (self.config.get(f"{role}.converter") or "").strip()
        if not converter:
            return ConverterRegistry(
                role, None, False, f"no {role}.converter in its config (the worker's applies)"
            )
        if converter not in GSR_CONVERTER_CLASSES:
            return ConverterRegistry(
                role, None, True, f"{role}.converter={converter}, no Glue Schema Registry"
            )
        setting = f"{role}.converter.registry.name"
        name = (self.config.get(setting) or "").strip()
        if name:
            return ConverterRegistry(role, name, True, f"{setting}={name}")
        return ConverterRegistry(
            role,
            GSR_DEFAULT_REGISTRY,
            True,
            f"no {setting}: the converter's {GSR_DEFAULT_REGISTRY}",
        )

    def registry_mismatch(self, registry: str) -> RegistryMismatch | None:
        """How this connector's records have no value schema in ``registry`` (None when they
        have, or may have: a converter the config does not name is the worker's)."""
        value = self.converter_registry("value")
        if not value.known or value.registry == registry:
            return None
        key = self.converter_registry("key")
        return RegistryMismatch(self.name, key if key.registry == registry else None, value)


@dataclass(frozen=True)
class RegistryMismatch:
    """A connector whose value schemas are not in the synced registry."""

    connector: str
    #: Set when the synced registry is the connector's key registry.
    key: ConverterRegistry | None
    value: ConverterRegistry

    @property
    def settings(self) -> str:
        return "; ".join(c.evidence for c in (self.key, self.value) if c is not None)


def describe_registry_mismatches(registry: str, mismatches: Iterable[RegistryMismatch]) -> str:
    """One sentence for the connectors of a topic that keep no value schema in ``registry``,
    grouped by what their converters say."""
    groups: dict[tuple[bool, str], list[str]] = {}
    for mismatch in mismatches:
        groups.setdefault((mismatch.key is not None, mismatch.settings), []).append(
            repr(mismatch.connector)
        )
    parts = []
    for (holds_keys, settings), names in groups.items():
        plural = "s" if len(names) > 1 else ""
        role = "the key registry" if holds_keys else "not the value registry"
        parts.append(f"{registry} is {role} of connector{plural} {', '.join(names)} ({settings})")
    return "; ".join(parts)


@dataclass(frozen=True)
class SourceEdge:
    """Source table -> topic."""

    table: SourceTable
    origin: EdgeOrigin
    reason: str


@dataclass(frozen=True)
class SinkEdge:
    """Topic -> Iceberg table."""

    table: SinkTable
    origin: EdgeOrigin
    reason: str


@dataclass(frozen=True)
class TopicLineage:
    """Everything known about one topic's lineage."""

    topic: str
    kind: TopicKind
    sources: tuple[SourceEdge, ...]
    #: The Debezium connector writing the topic (None when none is known).
    source_connector: str | None
    sinks: tuple[SinkEdge, ...]
    #: The sink connectors consuming the topic.
    sink_connectors: tuple[str, ...]
    #: The weakest origin among the edges; "none" when there are no edges.
    origin: MappingOrigin
    #: Why part of the lineage could not be decided (None when all of it was).
    ambiguous_reason: str | None
    reason: str
    #: Why a table topic has no source table, or no Iceberg table ("" when it has one, or
    #: carries no table rows): every missing hop says why.
    no_source_reason: str = ""
    no_table_reason: str = ""

    @property
    def is_ambiguous(self) -> bool:
        return self.ambiguous_reason is not None

    @property
    def missing_hops(self) -> tuple[str, ...]:
        """``no source: <why>`` and ``no table: <why>`` for each hop the table topic lacks."""
        return tuple(
            f"{hop}: {why}"
            for hop, why in (
                ("no source", self.no_source_reason),
                ("no table", self.no_table_reason),
            )
            if why
        )

    @property
    def tables(self) -> tuple[SinkTable, ...]:
        return tuple(edge.table for edge in self.sinks)

    @property
    def source_tables(self) -> tuple[SourceTable, ...]:
        return tuple(edge.table for edge in self.sources)


@dataclass(frozen=True)
class Unresolved:
    """Something the configs did not decide: a topic, a connector or an include pattern."""

    subject: str
    connector: str | None
    reason: str


@dataclass(frozen=True)
class UnknownConnector:
    name: str
    connector_class: str
    reason: str
    #: True when the platform refuses the configuration: the connector fails and moves no
    #: data (False: it may run, this project just cannot read its configuration).
    refused: bool = False


@dataclass(frozen=True)
class TopicOverride:
    tables: tuple[SinkTable, ...] | None
    sources: tuple[SourceTable, ...] | None
    reason: str


class OverrideError(ValueError):
    """The override mapping is malformed; the message names the topic and entry."""


@dataclass
class Topology:
    """The parsed connectors and the lineage they decide. Build with :func:`build_topology`."""

    connectors: tuple[ConnectorDefinition, ...]
    sources: tuple[DebeziumSource, ...]
    sinks: tuple[IcebergSink, ...]
    unknown_connectors: tuple[UnknownConnector, ...]
    #: Topics known from the registry and the connectors, sorted.
    topics: tuple[str, ...]
    overrides: Mapping[str, TopicOverride] = field(default_factory=dict)
    fallback: TopicTableMapper | None = None
    #: The registry whose schemas are synced: a connector whose converter keeps its value
    #: schemas elsewhere claims no lineage for them (None: every connector may).
    registry_name: str | None = None
    #: Glue database -> the names of its tables, for the databases :meth:`tables_to_confirm`
    #: names (None: not read; every routed table is then assumed to exist).
    catalog_tables: Mapping[str, Collection[str]] | None = None
    _source_routes: dict[str, list[tuple[SourceTable, DebeziumSource, str]]] = field(
        default_factory=dict, repr=False
    )
    _source_problems: dict[str, str] = field(default_factory=dict, repr=False)
    _special: dict[str, tuple[TopicKind, str]] = field(default_factory=dict, repr=False)
    _unresolved: list[Unresolved] = field(default_factory=list, repr=False)
    _subscribed: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def lineage_for(self, topic: str) -> TopicLineage:
        """The lineage of ``topic``: override, else connectors, else the naming convention."""
        special = self._special.get(topic)
        kind = special[0] if special else self._kind(topic)
        routes = self._source_routes.get(topic, [])
        subscribers = [sink for sink in self.sinks if sink.subscribes(topic)]
        connectors = dict.fromkeys(
            [*(source.name for _, source, _ in routes), *(sink.name for sink in subscribers)]
        )
        mismatches = self._registry_mismatches(connectors)
        if not special and connectors and mismatches.keys() == connectors.keys():
            return self._other_registry(topic, mismatches)
        routes = [route for route in routes if route[1].name not in mismatches]
        source_connector = routes[0][1].name if routes else None
        sources = tuple(SourceEdge(table, "connector", reason) for table, _, reason in routes)
        source_problems = [self._source_problems[topic]] if topic in self._source_problems else []
        writers = sorted({source.name for _, source, _ in routes})
        if len(writers) > 1:
            source_problems.append(
                f"connectors {', '.join(writers)} all write {topic!r}: check their prefixes "
                "and routers"
            )
        sink_problems: list[str] = []
        sinks: list[SinkEdge] = []
        unwritten: list[str] = []
        sink_connectors: list[str] = []
        for sink in subscribers:
            if sink.name in mismatches:
                continue
            sink_connectors.append(sink.name)
            if kind is not TopicKind.TABLE and special:
                continue  # the connector config says this topic carries no rows
            unwrapped = [source.name for _, source, _ in routes if source.chain.reshapes_value]
            if unwrapped and sink.cdc_target_pattern is not None:
                sink_problems.append(
                    f"sink {sink.name!r} applies the DebeziumTransform, but connector "
                    f"{unwrapped[0]!r} unwraps the change-event envelope before it"
                )
                continue
            routing = sink.route(
                topic, [edge.table for edge in sources] or None, self.subscribed(sink)
            )
            if routing.ambiguous_reason:
                sink_problems.append(routing.ambiguous_reason)
            for table in routing.tables:
                missing = self._missing_table(sink, table)
                if missing is None:
                    sinks.append(SinkEdge(table, "connector", routing.reason))
                elif sink.missing_tables == "fail":
                    sink_problems.append(missing)
                else:
                    unwritten.append(missing)
        override = self.overrides.get(topic)
        if override is not None:
            if override.sources is not None:
                sources = tuple(
                    SourceEdge(t, "override", override.reason) for t in override.sources
                )
                source_connector = sources[0].table.connector if sources else None
                source_problems = []
            if override.tables is not None:
                sinks = [SinkEdge(t, "override", override.reason) for t in override.tables]
                sink_problems = []
            kind = TopicKind.TABLE if kind is TopicKind.OTHER else kind
        problems = [*source_problems, *sink_problems]
        if not self.sinks and not sinks and kind is TopicKind.TABLE:
            # Only when no sink connector is known at all: with sinks known, a topic none of
            # them consumes feeds no table, and a guess would hide that.
            sinks = self._convention_sinks(topic)
        no_source = no_table = ""
        overridden = f"the lineage override names none ({override.reason})" if override else ""
        if kind is TopicKind.TABLE and not sources:
            no_source = (
                overridden
                if override and override.sources is not None
                else "; ".join(source_problems) or self._no_source_reason(topic)
            )
        if kind is TopicKind.TABLE and not sinks:
            no_table = (
                overridden
                if override and override.tables is not None
                else "; ".join([*sink_problems, *unwritten])
                or self._no_table_reason(sink_connectors)
            )
        reason = self._reason(topic, kind, sources, sinks, special)
        if unwritten:
            reason += "; " + "; ".join(unwritten)
        if mismatches:
            reason += (
                f"; no edge claimed from the connectors that do not use registry "
                f"{self.registry_name}: "
                + describe_registry_mismatches(self.registry_name or "", mismatches.values())
            )
        origins = [edge.origin for edge in (*sources, *sinks)]
        origin: MappingOrigin = (
            min(origins, key=_ORIGIN_STRENGTH.__getitem__) if origins else "none"
        )
        return TopicLineage(
            topic=topic,
            kind=kind,
            sources=sources,
            source_connector=source_connector,
            sinks=tuple(dict.fromkeys(sinks)),
            sink_connectors=tuple(sink_connectors),
            origin=origin,
            ambiguous_reason="; ".join(dict.fromkeys(problems)) or None,
            reason=reason,
            no_source_reason=no_source,
            no_table_reason=no_table,
        )

    def _no_source_reason(self, topic: str) -> str:
        """Why no source table is known for ``topic`` when no connector reported a problem."""
        prefixes = sorted({source.topic_prefix for source in self.sources})
        if not prefixes:
            return "no Debezium source connector is known; a lineage override can name its tables"
        if not any(topic.startswith(f"{s.topic_prefix}{s.delimiter}") for s in self.sources):
            return (
                f"no Debezium source's topic prefix ({', '.join(prefixes)}) names it; a lineage "
                "override can name its tables"
            )
        return (
            "no table a Debezium source captures is named into it (a table outside the "
            "include lists?); a lineage override can name its tables"
        )

    def _no_table_reason(self, sink_connectors: Sequence[str]) -> str:
        """Why no Iceberg table is known for ``topic`` when no sink reported a problem."""
        if not self.sinks:
            return "no Iceberg sink connector is known and the naming convention names no table"
        if not sink_connectors:
            return "no Iceberg sink connector consumes it"
        return f"sinks {', '.join(sink_connectors)} route it to no table"

    def _missing_table(self, sink: IcebergSink, table: SinkTable) -> str | None:
        """Why ``sink`` writes nothing to ``table`` (it does not exist and is not created), or
        None when it does, may or is created."""
        if sink.missing_tables == "created" or not table.is_glue or self.catalog_tables is None:
            return None
        names = self.catalog_tables.get(table.database)
        if names is None or table.table in names:
            return None
        effect = (
            "its dynamic routing writes nothing to it"
            if sink.missing_tables == "dropped"
            else "its task fails on the first record routed there"
        )
        return (
            f"sink {sink.name!r} routes to {table.ref}, which is not in the Glue Data Catalog, "
            f"and iceberg.tables.auto-create-enabled is not true: {effect} (no edge)"
        )

    def tables_to_confirm(self) -> list[str]:
        """The Glue databases whose tables must be read to tell whether the sinks that do not
        create missing tables write anything (see :attr:`catalog_tables`)."""
        by_name = {sink.name: sink for sink in self.sinks}
        databases = {
            edge.table.database
            for lineage in self.lineages()
            for edge in lineage.sinks
            if edge.origin == "connector"
            and edge.table.is_glue
            and by_name[edge.table.connector].missing_tables != "created"
        }
        return sorted(databases)

    def _registry_mismatches(self, connector_names: Iterable[str]) -> dict[str, RegistryMismatch]:
        """Connector -> how it keeps no value schema in the synced registry."""
        if self.registry_name is None:
            return {}
        by_name = {connector.name: connector for connector in self.connectors}
        mismatches = {}
        for name in connector_names:
            connector = by_name.get(name)
            mismatch = connector.registry_mismatch(self.registry_name) if connector else None
            if mismatch is not None:
                mismatches[name] = mismatch
        return mismatches

    def _other_registry(
        self, topic: str, mismatches: Mapping[str, RegistryMismatch]
    ) -> TopicLineage:
        """Every connector of ``topic`` keeps its value schemas in another registry: the
        schema synced here does not describe its records, so it gets no asset and no edge."""
        registry = self.registry_name or ""
        value_registries = sorted(
            {m.value.registry for m in mismatches.values() if m.value.registry is not None}
        )
        verdict = (
            f"{topic!r} is cataloged from its value schema in {', '.join(value_registries)}, "
            f"not from registry {registry}"
            if value_registries
            else f"its connectors keep no value schema of {topic!r} in a Glue Schema Registry"
        )
        reason = f"{describe_registry_mismatches(registry, mismatches.values())}: {verdict}"
        return TopicLineage(
            topic=topic,
            kind=TopicKind.OTHER_REGISTRY,
            sources=(),
            source_connector=None,
            sinks=(),
            sink_connectors=(),
            origin="none",
            ambiguous_reason=None,
            reason=reason,
        )

    def converter_registries(self) -> set[str]:
        """Every registry a connector's key or value converter names (or defaults to)."""
        return {
            registry.registry
            for connector in self.connectors
            for registry in map(connector.converter_registry, ("key", "value"))
            if registry.registry is not None
        }

    def source_connector_of(self, topic: str) -> DebeziumSource | None:
        """The Debezium connector writing ``topic`` (for its bootstrap servers and whether it
        unwraps the envelope: ``chain.reshapes_value``), None when none is known."""
        lineage = self.lineage_for(topic)
        return next((s for s in self.sources if s.name == lineage.source_connector), None)

    def lineages(self) -> list[TopicLineage]:
        return [self.lineage_for(topic) for topic in self.topics]

    def subscribed(self, sink: IcebergSink) -> list[str]:
        """The known topics ``sink`` consumes that carry table rows."""
        if sink.name not in self._subscribed:
            self._subscribed[sink.name] = [
                topic
                for topic in self.topics
                if sink.subscribes(topic)
                and (topic not in self._special or self._special[topic][0] is TopicKind.TABLE)
            ]
        return self._subscribed[sink.name]

    @property
    def unresolved(self) -> list[Unresolved]:
        """Connector-level problems, include patterns no topic shows, and ambiguous topics."""
        topic_problems = [
            Unresolved(lineage.topic, lineage.source_connector, lineage.ambiguous_reason)
            for lineage in self.lineages()
            if lineage.ambiguous_reason
        ]
        return [*self._unresolved, *topic_problems]

    def special_topics(self) -> dict[str, TopicKind]:
        """Heartbeat, transaction, schema-change and schema-history topics named by configs."""
        return {topic: kind for topic, (kind, _) in self._special.items()}

    def _kind(self, topic: str) -> TopicKind:
        if topic in self._source_routes or topic in self._source_problems:
            return TopicKind.TABLE
        return classify_topic(topic, topic_prefixes=[s.topic_prefix for s in self.sources])

    def _convention_sinks(self, topic: str) -> list[SinkEdge]:
        if self.fallback is None:
            return []
        mapping = self.fallback.map_topic(topic)
        if mapping.table is None or mapping.origin != "convention":
            return []
        guess = SinkTable(mapping.table.database, mapping.table.table, "", "glue")
        return [SinkEdge(guess, "convention", mapping.reason)]

    def _reason(
        self,
        topic: str,
        kind: TopicKind,
        sources: Sequence[SourceEdge],
        sinks: Sequence[SinkEdge],
        special: tuple[TopicKind, str] | None,
    ) -> str:
        if special and kind is not TopicKind.TABLE:
            return special[1]
        parts = [edge.reason for edge in (*sources, *sinks)]
        if (
            not parts
            and kind is TopicKind.TABLE
            and not any(
                topic.startswith(source.topic_prefix + source.delimiter) for source in self.sources
            )
        ):
            prefixes = ", ".join(sorted({source.topic_prefix for source in self.sources}))
            return (
                f"no known connector writes or reads {topic!r} (the Debezium sources' topic "
                f"prefixes: {prefixes or 'none'}); a lineage override can name its tables"
            )
        if not parts:
            return f"no connector, override or convention maps {topic!r}"
        return "; ".join(dict.fromkeys(parts))


def build_topology(
    connectors: Iterable[ConnectorDefinition],
    topics: Iterable[str],
    *,
    value_schema_names: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    fallback: TopicTableMapper | None = None,
    registry_name: str | None = None,
    debezium_version: tuple[int, int] = DEFAULT_DEBEZIUM_VERSION,
    catalog_tables: Mapping[str, Collection[str]] | None = None,
) -> Topology:
    """Parse the connectors and derive the lineage of the known topics.

    ``topics`` are the registry's topic names; ``value_schema_names`` (optional) maps a topic
    to its value schema's full name, which for Debezium is ``<original topic>.Envelope`` and
    reveals the table behind a RegexRouter-renamed topic. ``overrides`` is the mapping
    described in the module doc; ``fallback`` the naming-convention mapper; ``registry_name``
    the registry whose schemas are synced (see :attr:`Topology.registry_name`);
    ``debezium_version`` the (major, minor) whose behaviour is modelled where it differs;
    ``catalog_tables`` the Glue tables read for :meth:`Topology.tables_to_confirm`.
    A connector whose configuration the platform refuses is kept as an
    :class:`UnknownConnector` with ``refused=True``: it runs nowhere, so it decides no edge.
    """
    connectors = tuple(connectors)
    registry_topics = list(dict.fromkeys(topics))
    sources: list[DebeziumSource] = []
    sinks: list[IcebergSink] = []
    unknown: list[UnknownConnector] = []
    for connector in connectors:
        try:
            if is_debezium_source(connector.config):
                sources.append(
                    parse_debezium_source(
                        connector.name, connector.config, debezium_version=debezium_version
                    )
                )
            elif is_iceberg_sink(connector.config):
                sinks.append(parse_iceberg_sink(connector.name, connector.config))
            elif not connector.connector_class:
                # ConnectorConfig's connector.class has no default: Kafka Connect refuses it.
                unknown.append(
                    UnknownConnector(
                        connector.name,
                        "",
                        "its configuration has no connector.class, which Kafka Connect requires "
                        "(no default): it cannot run",
                        refused=True,
                    )
                )
            else:
                unknown.append(
                    UnknownConnector(
                        connector.name,
                        connector.connector_class,
                        f"connector class {connector.connector_class!r} is neither "
                        "a Debezium relational source nor an Iceberg sink: its topics are not "
                        "mapped from its configuration",
                    )
                )
        except ConnectorConfigError as error:
            unknown.append(
                UnknownConnector(
                    connector.name, connector.connector_class, str(error), error.refused
                )
            )
    parsed_overrides = parse_overrides(overrides or {}, sources)
    topology = Topology(
        connectors=connectors,
        sources=tuple(sources),
        sinks=tuple(sinks),
        unknown_connectors=tuple(unknown),
        topics=(),
        overrides=parsed_overrides,
        fallback=fallback,
        registry_name=registry_name,
        catalog_tables=catalog_tables,
    )
    all_topics = dict.fromkeys(registry_topics)
    for source in sources:
        _add_source(topology, source, registry_topics, value_schema_names, all_topics)
    _flag_topics_routers_may_produce(topology, registry_topics)
    all_topics.update(dict.fromkeys(parsed_overrides))
    topology.topics = tuple(sorted(all_topics))
    return topology


def _add_source(
    topology: Topology,
    source: DebeziumSource,
    registry_topics: list[str],
    value_schema_names: Mapping[str, str] | None,
    all_topics: dict[str, None],
) -> None:
    if source.naming_problem:
        topology._unresolved.append(Unresolved(source.name, source.name, source.naming_problem))
        return
    for topic, kind in source.special_topic_kinds().items():
        topology._special[topic] = (
            kind,
            f"{kind.value.replace('_', ' ')} topic of connector {source.name!r} (from its config)",
        )
    matched_patterns: set[str] = set()
    for route in source.table_routes(registry_topics, value_schema_names):
        routed = route.routed
        if routed.is_ambiguous:
            topology._source_problems[routed.original] = routed.ambiguous_reason or ""
            all_topics.setdefault(routed.original, None)
            continue
        via = f" renamed by {', '.join(routed.renamed_by)}" if routed.renamed_by else ""
        named = source.origin_topic(route.table) != routed.original
        if named:
            via = f" (named by topic.naming.strategy {source.naming.short_name}){via}"
        merged = " (one of the tables merged into it)" if routed.merged or named else ""
        reason = (
            f"connector {source.name!r} captures {route.table.filter_id} "
            f"(known from its {route.evidence}) into {routed.original}{via}{merged}"
        )
        topology._source_routes.setdefault(routed.topic, []).append((route.table, source, reason))
        all_topics.setdefault(routed.topic, None)
        matched_patterns.update(
            pattern
            for pattern in source.table_patterns
            if _pattern_matches(pattern, route.table.filter_id)
        )
    for pattern in source.table_patterns:
        if pattern not in matched_patterns:
            topology._unresolved.append(
                Unresolved(
                    pattern,
                    source.name,
                    f"connector {source.name!r} includes tables matching {pattern!r}, and no "
                    "registry topic shows a table it captures",
                )
            )


def _flag_topics_routers_may_produce(topology: Topology, registry_topics: list[str]) -> None:
    """A registry topic no captured table explains, but a router could have named, is
    reported: its tables are hidden behind the router (a regex include list, no envelope).
    A merging rename (logical-table router, regex naming strategy) renames the value schema to
    ``<topic>.Envelope`` as well, so there only the include list or an override can help."""
    explained = {*topology._source_routes, *topology._source_problems, *topology._special}
    for topic in registry_topics:
        if topic in explained:
            continue
        for source in topology.sources:
            merging = source.merge_step_producing(topic)
            step = next((s for s in source.chain.steps if s.may_produce(topic)), None)
            if merging is None and step is None:
                continue
            if merging is not None:
                help_ = (
                    "it merges tables and renames their value schema to the merged topic's, so "
                    "only a literal table.include.list or an override can name them"
                )
            else:
                help_ = "give the value schema names, a literal table.include.list or an override"
            what = (
                f"transform {merging or step.alias!r}"
                if merging != "topic.naming.strategy"
                else f"topic.naming.strategy {source.naming.short_name}"
            )
            topology._source_problems[topic] = (
                f"{what} of connector {source.name!r} may have named this topic, but no known "
                f"table of the connector routes to it ({help_})"
            )
            break


def _pattern_matches(pattern: str, text: str) -> bool:
    return compile_java_regex(pattern, case_insensitive=True).matches(text)


def parse_overrides(
    document: Mapping[str, Any], sources: Sequence[DebeziumSource] = ()
) -> dict[str, TopicOverride]:
    """Parse the override mapping (module doc); raises OverrideError naming the topic."""
    topics = document.get("topics", {}) if isinstance(document, Mapping) else None
    if not isinstance(topics, Mapping):
        raise OverrideError("the override document must be a mapping with a 'topics' mapping")
    by_name = {source.name: source for source in sources}
    overrides = {}
    for topic, entry in topics.items():
        if not isinstance(entry, Mapping):
            raise OverrideError(f"override for topic {topic!r} must be a mapping")
        unknown_keys = set(entry) - {"tables", "sources", "reason"}
        if unknown_keys:
            raise OverrideError(
                f"override for topic {topic!r} has unknown keys {sorted(unknown_keys)}"
            )
        reason = str(entry.get("reason") or f"override for topic {topic!r}")
        tables = None
        if "tables" in entry:
            tables = tuple(_override_table(topic, value) for value in entry["tables"] or [])
        overridden_sources = None
        if "sources" in entry:
            overridden_sources = tuple(
                _override_source(topic, value, by_name) for value in entry["sources"] or []
            )
        overrides[str(topic)] = TopicOverride(tables, overridden_sources, reason)
    return overrides


def _override_table(topic: str, value: object) -> SinkTable:
    parts = str(value).split(".") if isinstance(value, str) else []
    if len(parts) != 2 or not all(parts):
        raise OverrideError(
            f"override for topic {topic!r}: table {value!r} must be '<database>.<table>'"
        )
    return SinkTable(parts[0].lower(), parts[1].lower(), "", "glue")


def _override_source(
    topic: str, value: object, sources: Mapping[str, DebeziumSource]
) -> SourceTable:
    where = f"override for topic {topic!r}: source {value!r}"
    if not isinstance(value, Mapping):
        raise OverrideError(f"{where} must be a mapping")
    if "connector" in value:
        source = sources.get(str(value["connector"]))
        if source is None:
            raise OverrideError(f"{where} names no known Debezium connector")
        parts = str(value.get("table", "")).split(".")
        if len(parts) == 2 and source.default_database is not None and source.engine.has_schemas:
            return source.table(source.default_database, parts[0], parts[1])
        if len(parts) == 2 and not source.engine.has_schemas:
            return source.table(parts[0], None, parts[1])
        if len(parts) == 3 and source.engine is SourceEngine.SQLSERVER:
            return source.table(*parts)
        raise OverrideError(f"{where}: table must be the connector's table id")
    try:
        engine = SourceEngine(str(value["engine"]))
        return SourceTable(
            engine,
            str(value["database"]),
            str(value["schema"]) if engine.has_schemas else None,
            str(value["table"]),
            str(value["host"]),
            str(value["port"]),
            str(value.get("connector", "")),
        )
    except (KeyError, ValueError) as error:
        raise OverrideError(
            f"{where} needs engine ({', '.join(e.value for e in SourceEngine)}), host, port, "
            f"database, schema (not for mysql) and table: {error}"
        ) from error


@dataclass(frozen=True)
class ConnectorTopicMapper:
    """A :class:`TopicTableMapper` answering from the topology (which falls back itself)."""

    topology: Topology

    def map_topic(self, topic: str) -> TopicTableMapping:
        lineage = self.topology.lineage_for(topic)
        if not lineage.sinks:
            reason = lineage.ambiguous_reason or lineage.reason
            return TopicTableMapping(topic, None, "none", reason)
        first = lineage.sinks[0]
        others = [str(edge.table.ref) for edge in lineage.sinks[1:]]
        also = f" (also feeds {', '.join(others)})" if others else ""
        return TopicTableMapping(
            topic,
            TableRef(first.table.database, first.table.table),
            first.origin,
            first.reason + also,
        )
