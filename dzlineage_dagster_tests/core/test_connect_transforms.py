"""A connector's ``transforms`` chain as it decides topic names: order, predicates, reasons."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.connectors.transforms import (
    BY_LOGICAL_TABLE_ROUTER,
    RECORD_IS_TOMBSTONE,
    REGEX_ROUTER,
    TOPIC_NAME_MATCHES,
    RoutedTopic,
    TransformConfigError,
    parse_transform_chain,
)

CONNECTOR = "shop-source"
UNWRAP = "io.debezium.transforms.ExtractNewRecordState"


def chain(**settings: str):
    """The chain of CONNECTOR's config, settings written with '__' for '.' ('transforms' given)."""
    return parse_transform_chain(CONNECTOR, {k.replace("__", "."): v for k, v in settings.items()})


def regex_router(alias: str, regex: str, replacement: str) -> dict[str, str]:
    return {
        f"transforms__{alias}__type": REGEX_ROUTER,
        f"transforms__{alias}__regex": regex,
        f"transforms__{alias}__replacement": replacement,
    }


def logical_table_router(alias: str, regex: str, replacement: str) -> dict[str, str]:
    return {
        f"transforms__{alias}__type": BY_LOGICAL_TABLE_ROUTER,
        f"transforms__{alias}__topic__regex": regex,
        f"transforms__{alias}__topic__replacement": replacement,
    }


# unwrap leaves names alone, strip renames, other never matches, shards merges; the steps
# that do nothing come before the ones that do, so evaluation must go on past them.
CHAIN = {
    "transforms": "unwrap, strip, other, shards",
    "transforms__unwrap__type": UNWRAP,
    **regex_router("strip", "shop\\.([^.]+)\\.(.+)", "$1.$2"),
    **regex_router("other", "audit\\..*", "audit"),
    **logical_table_router("shards", "(.+)_\\d{4}", "$1"),
}


def test_routers_rename_in_order_and_say_who_renamed_and_whether_tables_merged() -> None:
    routed = chain(**CHAIN)
    assert routed.route("shop.sales.orders_2024") == RoutedTopic(
        "shop.sales.orders_2024", "sales.orders", ("strip", "shards"), True, None
    )
    assert routed.route("shop.sales.orders") == RoutedTopic(
        "shop.sales.orders", "sales.orders", ("strip",), False, None
    )
    assert routed.route("shop_2024") == RoutedTopic("shop_2024", "shop", ("shards",), True, None)
    assert routed.route("inventory") == RoutedTopic("inventory", "inventory", (), False, None)


def test_a_step_that_cannot_be_evaluated_stops_the_chain_keeping_what_was_known() -> None:
    routed = chain(
        **{**CHAIN, "transforms": "shards, strip, custom, other"},
        transforms__custom__type="com.acme.TopicRenamer",
    )
    assert routed.route("shop.sales.orders_2024") == RoutedTopic(
        "shop.sales.orders_2024",
        "sales.orders",
        ("shards", "strip"),
        True,
        "transform 'custom' of connector 'shop-source' has type com.acme.TopicRenamer, which "
        "may rename topics in ways the configuration does not show",
    )


def test_a_replacement_java_rejects_stops_the_chain_naming_transform_and_connector() -> None:
    routed = chain(
        transforms="shards, broken, strip",
        **logical_table_router("shards", "(.+)_\\d{4}", "$1"),
        **regex_router("broken", "([a-z.]+)", "$2"),
        **regex_router("strip", "shop\\.(.+)", "$1"),
    )
    assert routed.route("shop.orders_2024") == RoutedTopic(
        "shop.orders_2024",
        "shop.orders",
        ("shards",),
        True,
        "transform 'broken' of connector 'shop-source': replacement '$2': no group 2",
    )


def test_predicates_decide_which_topics_a_router_rewrites() -> None:
    routed = chain(
        transforms="tombstones, archive, live",
        predicates="isTombstone, isArchive, isArchiveAgain",
        # RecordIsTombstone: the router sees only deletes' tombstones, never change events.
        **regex_router("tombstones", ".*", "deleted"),
        transforms__tombstones__predicate="isTombstone",
        predicates__isTombstone__type=RECORD_IS_TOMBSTONE,
        # TopicNameMatches: only archive topics are prefixed ...
        **regex_router("archive", "(.*)", "cold.$1"),
        transforms__archive__predicate="isArchive",
        predicates__isArchive__type=TOPIC_NAME_MATCHES,
        predicates__isArchive__pattern=".*\\.archive\\..*",
        # ... and, negated, every other topic is.
        **regex_router("live", "(.*)", "hot.$1"),
        transforms__live__predicate="isArchiveAgain",
        transforms__live__negate="TRUE",
        predicates__isArchiveAgain__type=TOPIC_NAME_MATCHES,
        predicates__isArchiveAgain__pattern="(cold\\.)?.*\\.archive\\..*",
    )
    assert routed.route("shop.archive.orders").topic == "cold.shop.archive.orders"
    assert routed.route("shop.sales.orders") == RoutedTopic(
        "shop.sales.orders", "hot.shop.sales.orders", ("live",), False, None
    )
    [tombstones, archive, live] = routed.steps
    assert not tombstones.applies_to_change_events
    assert archive.applies_to_change_events and not archive.condition_negated
    assert live.condition_negated


def test_a_negated_tombstone_predicate_applies_to_every_change_event() -> None:
    routed = chain(
        transforms="rename",
        predicates="isTombstone",
        **regex_router("rename", "(.*)", "all.$1"),
        transforms__rename__predicate="isTombstone",
        transforms__rename__negate="true",
        predicates__isTombstone__type=RECORD_IS_TOMBSTONE,
    )
    assert routed.route("orders") == RoutedTopic("orders", "all.orders", ("rename",), False, None)


@pytest.mark.parametrize(
    ("settings", "reason"),
    [
        (
            {
                "transforms": "r",
                **regex_router("r", "x", "y"),
                "transforms__r__predicate": "p",
                "predicates": "p",
                "predicates__p__type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
            },
            "predicate 'p' of transform 'r' (connector 'shop-source') has type "
            "org.apache.kafka.connect.transforms.predicates.HasHeaderKey: whether it applies "
            "depends on each record, not on the configuration",
        ),
        (
            {"transforms": "r", **regex_router("r", "\\p{IsLatin}+", "y")},
            "transform 'r' of connector 'shop-source' (transforms.r.regex): Java regex "
            "'\\\\p{IsLatin}+' uses the property \\p{IsLatin}; only POSIX and java* classes are "
            "evaluated",
        ),
    ],
)
def test_steps_that_cannot_be_evaluated_say_why_naming_the_connector(
    settings: dict[str, str], reason: str
) -> None:
    [step] = chain(**settings).steps
    assert step.ambiguous_reason == reason
    assert not step.condition_negated and step.applies_to_change_events
    assert chain(**settings).route("orders") == RoutedTopic("orders", "orders", (), False, reason)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"transforms": "nameless"},
            "transform 'nameless' of connector 'shop-source' has no transforms.nameless.type "
            "(Kafka Connect requires it)",
        ),
        (
            {"transforms": "r", "transforms__r__type": REGEX_ROUTER, "transforms__r__regex": "x"},
            "transform 'r' of connector 'shop-source' needs a value for transforms.r.replacement",
        ),
        (
            {
                "transforms": "r",
                "transforms__r__type": REGEX_ROUTER,
                "transforms__r__replacement": "x",
            },
            "transform 'r' of connector 'shop-source' needs a value for transforms.r.regex",
        ),
        (
            {"transforms": "r", **regex_router("r", "(a", "x")},
            "transform 'r' of connector 'shop-source' (transforms.r.regex): invalid Java regex "
            "'(a': missing ), unterminated subpattern at position 0",
        ),
        (
            {"transforms": "r", **logical_table_router("r", "(.*)_\\d+", " ")},
            "transform 'r' of connector 'shop-source' needs a value for "
            "transforms.r.topic.replacement",
        ),
        (
            {
                "transforms": "r",
                **logical_table_router("r", "(.*)_\\d+", "$1"),
                "transforms__r__key__field__regex": "(.*)",
            },
            "transform 'r' of connector 'shop-source': transforms.r.key.field.replacement must "
            "be non-empty if transforms.r.key.field.regex is set",
        ),
        (
            {"transforms": "r", **regex_router("r", "x", "y"), "transforms__r__negate": "true"},
            "transform 'r' of connector 'shop-source': transforms.r.negate was provided but "
            "there is no transforms.r.predicate defining a predicate to be negated",
        ),
        (
            {
                "transforms": "r",
                **regex_router("r", "x", "y"),
                "transforms__r__predicate": "p",
                "predicates": "p",
                "predicates__p__type": TOPIC_NAME_MATCHES,
                "predicates__p__pattern": "",
            },
            "predicate 'p' of transform 'r' (connector 'shop-source') needs a non-empty "
            "predicates.p.pattern",
        ),
        (
            {"transforms": "r", **regex_router("r", "x", "y"), "transforms__r__predicate": "p"},
            "predicate 'p' of transform 'r' (connector 'shop-source') must be listed in "
            "predicates and have a predicates.p.type",
        ),
    ],
)
def test_chains_kafka_connect_refuses_raise_naming_the_setting(
    settings: dict[str, str], message: str
) -> None:
    with pytest.raises(TransformConfigError) as raised:
        chain(**settings)
    assert str(raised.value) == message


def test_a_logical_router_whose_replacement_is_empty_keeps_the_topic_a_regex_router_cannot() -> (
    None
):
    logical = chain(transforms="r", **logical_table_router("r", "shop\\.(.*)", "$1"))
    assert logical.route("shop.") == RoutedTopic("shop.", "shop.", (), False, None)
    plain = chain(transforms="r", **regex_router("r", "shop\\.(.*)", "$1"))
    assert plain.route("shop.").ambiguous_reason == (
        "transform 'r' of connector 'shop-source' renames 'shop.' to an empty topic name, "
        "which Kafka rejects"
    )


topic_names = st.from_regex(r"[a-z][a-z0-9_]{0,10}(\.[a-z][a-z0-9_]{0,10}){0,3}", fullmatch=True)


@given(topic_names)
def test_a_router_may_produce_exactly_the_names_its_replacement_can_spell(topic: str) -> None:
    [strip, other, shards] = chain(**{**CHAIN, "transforms": "strip, other, shards"}).steps
    # "$1.$2" spells any name with a dot; "audit" only itself; "$1" anything.
    assert strip.may_produce(topic) is ("." in topic)
    assert other.may_produce(topic) is (topic == "audit")
    assert shards.may_produce(topic)
    [unwrap] = chain(transforms="unwrap", transforms__unwrap__type=UNWRAP).steps
    assert not unwrap.may_produce(topic)
    [broken] = chain(transforms="b", **regex_router("b", "(x)", "$2")).steps
    assert not broken.may_produce(topic)
