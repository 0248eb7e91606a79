"""Which failed lineage runs are still failed: a failure is resolved only by a later event of
the same run and type that did not fail."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.lineage.health import LineageEventStatus, unresolved_failures

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def event(event_id: str, run_id: str, status: str, minutes: int, event_type: str = "COMPLETE"):
    return LineageEventStatus(event_id, run_id, event_type, status, T0 + timedelta(minutes=minutes))


def test_a_failure_without_a_later_success_stays_open():
    failed = [event("e1", "run-a", "FAILED", 0), event("e2", "run-b", "FAILED", 1)]
    later = [*failed, event("e3", "run-b", "SUCCESS", 5)]
    assert unresolved_failures(failed, later) == {"run-a": ("e1",)}


def test_an_earlier_success_or_another_event_type_does_not_resolve_a_failure():
    failed = [event("e2", "run-a", "FAILED", 5)]
    later = [
        event("e1", "run-a", "SUCCESS", 1),
        event("e3", "run-a", "SUCCESS", 9, event_type="START"),
        event("e4", "run-a", "FAILED", 10),
    ]
    assert unresolved_failures(failed, later) == {"run-a": ("e2",)}


def test_a_later_event_still_processing_counts_as_the_re_post():
    failed = [event("e1", "run-a", "FAILED", 0)]
    assert unresolved_failures(failed, [event("e2", "run-a", "PROCESSING", 3)]) == {}


def test_items_of_list_lineage_events_are_read_and_non_run_events_skipped():
    item = {
        "id": "abc",
        "processingStatus": "FAILED",
        "eventTime": T0,
        "createdAt": T0 + timedelta(seconds=1),
        "eventSummary": {"openLineageRunEventSummary": {"runId": "r", "eventType": "START"}},
    }
    assert LineageEventStatus.from_item(item) == LineageEventStatus(
        "abc", "r", "START", "FAILED", T0 + timedelta(seconds=1)
    )
    assert LineageEventStatus.from_item({**item, "eventSummary": {}}) is None


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["r1", "r2", "r3"]),
            st.sampled_from(["FAILED", "SUCCESS", "REQUESTED"]),
            st.integers(0, 50),
        ),
        max_size=30,
    )
)
def test_open_failures_are_exactly_those_no_later_non_failure_covers(rows):
    events = [event(f"e{i}", run, status, minute) for i, (run, status, minute) in enumerate(rows)]
    failed = [e for e in events if e.processing_status == "FAILED"]
    result = unresolved_failures(failed, events)
    for failure in failed:
        covered = any(
            e.run_id == failure.run_id
            and e.processing_status != "FAILED"
            and e.created_at > failure.created_at
            for e in events
        )
        assert (failure.event_id in result.get(failure.run_id, ())) is not covered
    assert all(ids for ids in result.values())
