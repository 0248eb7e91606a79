from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dzlineage_dagster.core.connectors.topics import (
    MAX_TOPIC_NAME_LENGTH,
    ConnectorFlavour,
    SchemaSubject,
    TableTopicParts,
    TopicKind,
    classify_topic,
    split_table_topic,
    topic_for_schema_name,
    topic_name_problem,
)

# Kafka topic names: [a-zA-Z0-9._-], up to 249 characters.
NAME_PART = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-",
    min_size=1,
    max_size=30,
).filter(lambda part: not part.startswith("__"))
KAFKA_TOPIC = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
    min_size=1,
    max_size=249,
)


@pytest.mark.parametrize(
    ("schema_name", "subject"),
    [
        ("cdc.public.orders", SchemaSubject("cdc.public.orders", "topic")),
        ("cdc.public.orders-value", SchemaSubject("cdc.public.orders", "value")),
        ("cdc.public.orders-key", SchemaSubject("cdc.public.orders", "key")),
        ("orders-value-key", SchemaSubject("orders-value", "key")),
        ("my-keyring", SchemaSubject("my-keyring", "topic")),
        ("-value", SchemaSubject("-value", "topic")),
        ("__debezium-heartbeat.cdc", SchemaSubject("__debezium-heartbeat.cdc", "topic")),
    ],
)
def test_topic_for_schema_name(schema_name: str, subject: SchemaSubject) -> None:
    assert topic_for_schema_name(schema_name) == subject


@settings(max_examples=200)
@given(KAFKA_TOPIC, st.sampled_from(["key", "value"]))
def test_key_and_value_schemas_fold_into_their_topic(topic: str, role: str) -> None:
    assert topic_for_schema_name(f"{topic}-{role}") == SchemaSubject(topic, role)


@pytest.mark.parametrize(
    ("topic", "kind"),
    [
        ("__debezium-heartbeat.cdc", TopicKind.HEARTBEAT),
        ("cdc.transaction", TopicKind.TRANSACTION),
        ("cdc", TopicKind.SCHEMA_CHANGE),
        ("cdc.public.orders", TopicKind.TABLE),
        ("cdc.inventory.dbo.orders", TopicKind.TABLE),
        ("cdc.public.transaction", TopicKind.TABLE),
        ("schema-changes.inventory", TopicKind.SCHEMA_HISTORY),
        ("schemahistory.fulfillment", TopicKind.SCHEMA_HISTORY),
        ("dbhistory.inventory", TopicKind.SCHEMA_HISTORY),
        ("inventory.schema-history", TopicKind.SCHEMA_HISTORY),
        ("schema_history_mydb", TopicKind.SCHEMA_HISTORY),
        ("control-iceberg", TopicKind.CONNECT_INTERNAL),
        ("connect-offsets", TopicKind.CONNECT_INTERNAL),
        ("connect-configs", TopicKind.CONNECT_INTERNAL),
        ("connect-status", TopicKind.CONNECT_INTERNAL),
        ("__consumer_offsets", TopicKind.CONNECT_INTERNAL),
        ("__amazon_msk_connect_offsets_pg-source_0bce1b02", TopicKind.CONNECT_INTERNAL),
        ("cdc.orders", TopicKind.OTHER),
        ("cdc..orders", TopicKind.OTHER),
    ],
)
def test_classify_topic_by_shape(topic: str, kind: TopicKind) -> None:
    assert classify_topic(topic) is kind


@pytest.mark.parametrize(
    ("topic", "kind"),
    [
        ("prod.cdc", TopicKind.SCHEMA_CHANGE),
        ("prod.cdc.transaction", TopicKind.TRANSACTION),
        ("prod.cdc.public.orders", TopicKind.TABLE),
        ("prod.cdc.public.transaction", TopicKind.TABLE),
        ("cdc.public.dbhistory", TopicKind.TABLE),
        ("prod.cdc.dbhistory", TopicKind.SCHEMA_HISTORY),
        ("__debezium-heartbeat.prod.cdc", TopicKind.HEARTBEAT),
        ("orders", TopicKind.OTHER),  # e.g. renamed by a RegexRouter
        ("prod.cdc.orders", TopicKind.OTHER),
        ("cdc.public", TopicKind.OTHER),
        # Under no known prefix: a connector not in the list wrote it; the shape decides.
        ("other.public.orders", TopicKind.TABLE),
        ("other.transaction", TopicKind.OTHER),
        ("other", TopicKind.OTHER),
    ],
)
def test_known_prefixes_settle_what_shapes_cannot(topic: str, kind: TopicKind) -> None:
    assert classify_topic(topic, topic_prefixes={"prod.cdc", "cdc"}) is kind


def test_the_longest_known_prefix_wins() -> None:
    # With prefix "a", "a.b.transaction" would be the table a/b.transaction; "a.b" is longer.
    assert classify_topic("a.b.transaction", topic_prefixes=["a", "a.b"]) is TopicKind.TRANSACTION


def test_classify_topic_honours_the_delimiter() -> None:
    assert classify_topic("cdc_public_orders", delimiter="_") is TopicKind.TABLE
    assert classify_topic("__debezium-heartbeat_cdc", delimiter="_") is TopicKind.HEARTBEAT


@settings(max_examples=200)
@given(NAME_PART, st.lists(NAME_PART, min_size=2, max_size=3))
def test_debezium_topics_are_classified_under_their_prefix(prefix: str, names: list[str]) -> None:
    prefixes = {prefix}
    assert classify_topic(prefix, topic_prefixes=prefixes) is TopicKind.SCHEMA_CHANGE
    assert classify_topic(f"{prefix}.transaction", topic_prefixes=prefixes) is (
        TopicKind.TRANSACTION
    )
    assert classify_topic(f"__debezium-heartbeat.{prefix}", topic_prefixes=prefixes) is (
        TopicKind.HEARTBEAT
    )
    assert classify_topic(".".join([prefix, *names]), topic_prefixes=prefixes) is TopicKind.TABLE


@settings(max_examples=200)
@given(KAFKA_TOPIC, st.lists(KAFKA_TOPIC, min_size=1, max_size=3))
def test_with_known_prefixes_only_topics_under_one_are_connector_topics(
    topic: str, prefixes: list[str]
) -> None:
    kind = classify_topic(topic, topic_prefixes=prefixes)
    under_a_prefix = any(topic == p or topic.startswith(f"{p}.") for p in prefixes)
    if kind in (TopicKind.TRANSACTION, TopicKind.SCHEMA_CHANGE):
        assert under_a_prefix, (topic, prefixes, kind)
    if kind is TopicKind.TABLE and not under_a_prefix:
        assert classify_topic(topic) is TopicKind.TABLE, (topic, prefixes)
    if topic in prefixes and not topic.startswith("__debezium-heartbeat."):
        assert kind is TopicKind.SCHEMA_CHANGE, (topic, prefixes, kind)


@pytest.mark.parametrize(
    ("topic", "flavour", "parts"),
    [
        ("cdc.public.orders", None, TableTopicParts("cdc", None, "public", "orders")),
        (
            "cdc.public.orders",
            ConnectorFlavour.POSTGRES,
            TableTopicParts("cdc", None, "public", "orders"),
        ),
        ("cdc.shop.orders", ConnectorFlavour.MYSQL, TableTopicParts("cdc", "shop", None, "orders")),
        ("cdc.shop.dbo.orders", None, TableTopicParts("cdc", "shop", "dbo", "orders")),
        (
            "cdc.shop.dbo.orders",
            ConnectorFlavour.SQLSERVER,
            TableTopicParts("cdc", "shop", "dbo", "orders"),
        ),
    ],
)
def test_split_table_topic(
    topic: str, flavour: ConnectorFlavour | None, parts: TableTopicParts
) -> None:
    assert split_table_topic(topic, flavour=flavour) == parts


def test_split_table_topic_with_a_dotted_prefix_and_another_delimiter() -> None:
    assert split_table_topic("prod.cdc.public.orders", topic_prefix="prod.cdc") == (
        TableTopicParts("prod.cdc", None, "public", "orders")
    )
    assert split_table_topic("cdc_shop_orders", "_", flavour=ConnectorFlavour.MYSQL) == (
        TableTopicParts("cdc", "shop", None, "orders")
    )


@pytest.mark.parametrize(
    ("topic", "kwargs", "reason"),
    [
        ("cdc", {}, "1 parts after prefix 'cdc'"),
        ("cdc.orders", {}, "1 parts"),
        ("a.b.c.d.e", {}, "4 parts"),
        ("cdc.public.orders", {"flavour": ConnectorFlavour.SQLSERVER}, "prefix.database.schema"),
        ("cdc.shop.dbo.orders", {"flavour": ConnectorFlavour.MYSQL}, "prefix.database.table"),
        ("cdc..orders", {}, "not a postgres table topic"),
        ("other.public.orders", {"topic_prefix": "cdc"}, "does not start with prefix"),
    ],
)
def test_split_table_topic_refuses_other_shapes(
    topic: str, kwargs: dict[str, object], reason: str
) -> None:
    with pytest.raises(ValueError, match=reason):
        split_table_topic(topic, **kwargs)


@st.composite
def table_topics(draw: st.DrawFn) -> tuple[ConnectorFlavour, str, list[str]]:
    flavour = draw(st.sampled_from(list(ConnectorFlavour)))
    count = 3 if flavour is ConnectorFlavour.SQLSERVER else 2
    return flavour, draw(NAME_PART), draw(st.lists(NAME_PART, min_size=count, max_size=count))


@settings(max_examples=200)
@given(table_topics())
def test_split_table_topic_recovers_the_parts_it_was_built_from(
    table_topic: tuple[ConnectorFlavour, str, list[str]],
) -> None:
    flavour, prefix, names = table_topic
    parts = split_table_topic(".".join([prefix, *names]), flavour=flavour)
    assert parts.prefix == prefix
    assert parts.table == names[-1]
    assert [p for p in (parts.database, parts.schema) if p is not None] == names[:-1]


def test_a_topic_name_past_kafka_s_249_characters_is_a_problem_naming_the_limit():
    longest = "cdc.public." + "t" * (MAX_TOPIC_NAME_LENGTH - len("cdc.public."))
    assert topic_name_problem(longest, f"{longest}-value") is None
    too_long = longest + "t"
    problem = topic_name_problem(too_long, too_long)
    assert problem is not None
    assert f"{MAX_TOPIC_NAME_LENGTH + 1} characters" in problem
    assert f"more than Kafka's {MAX_TOPIC_NAME_LENGTH}" in problem
    assert problem == (
        "topic name of 250 characters, more than Kafka's 249: its schema names no topic that "
        "can exist (not cataloged)"
    )
    assert topic_name_problem(too_long, f"{too_long}-value") == (
        f"topic name of 250 characters, more than Kafka's 249: schema {too_long + '-value'!r} "
        "names no topic that can exist (not cataloged)"
    )


@pytest.mark.parametrize(
    ("topic", "problem"),
    [
        (
            "cdc.public.price$history",
            "topic name 'cdc.public.price$history' has '$', which Kafka forbids in topic names "
            "(only a-z, A-Z, 0-9, '.', '_' and '-'): its schema names no topic that can exist "
            "(not cataloged)",
        ),
        (
            "cdc#1.orders$v2",
            "topic name 'cdc#1.orders$v2' has '#', '$', which Kafka forbids in topic names "
            "(only a-z, A-Z, 0-9, '.', '_' and '-'): its schema names no topic that can exist "
            "(not cataloged)",
        ),
        (
            "..",
            "topic name '..' is one Kafka reserves: its schema names no topic that can exist (not cataloged)",
        ),
        ("cdc.public.orders-2026_v1", None),
    ],
)
def test_gsr_names_kafka_forbids_as_topic_names_are_problems(topic: str, problem: str | None):
    """Kafka's TopicTest.shouldThrowOnInvalidTopicNames / shouldAcceptValidTopicNames shapes."""
    assert topic_name_problem(topic, topic) == problem


def test_split_table_topic_errors_say_what_layout_was_expected() -> None:
    for topic, kwargs, message in (
        (
            "cdc.orders",
            {},
            "topic 'cdc.orders' has 1 parts after prefix 'cdc': not a table topic of a known "
            "layout (give flavour= for anything but 2 or 3)",
        ),
        (
            "cdc.shop.dbo.orders",
            {"flavour": ConnectorFlavour.MYSQL},
            "topic 'cdc.shop.dbo.orders' is not a mysql table topic (prefix.database.table)",
        ),
        (
            "other.public.orders",
            {"topic_prefix": "cdc"},
            "topic 'other.public.orders' does not start with prefix 'cdc'",
        ),
    ):
        with pytest.raises(ValueError) as raised:
            split_table_topic(topic, **kwargs)
        assert str(raised.value) == message
