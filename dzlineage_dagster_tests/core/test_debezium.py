"""Debezium source settings: current and legacy names, defaults, filters, and errors naming them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.connectors.debezium import (
    DEBEZIUM_CONNECTOR_CLASSES,
    DebeziumConfigError,
    SourceEngine,
    parse_debezium_source,
    sanitized_topic_name,
    unescape_unicode_topic,
)
from dzlineage_dagster.core.connectors.topics import TopicKind

POSTGRES = "io.debezium.connector.postgresql.PostgresConnector"
MYSQL = "io.debezium.connector.mysql.MySqlConnector"
ORACLE = "io.debezium.connector.oracle.OracleConnector"


def postgres(**settings: str):
    """A Postgres source of database 'app'; settings written with '__' for '.'."""
    config = {k.replace("__", "."): v for k, v in settings.items()}
    return parse_debezium_source(
        "pg", {"connector.class": POSTGRES, "database.dbname": "app", **config}
    )


def test_legacy_setting_names_are_honoured() -> None:
    source = postgres(
        database__server__name="app",
        database__hostname=" pg.internal ",
        database__port="6543",
        table__whitelist="public\\.orders, public\\.order_.*",
        schema__whitelist="public",
        heartbeat__topics__prefix="hb",
        database__history__kafka__topic="history.app",
        topic__transaction="tx",
    )
    assert (source.topic_prefix, source.hostname, source.port) == ("app", "pg.internal", "6543")
    assert source.special_topics == {
        "hb.app": TopicKind.HEARTBEAT,
        "app.tx": TopicKind.TRANSACTION,
        "app": TopicKind.SCHEMA_CHANGE,
    }
    assert source.schema_history_topic == "history.app"
    assert (source.literal_tables, source.table_patterns) == (
        ("public.orders",),
        ("public\\.order_.*",),
    )
    assert source.captures(source.table("app", "public", "orders"))
    assert source.captures(source.table("app", "public", "order_lines"))
    assert not source.captures(source.table("app", "public", "items"))
    assert not source.captures(source.table("app", "sales", "orders"))


def test_current_names_win_over_legacy_ones_and_defaults_fill_the_rest() -> None:
    source = postgres(
        topic__prefix="new",
        database__server__name="old",
        topic__heartbeat__prefix="beat",
        heartbeat__topics__prefix="hb",
        schema__history__internal__kafka__topic="history.new",
        database__history__kafka__topic="history.old",
    )
    assert source.special_topics == {
        "beat.new": TopicKind.HEARTBEAT,
        "new.transaction": TopicKind.TRANSACTION,
        "new": TopicKind.SCHEMA_CHANGE,
    }
    assert (source.schema_history_topic, source.hostname, source.port) == (
        "history.new",
        "",
        "5432",
    )
    assert postgres(topic__prefix="p").special_topics == {
        "__debezium-heartbeat.p": TopicKind.HEARTBEAT,
        "p.transaction": TopicKind.TRANSACTION,
        "p": TopicKind.SCHEMA_CHANGE,
    }


def test_exclude_lists_and_their_legacy_names_drop_tables_and_schemas() -> None:
    for current in (True, False):
        tables, schemas = ("table.exclude.list", "schema.exclude.list") if current else (
            "table.blacklist", "schema.blacklist"
        )  # fmt: skip
        source = parse_debezium_source(
            "pg",
            {
                "connector.class": POSTGRES,
                "topic.prefix": "app",
                "database.dbname": "app",
                tables: "public\\.secret",
                schemas: "audit",
            },
        )
        assert source.captures(source.table("app", "public", "orders"))
        assert not source.captures(source.table("app", "public", "secret"))
        assert not source.captures(source.table("app", "audit", "log"))


def test_mysql_filters_databases_and_has_no_database_list() -> None:
    source = parse_debezium_source(
        "my",
        {
            "connector.class": MYSQL,
            "topic.prefix": "m",
            "database.whitelist": "shop",
        },
    )
    assert (source.engine, source.databases, source.port) == (SourceEngine.MYSQL, (), "3306")
    assert source.captures(source.table("shop", None, "orders"))
    assert not source.captures(source.table("crm", None, "orders"))
    excluded = parse_debezium_source(
        "my", {"connector.class": MYSQL, "topic.prefix": "m", "database.exclude.list": "crm"}
    )
    assert excluded.captures(excluded.table("shop", None, "orders"))
    assert not excluded.captures(excluded.table("crm", None, "orders"))


def test_an_oracle_pluggable_database_is_the_database_its_tables_live_in() -> None:
    config = {"connector.class": ORACLE, "topic.prefix": "o", "database.dbname": "ORCLCDB"}
    oracle = parse_debezium_source("ora", {**config, "database.pdb.name": "ORCLPDB1"})
    assert (oracle.databases, oracle.port) == (("ORCLPDB1",), "1521")
    assert parse_debezium_source("ora", config).databases == ("ORCLCDB",)
    # Only Oracle has pluggable databases.
    pg = parse_debezium_source(
        "pg", {**config, "connector.class": POSTGRES, "database.pdb.name": "x"}
    )
    assert pg.databases == ("ORCLCDB",)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"connector.class": "com.acme.Source", "topic.prefix": "p"},
            "connector 'c': connector.class 'com.acme.Source' is not a Debezium relational "
            f"source ({', '.join(sorted(DEBEZIUM_CONNECTOR_CLASSES))})",
        ),
        (
            {"topic.prefix": "p"},
            "connector 'c': connector.class '' is not a Debezium relational "
            f"source ({', '.join(sorted(DEBEZIUM_CONNECTOR_CLASSES))})",
        ),
        (
            {"connector.class": POSTGRES, "topic.prefix": "p"},
            "connector 'c': database.dbname (SQL Server: database.names) is required for "
            "postgres",
        ),
        (
            {"connector.class": POSTGRES, "topic.prefix": "p", "database.dbname": "d",
             "table.exclude.list": "(a"},
            "connector 'c', table.exclude.list: invalid Java regex '(a'",
        ),
        (
            {"connector.class": POSTGRES, "topic.prefix": "p", "database.dbname": "d",
             "table.include.list": "(a"},
            "connector 'c', table.include.list: invalid Java regex '(a'",
        ),
        (
            {"connector.class": POSTGRES, "topic.prefix": "p", "database.dbname": "d",
             "schema.include.list": "\\G"},
            "connector 'c', schema.include.list: Java regex '\\\\G' uses \\G",
        ),
        (
            {"connector.class": POSTGRES, "topic.prefix": "p", "database.dbname": "d",
             "schema.exclude.list": "a{"},
            "connector 'c', schema.exclude.list: invalid Java regex 'a{'",
        ),
        (
            {"connector.class": POSTGRES, "topic.prefix": "p", "database.dbname": "d",
             "table.include.list": "a", "table.exclude.list": "b"},
            "connector 'c': table.include.list and table.exclude.list cannot both be set "
            "(Debezium rejects the configuration)",
        ),
    ],
)  # fmt: skip
def test_bad_settings_are_refused_naming_connector_and_setting(config, message) -> None:
    with pytest.raises(DebeziumConfigError) as raised:
        parse_debezium_source("c", config)
    assert str(raised.value).startswith(message)


#: Table-name characters whose escapes read back unambiguously (U+0100-U+0FFF escape to three
#: hex digits, which a following hex digit would extend).
_NAME_CHARACTERS = st.one_of(
    st.sampled_from("abcxyzABC019_-#$ "),
    st.characters(min_codepoint=0x1000, max_codepoint=0xFFFF, exclude_categories=("Cs",)),
)


@given(st.text(alphabet=_NAME_CHARACTERS, min_size=1, max_size=12))
def test_a_unicode_strategy_topic_reads_back_as_its_table(name: str) -> None:
    source = parse_debezium_source(
        "u",
        {
            "connector.class": "io.debezium.connector.mysql.MySqlConnector",
            "topic.prefix": "my_srv",
            "topic.naming.strategy": "io.debezium.schema.DefaultUnicodeTopicNamingStrategy",
        },
    )
    table = source.table("shop_db", None, name)
    topic = source.raw_topic(table)
    assert set(topic) <= set("._-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    assert "_" not in topic.replace("_u", "")  # every underscore is an escape
    assert unescape_unicode_topic(topic) == f"my_srv.shop_db.{name}"
    assert source.table_from_raw_topic(topic) == table


def test_sanitizing_replaces_java_chars_and_keeps_249_characters() -> None:
    assert sanitized_topic_name("a.b#c d") == "a.b_c_d"
    # A supplementary character is two UTF-16 units in Java: two replacements.
    assert sanitized_topic_name("t\U0001f600") == "t__"
    assert sanitized_topic_name("t\U0001f600", unicode=True) == "t_ud83d_ude00"
    assert sanitized_topic_name("\t", unicode=True) == "_u009"
    assert sanitized_topic_name("\u0100", unicode=True) == "_u100"
    assert sanitized_topic_name("x" * 300) == "x" * 249
    assert sanitized_topic_name(".", unicode=True) == "_u002e"


@given(st.text(alphabet=st.sampled_from("._-aZ9#\u00e9\U0001f600"), max_size=260), st.booleans())
def test_a_name_with_nothing_to_replace_is_kept_as_the_unit_by_unit_rule_keeps_it(name, unicode):
    from dzlineage_dagster.core.connectors.debezium import (
        _VALID_TOPIC_CHARACTERS,
        _VALID_UNICODE_TOPIC_CHARACTERS,
        _sanitized_by_unit,
    )

    valid = _VALID_UNICODE_TOPIC_CHARACTERS if unicode else _VALID_TOPIC_CHARACTERS
    assert sanitized_topic_name(name, unicode=unicode) == _sanitized_by_unit(name, valid, unicode)
