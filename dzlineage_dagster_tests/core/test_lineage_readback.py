from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.lineage.graph import LineageNode
from dzlineage_dagster.core.lineage.readback import (
    POLL_BATCH_TOPICS,
    READ_ONE_BY_ONE_UP_TO,
    Landing,
    Mismatch,
    TopicsProcessing,
    compare,
    statuses_one_by_one,
    time_to_poll,
)

TOPIC = "kafka://b-1:9098/shop.sales.orders"
ARN = "arn:aws:glue:us-east-1:123456789012:table/lakehouse/sales_orders"
BESIDE = "arn:aws:glue:us-east-1:123456789012/table/lakehouse/sales_orders"
LANDING = Landing("shop.sales.orders", TOPIC, (ARN,), "asset1")


def reader(*nodes: LineageNode):
    """A node reader over ``nodes`` (by id or sourceIdentifier) that records what it read."""
    known = {key: n for n in nodes for key in (n.id, n.source_identifier)}
    reads: list[str] = []

    def read(identifier: str) -> LineageNode | None:
        reads.append(identifier)
        return known.get(identifier)

    return read, reads


def landed() -> tuple[LineageNode, ...]:
    return (
        LineageNode("t", TOPIC, downstream=("run",)),
        LineageNode("run", "kafka-connect.sink/shop.sales.orders/r", ("t",), ("g",)),
        LineageNode("g", ARN, upstream=("run",)),
        LineageNode("a", "amazon.datazone.asset/asset1", upstream=("t",)),
    )


def test_a_landed_topic_has_no_mismatch_and_costs_three_reads():
    read, reads = reader(*landed())
    assert compare(LANDING, read) == []
    assert reads == [TOPIC, ARN, "amazon.datazone.asset/asset1"]


def test_a_table_filed_beside_its_arn_names_the_arn_and_the_node_found():
    topic, run, _, asset = landed()
    read, _ = reader(topic, run, LineageNode("g", BESIDE, ("run",)), asset)
    (mismatch,) = compare(LANDING, read)
    assert mismatch == Mismatch(
        "shop.sales.orders",
        f"the Glue table's node {ARN} with the topic {TOPIC} upstream",
        f"no node by that ARN; the topic's runs feed {BESIDE}",
    )


def test_a_table_node_not_fed_by_the_topic_and_an_unlinked_asset_are_mismatches():
    topic, run, _, _ = landed()
    stale = LineageNode("g", ARN, upstream=("old-run",))
    unlinked = LineageNode("a", "amazon.datazone.asset/asset1", upstream=())
    read, _ = reader(topic, run, stale, unlinked)
    table, asset = compare(LANDING, read)
    assert table.found.startswith("node g not fed by the topic")
    assert asset.expected == f"asset asset1's node linked to the topic's node {TOPIC} (t)"
    assert asset.found == "upstream of it: nothing"


def test_a_missing_topic_node_is_one_mismatch():
    read, reads = reader()
    assert compare(LANDING, read) == [
        Mismatch("shop.sales.orders", f"the topic's lineage node {TOPIC}", "no such node")
    ]
    assert reads == [TOPIC]


T0 = datetime(2026, 12, 7, tzinfo=timezone.utc)


def test_a_topic_is_processed_once_every_one_of_its_events_ended():
    processing = TopicsProcessing()
    processing.add("a", ("a1", "a2"), T0)
    processing.add("b", ("b1", "b2"), T0 + timedelta(seconds=1))
    processing.add("c", ("c1",), T0 + timedelta(seconds=2))
    assert processing.update({"a1": "SUCCESS", "b1": "PROCESSING", "other": "SUCCESS"}) == []
    assert processing.pending == {"a2", "b1", "b2", "c1"}
    assert processing.update({"c1": "SUCCESS", "a2": "SUCCESS", "b1": "REQUESTED"}) == ["c", "a"]
    assert processing.earliest == T0 + timedelta(seconds=1)
    assert len(processing) == 1


def test_a_topic_with_a_failed_event_is_failed_not_processed_even_if_its_last_succeeds():
    processing = TopicsProcessing()
    processing.add("a", ("a1", "a2"), T0)
    assert processing.update({"a1": "FAILED"}) == []
    assert processing.failed == []
    assert processing.update({"a2": "SUCCESS", "a1": "SUCCESS"}) == []
    assert processing.failed == ["a"]
    assert not processing and processing.earliest is None


def test_a_topic_without_events_or_awaited_twice_is_refused_by_name():
    processing = TopicsProcessing()
    with pytest.raises(ValueError, match=r"^a: "):
        processing.add("a", (), T0)
    processing.add("a", ("a1",), T0)
    with pytest.raises(ValueError, match=r"^a: "):
        processing.add("a", ("a2",), T0)


@given(
    st.dictionaries(
        st.text("abc", min_size=1, max_size=3),
        st.lists(st.sampled_from(["REQUESTED", "PROCESSING", "SUCCESS", "FAILED"]), min_size=1),
    ),
    st.randoms(use_true_random=False),
)
def test_every_topic_ends_once_processed_or_failed_whatever_order_the_statuses_come_in(
    topics, random
):
    processing = TopicsProcessing()
    statuses = {}
    for topic, events in topics.items():
        ids = [f"{topic}/{i}" for i in range(len(events))]
        processing.add(topic, ids, T0)
        statuses.update(zip(ids, events, strict=True))
    ended: list[str] = []
    items = list(statuses.items())
    random.shuffle(items)
    for start in range(0, len(items), 3):
        ended += processing.update(dict(items[start : start + 3]))
    done = {t for t, events in topics.items() if all(e in ("SUCCESS", "FAILED") for e in events)}
    failed = {t for t in done if "FAILED" in topics[t]}
    assert set(ended) == done - failed and len(ended) == len(set(ended))
    assert set(processing.failed) == failed
    assert len(processing) == len(topics) - len(done)
    assert processing.pending == {
        i for i, status in statuses.items() if status not in ("SUCCESS", "FAILED")
    }


def poll(**given) -> bool:
    situation = dict(
        unpolled=0, waiting=0, reading=0, readers=4, since_poll=0.0, poll_seconds=2.0,
        sync_done=False,
    )  # fmt: skip
    return time_to_poll(**{**situation, **given})


def test_during_the_sync_a_status_read_waits_for_a_batch_and_for_readers_running_low():
    batch = POLL_BATCH_TOPICS
    assert not poll(unpolled=batch - 1, waiting=batch - 1, since_poll=60)
    assert poll(unpolled=batch, waiting=batch)
    # The readers have enough to read: the topics gather into a larger batch.
    assert not poll(unpolled=batch * 10, waiting=batch * 10, reading=4)
    assert poll(unpolled=batch * 10, waiting=batch * 10, reading=3)
    # Topics read before and still processing are read again, at most every poll_seconds.
    assert not poll(waiting=3, since_poll=1.9)
    assert poll(waiting=3, since_poll=2.0)
    assert not poll(since_poll=60)


def test_once_the_sync_is_done_what_is_left_is_read_at_once():
    assert poll(unpolled=1, waiting=1, reading=100, sync_done=True)
    assert not poll(waiting=1, reading=100, since_poll=1, sync_done=True)
    assert poll(waiting=1, reading=100, since_poll=2, sync_done=True)
    assert not poll(sync_done=True, since_poll=60)


def test_statuses_are_read_one_by_one_when_that_takes_no_more_calls_than_the_listing():
    # A few always one by one, however few events the listing would hold.
    assert statuses_one_by_one(READ_ONE_BY_ONE_UP_TO, 0, page_size=50)
    assert not statuses_one_by_one(READ_ONE_BY_ONE_UP_TO + 1, 0, page_size=50)
    # 50 pending among the 2,000 events a listing would page through: its 40 pages are fewer.
    assert not statuses_one_by_one(50, 2_000, page_size=50)
    assert statuses_one_by_one(40, 2_000, page_size=50)
    assert statuses_one_by_one(41, 2_001, page_size=50)
