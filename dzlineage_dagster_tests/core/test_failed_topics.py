"""The record of the topics a sync failed: read back as written, within one parameter's value,
and anything it cannot hold or read makes the next sync trust no registry token. The registry
sensor's retry schedule: each failed topic retried after a wait that doubles, up to a cap."""

from __future__ import annotations

import itertools
import json

from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.catalog.registry_cursor import Backoff, FailedTopics, RetrySchedule
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


backoffs = st.builds(
    Backoff, st.integers(min_value=1, max_value=600), st.integers(min_value=1, max_value=20_000)
)


@given(
    backoffs,
    st.lists(
        st.tuples(
            st.sets(st.sampled_from("abcdef")),  # failed at this tick
            st.sets(st.sampled_from("abcdef")),  # busy (a run under way) at this tick
            st.integers(min_value=1, max_value=60_000),  # seconds since the last tick
        ),
        max_size=30,
    ),
)
def test_a_failed_topic_is_retried_exactly_when_its_doubling_wait_is_over(backoff, ticks):
    schedule = RetrySchedule({})
    now = 1_000_000.0
    seen: dict[str, tuple[int, float]] = {}  # topic -> (its retries, when last planned)
    keys: set[tuple[str, str]] = set()
    for failed, busy, elapsed in ticks:
        now += elapsed
        cursor = json.dumps({"retry": schedule.to_json()})
        due, schedule = RetrySchedule.from_text(cursor).plan(failed, busy, now, backoff)
        # Due: failed, not busy, seen failed by an earlier tick, and its wait over; no other.
        assert set(due) == {
            topic
            for topic in failed - busy
            if topic in seen and now - seen[topic][1] >= backoff.delay(seen[topic][0])
        }
        assert not keys & set(due.items()), "a topic's retry key was used before"
        keys |= set(due.items())
        for topic, (retries, _) in schedule.topics.items():
            if topic in due:
                assert retries == seen[topic][0] + 1
                seen[topic] = (retries, now)
            elif topic not in seen:
                seen[topic] = (retries, now)
        # A topic neither failed nor busy is forgotten: its next failure starts afresh.
        assert set(schedule.topics) <= failed | busy
        seen = {topic: seen[topic] for topic in schedule.topics}


@given(backoffs)
def test_the_waits_double_from_the_first_and_stop_at_the_longest(backoff):
    waits = [backoff.delay(n) for n in range(20)]
    assert waits[0] == min(backoff.first, backoff.longest)
    assert all(b == min(2 * a, backoff.longest) for a, b in itertools.pairwise(waits))
    assert waits[-1] == backoff.longest == backoff.delay(10**6)


def test_an_unreadable_retry_schedule_is_none():
    for text in (None, "", "not json", "[1]", '{"retry": {"a": 3}}', '{"retry": {"a": ["x", 1]}}'):
        assert RetrySchedule.from_text(text) == RetrySchedule({}), text
