"""A topic's schema versions compared as Iceberg sees them, and the columns a change reaches."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.ownership.owners import Owner
from dzlineage_dagster.core.schemas.avro import Column
from dzlineage_dagster.core.schemas.impact import (
    AffectedColumn,
    ColumnChange,
    DownstreamAsset,
    ImpactReport,
    affected_columns,
    compare_columns,
    iceberg_promotes,
    verdict,
)

TYPES = ("int", "long", "float", "double", "string", "decimal(10,2)", "decimal(12,2)", "date")
columns = st.lists(
    st.builds(
        Column,
        name=st.sampled_from("abcdef"),
        type=st.sampled_from(TYPES),
        nullable=st.booleans(),
        description=st.none(),
    ),
    unique_by=lambda column: column.name,
    max_size=6,
)


def test_iceberg_promotes_only_what_its_spec_allows():
    assert iceberg_promotes("int", "long") and iceberg_promotes("float", "double")
    assert iceberg_promotes("decimal(10,2)", "decimal(12,2)")
    assert not iceberg_promotes("decimal(12,2)", "decimal(10,2)")  # narrower
    assert not iceberg_promotes("decimal(10,2)", "decimal(12,3)")  # scale changed
    assert not iceberg_promotes("long", "int")
    assert not iceberg_promotes("int", "string")


def test_each_kind_of_change_and_whether_it_breaks():
    before = [
        Column("id", "int", False, None),
        Column("status", "string", True, None),
        Column("total", "decimal(12,2)", False, None),
        Column("note", "string", True, None),
    ]
    after = [
        Column("id", "long", False, None),
        Column("total", "decimal(10,2)", False, None),
        Column("note", "string", False, None),
        Column("coupon", "string", True, None),
    ]
    changes = compare_columns(before, after)
    assert [(c.column, c.kind, c.breaking) for c in changes] == [
        ("id", "type_promoted", False),
        ("status", "removed", True),
        ("total", "type_changed", True),
        ("note", "nullability_tightened", True),
        ("coupon", "added", False),
    ]
    assert verdict(changes) == "breaking"
    assert verdict(changes[:1] + changes[-1:]) == "additive"
    assert verdict([]) == "none"


@given(columns)
def test_a_version_compared_with_itself_changes_nothing(same):
    assert compare_columns(same, same) == []


@given(columns, columns)
def test_only_additions_and_promotions_are_not_breaking(before, after):
    for change in compare_columns(before, after):
        assert change.breaking == (change.kind not in ("added", "type_promoted"))


def test_a_change_reaches_the_downstream_columns_written_from_it():
    topic = ("kafka", "shop.orders")
    removed = ColumnChange("status", "removed", True, "string column removed")
    lineage = {
        ("iceberg", "lakehouse", "orders"): {
            "status": [(topic, "status")],
            "total": [(topic, "total")],
        },
        ("iceberg", "lakehouse", "other"): {"status": [(("kafka", "elsewhere"), "status")]},
    }
    assert affected_columns([removed], topic, lineage) == [
        AffectedColumn(("iceberg", "lakehouse", "orders"), "status", removed)
    ]


def test_a_field_aliasing_a_removed_one_is_a_breaking_rename_not_a_removal_and_an_addition():
    before = [Column("status", "string", True, None)]
    after = [Column("state", "string", True, None, aliases=("status",))]
    (change,) = compare_columns(before, after)
    assert (change.column, change.kind, change.breaking) == ("status", "renamed", True)
    assert "renamed to state" in change.detail


def test_removed_enum_symbols_break_and_added_ones_do_not():
    before = [Column("status", "enum", False, None, symbols=("NEW", "PAID", "SHIPPED"))]
    removed = [Column("status", "enum", False, None, symbols=("NEW", "PAID"))]
    added = [Column("status", "enum", False, None, symbols=("NEW", "PAID", "SHIPPED", "LOST"))]
    assert [(c.kind, c.breaking) for c in compare_columns(before, removed)] == [
        ("symbols_removed", True)
    ]
    assert [(c.kind, c.breaking) for c in compare_columns(before, added)] == [
        ("symbols_added", False)
    ]


def test_the_text_report_carries_everything_the_json_one_does():
    removed = ColumnChange("status", "removed", True, "column removed")
    added = ColumnChange("coupon", "added", False, "string column added")
    report = ImpactReport(
        topic="shop.sales.orders",
        latest_version=2,
        previous_version=1,
        changes=(removed, added),
        affected=(AffectedColumn(("iceberg", "lakehouse", "sales_orders"), "status", removed),),
        tables=("lakehouse.sales_orders",),
        downstream=(
            DownstreamAsset("lakehouse.sales_orders", "dagster", "iceberg/lakehouse/sales_orders"),
            DownstreamAsset("lakehouse.sales_orders", "datazone", "team/revenue", "n1", "T"),
        ),
        owners=(Owner("team:cdc", "datazone-project"), Owner("a@example.com", "connector:sink")),
    )
    text = report.text()
    document = report.to_json()
    assert text.splitlines()[0] == "shop.sales.orders v1 -> v2: breaking"
    for change in document["changes"]:
        assert f"{change['column']}: {change['detail']}" in text
    for reached in document["affected"]:
        assert f"{reached['table']}.{reached['column']} ({reached['change']})" in text
    assert "  tables    lakehouse.sales_orders" in text
    for downstream in document["downstream"]:
        assert downstream["name"] in text and (downstream["node_id"] or "") in text
    for owner in document["owners"]:
        assert f"{owner['name']} ({owner['source']})" in text


def test_an_empty_section_of_the_text_report_says_so_and_a_first_version_is_one_line():
    assert ImpactReport("t", 2, 1).text().splitlines() == [
        "t v1 -> v2: none",
        "  tables    (none)",
        "  read by   (none)",
        "  owners    (none)",
    ]
    assert ImpactReport("t", 1).text() == "t v1: its first version, nothing to compare"
