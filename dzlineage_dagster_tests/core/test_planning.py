from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import botocore.session
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dzlineage_dagster.core.planning import (
    MAX_ASSET_NAME_LENGTH,
    ActionKind,
    DesiredTopicState,
    PlannedAction,
    asset_action,
    datazone_asset_name,
    plan_sync,
)
from dzlineage_dagster.core.ssm_names import MappingRecord


def arn(schema: str) -> str:
    return f"arn:aws:glue:us-east-1:123456789012:schema/r/{schema}"


def state(
    topic: str, version: int = 1, fingerprint: str = "f1", schema: str = ""
) -> DesiredTopicState:
    return DesiredTopicState(topic, arn(schema or f"{topic}-value"), version, fingerprint)


def record_of(desired: DesiredTopicState, asset_id: str = "a1", **changes) -> MappingRecord:
    record = desired.to_record(asset_id=asset_id, asset_revision="1", asset_type_revision="1")
    return dataclasses.replace(record, **changes)


def by_arn(*records: MappingRecord) -> dict[str, MappingRecord]:
    return {record.schema_arn: record for record in records}


def kinds(actions: list[PlannedAction]) -> list[tuple[str, ActionKind]]:
    return [(action.topic, action.kind) for action in actions]


def test_create_revise_unchanged() -> None:
    orders, users, items = (
        state("orders"),
        state("users", version=2),
        state("items", fingerprint="f2"),
    )
    stored = by_arn(record_of(state("users")), record_of(state("items")))
    actions = plan_sync([orders, users, items], stored, deleted_policy="keep")
    assert kinds(actions) == [
        ("orders", ActionKind.CREATE),
        ("users", ActionKind.REVISE),
        ("items", ActionKind.REVISE),
    ]
    assert actions[0].stored is None
    assert actions[1].stored == stored[users.schema_arn]
    assert kinds(plan_sync([users], by_arn(record_of(users)), deleted_policy="keep")) == [
        ("users", ActionKind.UNCHANGED)
    ]


@pytest.mark.parametrize(
    "change",
    [
        {"topic": "other"},
        {"schema_arn": arn("other")},
        {"schema_version": 2},
        {"content_fingerprint": "f2"},
    ],
)
def test_asset_action_revises_when_any_compared_part_differs(change: dict) -> None:
    desired = state("orders")
    stored = record_of(desired)
    assert asset_action(desired, None) is ActionKind.CREATE
    assert asset_action(desired, stored) is ActionKind.UNCHANGED
    assert asset_action(desired, dataclasses.replace(stored, asset_revision="9")) is (
        ActionKind.UNCHANGED
    )
    assert asset_action(desired, dataclasses.replace(stored, **change)) is ActionKind.REVISE


@pytest.mark.parametrize(
    ("policy", "kind"), [("keep", ActionKind.DEPRECATE), ("delete", ActionKind.DELETE)]
)
def test_mappings_whose_schema_is_gone_follow_the_policy(policy: str, kind: ActionKind) -> None:
    gone = record_of(state("gone"))
    actions = plan_sync([], by_arn(gone), deleted_policy=policy)  # type: ignore[arg-type]
    assert actions == [PlannedAction("gone", gone.schema_arn, kind, gone)]


def test_a_topic_keeps_its_asset_when_another_schema_now_describes_it() -> None:
    old = record_of(state("orders", schema="orders"), asset_id="kept")
    actions = plan_sync(
        [state("orders", schema="orders-value")], by_arn(old), deleted_policy="delete"
    )
    assert actions == [PlannedAction("orders", arn("orders-value"), ActionKind.REVISE, old)]


def test_a_schema_arn_match_wins_over_a_topic_match() -> None:
    # "orders" is now described by "orders-value"; "orders" (the schema) describes "legacy".
    own = record_of(state("orders", schema="orders-value"), asset_id="a1")
    other = record_of(state("orders", schema="orders"), asset_id="a2")
    desired = [state("orders", schema="orders-value"), state("legacy", schema="orders")]
    actions = plan_sync(desired, by_arn(own, other), deleted_policy="delete")
    assert [(a.topic, a.kind, a.stored) for a in actions] == [
        ("orders", ActionKind.UNCHANGED, own),
        ("legacy", ActionKind.REVISE, other),
    ]


@pytest.mark.parametrize(
    ("desired", "stored", "reason"),
    [
        ([state("a", schema="x"), state("a", schema="y")], {}, "repeat topic \\['a'\\]"),
        ([state("a", schema="x"), state("b", schema="x")], {}, "repeat schema_arn"),
        (
            [],
            {"wrong-key": record_of(state("a"))},
            "other than their schema ARN: \\['wrong-key'\\]",
        ),
    ],
)
def test_inconsistent_inputs_are_refused(
    desired: Sequence[DesiredTopicState], stored: Mapping[str, MappingRecord], reason: str
) -> None:
    with pytest.raises(ValueError, match=reason):
        plan_sync(desired, stored, deleted_policy="keep")


TOPICS = st.sampled_from(["orders", "users", "items", "carts", "ledger"])
SCHEMAS = st.sampled_from(["orders", "orders-value", "users-value", "items", "carts-value", "x"])
STATES = st.builds(
    DesiredTopicState,
    topic=TOPICS,
    schema_arn=SCHEMAS.map(arn),
    schema_version=st.integers(1, 3),
    content_fingerprint=st.sampled_from(["f1", "f2"]),
)
DESIRED = st.lists(STATES, max_size=5, unique_by=(lambda s: s.topic, lambda s: s.schema_arn))
STORED = st.lists(
    st.builds(
        lambda desired, asset_id: record_of(desired, asset_id),
        STATES,
        st.sampled_from(["a1", "a2", "a3"]),
    ),
    max_size=5,
    unique_by=lambda record: record.schema_arn,
).map(lambda records: by_arn(*records))
POLICIES = st.sampled_from(["keep", "delete"])


def apply(
    actions: list[PlannedAction],
    desired: Sequence[DesiredTopicState],
    stored: Mapping[str, MappingRecord],
) -> dict[str, MappingRecord]:
    """What the sync leaves in the mapping store after carrying out ``actions``."""
    after = dict(stored)
    states = {state.topic: state for state in desired}
    for action in actions:
        if action.kind in (ActionKind.CREATE, ActionKind.REVISE):
            if action.stored is not None:
                del after[action.stored.schema_arn]
            asset_id = action.stored.asset_id if action.stored else f"new-{action.topic}"
            after[action.schema_arn] = states[action.topic].to_record(
                asset_id=asset_id, asset_revision="2", asset_type_revision="1"
            )
        elif action.kind in (ActionKind.DELETE, ActionKind.DEPRECATE):
            del after[action.schema_arn]
    return after


@settings(max_examples=200, deadline=None)
@given(DESIRED, STORED, POLICIES)
def test_the_plan_is_total(desired, stored, policy) -> None:
    actions = plan_sync(desired, stored, deleted_policy=policy)
    assert [action.topic for action in actions[: len(desired)]] == [s.topic for s in desired]
    planned_mappings = [action.stored for action in actions if action.stored is not None]
    assert sorted(r.schema_arn for r in planned_mappings) == sorted(stored)
    gone = ActionKind.DELETE if policy == "delete" else ActionKind.DEPRECATE
    for action in actions[len(desired) :]:
        assert action.stored is not None and action.kind is gone


@settings(max_examples=200, deadline=None)
@given(DESIRED, STORED, POLICIES)
def test_applying_a_plan_then_replanning_changes_nothing(desired, stored, policy) -> None:
    after = apply(plan_sync(desired, stored, deleted_policy=policy), desired, stored)
    replanned = plan_sync(desired, after, deleted_policy=policy)
    assert [(action.topic, action.kind) for action in replanned] == [
        (s.topic, ActionKind.UNCHANGED) for s in desired
    ]


@settings(max_examples=200, deadline=None)
@given(DESIRED, STORED, POLICIES)
def test_no_two_actions_touch_the_same_mapping_key(desired, stored, policy) -> None:
    touched = [
        {action.schema_arn} | ({action.stored.schema_arn} if action.stored else set())
        for action in plan_sync(desired, stored, deleted_policy=policy)
    ]
    assert sum(map(len, touched)) == len(set().union(*touched))


def test_asset_name_limit_is_datazones() -> None:
    shape = botocore.session.get_session().get_service_model("datazone").shape_for("AssetName")
    assert (shape.metadata["min"], shape.metadata["max"]) == (1, MAX_ASSET_NAME_LENGTH)
    assert "pattern" not in shape.metadata


def test_asset_name_is_cluster_dot_topic() -> None:
    assert (
        datazone_asset_name("demo-cluster", "cdc.public.orders") == "demo-cluster.cdc.public.orders"
    )
    with pytest.raises(ValueError, match="cluster name and a topic"):
        datazone_asset_name("", "t")


KAFKA_TOPICS = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
    min_size=1,
    max_size=249,
)
CLUSTERS = st.from_regex(r"\A[0-9A-Za-z][0-9A-Za-z\-]{0,63}\Z")


@settings(max_examples=200, deadline=None)
@given(CLUSTERS, KAFKA_TOPICS, KAFKA_TOPICS)
def test_asset_names_fit_and_stay_distinct(cluster: str, first: str, second: str) -> None:
    names = datazone_asset_name(cluster, first), datazone_asset_name(cluster, second)
    assert all(1 <= len(name) <= MAX_ASSET_NAME_LENGTH for name in names)
    assert (names[0] == names[1]) == (first == second)
    assert datazone_asset_name(cluster, first) == names[0]


def test_long_names_are_shortened_with_a_hash_and_keep_their_start() -> None:
    name = datazone_asset_name("c", "t" * 300)
    assert len(name) == MAX_ASSET_NAME_LENGTH
    assert name.startswith("c.ttt") and name[-13] == "~"
    assert datazone_asset_name("c", "t" * 299) != name
    assert datazone_asset_name("c", "t" * 254) == "c." + "t" * 254
