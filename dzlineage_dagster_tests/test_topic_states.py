"""One word per state of a topic, said as a plan or as done, in every place that shows it."""

from __future__ import annotations

from typing import get_args, get_type_hints

from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.catalog.planning import ActionKind
from dzlineage_dagster.core.topic_states import (
    CREATE,
    NOT_CATALOGED,
    POST,
    RETIREMENT,
    REVISE,
    UNCHANGED,
    edges_state,
    no_edge_state,
)
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.stages.asset import AssetAction, AssetPlan
from dzlineage_dagster.sync.stages.retire import RetireAction


def test_the_plan_s_words_are_the_asset_plan_s_actions_and_the_sync_s_its_outcomes():
    assert {word.planned for word in (CREATE, REVISE, UNCHANGED)} == {k.value for k in ActionKind}
    assert {word.done for word in (CREATE, REVISE, UNCHANGED)} <= set(get_args(AssetAction))
    plans = get_args(get_type_hints(AssetPlan)["action"])
    assert set(plans) == {k.value for k in ActionKind} | {NOT_CATALOGED.planned}
    assert NOT_CATALOGED.planned == NOT_CATALOGED.done == "not-cataloged"


def test_every_deleted_schema_policy_has_its_words_and_the_retirement_says_them():
    policy = LineageSettings.model_fields["deleted_schema_policy"].annotation
    assert set(RETIREMENT) == set(get_args(policy))
    assert {word.done for word in RETIREMENT.values()} <= set(get_args(RetireAction))


def test_a_plan_and_its_sync_tell_the_edges_alike_but_for_the_state_word():
    sources, tables = ["shop.sales.orders"], ["lakehouse.sales_orders"]
    planned = edges_state(POST.said(done=False), sources, "shop.sales.orders", tables, "connector")
    done = edges_state(POST.said(done=True), sources, "shop.sales.orders", tables, "connector")
    assert (
        planned
        == "post: shop.sales.orders -> shop.sales.orders -> lakehouse.sales_orders (connector)"
    )
    assert done == "posted: " + planned.removeprefix("post: ")
    assert edges_state("unchanged", [], "t", [], "convention", ["closed [j]"]) == (
        "unchanged: no source -> t -> no table (convention; closed [j])"
    )


@given(st.text(min_size=1), st.lists(st.text(min_size=1), max_size=3))
def test_no_edge_always_leads_with_its_word_and_keeps_every_note(reason, notes):
    told = no_edge_state(reason, notes)
    assert told.startswith(f"no edge: {reason}")
    assert all(note in told for note in notes)
