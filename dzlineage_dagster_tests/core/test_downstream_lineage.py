"""Naming a team's Dagster assets and their platform inputs, the run ids, and the cursor."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.lineage.downstream import (
    DownstreamCursor,
    GlueTableRef,
    TopicRef,
    asset_glue_table,
    asset_job,
    closing_run_id,
    dagster_dataset,
    materialization_run_id,
    platform_ref,
    reopening_run_id,
)
from dzlineage_dagster.core.lineage.platform_graph import iceberg_table_key, topic_key

names = st.text(min_size=1, max_size=30)


@given(names, names)
def test_an_iceberg_table_s_graph_key_names_its_glue_table(database, table):
    assert platform_ref(iceberg_table_key(database, table)) == GlueTableRef(database, table)


@given(names)
def test_a_topic_s_graph_key_names_the_topic(topic):
    assert platform_ref(topic_key(topic)) == TopicRef(topic)


@pytest.mark.parametrize(
    "key",
    [
        ("daily_revenue",),
        ("iceberg", "lakehouse"),
        ("iceberg", "lakehouse", "t", "extra"),
        ("kafka", "a", "b"),
        # A source table's key has no host: it cannot name the sync's dataset.
        ("source", "postgres", "shop", "sales", "orders"),
    ],
)
def test_other_keys_are_not_the_platform_s(key):
    assert platform_ref(key) is None


def test_a_dagster_asset_and_its_job_are_named_by_location_and_key_path():
    assert dagster_dataset("shop_analytics", ["kpi", "orders_per_day"]) == (
        "dagster://shop_analytics",
        "kpi/orders_per_day",
    )
    assert asset_job("shop_analytics", ["daily_revenue"]) == (
        "dagster://shop_analytics",
        "daily_revenue",
    )


@pytest.mark.parametrize("location", ["", "team/a"])
def test_a_location_name_that_cannot_name_a_dataset_is_refused(location):
    with pytest.raises(ValueError, match="code location"):
        dagster_dataset(location, ["x"])


def test_an_asset_is_its_glue_table_when_it_says_so():
    metadata = {"dagster/table_name": "lakehouse.daily_revenue"}
    assert asset_glue_table({"spark", "iceberg"}, metadata) == GlueTableRef(
        "lakehouse", "daily_revenue"
    )
    assert asset_glue_table({"glue"}, metadata) == GlueTableRef("lakehouse", "daily_revenue")
    # Not a Glue kind, or no table name: the Dagster asset's own node.
    assert asset_glue_table({"snowflake"}, metadata) is None
    assert asset_glue_table({"iceberg"}, {}) is None


@pytest.mark.parametrize("name", ["glue_catalog.lakehouse.daily_revenue", "daily_revenue", "a."])
def test_a_glue_asset_s_table_name_of_another_shape_is_an_error(name):
    with pytest.raises(ValueError, match=r"'<database>\.<table>'"):
        asset_glue_table({"iceberg"}, {"dagster/table_name": name})


def test_a_run_id_is_one_per_dagster_run_and_asset():
    run = "8d4c2b5e-7b1a-4c55-9a0e-3f1d2b6c7a90"
    assert materialization_run_id(run, ["a"], 1) == materialization_run_id(run, ["a"], 2)
    assert materialization_run_id(run, ["a"], 1) != materialization_run_id(run, ["b"], 1)
    assert materialization_run_id(run, ["a", "b"], 1) != materialization_run_id(run, ["a/b"], 1)
    # Reported without a run: each materialization its own run.
    assert materialization_run_id("", ["a"], 1) != materialization_run_id("", ["a"], 2)


storage_ids = st.dictionaries(names, st.integers(min_value=0))


@given(storage_ids, storage_ids, st.data())
def test_the_cursor_round_trips(posted, closed, data):
    closed = {asset: n for asset, n in closed.items() if asset not in posted}
    kept = sorted({*posted, *closed}) or ["-"]
    tables = data.draw(st.dictionaries(st.sampled_from(kept), names))
    tables = {asset: t for asset, t in tables.items() if asset in posted or asset in closed}
    cursor = DownstreamCursor(posted, tables, closed)
    assert DownstreamCursor.decode(cursor.encode()) == cursor


def test_a_cursor_written_before_the_tables_were_kept_still_reads():
    assert DownstreamCursor.decode('{"a":5,"posted":7}') == DownstreamCursor({"a": 5, "posted": 7})


def test_an_asset_gone_from_the_location_is_closed_with_the_table_it_wrote():
    cursor = (
        DownstreamCursor.decode(None)
        .advanced("team/revenue", 5, GlueTableRef("lakehouse", "revenue"))
        .advanced("kpi", 6)
    )
    assert cursor.gone(["kpi", "new"]) == ["team/revenue"]
    assert cursor.output_of("team/revenue") == GlueTableRef("lakehouse", "revenue")
    assert cursor.output_of("kpi") is None
    closed = cursor.closing("team/revenue")
    assert closed == DownstreamCursor(
        {"kpi": 6}, {"team/revenue": "lakehouse.revenue"}, {"team/revenue": 5}
    )
    # Kept as closed (its table too, for a closing posted again), not gone a second time.
    assert closed.gone(["kpi"]) == []
    assert closed.output_of("team/revenue") == GlueTableRef("lakehouse", "revenue")
    # Back under its key: open again.
    assert closed.advanced("team/revenue", 9) == DownstreamCursor({"kpi": 6, "team/revenue": 9})
    # Closing again (a tick retried) is the same run; coming back is a run of its own.
    assert closing_run_id("team/revenue", 5) == closing_run_id("team/revenue", 5)
    assert closing_run_id("team/revenue", 5) != closing_run_id("team/revenue", 6)
    assert reopening_run_id("team/revenue", 5, 9) not in (
        closing_run_id("team/revenue", 5),
        reopening_run_id("team/revenue", 5, 10),
    )


def test_the_cursor_advances_per_asset():
    cursor = DownstreamCursor.decode(None).advanced("a", 5)
    assert cursor.after("a") == 5 and cursor.after("b") is None


@pytest.mark.parametrize(
    "text",
    [
        "[1]",
        '{"a": "5"}',
        "not json",
        '{"a": true}',
        '{"posted": {"a": 1}, "tables": {"b": "d.t"}}',
        '{"posted": {}, "closed": []}',
    ],
)
def test_a_cursor_that_is_not_ours_says_how_to_recover(text):
    with pytest.raises(ValueError, match="reset the sensor's cursor"):
        DownstreamCursor.decode(text)
