"""The naming-convention mapper: topic name -> Iceberg table, always flagged as a guess."""

from __future__ import annotations

import botocore.session
import pytest

from dzlineage_dagster.core.connectors.table_mapping import (
    MAX_GLUE_NAME_LENGTH,
    NamingConventionMapper,
    TableRef,
)


@pytest.mark.parametrize(
    ("topic", "pattern", "table"),
    [
        ("shop.sales.orders", "{schema}_{table}", "sales_orders"),
        ("shop.sales.Orders", "{table}", "orders"),
        ("shop.sales.orders", "{prefix}__{schema}__{table}", "shop__sales__orders"),
        ("shop.erp.sales.orders", "{database}_{schema}_{table}", "erp_sales_orders"),
        # A part the topic lacks is empty, and the underscores around it go.
        ("shop.sales.orders", "{database}_{schema}_{table}", "sales_orders"),
    ],
)
def test_table_topics_map_to_the_pattern_in_the_database(topic, pattern, table):
    mapping = NamingConventionMapper("lakehouse", pattern).map_topic(topic)
    assert mapping.topic == topic
    assert mapping.table == TableRef("lakehouse", table)
    assert str(mapping.table) == f"lakehouse.{table}"
    assert (mapping.origin, mapping.is_guess) == ("convention", True)
    assert mapping.reason == (
        f"guessed from the topic name by the pattern {pattern!r}; "
        "no connector configuration maps this topic"
    )


@pytest.mark.parametrize(
    ("topic", "reason"),
    [
        ("__debezium-heartbeat.shop", "heartbeat topic: carries no table rows"),
        ("shop.transaction", "transaction topic: carries no table rows"),
        ("shop", "schema_change topic: carries no table rows"),
    ],
)
def test_connector_topics_map_to_no_table(topic, reason):
    mapping = NamingConventionMapper("lakehouse", topic_prefixes={"shop"}).map_topic(topic)
    assert (mapping.table, mapping.origin, mapping.is_guess) == (None, "none", False)
    assert mapping.reason == reason


def test_known_prefixes_decide_what_shape_cannot():
    # Without the prefix, "shop.public.transaction" looks like a table named transaction anyway;
    # with prefix "shop.public" it is that connector's transaction topic.
    mapper = NamingConventionMapper("lakehouse", topic_prefixes={"shop.public"})
    assert mapper.map_topic("shop.public.transaction").table is None
    plain = NamingConventionMapper("lakehouse")
    assert plain.map_topic("shop.public.transaction").table == TableRef(
        "lakehouse", "public_transaction"
    )


def test_glue_s_name_limit_is_botocore_s():
    glue = botocore.session.get_session().get_service_model("glue")
    table_input = glue.operation_model("GetTable").input_shape.members
    assert table_input["Name"].metadata["max"] == MAX_GLUE_NAME_LENGTH
    assert table_input["DatabaseName"].metadata["max"] == MAX_GLUE_NAME_LENGTH


@pytest.mark.parametrize("part", ["database", "table"])
def test_a_table_named_past_glue_s_limit_says_which_part_and_the_limit(part):
    at_limit = {"database": "lakehouse", "table": "orders", part: "x" * MAX_GLUE_NAME_LENGTH}
    assert TableRef(**at_limit).glue_name_problem is None
    past = {**at_limit, part: "x" * (MAX_GLUE_NAME_LENGTH + 1)}
    problem = TableRef(**past).glue_name_problem
    assert problem is not None
    assert f"its {part} name has {MAX_GLUE_NAME_LENGTH + 1} characters" in problem
    assert f"Glue Data Catalog's {MAX_GLUE_NAME_LENGTH}" in problem
    assert len(problem) < 300  # the name is shortened in the message
