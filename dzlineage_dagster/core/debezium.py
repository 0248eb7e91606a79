"""Which source tables a Debezium connector sends to which topics, from its configuration.

A Debezium relational connector writes a table's change events to
``<topic.prefix><d><catalog><d><schema><d><table>`` (``<d>`` = ``topic.delimiter``, parts the
engine lacks left out: Postgres and Oracle have no catalog, MySQL/MariaDB no schema, SQL
Server has both), then the connector's ``transforms`` may rename the topic (see
:mod:`dzlineage_dagster.core.connect_transforms`). A table is captured when its id matches
``table.include.list`` (or not ``table.exclude.list``) and its schema / database passes the
schema / database lists: every list is a comma-separated list of Java regexes matched
case-insensitively against the whole id (Debezium's ``Predicates.includes`` compiles them with
``CASE_INSENSITIVE`` and tests ``matcher.matches()``). The id is ``schema.table`` for Postgres,
SQL Server and Oracle, ``database.table`` for MySQL and MariaDB.

Debezium names its other topics from the same settings: heartbeats
``<topic.heartbeat.prefix><d><topic.prefix>`` (legacy ``heartbeat.topics.prefix``, default
``__debezium-heartbeat``), transaction metadata ``<topic.prefix><d><topic.transaction>``
(default ``transaction``), schema changes the bare ``<topic.prefix>``, and the schema history
topic ``schema.history.internal.kafka.topic`` (legacy ``database.history.kafka.topic``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum

from dzlineage_dagster.core.connect_transforms import (
    RoutedTopic,
    TransformChain,
    config_list,
    parse_transform_chain,
)
from dzlineage_dagster.core.java_regex import (
    InvalidJavaRegex,
    JavaPattern,
    UnsupportedJavaRegex,
    compile_java_regex,
    split_java_regex_list,
)
from dzlineage_dagster.core.topics import HEARTBEAT_PREFIX, TopicKind


class SourceEngine(Enum):
    POSTGRES = "postgres"
    MYSQL = "mysql"
    SQLSERVER = "sqlserver"
    ORACLE = "oracle"

    @property
    def has_schemas(self) -> bool:
        """Whether a table id has a schema part (the DebeziumTransform's ``{db}`` is then it)."""
        return self is not SourceEngine.MYSQL


#: Debezium connector classes -> the engine they capture.
DEBEZIUM_CONNECTOR_CLASSES = {
    "io.debezium.connector.postgresql.PostgresConnector": SourceEngine.POSTGRES,
    "io.debezium.connector.mysql.MySqlConnector": SourceEngine.MYSQL,
    "io.debezium.connector.mariadb.MariaDbConnector": SourceEngine.MYSQL,
    "io.debezium.connector.sqlserver.SqlServerConnector": SourceEngine.SQLSERVER,
    "io.debezium.connector.oracle.OracleConnector": SourceEngine.ORACLE,
}
#: Naming strategies that lay topics out as described in the module doc.
_DEFAULT_NAMING = {
    "io.debezium.schema.DefaultTopicNamingStrategy",
    "io.debezium.schema.DefaultUnicodeTopicNamingStrategy",
}
_SCHEMA_NAMING = "io.debezium.schema.SchemaTopicNamingStrategy"
#: Kafka topic names allow only these; Debezium replaces anything else with '_'.
_INVALID_TOPIC_CHARACTER = re.compile(r"[^A-Za-z0-9._\-]")


class DebeziumConfigError(ValueError):
    """A Debezium connector configuration lacks or misstates a setting."""


@dataclass(frozen=True)
class SourceTable:
    """A table in a source database that a Debezium connector captures."""

    engine: SourceEngine
    #: The database (Postgres ``database.dbname``, MySQL schema = database, SQL Server catalog).
    database: str
    #: The schema (None for MySQL/MariaDB, whose databases have none).
    schema: str | None
    table: str
    hostname: str
    port: str
    connector: str

    @property
    def filter_id(self) -> str:
        """The id Debezium's include/exclude lists match: ``schema.table`` or ``db.table``."""
        return f"{self.schema}.{self.table}" if self.engine.has_schemas else self.qualified

    @property
    def qualified(self) -> str:
        """``database.schema.table`` (``database.table`` for MySQL)."""
        parts = (self.database, self.schema, self.table)
        return ".".join(part for part in parts if part is not None)

    @property
    def cdc_db(self) -> str:
        """What Iceberg's DebeziumTransform puts for ``{db}``: the schema, else the database."""
        return self.schema if self.schema is not None else self.database


@dataclass(frozen=True)
class SourceRoute:
    """One captured table and the topic its change events reach."""

    table: SourceTable
    routed: RoutedTopic
    #: How the table became known: "include list", "topic", "schema name".
    evidence: str


@dataclass(frozen=True)
class DebeziumSource:
    """A parsed Debezium source connector."""

    name: str
    engine: SourceEngine
    topic_prefix: str
    delimiter: str
    hostname: str
    port: str
    databases: tuple[str, ...]
    chain: TransformChain
    include_tables: tuple[JavaPattern, ...] | None
    exclude_tables: tuple[JavaPattern, ...]
    include_containers: tuple[JavaPattern, ...] | None
    exclude_containers: tuple[JavaPattern, ...]
    #: Include-list entries naming exactly one table (no regex operators).
    literal_tables: tuple[str, ...]
    #: Include-list entries that are real regexes: they may capture tables no topic shows yet.
    table_patterns: tuple[str, ...]
    #: Raw (pre-transform) topic -> kind, for the non-table topics named by the config.
    special_topics: Mapping[str, TopicKind]
    schema_history_topic: str | None
    #: ``bootstrap.servers`` Debezium's own OpenLineage would name topics by (may be None).
    lineage_bootstrap_servers: str | None
    naming_problem: str | None = None
    #: SchemaTopicNamingStrategy: SQL Server topics without the database part.
    naming_is_schema_only: bool = False

    def captures(self, table: SourceTable) -> bool:
        """Whether the filters select ``table`` (case-insensitive full matches)."""
        container = table.schema if self.engine.has_schemas else table.database
        if self.databases and table.database.lower() not in {d.lower() for d in self.databases}:
            return False
        if self.include_containers is not None and not _any_match(
            self.include_containers, container
        ):
            return False
        if _any_match(self.exclude_containers, container):
            return False
        if self.include_tables is not None:
            return _any_match(self.include_tables, table.filter_id)
        return not _any_match(self.exclude_tables, table.filter_id)

    def raw_topic(self, table: SourceTable) -> str:
        """The topic before transforms (Debezium's naming strategy)."""
        if self.engine is SourceEngine.SQLSERVER and not self.naming_is_schema_only:
            parts = [self.topic_prefix, table.database, table.schema or "", table.table]
        elif self.engine.has_schemas:
            parts = [self.topic_prefix, table.schema or "", table.table]
        else:
            parts = [self.topic_prefix, table.database, table.table]
        return _INVALID_TOPIC_CHARACTER.sub("_", self.delimiter.join(parts))

    def route(self, table: SourceTable) -> RoutedTopic:
        return self.chain.route(self.raw_topic(table))

    def table_from_raw_topic(self, topic: str) -> SourceTable | None:
        """The table a pre-transform topic name stands for, if it has this connector's layout."""
        rest = topic.removeprefix(self.topic_prefix + self.delimiter)
        if rest == topic:
            return None
        names = rest.split(self.delimiter)
        sqlserver_full = self.engine is SourceEngine.SQLSERVER and not self.naming_is_schema_only
        if len(names) != (3 if sqlserver_full else 2) or not all(names):
            return None
        if sqlserver_full:
            database, schema, table = names
        elif self.engine.has_schemas:
            database, schema, table = self.default_database, names[0], names[1]
            if database is None:
                return None
        else:
            database, schema, table = names[0], None, names[1]
        return self.table(database, schema, table)

    @property
    def default_database(self) -> str | None:
        """The one database a schema-only topic belongs to (None when several or unknown)."""
        return self.databases[0] if len(self.databases) == 1 else None

    def table(self, database: str, schema: str | None, table: str) -> SourceTable:
        return SourceTable(
            self.engine, database, schema, table, self.hostname, self.port, self.name
        )

    def tables_from_include_list(self) -> list[SourceTable]:
        """The tables the include list names literally."""
        tables = []
        for entry in self.literal_tables:
            parts = entry.split(".")
            if len(parts) != 2:
                continue
            if self.engine.has_schemas:
                tables += [self.table(db, parts[0], parts[1]) for db in self.databases]
            else:
                tables.append(self.table(parts[0], None, parts[1]))
        return tables

    def table_routes(
        self, topics: Iterable[str], value_schema_names: Mapping[str, str] | None = None
    ) -> list[SourceRoute]:
        """Every captured table this config and the registry reveal, with its final topic.

        Candidates: tables named literally by the include list, tables whose pre-transform
        topic is among ``topics``, and tables named by a topic's Debezium value schema
        (``<original topic>.Envelope``, which RegexRouter leaves unchanged). Only tables the
        filters select are kept.
        """
        candidates: dict[SourceTable, str] = {}
        for table in self.tables_from_include_list():
            candidates.setdefault(table, "include list")
        for topic in topics:
            table = self.table_from_raw_topic(topic)
            if table is not None:
                candidates.setdefault(table, "topic")
        for schema_name in (value_schema_names or {}).values():
            original = schema_name.removesuffix(".Envelope")
            table = self.table_from_raw_topic(original) if original != schema_name else None
            if table is not None:
                candidates.setdefault(table, "schema name")
        return [
            SourceRoute(table, self.route(table), evidence)
            for table, evidence in candidates.items()
            if self.captures(table)
        ]

    def special_topic_kinds(self) -> dict[str, TopicKind]:
        """Final topic names (after transforms) of the heartbeat, transaction, schema topics."""
        kinds = {}
        for raw, kind in self.special_topics.items():
            routed = self.chain.route(raw)
            kinds[raw if routed.is_ambiguous else routed.topic] = kind
        if self.schema_history_topic:
            # The history topic is written by the connector's own producer: no transforms.
            kinds[self.schema_history_topic] = TopicKind.SCHEMA_HISTORY
        return kinds


def is_debezium_source(config: Mapping[str, str]) -> bool:
    return (config.get("connector.class") or "").strip() in DEBEZIUM_CONNECTOR_CLASSES


def parse_debezium_source(name: str, config: Mapping[str, str]) -> DebeziumSource:
    """Parse a Debezium source connector's configuration.

    Raises DebeziumConfigError naming the connector and setting when a required setting is
    missing or a filter regex is invalid; a filter regex this project cannot evaluate raises
    it too (the caller reports the connector as not understood).
    """
    connector_class = (config.get("connector.class") or "").strip()
    engine = DEBEZIUM_CONNECTOR_CLASSES.get(connector_class)
    if engine is None:
        raise DebeziumConfigError(
            f"connector {name!r}: connector.class {connector_class!r} is not a Debezium "
            f"relational source ({', '.join(sorted(DEBEZIUM_CONNECTOR_CLASSES))})"
        )
    prefix = _first(config, "topic.prefix", "database.server.name")
    if not prefix:
        raise DebeziumConfigError(
            f"connector {name!r}: topic.prefix (legacy database.server.name) is required"
        )
    delimiter = config.get("topic.delimiter") or "."
    if engine is SourceEngine.MYSQL:
        databases: tuple[str, ...] = ()
    else:
        databases = tuple(config_list(_first(config, "database.names", "database.dbname")))
        if not databases:
            raise DebeziumConfigError(
                f"connector {name!r}: database.dbname (SQL Server: database.names) is required "
                f"for {engine.value}"
            )
    if engine is SourceEngine.ORACLE and config.get("database.pdb.name"):
        databases = (config["database.pdb.name"],)
    container_word = "schema" if engine.has_schemas else "database"
    include_tables_raw = _first(config, "table.include.list", "table.whitelist")
    include_containers_raw = _first(
        config, f"{container_word}.include.list", f"{container_word}.whitelist"
    )
    for word in ("table", container_word):
        if _first(config, f"{word}.include.list") and _first(config, f"{word}.exclude.list"):
            raise DebeziumConfigError(
                f"connector {name!r}: {word}.include.list and {word}.exclude.list cannot both "
                "be set (Debezium rejects the configuration)"
            )
    naming = (config.get("topic.naming.strategy") or "").strip()
    naming_problem = None
    if naming and naming not in _DEFAULT_NAMING and naming != _SCHEMA_NAMING:
        naming_problem = (
            f"connector {name!r}: topic.naming.strategy {naming} names topics in its own way"
        )
    heartbeat_prefix = (
        _first(config, "topic.heartbeat.prefix", "heartbeat.topics.prefix") or HEARTBEAT_PREFIX
    )
    transaction_name = config.get("topic.transaction") or "transaction"
    special = {
        f"{heartbeat_prefix}{delimiter}{prefix}": TopicKind.HEARTBEAT,
        f"{prefix}{delimiter}{transaction_name}": TopicKind.TRANSACTION,
        prefix: TopicKind.SCHEMA_CHANGE,
    }
    return DebeziumSource(
        name=name,
        engine=engine,
        topic_prefix=prefix,
        delimiter=delimiter,
        hostname=(config.get("database.hostname") or "").strip(),
        port=(config.get("database.port") or _DEFAULT_PORTS[engine]).strip(),
        databases=databases,
        chain=parse_transform_chain(name, config),
        include_tables=_patterns(name, "table.include.list", include_tables_raw),
        exclude_tables=_patterns(
            name, "table.exclude.list", _first(config, "table.exclude.list", "table.blacklist")
        )
        or (),
        include_containers=_patterns(
            name, f"{container_word}.include.list", include_containers_raw
        ),
        exclude_containers=_patterns(
            name,
            f"{container_word}.exclude.list",
            _first(config, f"{container_word}.exclude.list", f"{container_word}.blacklist"),
        )
        or (),
        literal_tables=tuple(
            _unescape_literal(entry)
            for entry in split_java_regex_list(include_tables_raw or "")
            if _is_literal(entry)
        ),
        table_patterns=tuple(
            entry
            for entry in split_java_regex_list(include_tables_raw or "")
            if not _is_literal(entry)
        ),
        special_topics=special,
        schema_history_topic=_first(
            config, "schema.history.internal.kafka.topic", "database.history.kafka.topic"
        ),
        lineage_bootstrap_servers=_first(
            config,
            "openlineage.integration.dataset.kafka.bootstrap.servers",
            "schema.history.internal.kafka.bootstrap.servers",
            "database.history.kafka.bootstrap.servers",
        ),
        naming_problem=naming_problem,
        naming_is_schema_only=naming == _SCHEMA_NAMING,
    )


_DEFAULT_PORTS = {
    SourceEngine.POSTGRES: "5432",
    SourceEngine.MYSQL: "3306",
    SourceEngine.SQLSERVER: "1433",
    SourceEngine.ORACLE: "1521",
}
#: Regex operators; an entry without any (dots escaped or not) names one table.
_REGEX_OPERATORS = re.compile(r"[\\^$*+?()\[\]{}|]")


def _is_literal(entry: str) -> bool:
    return _REGEX_OPERATORS.search(entry.replace("\\.", "")) is None


def _unescape_literal(entry: str) -> str:
    return entry.replace("\\.", ".")


def _first(config: Mapping[str, str], *keys: str) -> str | None:
    for key in keys:
        value = config.get(key)
        if value is not None and value.strip():
            return value.strip()
    return None


def _patterns(connector: str, setting: str, value: str | None) -> tuple[JavaPattern, ...] | None:
    if value is None:
        return None
    patterns = []
    for entry in split_java_regex_list(value):
        try:
            patterns.append(compile_java_regex(entry, case_insensitive=True))
        except (InvalidJavaRegex, UnsupportedJavaRegex) as error:
            raise DebeziumConfigError(f"connector {connector!r}, {setting}: {error}") from error
    return tuple(patterns)


def _any_match(patterns: Iterable[JavaPattern], text: str | None) -> bool:
    return text is not None and any(pattern.matches(text) for pattern in patterns)
