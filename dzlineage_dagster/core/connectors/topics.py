"""Which Kafka topic a registry schema describes, what kind of topic it is, and its table parts.

The rules follow Debezium's topic naming (``topic.prefix``, ``topic.delimiter``, default
``.``): table data goes to ``<prefix>.<schema>.<table>`` (Postgres, Oracle, Db2),
``<prefix>.<database>.<table>`` (MySQL, MariaDB, MongoDB) or
``<prefix>.<database>.<schema>.<table>`` (SQL Server); heartbeats to
``__debezium-heartbeat.<prefix>``; transaction metadata to ``<prefix>.transaction``; schema
change events to the bare ``<prefix>``. Kafka Connect, MSK and the Iceberg sink add internal
topics of their own. Routers can rename table topics to anything, so the connector
configuration, not these shapes, is the authority; these rules are the fallback.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from enum import Enum
from typing import Literal

HEARTBEAT_PREFIX = "__debezium-heartbeat"
TRANSACTION_SUFFIX = "transaction"
#: Internal topics with fixed default names: the Iceberg sink's control topic, Kafka Connect's
#: distributed-mode storage topics and Confluent Schema Registry's store.
CONNECT_INTERNAL_TOPICS = frozenset(
    {"control-iceberg", "connect-offsets", "connect-configs", "connect-status", "_schemas"}
)
#: How schema history topics are usually named (``schema-changes.inventory``,
#: ``schemahistory.fulfillment``, ``dbhistory.inventory``, ``inventory.schema-history``),
#: compared with ``-`` and ``_`` removed.
SCHEMA_HISTORY_WORDS = ("schemachanges", "schemahistory", "dbhistory", "databasehistory")

SchemaRole = Literal["key", "value", "topic"]

#: Kafka's ``Topic.MAX_NAME_LENGTH`` (``org.apache.kafka.common.internals.Topic``): a partition's
#: log directory ``<topic>-<partition>``, and its ``.deleted`` rename, must stay within a file
#: name's 255 characters. A GSR schema name may have up to 255, so it can name a topic that
#: cannot exist.
MAX_TOPIC_NAME_LENGTH = 249


@dataclass(frozen=True)
class SchemaSubject:
    """The topic a registry schema describes, and whether it is the key, value or whole topic."""

    topic: str
    role: SchemaRole


def topic_for_schema_name(schema_name: str) -> SchemaSubject:
    """The topic a GSR schema name stands for.

    Serializers name schemas after the topic (``<topic>``) or after the record part
    (``<topic>-key`` / ``<topic>-value``); both parts fold into ``<topic>``, whose value schema
    describes its data. A name that is only the suffix (``-value``) names no topic but itself.
    """
    for role in ("key", "value"):
        suffix = f"-{role}"
        if schema_name.endswith(suffix) and len(schema_name) > len(suffix):
            return SchemaSubject(schema_name.removesuffix(suffix), role)
    return SchemaSubject(schema_name, "topic")


#: Kafka's ``Topic.LEGAL_CHARS``; GSR schema names also allow ``$`` and ``#``.
_ILLEGAL_TOPIC_CHARACTERS = re.compile(r"[^a-zA-Z0-9._\-]")


def topic_name_problem(topic: str, schema_name: str) -> str | None:
    """Why ``schema_name`` names no Kafka topic, or None.

    Kafka's ``Topic.validate`` (``org.apache.kafka.common.internals``) refuses an empty name,
    ``.`` and ``..``, a name longer than 249 characters and any character outside
    ``[a-zA-Z0-9._-]``; the Glue Schema Registry accepts ``$`` and ``#`` (and 255
    characters), so such a schema describes a topic that cannot exist and is not cataloged.
    """
    schema = "its schema" if schema_name == topic else f"schema {schema_name!r}"
    verdict = f"{schema} names no topic that can exist (not cataloged)"
    if len(topic) > MAX_TOPIC_NAME_LENGTH:
        return (
            f"topic name of {len(topic)} characters, more than Kafka's "
            f"{MAX_TOPIC_NAME_LENGTH}: {verdict}"
        )
    if topic in ("", ".", ".."):
        return f"topic name {topic!r} is one Kafka reserves: {verdict}"
    illegal = sorted(set(_ILLEGAL_TOPIC_CHARACTERS.findall(topic)))
    if illegal:
        return (
            f"topic name {topic!r} has {', '.join(repr(c) for c in illegal)}, which Kafka "
            f"forbids in topic names (only a-z, A-Z, 0-9, '.', '_' and '-'): {verdict}"
        )
    return None


class TopicKind(Enum):
    TABLE = "table"
    HEARTBEAT = "heartbeat"
    TRANSACTION = "transaction"
    SCHEMA_CHANGE = "schema_change"
    SCHEMA_HISTORY = "schema_history"
    CONNECT_INTERNAL = "connect_internal"
    #: None of the shapes above, e.g. a table topic a router renamed: ask the connector config.
    OTHER = "other"
    #: A topic whose connectors keep its value schemas in another registry than the one
    #: synced: the schema here (a key schema, say) is not the one that catalogs the topic.
    OTHER_REGISTRY = "other_registry"


def classify_topic(
    topic: str, *, topic_prefixes: Collection[str] = (), delimiter: str = "."
) -> TopicKind:
    """What kind of topic ``topic`` is, by the first rule that matches.

    1. ``__debezium-heartbeat<delimiter>...`` is HEARTBEAT.
    2. With ``topic_prefixes`` (the connectors' ``topic.prefix`` values, taken as the complete
       list; the longest matching prefix wins): the bare prefix is SCHEMA_CHANGE,
       ``<prefix>.transaction`` is TRANSACTION, ``<prefix>.`` followed by at least two
       non-empty parts is TABLE, ``<prefix>.`` followed by one schema history word
       (:data:`SCHEMA_HISTORY_WORDS`) is SCHEMA_HISTORY. Known prefixes settle what shapes
       cannot: with prefix ``cdc``, ``cdc.public.transaction`` is the table ``transaction``.
    3. A name starting with ``__`` (Kafka's and MSK's internal topics: ``__consumer_offsets``,
       ``__amazon_msk_connect_offsets_...``) or one of :data:`CONNECT_INTERNAL_TOPICS` is
       CONNECT_INTERNAL.
    4. A name whose first part, or the last of exactly two parts, is a schema history word is
       SCHEMA_HISTORY.
    5. A topic under a given prefix that no rule above matched is OTHER. Without
       ``topic_prefixes``, the shape decides: one part is the bare prefix (SCHEMA_CHANGE), two
       parts ending in ``transaction`` are TRANSACTION, three or more non-empty parts are
       TABLE, the rest OTHER. A prefix that itself contains the delimiter can only be
       recognised when given.
    6. With ``topic_prefixes`` given, a topic under none of them still is TABLE when it has
       three or more non-empty parts: a connector the list does not hold (another Connect
       cluster, a second registry's platform) wrote it, and its schema is still a table's.
       Anything else is OTHER.
    """
    if topic.startswith(HEARTBEAT_PREFIX + delimiter):
        return TopicKind.HEARTBEAT
    under_known_prefix = False
    for prefix in sorted(topic_prefixes, key=len, reverse=True):
        if topic == prefix:
            return TopicKind.SCHEMA_CHANGE
        rest = topic.removeprefix(prefix + delimiter)
        if rest == topic:
            continue
        under_known_prefix = True
        if rest == TRANSACTION_SUFFIX:
            return TopicKind.TRANSACTION
        if _is_parts(rest.split(delimiter), minimum=2):
            return TopicKind.TABLE
        if _is_schema_history_word(rest):
            return TopicKind.SCHEMA_HISTORY
    if topic.startswith("__") or topic in CONNECT_INTERNAL_TOPICS:
        return TopicKind.CONNECT_INTERNAL
    parts = topic.split(delimiter)
    if _is_schema_history_word(parts[0]) or (len(parts) == 2 and _is_schema_history_word(parts[1])):
        return TopicKind.SCHEMA_HISTORY
    if under_known_prefix or not _is_parts(parts, minimum=1):
        return TopicKind.OTHER
    if topic_prefixes:
        return TopicKind.TABLE if len(parts) >= 3 else TopicKind.OTHER
    if len(parts) == 1:
        return TopicKind.SCHEMA_CHANGE
    if len(parts) == 2:
        return TopicKind.TRANSACTION if parts[1] == TRANSACTION_SUFFIX else TopicKind.OTHER
    return TopicKind.TABLE


def _is_parts(parts: list[str], *, minimum: int) -> bool:
    return len(parts) >= minimum and all(parts)


def _is_schema_history_word(part: str) -> bool:
    return part.lower().replace("-", "").replace("_", "").startswith(SCHEMA_HISTORY_WORDS)


class ConnectorFlavour(Enum):
    """How a Debezium connector lays out a table topic after its prefix."""

    #: ``<prefix>.<schema>.<table>``: Postgres, Oracle, Db2.
    POSTGRES = "postgres"
    #: ``<prefix>.<database>.<table>``: MySQL, MariaDB, MongoDB (database.collection).
    MYSQL = "mysql"
    #: ``<prefix>.<database>.<schema>.<table>``: SQL Server.
    SQLSERVER = "sqlserver"


_LAYOUTS = {
    ConnectorFlavour.POSTGRES: ("schema", "table"),
    ConnectorFlavour.MYSQL: ("database", "table"),
    ConnectorFlavour.SQLSERVER: ("database", "schema", "table"),
}
_FLAVOUR_BY_PART_COUNT = {2: ConnectorFlavour.POSTGRES, 3: ConnectorFlavour.SQLSERVER}


@dataclass(frozen=True)
class TableTopicParts:
    prefix: str
    database: str | None
    schema: str | None
    table: str


def split_table_topic(
    topic: str,
    delimiter: str = ".",
    *,
    flavour: ConnectorFlavour | None = None,
    topic_prefix: str | None = None,
) -> TableTopicParts:
    """The prefix, database, schema and table a Debezium table topic names.

    ``flavour`` says the layout; without it, three parts read as Postgres and four as SQL
    Server (a MySQL topic has three parts too, so say ``MYSQL`` for one). ``topic_prefix`` is
    needed when the prefix itself contains the delimiter; without it the prefix is the first
    part. Raises ValueError when the topic does not have the layout's parts, each non-empty.
    """
    if topic_prefix is None:
        prefix, _, rest = topic.partition(delimiter)
    else:
        prefix, rest = topic_prefix, topic.removeprefix(topic_prefix + delimiter)
        if rest == topic:
            raise ValueError(f"topic {topic!r} does not start with prefix {topic_prefix!r}")
    names = rest.split(delimiter)
    flavour = flavour or _FLAVOUR_BY_PART_COUNT.get(len(names))
    if flavour is None:
        raise ValueError(
            f"topic {topic!r} has {len(names)} parts after prefix {prefix!r}: not a table "
            "topic of a known layout (give flavour= for anything but 2 or 3)"
        )
    roles = _LAYOUTS[flavour]
    if len(names) != len(roles) or not _is_parts([prefix, *names], minimum=1):
        expected = delimiter.join(("prefix", *roles))
        raise ValueError(f"topic {topic!r} is not a {flavour.value} table topic ({expected})")
    parts = dict(zip(roles, names, strict=True))
    return TableTopicParts(prefix, parts.get("database"), parts.get("schema"), parts["table"])
