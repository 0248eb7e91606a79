from __future__ import annotations

from dzlineage_dagster.core.lineage.graph import LineageNode
from dzlineage_dagster.core.lineage.readback import (
    Landing,
    Mismatch,
    ProcessingWait,
    compare,
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


def test_processing_ends_with_success_or_failed():
    wait = ProcessingWait({"e1", "e2", "e3"})
    wait.update({"e1": "SUCCESS", "e2": "PROCESSING", "other": "SUCCESS"})
    assert not wait.done and wait.pending == {"e2", "e3"}
    wait.update({"e2": "FAILED", "e3": "SUCCESS"})
    assert wait.done and wait.failed == {"e2"}
