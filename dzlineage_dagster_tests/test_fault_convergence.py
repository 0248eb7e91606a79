"""Throttled writes of every kind, reruns until the catalog converges, and not one extra event.

Each write the sync makes (CreateAsset, CreateAssetRevision, PutParameter, the COMPLETE event of
a topic's source hop and that of its sink hop) is throttled at random with no botocore retry, so every failure reaches
the product; the seeds are fixed and chosen so that each kind fails at least once (asserted from
the sandbox's call log, not assumed). Reruns go on until a run succeeds, within a bound, and then
DataZone must hold every hop with exactly one COMPLETE per schema version.
"""

from __future__ import annotations

from collections import Counter

import pytest

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.sandbox.server.faults import CallRecord, FaultRule
from dzlineage_dagster_tests.platform import fresh_platform

RATE = 0.2
#: Runs per phase of `dzlineage sync` (DZLINEAGE_MAX_ATTEMPTS reaches its clients at run time).
MAX_RUNS = 6
#: The seeds of each phase's runs, found by trying: with them every write kind fails somewhere.
CREATE_SEEDS = (25, 26, 27, 28, 29, 30)
REVISE_SEEDS = (31, 32, 33, 34, 35, 36)
THROTTLED_WRITES = [
    ("datazone", "CreateAsset"),
    ("datazone", "CreateAssetRevision"),
    ("datazone", "PostLineageEvent"),
    ("ssm", "PutParameter"),
]
#: The demo platform's table topics and the Iceberg tables its sinks write them to.
EDGES = {
    "shop.archive.orders": "lakehouse/orders_history",
    "shop.inventory.customers": "lakehouse/inventory_customers",
    "shop.inventory.products": "lakehouse/inventory_products",
    "shop.inventory.stock_levels": "lakehouse/inventory_stock_levels",
    "shop.sales.order_lines": "lakehouse/sales_order_lines",
    "shop.sales.orders": "lakehouse/sales_orders",
    "shop.sales.payments": "lakehouse/sales_payments",
}

#: The source tables Debezium captures into each topic: its own table, but the archive topic
#: merges the shards (a ToLogicalTopicRouter).
SOURCES = {
    topic: (
        {"shop.sales.orders_archive_2025", "shop.sales.orders_archive_2026"}
        if topic == "shop.archive.orders"
        else {topic}
    )
    for topic in EDGES
}
#: Every hop as (input names, output names): the source hop into each topic, the sink hop out.
HOPS = {(frozenset(SOURCES[t]), frozenset({t})) for t in EDGES} | {
    (frozenset({t}), frozenset({table})) for t, table in EDGES.items()
}


@pytest.fixture
def platform(sandbox, monkeypatch):
    monkeypatch.setenv("DZLINEAGE_MAX_ATTEMPTS", "1")
    # One topic at a time: each write kind's seeded faults then hit the same calls on every
    # machine (with threads, which topic's post comes n-th depends on the scheduler, and a
    # loaded machine once drew no sink hop among the throttled posts).
    monkeypatch.setenv("DZLINEAGE_CONCURRENCY", "1")
    platform = fresh_platform(sandbox, monkeypatch)
    yield platform
    sandbox.control.clear_faults()


def throttle_writes(seed: int) -> list[FaultRule]:
    return [
        FaultRule(service=service, operation=operation, rate=RATE, seed=seed * 10 + index)
        for index, (service, operation) in enumerate(THROTTLED_WRITES)
    ]


def sync_until_success(platform, seeds: tuple[int, ...]) -> list[list[CallRecord]]:
    """The call log of each run, throttled by its seed, up to the first successful run."""
    logs = []
    for seed in seeds[:MAX_RUNS]:
        platform.control.set_faults(*throttle_writes(seed))
        platform.control.clear_calls()
        try:
            succeeded = dzlineage(["sync"]) == 0
        finally:
            platform.control.clear_faults()
        logs.append(platform.control.calls())
        if succeeded:
            return logs
    raise AssertionError(f"no success in {len(logs)} runs")


def write_kinds(log: list[CallRecord]) -> list[tuple[str, CallRecord]]:
    """Each write call of one run with its kind; lineage posts split into source and sink hop.

    A topic posts its source hop and then, at once, its sink hop (nothing in between), and a
    failed post ends the topic: so a post right after a successful source hop is a sink hop.
    """
    kinds = []
    previous_kind = None
    for record in log:
        kind = record.operation
        if kind == "PostLineageEvent":
            kind = "sink hop" if previous_kind == "source hop" else "source hop"
        if (record.service, record.operation) in THROTTLED_WRITES:
            kinds.append((kind, record))
        previous_kind = kind if not record.injected else None
    return kinds


def events_per_hop(platform) -> dict[tuple[frozenset, frozenset], Counter[tuple[str, str]]]:
    """(input names, output names) -> (runId, eventType) -> events DataZone holds."""
    datazone = platform.client("datazone")
    pages = datazone.get_paginator("list_lineage_events").paginate(
        domainIdentifier=platform.settings.domain_id
    )
    found: dict[tuple[frozenset, frozenset], Counter[tuple[str, str]]] = {}
    for page in pages:
        for item in page["items"]:
            summary = item["eventSummary"]["openLineageRunEventSummary"]
            hop = (
                frozenset(source["name"] for source in summary["inputs"]),
                frozenset(target["name"] for target in summary["outputs"]),
            )
            found.setdefault(hop, Counter())[(summary["runId"], summary["eventType"])] += 1
    return found


def assert_every_hop_has_one_complete_per_version(platform, versions: int) -> None:
    hops = events_per_hop(platform)
    assert set(hops) == HOPS
    for hop, events in hops.items():
        run_ids = {run_id for run_id, _ in events}
        assert len(run_ids) == versions, (hop, events)
        assert events == Counter({(run_id, "COMPLETE"): 1 for run_id in run_ids}), (hop, events)


def assert_one_asset_per_schema(platform) -> list[dict]:
    """The topic assets DataZone lists (Search items), one for each table topic's schema."""
    assets = platform.client("datazone").search(
        domainIdentifier=platform.settings.domain_id,
        searchScope="ASSET",
        owningProjectIdentifier=platform.settings.project_id,
        maxResults=50,
    )["items"]
    by_schema = Counter(item["assetItem"]["externalIdentifier"] for item in assets)
    assert by_schema == Counter({platform.schema_arn(topic): 1 for topic in EDGES})
    return assets


def test_throttled_writes_of_every_kind_converge_without_a_duplicate(platform):
    created = sync_until_success(platform, CREATE_SEEDS)
    assert_every_hop_has_one_complete_per_version(platform, versions=1)

    for topic in EDGES:
        platform.register_new_version(topic, "added_under_faults")
    revised = sync_until_success(platform, REVISE_SEEDS)
    assert_every_hop_has_one_complete_per_version(platform, versions=2)

    failed = Counter(
        kind for log in created + revised for kind, r in write_kinds(log) if r.injected
    )
    wanted = {"CreateAsset", "CreateAssetRevision", "PutParameter", "source hop", "sink hop"}
    assert wanted <= set(failed), failed
    assert len(created) > 1 and len(revised) > 1, "the faults made reruns necessary"
    # One asset per schema however many runs it took, at the second revision.
    assets = assert_one_asset_per_schema(platform)
    datazone = platform.client("datazone")
    revisions = {
        datazone.get_asset(
            domainIdentifier=platform.settings.domain_id,
            identifier=item["assetItem"]["identifier"],
        )["revision"]
        for item in assets
    }
    assert revisions == {"2"}
