"""The version sweep's slice: every topic checked within VERSION_SWEEP_TICKS ticks, at
ceil(N / VERSION_SWEEP_TICKS) topics a tick, whatever the registry does meanwhile."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dzlineage_dagster.core.catalog.discovery import (
    VERSION_SWEEP_TICKS,
    SensorCursor,
    UpdatedTimeBehaviour,
    behind_registry,
    clock_sweep,
    clock_sweep_slices,
    sweep_size,
    swept_to,
    version_sweep,
)

names = st.text(alphabet="abcdefgh._-", min_size=1, max_size=6)


@given(st.sets(names, min_size=1, max_size=400))
def test_a_pass_checks_every_topic_within_the_bound_at_a_bounded_cost(topics):
    size = -(-len(topics) // VERSION_SWEEP_TICKS)
    checked: set[str] = set()
    position = ""
    for _ in range(VERSION_SWEEP_TICKS):
        batch = version_sweep(list(topics), position)
        assert len(batch) == size
        checked.update(batch)
        position = batch[-1]
    assert checked == topics


@given(st.sets(names, min_size=2, max_size=200), st.data())
def test_topics_removed_meanwhile_never_make_a_staying_topic_wait_past_the_bound(initial, data):
    """The position is a name: removing topics (the one at the position among them) between
    ticks never makes the sweep skip a topic that stays."""
    topics = set(initial)
    position = ""
    checked: set[str] = set()
    for _ in range(VERSION_SWEEP_TICKS):
        if len(topics) > 1 and data.draw(st.booleans()):
            topics.discard(data.draw(st.sampled_from(sorted(topics))))
        batch = version_sweep(list(topics), position)
        checked.update(batch)
        position = batch[-1]
    assert topics - checked == set()


@given(st.sets(names, min_size=1, max_size=100), names)
def test_a_topic_added_behind_the_position_waits_at_most_one_pass(topics, added):
    position = version_sweep(list(topics), "")[-1]
    later = [*topics, added]
    checked: set[str] = set()
    for _ in range(VERSION_SWEEP_TICKS):
        batch = version_sweep(later, position)
        checked.update(batch)
        position = batch[-1]
    assert added in checked


def test_an_empty_registry_sweeps_nothing():
    assert version_sweep([], "") == []


def test_a_topic_is_behind_when_its_latest_version_differs_either_way():
    latest = {"new": 3, "deleted": 1, "same": 2, "never-synced": 5}
    synced = {"new": 2, "deleted": 2, "same": 2}
    assert behind_registry(latest, synced) == ["deleted", "new"]


def test_the_sensor_cursor_keeps_the_sweep_position():
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    cursor = SensorCursor.after({}, now, "shop.sales.orders").to_json()
    assert swept_to(cursor) == "shop.sales.orders"
    assert swept_to(None) == ""
    assert swept_to('{"horizon": "2026-01-01T00:00:00+00:00", "recent": {}}') == ""


def test_the_slice_is_constant_until_the_registry_shows_updated_time_frozen():
    from dzlineage_dagster.core.catalog.discovery import (
        MOVING_SWEEP_SIZE,
        UNKNOWN_SWEEP_SIZE,
        UpdatedTimeBehaviour,
        sweep_size,
    )

    for topics in (1_000, 10_000, 100_000):
        assert sweep_size(topics, UpdatedTimeBehaviour.UNKNOWN) == UNKNOWN_SWEEP_SIZE
        assert sweep_size(topics, UpdatedTimeBehaviour.MOVES) == MOVING_SWEEP_SIZE
        assert sweep_size(topics, UpdatedTimeBehaviour.FROZEN) == -(-topics // VERSION_SWEEP_TICKS)
    assert sweep_size(3, UpdatedTimeBehaviour.UNKNOWN) == 3


def test_a_schema_of_two_versions_shows_what_updated_time_does():
    from dzlineage_dagster.core.catalog.discovery import UpdatedTimeBehaviour, updated_time_evidence

    created = datetime(2026, 1, 1, 12, tzinfo=timezone.utc)
    later = datetime(2026, 1, 2, 12, tzinfo=timezone.utc)
    assert updated_time_evidence(later, 2, later) is UpdatedTimeBehaviour.MOVES
    assert updated_time_evidence(created, 2, later) is UpdatedTimeBehaviour.FROZEN
    assert updated_time_evidence(created, 1, created) is UpdatedTimeBehaviour.UNKNOWN


def test_the_registry_cursor_names_only_a_changed_bucket_and_sees_removals():
    from dataclasses import replace

    from dzlineage_dagster.core.catalog.discovery import RegistryTopic
    from dzlineage_dagster.core.catalog.registry_cursor import RegistryCursor, topic_bucket

    topics = {
        f"t{i}": RegistryTopic(f"t{i}", f"t{i}", f"arn:s/t{i}", "2026-01-01", None, "2026-01-01")
        for i in range(500)
    }
    before = RegistryCursor.from_text(RegistryCursor.of(topics, "ctx").to_text())
    changed = {**topics, "t7": replace(topics["t7"], updated_time="2026-01-02")}
    dirty = before.changed_topics(RegistryCursor.of(changed, "ctx"), list(changed))
    assert "t7" in dirty
    assert {topic_bucket(t) for t in dirty} == {topic_bucket("t7")}
    assert before.changed_topics(RegistryCursor.of(topics, "other"), list(topics)) is None
    added = {
        **topics,
        "new": RegistryTopic("new", "new", "arn:s/new", "2026-02-01", None, "2026-02-01"),
    }
    assert before.nothing_removed(added)
    removed = dict(topics)
    del removed["t9"]
    assert not before.nothing_removed(removed)


# --- dzlineage sync's sweep: the slice of the run's minute, no stored position ---------------

behaviours = st.sampled_from(list(UpdatedTimeBehaviour))


@given(
    st.sets(names, min_size=1, max_size=400),
    behaviours,
    st.integers(min_value=0, max_value=10**8),
    st.integers(min_value=1, max_value=7 * 24 * 60),
)
def test_syncs_at_a_steady_cadence_check_every_topic_within_the_slices_count(
    topics, behaviour, first_minute, cadence
):
    slices = clock_sweep_slices(len(topics), behaviour)
    assume(cadence % slices != 0 or slices == 1)
    checked: set[str] = set()
    for run in range(slices):
        batch = clock_sweep(list(topics), first_minute + run * cadence, behaviour)
        checked.update(batch)
    assert checked == topics


@pytest.mark.parametrize("cadence", [1, 2, 5, 10, 15, 30, 60, 120, 360, 720, 1440, 10080])
@pytest.mark.parametrize("topics", [2, 21, 100, 1_000, 10_000])
def test_common_cron_cadences_are_never_a_multiple_of_the_slices(cadence, topics):
    for behaviour in UpdatedTimeBehaviour:
        slices = clock_sweep_slices(topics, behaviour)
        assert slices == 1 or cadence % slices != 0, (topics, behaviour, slices)


@given(st.sets(names, min_size=1, max_size=400), behaviours, st.integers(min_value=0))
def test_a_slice_costs_the_same_whatever_the_minute(topics, behaviour, minute):
    assert len(clock_sweep(list(topics), minute, behaviour)) == sweep_size(len(topics), behaviour)


def test_a_frozen_registry_of_ten_thousand_is_checked_within_sixty_one_runs():
    assert clock_sweep_slices(10_000, UpdatedTimeBehaviour.FROZEN) == 61
    assert clock_sweep([], 5) == []
