"""Which source tables a Debezium connector sends to which topics, from its configuration.

Modelled on Debezium 3.6 (``debezium/debezium`` at aad55199, 3.7.0-SNAPSHOT; see
``docs/connector-naming.md``). A Debezium relational connector names a table's topic with its
``topic.naming.strategy`` (:class:`NamingStrategy`) from the table id's parts (Debezium's
``TableId``: catalog, schema, table; :func:`table_id_parts`), then the connector's
``transforms`` may rename the topic (see :mod:`dzlineage_dagster.core.connectors.transforms`). A table is captured when its id matches
``table.include.list`` (or not ``table.exclude.list``) and its schema / database passes the
schema / database lists: every list is a comma-separated list of Java regexes matched
case-insensitively against the whole id (Debezium's ``Predicates.includes`` compiles them with
``CASE_INSENSITIVE`` and tests ``matcher.matches()``). The id is ``schema.table`` for Postgres,
SQL Server and Oracle, ``database.table`` for MySQL and MariaDB.

Debezium names its other topics from the same settings (``AbstractTopicNamingStrategy``):
heartbeats ``topic.heartbeat.name`` when set (Debezium 3.6 and later), else
``<topic.heartbeat.prefix><d><topic.prefix>`` (legacy ``heartbeat.topics.prefix``, default
``__debezium-heartbeat``), transaction metadata ``<topic.prefix><d><topic.transaction>``
(default ``transaction``), schema changes the bare ``<topic.prefix>``, and the schema history
topic ``schema.history.internal.kafka.topic`` (legacy ``database.history.kafka.topic``).
``topic.prefix``, ``topic.delimiter``, ``topic.heartbeat.prefix``, ``topic.heartbeat.name`` and
``topic.transaction`` must be valid topic characters (``CommonConnectorConfig.validateTopicName``),
else the connector is refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from enum import Enum

from dzlineage_dagster.core.connectors.java_regex import (
    InvalidJavaRegex,
    JavaPattern,
    parse_java_replacement,
    split_java_regex_list,
)
from dzlineage_dagster.core.connectors.topics import (
    HEARTBEAT_PREFIX,
    MAX_TOPIC_NAME_LENGTH,
    TopicKind,
)
from dzlineage_dagster.core.connectors.transforms import (
    ConnectorConfigError,
    RoutedTopic,
    TransformChain,
    TransformConfigError,
    TransformStep,
    compile_setting,
    config_list,
    parse_rename,
    parse_transform_chain,
)


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
_SCHEMA_PACKAGE = "io.debezium.schema."
#: Debezium's built-in naming strategies -> (the TableId parts they name a topic from, whether
#: they escape as ``_uXXXX``, whether a ``topic.regex`` renames the result). ``database`` is
#: ``TableId.databaseParts()`` (catalog, table); ``schema`` is ``schemaParts()`` (schema,
#: table), or every part (catalog, schema, table) in multi-partition mode (SQL Server).
NAMING_STRATEGIES: dict[str, tuple[str, bool, bool]] = {
    _SCHEMA_PACKAGE + "DefaultTopicNamingStrategy": ("database", False, False),
    _SCHEMA_PACKAGE + "DefaultUnicodeTopicNamingStrategy": ("database", True, False),
    _SCHEMA_PACKAGE + "DefaultRegexTopicNamingStrategy": ("database", False, True),
    _SCHEMA_PACKAGE + "SchemaTopicNamingStrategy": ("schema", False, False),
    _SCHEMA_PACKAGE + "SchemaUnicodeTopicNamingStrategy": ("schema", True, False),
    _SCHEMA_PACKAGE + "SchemaRegexTopicNamingStrategy": ("schema", False, True),
}
#: ``topic.naming.strategy`` when unset: MySQL and MariaDB (``BinlogConnectorConfig``) name by
#: database parts, the others by ``CommonConnectorConfig``'s schema parts.
_DEFAULT_STRATEGY = {
    "mysql": _SCHEMA_PACKAGE + "DefaultTopicNamingStrategy",
}
_SCHEMA_STRATEGY = _SCHEMA_PACKAGE + "SchemaTopicNamingStrategy"
#: ``AbstractTopicNamingStrategy.isValidCharacter``; the unicode strategies drop ``_`` from it.
_VALID_TOPIC_CHARACTERS = frozenset(
    "._-ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
)
_VALID_UNICODE_TOPIC_CHARACTERS = _VALID_TOPIC_CHARACTERS - {"_"}
#: ``CommonConnectorConfig.validateTopicName``: what the topic-name settings may hold.
_TOPIC_NAME_SETTING = re.compile(r"[A-Za-z0-9._\-]*")
#: The Debezium version whose behaviour is modelled when the caller does not say.
DEFAULT_DEBEZIUM_VERSION = (3, 6)
#: ``topic.heartbeat.name`` exists from Debezium 3.6 on (debezium/dbz#1709).
_HEARTBEAT_NAME_SINCE = (3, 6)


class DebeziumConfigError(ConnectorConfigError):
    """A Debezium connector configuration lacks or misstates a setting: the connector is
    refused (it does not run), unless ``refused`` is False (a filter regex this project
    cannot evaluate: the connector may well run)."""


def unicode_escape(char_code: int) -> str:
    """Debezium's ``UnicodeReplacementFunction``: ``_u`` + the UTF-16 unit's hex digits, padded
    with ``00`` only when there are at most two (``_`` -> ``_u005f``, U+4E2D -> ``_u4e2d``,
    U+0100 -> ``_u100``, a tab -> ``_u009``)."""
    digits = format(char_code, "x")
    return "_u" + ("00" + digits if len(digits) <= 2 else digits)


def sanitized_topic_name(name: str, *, unicode: bool = False) -> str:
    """``AbstractTopicNamingStrategy.sanitizedTopicName``: every UTF-16 unit outside the valid
    characters replaced (``_``, or :func:`unicode_escape` for the unicode strategies), then cut
    to Kafka's 249 characters; a bare ``.`` or ``..`` is replaced too."""
    valid = _VALID_UNICODE_TOPIC_CHARACTERS if unicode else _VALID_TOPIC_CHARACTERS
    if len(name) <= MAX_TOPIC_NAME_LENGTH and name not in (".", "..") and valid.issuperset(name):
        # Nothing to replace (each valid character is one UTF-16 unit): the common case, and
        # a connector's topology names every table of its include list this way.
        return name
    return _sanitized_by_unit(name, valid, unicode)


def _sanitized_by_unit(name: str, valid: frozenset[str], unicode: bool) -> str:
    def replace(code: int) -> str:
        return unicode_escape(code) if unicode else "_"

    units = name.encode("utf-16-be")
    out = []
    for i in range(0, len(units), 2):
        code = int.from_bytes(units[i : i + 2], "big")
        char = chr(code)
        out.append(char if char in valid else replace(code))
    sanitized = "".join(out)
    if len(sanitized) > MAX_TOPIC_NAME_LENGTH:
        return sanitized[:MAX_TOPIC_NAME_LENGTH]
    if sanitized in (".", ".."):
        return replace(ord(".")) * len(sanitized)
    return sanitized


_UNICODE_ESCAPE = re.compile(r"_u(00[0-9a-f]{2}|[1-9a-f][0-9a-f]{3}|[1-9a-f][0-9a-f]{2})")


def unescape_unicode_topic(name: str) -> str:
    """The name a unicode strategy escaped, read back (a 4-digit escape is preferred where a
    3-digit one followed by a hex digit reads too: the topic does not say which it was)."""
    units = _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), name)
    return units.encode("utf-16-be", "surrogatepass").decode("utf-16-be", "replace")


@dataclass(frozen=True)
class NamingStrategy:
    """A connector's ``topic.naming.strategy`` (one of :data:`NAMING_STRATEGIES`)."""

    class_name: str
    #: "database" (catalog, table) or "schema" (schema, table; all parts in multi-partition).
    parts: str
    unicode: bool
    multi_partition: bool
    #: ``topic.regex`` / ``topic.replacement`` of the regex strategies, as a router step.
    rename: TransformStep | None = None

    @property
    def short_name(self) -> str:
        return self.class_name.removeprefix(_SCHEMA_PACKAGE)


def table_id_parts(table: SourceTable) -> tuple[str | None, str | None, str]:
    """Debezium's ``TableId`` (catalog, schema, table) of ``table``: Postgres has no catalog,
    MySQL/MariaDB no schema, SQL Server and Oracle (its PDB, else its database) both."""
    if table.engine is SourceEngine.POSTGRES:
        return None, table.schema, table.table
    return table.database, table.schema, table.table


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
    naming: NamingStrategy
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

    def origin_topic(self, table: SourceTable) -> str:
        """The topic the naming strategy builds before its own ``topic.regex`` (if any):
        ``mkString`` of the prefix and the id's parts (blank parts left out), sanitized."""
        catalog, schema, name = table_id_parts(table)
        if self.naming.parts == "database":
            parts = [catalog, name]
        elif self.naming.multi_partition:
            parts = [catalog, schema, name]
        else:
            parts = [schema, name]
        joined = self.delimiter.join(p for p in (self.topic_prefix, *parts) if p and p.strip())
        return sanitized_topic_name(joined, unicode=self.naming.unicode)

    def raw_topic(self, table: SourceTable) -> str:
        """The topic before transforms (Debezium's ``dataChangeTopic``)."""
        origin = self.origin_topic(table)
        rename = self.naming.rename
        if rename is None or rename.regex is None or not rename.regex.matches(origin):
            return origin
        # AbstractRegexTopicNamingStrategy.determineNewTopic: an empty result keeps the origin.
        return rename.regex.replace_first(origin, rename.replacement or "") or origin

    def route(self, table: SourceTable) -> RoutedTopic:
        return self.chain.route(self.raw_topic(table))

    def table_from_raw_topic(self, topic: str) -> SourceTable | None:
        """The table whose own pre-transform topic is ``topic``, if it has this connector's
        layout: read back, then checked by naming the table forward again (a truncated or
        differently sanitized name is no table's)."""
        name = unescape_unicode_topic(topic) if self.naming.unicode else topic
        rest = name.removeprefix(self.topic_prefix + self.delimiter)
        if rest == name:
            return None
        names = rest.split(self.delimiter)
        layout = self._topic_layout()
        if len(names) != len(layout) or not all(names):
            return None
        if self.engine.has_schemas and "schema" not in layout:
            return None  # DefaultTopicNamingStrategy leaves the schema out of the topic
        parts = dict(zip(layout, names, strict=True))
        database = parts.get("catalog")
        if database is None:
            database = self.default_database
            if database is None:
                return None
        table = self.table(database, parts.get("schema"), parts["table"])
        return table if self.raw_topic(table) == topic else None

    def _topic_layout(self) -> tuple[str, ...]:
        """Which TableId parts a data-change topic holds after the prefix, in order."""
        has_catalog = self.engine is not SourceEngine.POSTGRES
        if self.naming.parts == "database":
            return ("catalog", "table") if has_catalog else ("table",)
        if self.naming.multi_partition:
            return ("catalog", "schema", "table")
        return ("schema", "table") if self.engine.has_schemas else ("table",)

    def merge_step_producing(self, topic: str) -> str | None:
        """The merging rename (a logical-table router, or the regex naming strategy) that may
        have named ``topic``: its name then says nothing about a table (the router renames the
        value schema to ``<topic>.Envelope`` too). None when no merging rename may."""
        steps = [step for step in self.chain.steps if step.merges_tables]
        if self.naming.rename is not None:
            steps.insert(0, self.naming.rename)
        step = next((s for s in steps if s.may_produce(topic)), None)
        return None if step is None else step.alias

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
        schema_names = value_schema_names or {}
        for topic in topics:
            named = schema_names.get(topic, "").removesuffix(".Envelope")
            if named and named != schema_names.get(topic) and named != topic:
                continue  # the value schema says which table's topic this was renamed from
            table = self._named_table(topic)
            if table is not None:
                candidates.setdefault(table, "topic")
        for schema_name in schema_names.values():
            original = schema_name.removesuffix(".Envelope")
            table = self._named_table(original) if original != schema_name else None
            if table is not None:
                candidates.setdefault(table, "schema name")
        return [
            SourceRoute(table, self.route(table), evidence)
            for table, evidence in candidates.items()
            if self.captures(table)
        ]

    def _named_table(self, name: str) -> SourceTable | None:
        """The table a registry name stands for, unless a merging rename may have written it
        (then it is the merged topic, not a table: the shards stay unknown)."""
        if self.merge_step_producing(name) is not None:
            return None
        return self.table_from_raw_topic(name)

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


def parse_debezium_source(
    name: str,
    config: Mapping[str, str],
    *,
    debezium_version: tuple[int, int] = DEFAULT_DEBEZIUM_VERSION,
) -> DebeziumSource:
    """Parse a Debezium source connector's configuration.

    Raises DebeziumConfigError naming the connector and setting when Debezium or Kafka Connect
    would refuse the configuration (a required setting missing, a filter list or a router that
    does not compile, a topic-name setting with characters Kafka forbids); a filter regex this
    project cannot evaluate raises it too (the caller reports the connector as not understood).
    ``debezium_version`` (major, minor) chooses where Debezium's behaviour differs by version.
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
    for setting in _TOPIC_NAME_SETTINGS:
        value = config.get(setting)
        if value is not None and not _TOPIC_NAME_SETTING.fullmatch(value.strip()):
            raise DebeziumConfigError(
                f"connector {name!r}: {setting} {value!r} has invalid format (only the "
                "underscore, hyphen, dot and alphanumeric characters are allowed)"
            )
    if engine is SourceEngine.MYSQL:
        databases: tuple[str, ...] = ()
    else:
        databases = tuple(config_list(_first(config, "database.names", "database.dbname")))
        if not databases:
            raise DebeziumConfigError(
                f"connector {name!r}: database.dbname (SQL Server: database.names) is required "
                f"for {engine.value}"
            )
    if engine is SourceEngine.ORACLE:
        # OracleConnectorConfig.getCatalogName: the PDB, else the database, as
        # OracleUtils.getObjectName spells it (upper case unless quoted).
        databases = (_oracle_object_name(_first(config, "database.pdb.name") or databases[0]),)
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
    naming, naming_problem = _naming_strategy(name, engine, config)
    heartbeat_prefix = (
        _first(config, "topic.heartbeat.prefix", "heartbeat.topics.prefix") or HEARTBEAT_PREFIX
    )
    heartbeat = f"{heartbeat_prefix}{delimiter}{prefix}"
    if debezium_version >= _HEARTBEAT_NAME_SINCE:
        heartbeat = _first(config, "topic.heartbeat.name") or heartbeat
    transaction_name = config.get("topic.transaction") or "transaction"
    try:
        chain = parse_transform_chain(name, config)
    except TransformConfigError as error:
        raise DebeziumConfigError(str(error)) from error
    special = {
        heartbeat: TopicKind.HEARTBEAT,
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
        chain=chain,
        naming=naming,
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
    )


#: Settings ``CommonConnectorConfig.validateTopicName`` checks.
_TOPIC_NAME_SETTINGS = (
    "topic.prefix",
    "topic.delimiter",
    "topic.heartbeat.prefix",
    "topic.heartbeat.name",
    "topic.transaction",
)


def _oracle_object_name(name: str) -> str:
    quoted = name.startswith('"') and name.endswith('"') and len(name) > 2
    return name if quoted else name.upper()


def _naming_strategy(
    connector: str, engine: SourceEngine, config: Mapping[str, str]
) -> tuple[NamingStrategy, str | None]:
    """The connector's naming strategy, and why its topics cannot be named (a class of its
    own); raises DebeziumConfigError when a regex strategy's settings are refused."""
    class_name = (config.get("topic.naming.strategy") or "").strip() or _DEFAULT_STRATEGY.get(
        engine.value, _SCHEMA_STRATEGY
    )
    # SqlServerConnectorTask passes multiPartitionMode=true to every strategy.
    multi_partition = engine is SourceEngine.SQLSERVER
    known = NAMING_STRATEGIES.get(class_name)
    if known is None:
        problem = f"connector {connector!r}: topic.naming.strategy {class_name} names topics in its own way"
        return NamingStrategy(class_name, "schema", False, multi_partition), problem
    parts, unicode, regex = known
    strategy = NamingStrategy(class_name, parts, unicode, multi_partition)
    if not regex:
        return strategy, None
    # AbstractRegexTopicNamingStrategy validates its settings as ToLogicalTopicRouter does.
    where = f"connector {connector!r}, topic.naming.strategy {strategy.short_name}"
    try:
        compiled, replacement = parse_rename(where, _REGEX_STRATEGY_SETTINGS, config, logical=True)
    except TransformConfigError as error:
        raise DebeziumConfigError(str(error)) from error
    problem = compiled if isinstance(compiled, str) else None
    if not isinstance(compiled, str):
        try:
            parse_java_replacement(replacement, compiled.compiled)
        except InvalidJavaRegex as error:
            # Matcher.replaceFirst throws for each table the regex matches: the task fails then.
            problem = f"{where} (topic.replacement): {error}"
    step = TransformStep(
        alias="topic.naming.strategy",
        type=class_name,
        regex=None if isinstance(compiled, str) or problem else compiled,
        replacement=replacement,
        ambiguous_reason=problem,
    )
    return replace(strategy, rename=step), problem


_REGEX_STRATEGY_SETTINGS = (
    "topic.regex",
    "topic.replacement",
    "topic.key.field.regex",
    "topic.key.field.replacement",
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
    """A filter list as Debezium's ``Field.isListOfRegex`` validates it (case-insensitive)."""
    if value is None:
        return None
    where = f"connector {connector!r}, {setting}"
    try:
        entries = split_java_regex_list(value)
    except InvalidJavaRegex as error:
        raise DebeziumConfigError(f"{where}: {error}") from error
    return tuple(
        compile_setting(DebeziumConfigError, where, entry, case_insensitive=True)
        for entry in entries
    )


def _any_match(patterns: Iterable[JavaPattern], text: str | None) -> bool:
    return text is not None and any(pattern.matches(text) for pattern in patterns)
