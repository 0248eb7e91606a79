"""A team's Dagster assets downstream of the platform, posted to DataZone by the downstream
lineage sensor on the seeded demo: a materialization of the demo's ``daily_revenue`` shows in
DataZone's lineage as topic -> ``lakehouse.sales_orders`` -> ``lakehouse.daily_revenue``; a
second tick, or one with its cursor lost, posts nothing new; a group not opted in posts
nothing."""

from __future__ import annotations

import json

import pytest
from dagster import (
    AssetKey,
    Definitions,
    SkipReason,
    asset,
    build_sensor_context,
    evaluate_automation_conditions,
    materialize,
)

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.definitions import build_resources
from dzlineage_dagster.downstream_lineage import downstream_lineage_sensor
from dzlineage_dagster.sandbox.commands import DOWNSTREAM_LOCATION
from dzlineage_dagster.sandbox.demo import downstream
from dzlineage_dagster_tests.openlineage_spec import validate_openlineage_event
from dzlineage_dagster_tests.test_connector_lineage import glue_arn, posted_events
from dzlineage_dagster_tests.test_lineage_repost import (
    fail_after_accept,
    lineage_events,
    summaries,
)
from dzlineage_dagster_tests.test_lineage_truth import demo_topic

TOPIC = "shop.sales.orders"


@pytest.fixture
def synced(platform, capsys):
    """The demo platform with the sync's lineage in DataZone (topic -> Iceberg tables)."""
    assert dzlineage(["sync"]) == 0
    capsys.readouterr()
    return platform


def tick(platform, defs: Definitions, cursor: str | None = None):
    """One evaluation of the location's downstream lineage sensor: its result and cursor."""
    (sensor,) = [s for s in defs.sensors if s.name == "downstream_lineage"]
    with build_sensor_context(
        instance=platform.instance, cursor=cursor, definitions=defs, resources=defs.resources
    ) as context:
        result = sensor(context)
        return result, context.cursor


def team_events(platform) -> list[dict]:
    """The lineage events DataZone holds that a Dagster location posted."""
    return [e for e in posted_events(platform) if e["job"]["namespace"].startswith("dagster://")]


def neighbours(platform, identifier: str, direction: str, depth: int) -> set[str]:
    """sourceIdentifiers of the lineage nodes up to ``depth`` hops from the node, one way."""
    datazone = platform.client("datazone")
    domain = platform.settings.domain_id
    found: set[str] = set()
    frontier = [datazone.get_lineage_node(domainIdentifier=domain, identifier=identifier)]
    for _ in range(depth):
        following = []
        for node in frontier:
            for reference in node.get(f"{direction}Nodes", []):
                nearby = datazone.get_lineage_node(
                    domainIdentifier=domain, identifier=reference["id"]
                )
                found.add(nearby.get("sourceIdentifier", ""))
                following.append(nearby)
        frontier = following
    return found


def test_daily_revenue_s_materialization_shows_in_datazone_below_its_topic_s_table(synced):
    platform = synced
    sales_orders = glue_arn(platform, "lakehouse", "sales_orders")
    daily_revenue = glue_arn(platform, "lakehouse", "daily_revenue")
    assert materialize([downstream.daily_revenue], instance=platform.instance).success

    result, cursor = tick(platform, downstream.defs)
    assert isinstance(result, SkipReason)
    # The Glue tables' region and account as the sync takes them (the registry's), one post,
    # and the look for events DataZone failed after accepting them (one ListLineageEvents).
    calls = {
        "datazone.ListLineageEvents": 1,
        "datazone.PostLineageEvent": 1,
        "glue.GetRegistry": 1,
    }
    assert result.skip_message == (
        "no run to launch, the sensor posts itself: it posted the lineage of 1 materialization "
        f"runs to DataZone; API calls {calls}"
    )

    (event,) = team_events(platform)
    validate_openlineage_event(json.dumps(event))
    assert event["eventType"] == "COMPLETE"
    assert (event["job"]["namespace"], event["job"]["name"]) == (
        "dagster://shop_analytics",
        "daily_revenue",
    )
    # The platform's table named as the sync names it, so the two join in one node.
    assert [f"{d['namespace']}/{d['name']}" for d in event["inputs"]] == [sales_orders]
    assert [f"{d['namespace']}/{d['name']}" for d in event["outputs"]] == [daily_revenue]

    # DataZone: sales_orders' node -> the run -> daily_revenue's node, the topic above the table.
    assert daily_revenue in neighbours(platform, sales_orders, "downstream", 2)
    upstream = neighbours(platform, daily_revenue, "upstream", 4)
    assert sales_orders in upstream
    assert "/".join(demo_topic(platform, TOPIC)) in upstream

    # A second tick has nothing new; one that lost its cursor posts the same run again, which
    # DataZone replays (same event, same client token): nothing is stored twice.
    result, cursor_again = tick(platform, downstream.defs, cursor)
    assert isinstance(result, SkipReason) and "no new materialization" in result.skip_message
    assert cursor_again == cursor
    tick(platform, downstream.defs, None)
    assert len(team_events(platform)) == 1

    # A new Dagster run is a new lineage run.
    assert materialize([downstream.daily_revenue], instance=platform.instance).success
    tick(platform, downstream.defs, cursor)
    runs = {e["run"]["runId"] for e in team_events(platform)}
    assert len(runs) == 2


def test_a_lineage_409_is_resolved_as_the_sync_resolves_it(synced):
    """Under the reading where PostLineageEvent's 409 stored nothing, the sensor posts again
    (the sync's own conflict handling): the event is in DataZone once."""
    platform = synced
    platform.control.set_ambiguities(lineage_conflict="other")
    assert materialize([downstream.daily_revenue], instance=platform.instance).success
    tick(platform, downstream.defs)
    (event,) = team_events(platform)
    assert event["job"]["name"] == "daily_revenue"


@asset(key="refund_rate", deps=[AssetKey(["kafka", TOPIC])], group_name="finance")
def refund_rate() -> None:
    """Not opted in: the sensor posts nothing of it."""


@asset(
    key=["kpi", "orders_per_day"],
    deps=[downstream.daily_revenue.key, AssetKey(["kafka", TOPIC]), refund_rate.key],
    group_name="kpis",
)
def orders_per_day() -> None:
    """No Glue table: posted as a Dagster dataset, with the topic and daily_revenue as inputs
    (refund_rate is in a group not opted in, so it is left out)."""


def team_defs(groups: list[str]) -> Definitions:
    return Definitions(
        assets=[downstream.daily_revenue, refund_rate, orders_per_day],
        sensors=[downstream_lineage_sensor(groups=groups, code_location="team")],
        resources=build_resources(),
    )


def test_only_opted_in_groups_post_and_a_dagster_asset_is_its_own_node(synced):
    platform = synced
    defs = team_defs(["kpis", "shop_analytics"])
    assert materialize([refund_rate], instance=platform.instance).success
    tick(platform, defs)
    assert team_events(platform) == []

    assert materialize(
        [downstream.daily_revenue, orders_per_day], instance=platform.instance
    ).success
    result, _ = tick(platform, defs)
    assert "'datazone.PostLineageEvent': 2" in result.skip_message
    events = {e["job"]["name"]: e for e in team_events(platform)}
    assert set(events) == {"daily_revenue", "kpi/orders_per_day"}
    kpi = events["kpi/orders_per_day"]
    validate_openlineage_event(json.dumps(kpi))
    assert [(d["namespace"], d["name"]) for d in kpi["outputs"]] == [
        ("dagster://team", "kpi/orders_per_day")
    ]
    topic = "/".join(demo_topic(platform, TOPIC))
    assert {f"{d['namespace']}/{d['name']}" for d in kpi["inputs"]} == {
        glue_arn(platform, "lakehouse", "daily_revenue"),
        topic,
    }
    # One Dagster run materialized both: each asset its own lineage run.
    assert events["daily_revenue"]["run"]["runId"] != kpi["run"]["runId"]
    assert topic in neighbours(platform, "dagster://team/kpi/orders_per_day", "upstream", 2)


def test_a_group_the_location_does_not_have_is_named(platform):
    with pytest.raises(ValueError, match=r"group\(s\) finance_typo .*its groups: .*kpis"):
        tick(platform, team_defs(["finance_typo", "kpis"]))


def test_a_materialization_whose_events_datazone_failed_is_posted_again(synced):
    """DataZone accepts the sensor's event, then fails it: the next tick finds the failure
    (ListLineageEvents) and posts that run again under new client tokens; once it is resolved,
    ticks post nothing."""
    platform = synced
    fail_after_accept(platform, 1)
    assert materialize([downstream.daily_revenue], instance=platform.instance).success
    _, cursor = tick(platform, downstream.defs)
    [failed] = [e for e in lineage_events(platform) if e["processingStatus"] == "FAILED"]

    result, cursor = tick(platform, downstream.defs, cursor)
    assert "posted the lineage of 1 materialization runs to DataZone (1 posted again" in (
        result.skip_message
    )
    runs = [
        summary
        for summary in summaries(lineage_events(platform))
        if summary["runId"] == failed["eventSummary"]["openLineageRunEventSummary"]["runId"]
    ]
    assert len(runs) == 2  # the failed event and its re-post, the same run

    result, _ = tick(platform, downstream.defs, cursor)
    assert "no new materialization" in result.skip_message


def test_the_demo_materializes_daily_revenue_once_without_a_click(synced):
    """The demo location's automation sensor asks for daily_revenue while it was never
    materialized, and not again after."""
    (requested,) = evaluate_automation_conditions(
        defs=downstream.defs, instance=synced.instance
    ).results
    assert requested.key == downstream.daily_revenue.key
    assert requested.true_subset.size == 1
    assert materialize([downstream.daily_revenue], instance=synced.instance).success
    again = evaluate_automation_conditions(defs=downstream.defs, instance=synced.instance)
    assert again.total_requested == 0


def revenue_defs(version: str, code_location: str = "team") -> Definitions:
    """The team's location with its revenue asset under the key ``team/revenue_<version>``."""

    @asset(key=["team", f"revenue_{version}"], deps=[downstream.SALES_ORDERS], group_name="team")
    def revenue() -> None:
        """Revenue per day, renamed by its team between versions."""

    return Definitions(
        assets=[revenue],
        sensors=[downstream_lineage_sensor(groups=["team"], code_location=code_location)],
        resources=build_resources(),
    )


def closings(platform) -> list[dict]:
    """The team's events of runs with no input: the closings of assets gone."""
    return [e for e in team_events(platform) if not e["inputs"]]


def below_sales_orders(capsys) -> str:
    assert dzlineage(["trace", "lakehouse.sales_orders", "--downstream", "--no-owners"]) == 0
    return capsys.readouterr().out


def test_a_renamed_asset_s_lineage_is_closed_and_only_the_new_name_is_below_the_table(
    synced, capsys
):
    """The team renames its asset: the tick that loads the new Definitions posts the new key's
    materialization and closes the old key's job (a run writing the old dataset from nothing),
    as the sync closes a deleted connector's hop; closing again replays."""
    platform = synced
    v1, v2 = revenue_defs("v1"), revenue_defs("v2")
    assert materialize(v1.assets, instance=platform.instance).success
    _, before_rename = tick(platform, v1)
    assert "team/revenue_v1" in below_sales_orders(capsys)

    assert materialize(v2.assets, instance=platform.instance).success
    result, cursor = tick(platform, v2, before_rename)
    assert "closed the lineage of 1 assets gone from the location (team/revenue_v1)" in (
        result.skip_message
    )
    below = below_sales_orders(capsys)
    assert "team/revenue_v2" in below and "revenue_v1" not in below
    (closing,) = closings(platform)
    validate_openlineage_event(json.dumps(closing))
    assert (closing["job"]["name"], closing["inputs"]) == ("team/revenue_v1", [])
    assert [d["name"] for d in closing["outputs"]] == ["team/revenue_v1"]

    # Closed once: the next tick has nothing to do; a tick retried from the cursor before the
    # rename (its cursor never saved) posts the same runs, which DataZone already holds.
    result, _ = tick(platform, v2, cursor)
    assert "no new materialization" in result.skip_message
    held = len(team_events(platform))
    tick(platform, v2, before_rename)
    assert len(team_events(platform)) == held
    assert "revenue_v1" not in below_sales_orders(capsys)

    # The rename reverted, nothing materialized since: v2 is closed, and v1 is shown again at
    # once (its latest materialization posted anew, newer than its closing).
    result, _ = tick(platform, v1, cursor)
    assert "(team/revenue_v2)" in result.skip_message
    below = below_sales_orders(capsys)
    assert "team/revenue_v1" in below and "revenue_v2" not in below


def test_a_closing_datazone_failed_is_posted_again(synced, capsys):
    platform = synced
    v1, v2 = revenue_defs("v1"), revenue_defs("v2")
    assert materialize(v1.assets, instance=platform.instance).success
    _, cursor = tick(platform, v1)
    fail_after_accept(platform, 1)
    _, cursor = tick(platform, v2, cursor)
    [failed] = [e for e in lineage_events(platform) if e["processingStatus"] == "FAILED"]
    assert "team/revenue_v1" in below_sales_orders(capsys)

    result, cursor = tick(platform, v2, cursor)
    assert "(1 posted again, their events FAILED in DataZone)" in result.skip_message
    assert "revenue_v1" not in below_sales_orders(capsys)
    run_id = failed["eventSummary"]["openLineageRunEventSummary"]["runId"]
    assert [e["run"]["runId"] for e in closings(platform)] == [run_id, run_id]
    result, _ = tick(platform, v2, cursor)
    assert "no new materialization" in result.skip_message


def test_a_removed_glue_table_asset_s_closing_keeps_its_table(synced, capsys):
    """daily_revenue writes a Glue table: its closing run writes that table from nothing (the
    cursor kept the table, since the removed asset's metadata is no longer there to read)."""
    platform = synced
    assert materialize([downstream.daily_revenue], instance=platform.instance).success
    _, cursor = tick(platform, downstream.defs)
    assert "lakehouse.daily_revenue" in below_sales_orders(capsys)

    # The demo's location, its Spark asset removed (another one in its place).
    result, _ = tick(platform, revenue_defs("v1", DOWNSTREAM_LOCATION), cursor)
    assert "(daily_revenue)" in result.skip_message
    (closing,) = closings(platform)
    assert (closing["job"]["name"], closing["inputs"]) == ("daily_revenue", [])
    daily_revenue = glue_arn(platform, "lakehouse", "daily_revenue")
    assert [f"{d['namespace']}/{d['name']}" for d in closing["outputs"]] == [daily_revenue]
    assert "daily_revenue" not in below_sales_orders(capsys)
