"""Partition keys that name their scope: every key splits back into the scope and topic it
was made of, whatever the topic's name."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.scopes import (
    SCOPE_NAME,
    check_scope_name,
    keys_by_scope,
    partition_key,
    split_partition_key,
)

#: Kafka's topic characters and the Glue Schema Registry's schema name characters.
topics = st.text(alphabet="abcXYZ019._-$#", min_size=1, max_size=60)
scopes = st.from_regex(SCOPE_NAME, fullmatch=True)


@given(st.one_of(st.none(), scopes), topics)
def test_a_partition_key_splits_into_its_scope_and_topic(scope, topic):
    assert split_partition_key(partition_key(scope, topic)) == (scope, topic)


@given(st.lists(st.tuples(st.one_of(st.none(), scopes), topics), max_size=20))
def test_keys_group_by_scope_in_their_order(pairs):
    grouped = keys_by_scope(partition_key(scope, topic) for scope, topic in pairs)
    for scope in {scope for scope, _ in pairs}:
        assert grouped[scope] == [topic for s, topic in pairs if s == scope]


@pytest.mark.parametrize("name", ["", "Orders", "1eu", "eu-west", "a" * 41, "eu/west", None])
def test_a_scope_name_outside_dagster_names_is_refused_with_the_rule(name):
    with pytest.raises(ValueError, match="1-40 of a-z, 0-9 and _"):
        check_scope_name(name)
