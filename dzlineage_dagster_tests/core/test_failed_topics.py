"""The record of the topics a sync failed: read back as written, within one parameter's value,
and anything it cannot hold or read makes the next sync trust no registry token."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.catalog.registry_cursor import FailedTopics
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
