"""Which Iceberg tables an Iceberg sink connector writes a topic's records to.

Checked against Apache Iceberg's ``kafka-connect`` module (``IcebergSinkConfig``,
``RecordRouter``, ``DebeziumTransform``) and Tabular's predecessor:

- the sink consumes ``topics`` (a list) or ``topics.regex`` (a Java regex the whole topic name
  must match); Kafka Connect rejects a sink with both or neither;
- static routing without ``iceberg.tables.route-field`` writes every record of every topic to
  every table of ``iceberg.tables``;
- static routing with a route field writes a record to each table whose
  ``iceberg.table.<table>.route-regex`` matches the field's value in full (a table without a
  route regex gets nothing);
- dynamic routing (``iceberg.tables.dynamic-enabled``) writes to the table named by the route
  field's value, lower-cased, its namespace the part before the last ``.``
  (``TableIdentifier.parse``: several levels for REST or Nessie catalogs, one for Glue);
- a table that does not exist is created only with ``iceberg.tables.auto-create-enabled``;
  without it, dynamic routing writes nothing to it (``IcebergWriterFactory`` returns a no-op
  writer) and static routing fails the task: either way no data reaches it, which only the
  catalog can tell (:attr:`IcebergSink.missing_tables`, checked by the sync layer);
- ``IcebergSinkConfig.validate`` refuses a sink without ``iceberg.catalog.*`` properties, with
  ``iceberg.tables`` and ``dynamic-enabled`` both, with dynamic routing and no route field,
  or with neither; Kafka's ``ConfigDef`` refuses a boolean setting that is not true/false;
- the DebeziumTransform sets ``_cdc.target`` to ``cdc.target.pattern`` (default
  ``{db}.{table}``, only those two placeholders) and ``_cdc.source`` to ``{db}.{table}``, where
  ``{db}`` is the source's schema when it has one, else its database. These values are derived
  here from the Debezium side of the same topic; any other route field is the record's content,
  which the configuration does not decide.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from dzlineage_dagster.core.connectors.debezium import SourceTable
from dzlineage_dagster.core.connectors.java_regex import (
    InvalidJavaRegex,
    JavaPattern,
    UnsupportedJavaRegex,
    compile_java_regex,
)
from dzlineage_dagster.core.connectors.table_mapping import TableRef
from dzlineage_dagster.core.connectors.transforms import (
    ConnectorConfigError,
    TransformChain,
    TransformConfigError,
    compile_setting,
    config_list,
    parse_transform_chain,
)

ICEBERG_SINK_CLASSES = frozenset(
    {
        "org.apache.iceberg.connect.IcebergSinkConnector",
        "io.tabular.iceberg.connect.IcebergSinkConnector",
    }
)
DEBEZIUM_TRANSFORMS = frozenset(
    {
        "org.apache.iceberg.connect.transforms.DebeziumTransform",
        "io.tabular.iceberg.connect.transforms.DebeziumTransform",
    }
)
DEFAULT_CDC_TARGET_PATTERN = "{db}.{table}"
CDC_TARGET_FIELD = "_cdc.target"
CDC_SOURCE_FIELD = "_cdc.source"


class IcebergSinkConfigError(ConnectorConfigError):
    """An Iceberg sink configuration that Kafka Connect or the sink itself would reject
    (``refused``), or one this project cannot evaluate (``refused=False``)."""


@dataclass(frozen=True)
class SinkTable:
    """An Iceberg table a sink connector writes, named by its catalog identifier."""

    database: str
    table: str
    connector: str
    #: "glue" for the Glue Data Catalog, else what the config names (``rest``, a class...).
    catalog: str

    @property
    def ref(self) -> TableRef:
        return TableRef(self.database, self.table)

    @property
    def is_glue(self) -> bool:
        return self.catalog == "glue"


@dataclass(frozen=True)
class SinkRouting:
    """What a sink does with one topic's records."""

    topic: str
    connector: str
    tables: tuple[SinkTable, ...]
    ambiguous_reason: str | None
    reason: str


@dataclass(frozen=True)
class IcebergSink:
    name: str
    topics: tuple[str, ...]
    topics_regex: JavaPattern | None
    tables: tuple[str, ...]
    route_field: str | None
    #: Table -> its route regex, or the reason it cannot be evaluated.
    route_regexes: Mapping[str, JavaPattern | str]
    dynamic: bool
    #: ``cdc.target.pattern`` when a DebeziumTransform is in the chain, else None.
    cdc_target_pattern: str | None
    catalog: str
    chain: TransformChain
    #: ``iceberg.tables.auto-create-enabled``: a routed table that does not exist is created.
    auto_create: bool = False

    @property
    def missing_tables(self) -> str:
        """What happens to records routed to a table that does not exist: ``created``,
        ``dropped`` (dynamic routing's no-op writer) or ``fail`` (static routing throws)."""
        if self.auto_create:
            return "created"
        return "dropped" if self.dynamic else "fail"

    def subscribes(self, topic: str) -> bool:
        if self.topics_regex is not None:
            return self.topics_regex.matches(topic)
        return topic in self.topics

    def route(
        self,
        topic: str,
        sources: Sequence[SourceTable] | None,
        subscribed: Collection[str],
    ) -> SinkRouting:
        """The tables ``topic``'s records reach.

        ``sources`` are the topic's source tables from the Debezium side (None when no
        Debezium connector is known to produce it); ``subscribed`` every topic this sink
        consumes, for the static fan-out check.
        """
        if not self.route_field:
            if self.dynamic:
                return self._ambiguous(topic, "dynamic routing needs iceberg.tables.route-field")
            return self._route_to_all(topic, subscribed)
        values, problem = self._route_values(sources)
        if problem is not None:
            return self._ambiguous(topic, problem)
        tables: list[SinkTable] = []
        for value in values:
            routed, table_problem = self.tables_for_value(value)
            if table_problem is not None:
                return self._ambiguous(topic, table_problem)
            tables += routed
        how = "dynamically by" if self.dynamic else "by the route regexes on"
        return SinkRouting(
            topic,
            self.name,
            tuple(dict.fromkeys(tables)),
            None,
            f"sink {self.name!r} routes {how} {self.route_field} = "
            f"{', '.join(repr(v) for v in values)}",
        )

    def tables_for_value(self, value: str) -> tuple[list[SinkTable], str | None]:
        """The tables a record whose route field holds ``value`` goes to (``SinkWriter``):
        dynamic routing the lower-cased value itself, static routing every table whose route
        regex full-matches it; with the reason when a table name cannot be evaluated."""
        if self.dynamic:
            table, problem = self._table(value.lower())
            if problem is not None:
                return [], f"dynamic route value {value!r}: {problem}"
            return [table], None
        tables = []
        for name, regex in self.route_regexes.items():
            if isinstance(regex, str):
                return [], regex
            if regex.matches(value):
                table, problem = self._table(name)
                if problem is not None:
                    return [], problem
                tables.append(table)
        return tables, None

    def _route_to_all(self, topic: str, subscribed: Collection[str]) -> SinkRouting:
        if len(self.tables) > 1 and len(subscribed) > 1:
            return self._ambiguous(
                topic,
                f"sink {self.name!r} writes each of its {len(subscribed)} topics to each of its "
                f"{len(self.tables)} tables (static iceberg.tables without a route field): "
                "the configuration does not say which topic is which table",
            )
        tables = []
        for name in self.tables:
            table, problem = self._table(name)
            if problem is not None:
                return self._ambiguous(topic, problem)
            tables.append(table)
        return SinkRouting(
            topic,
            self.name,
            tuple(tables),
            None,
            f"sink {self.name!r} writes every record to iceberg.tables "
            f"{', '.join(self.tables)} (static, no route field)",
        )

    def _route_values(self, sources: Sequence[SourceTable] | None) -> tuple[list[str], str | None]:
        field = self.route_field
        if self.cdc_target_pattern is None or field not in (CDC_TARGET_FIELD, CDC_SOURCE_FIELD):
            return [], (
                f"sink {self.name!r} routes by the record field {field!r}, whose values the "
                "configuration does not decide"
            )
        unknown = [step for step in self.chain.steps if step.ambiguous_reason is not None]
        if unknown:
            return [], unknown[0].ambiguous_reason
        if not sources:
            return [], (
                f"sink {self.name!r} routes by {field}, but no Debezium connector is known to "
                "produce this topic, so its source tables (and the field's values) are unknown"
            )
        pattern = self.cdc_target_pattern if field == CDC_TARGET_FIELD else "{db}.{table}"
        values = [
            pattern.replace("{db}", source.cdc_db).replace("{table}", source.table)
            for source in sources
        ]
        return list(dict.fromkeys(values)), None

    def _table(self, identifier: str) -> tuple[SinkTable, None] | tuple[None, str]:
        """``TableIdentifier.parse``: the namespace is everything before the last ``.``."""
        parts = identifier.split(".")
        if len(parts) < 2 or not all(parts):
            return None, (f"sink {self.name!r}: table {identifier!r} is not '<namespace>.<table>'")
        if self.catalog == "glue" and len(parts) != 2:
            # GlueCatalog (IcebergToGlueConverter) accepts only one-level namespaces.
            return None, (
                f"sink {self.name!r}: table {identifier!r} is not '<database>.<table>' "
                "(a Glue table has a one-level namespace)"
            )
        database, table = ".".join(parts[:-1]), parts[-1]
        if self.catalog == "glue":
            database, table = database.lower(), table.lower()
        return SinkTable(database, table, self.name, self.catalog), None

    def _ambiguous(self, topic: str, reason: str) -> SinkRouting:
        return SinkRouting(topic, self.name, (), reason, reason)


def is_iceberg_sink(config: Mapping[str, str]) -> bool:
    return (config.get("connector.class") or "").strip() in ICEBERG_SINK_CLASSES


def parse_iceberg_sink(name: str, config: Mapping[str, str]) -> IcebergSink:
    """Parse an Iceberg sink's configuration; raises IcebergSinkConfigError naming the setting."""
    topics = tuple(config_list(config.get("topics")))
    regex_text = (config.get("topics.regex") or "").strip()
    if topics and regex_text:
        raise IcebergSinkConfigError(
            f"connector {name!r}: topics and topics.regex are mutually exclusive"
        )
    if not topics and not regex_text:
        raise IcebergSinkConfigError(f"connector {name!r}: needs topics or topics.regex")
    topics_regex = None
    if regex_text:
        topics_regex = compile_setting(
            IcebergSinkConfigError, f"connector {name!r}, topics.regex", regex_text
        )
    dynamic = _config_boolean(name, config, "iceberg.tables.dynamic-enabled")
    auto_create = _config_boolean(name, config, "iceberg.tables.auto-create-enabled")
    route_field = config.get("iceberg.tables.route-field")
    if not any(key.startswith("iceberg.catalog.") for key in config):
        raise IcebergSinkConfigError(
            f"connector {name!r}: must specify Iceberg catalog properties (iceberg.catalog.*)"
        )
    # IcebergSinkConfig.validate: a present iceberg.tables, even empty, is a static list.
    if "iceberg.tables" in config and dynamic:
        raise IcebergSinkConfigError(
            f"connector {name!r}: cannot specify both static and dynamic table names "
            "(iceberg.tables with iceberg.tables.dynamic-enabled=true)"
        )
    if "iceberg.tables" not in config and not dynamic:
        raise IcebergSinkConfigError(
            f"connector {name!r}: must specify table name(s): iceberg.tables, or "
            "iceberg.tables.dynamic-enabled=true with iceberg.tables.route-field"
        )
    if dynamic and route_field is None:
        raise IcebergSinkConfigError(
            f"connector {name!r}: must specify a route field (iceberg.tables.route-field) if "
            "using dynamic table names"
        )
    tables = tuple(config_list(config.get("iceberg.tables")))
    route_regexes: dict[str, JavaPattern | str] = {}
    for table in tables:
        setting = f"iceberg.table.{table}.route-regex"
        regex = config.get(setting)
        if regex is None:
            continue
        try:
            route_regexes[table] = compile_java_regex(regex)
        except (InvalidJavaRegex, UnsupportedJavaRegex) as error:
            route_regexes[table] = f"connector {name!r}, {setting}: {error}"
    try:
        chain = parse_transform_chain(name, config)
    except TransformConfigError as error:
        raise IcebergSinkConfigError(str(error)) from error
    cdc_target_pattern = None
    for step in chain.steps:
        if step.type in DEBEZIUM_TRANSFORMS:
            cdc_target_pattern = (
                config.get(f"transforms.{step.alias}.cdc.target.pattern")
                or DEFAULT_CDC_TARGET_PATTERN
            )
    return IcebergSink(
        name=name,
        topics=topics,
        topics_regex=topics_regex,
        tables=tables,
        route_field=(route_field or "").strip() or None,
        route_regexes=route_regexes,
        dynamic=dynamic,
        cdc_target_pattern=cdc_target_pattern,
        catalog=catalog_kind(config),
        chain=chain,
        auto_create=auto_create,
    )


def _config_boolean(connector: str, config: Mapping[str, str], setting: str) -> bool:
    """A Kafka ``ConfigDef`` BOOLEAN (default false): ``true``/``false`` in any case, trimmed;
    anything else is refused."""
    value = (config.get(setting) or "false").strip().lower()
    if value not in ("true", "false"):
        raise IcebergSinkConfigError(
            f"connector {connector!r}: {setting}={config.get(setting)!r} is not true or false"
        )
    return value == "true"


def catalog_kind(config: Mapping[str, str]) -> str:
    """``glue`` for a Glue catalog (``catalog-impl`` GlueCatalog or ``type=glue``), else the
    configured type or implementation class, or ``unknown``."""
    implementation = (config.get("iceberg.catalog.catalog-impl") or "").strip()
    catalog_type = (config.get("iceberg.catalog.type") or "").strip().lower()
    if implementation.endswith(".GlueCatalog") or catalog_type == "glue":
        return "glue"
    return implementation or catalog_type or "unknown"
