"""The spool file on its own: order, bounds, a retry's token, and what survives a reopen."""

from __future__ import annotations

from contextlib import closing

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dzlineage_dagster.relay.spool import Spool, SpoolFull


@settings(max_examples=10)
@given(tokens=st.lists(st.text("0123456789abcdef", min_size=1, max_size=4), max_size=30))
def test_events_come_out_in_arrival_order_once_per_token_and_survive_a_reopen(
    tmp_path_factory, tokens
):
    path = tmp_path_factory.mktemp("spool") / "spool.db"
    with closing(Spool(path, max_events=1000)) as spool:
        added = [token for token in tokens if spool.add(token, f"event {token}")]
        assert added == list(dict.fromkeys(tokens))  # a retried token is not queued twice
    with closing(Spool(path, max_events=1000)) as reopened:
        assert len(reopened) == len(added)
        waiting = reopened.oldest(limit=1000)
        assert [e.client_token for e in waiting] == added
        assert all(e.event_json == f"event {e.client_token}" for e in waiting)
        for event in waiting[:3]:
            reopened.delivered(event)
        assert [e.client_token for e in reopened.oldest(limit=1000)] == added[3:]


def test_a_full_spool_refuses_and_a_rejected_event_leaves_the_queue(tmp_path):
    with closing(Spool(tmp_path / "spool.db", max_events=2)) as spool:
        assert spool.add("a", "{}") and spool.add("b", "{}")
        with pytest.raises(SpoolFull, match="maximum of 2"):
            spool.add("c", "{}")
        first = spool.oldest()[0]
        spool.failed_attempt(first, "ThrottlingException")
        assert spool.oldest()[0].attempts == 1
        spool.reject(first, "ValidationException: bad")
        assert (len(spool), spool.rejected_count()) == (1, 1)
        assert spool.add("c", "{}")
