"""The record of the topics a sync failed: read back as written, within one parameter's value,
and anything it cannot hold or read makes the next sync trust no registry token. The registry
sensor's retry schedule: each failed topic retried after a wait that doubles, up to a cap."""

from __future__ import annotations

import itertools
import json

from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.catalog.registry_cursor import (
    RETRY_FIRST_SECONDS,
    RETRY_MAX_SECONDS,
    FailedTopics,
    RetrySchedule,
    retry_delay,
)
from dzlineage_dagster.core.mapping.ssm_names import MAX_PARAMETER_VALUE_LENGTH

# Topic names as the registry allows them (schema names: letters, digits and . _ - $ #).
topic_names = st.text(alphabet=st.sampled_from("abcXYZ019._-$#"), min_size=1, max_size=255)


@given(st.sets(topic_names, max_size=60))
def test_the_failed_topics_read_back_as_written_or_as_overflowed(topics):
    stored = FailedTopics.of(topics, MAX_PARAMETER_VALUE_LENGTH)
    text = stored.to_text()
    assert len(text) <= MAX_PARAMETER_VALUE_LENGTH
    read = FailedTopics.from_text(text)
    assert read == stored
    if stored.overflowed:
        # Overflowed only when the list would not fit: never a silent loss of a topic.
        assert len(FailedTopics(frozenset(topics)).to_text()) > MAX_PARAMETER_VALUE_LENGTH
        assert read
    else:
        assert read.topics == topics
        assert bool(read) == bool(topics)


def test_no_record_is_no_failure_and_an_unreadable_one_trusts_nothing():
    assert not FailedTopics.from_text(None)
    for text in ("not json", '{"topics": ["a"]}', "[1, 2]", '"a"'):
        assert FailedTopics.from_text(text).overflowed, text


@given(
    st.lists(
        st.tuples(
            st.sets(st.sampled_from("abcdef")),  # failed at this tick
            st.sets(st.sampled_from("abcdef")),  # busy at this tick
            st.floats(min_value=1, max_value=3 * RETRY_MAX_SECONDS),  # seconds since the last
        ),
        max_size=30,
    )
)
def test_a_failed_topic_is_retried_only_after_a_wait_that_doubles_up_to_the_cap(ticks):
    schedule = RetrySchedule({})
    now = 1_000_000.0
    last_seen: dict[str, tuple[int, float]] = {}  # topic -> (its retries, when last planned)
    keys: set[tuple[str, str]] = set()
    for failed, busy, elapsed in ticks:
        now += elapsed
        cursor = json.dumps({"retry": schedule.to_json()})
        due, schedule = RetrySchedule.from_text(cursor).plan(failed, busy, now)
        assert set(due) <= failed - busy
        assert not keys & set(due.items()), "a topic's retry key was used before"
        keys |= set(due.items())
        for topic in due:
            retries, planned_at = last_seen.get(topic, (0, None))
            # Never the tick that first saw it failed; then not before the wait for its retries.
            assert planned_at is not None
            assert now - planned_at >= retry_delay(retries)
        for topic, (retries, _) in schedule.topics.items():
            if topic in due:
                assert retries == last_seen.get(topic, (0, 0))[0] + 1
                last_seen[topic] = (retries, now)
            elif topic not in last_seen:
                last_seen[topic] = (retries, now)
        # A topic neither failed nor busy is forgotten: its next failure starts afresh.
        assert set(schedule.topics) <= failed | busy
        for topic in set(last_seen) - set(schedule.topics):
            del last_seen[topic]


def test_the_waits_double_from_the_first_and_stop_at_the_cap():
    waits = [retry_delay(n) for n in range(12)]
    assert waits[0] == RETRY_FIRST_SECONDS
    assert all(b == min(2 * a, RETRY_MAX_SECONDS) for a, b in itertools.pairwise(waits))
    assert waits[-1] == RETRY_MAX_SECONDS == retry_delay(10**6)


def test_an_unreadable_retry_schedule_is_none():
    for text in (None, "", "not json", "[1]", '{"retry": {"a": 3}}', '{"retry": {"a": ["x", 1]}}'):
        assert RetrySchedule.from_text(text) == RetrySchedule({}), text
