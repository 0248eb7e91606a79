"""Throttled writes of every kind, reruns until the catalog converges, and not one extra event.

Each write the sync makes (CreateAsset, CreateAssetRevision, PutParameter, the START and the
COMPLETE lineage event) is throttled at random with no botocore retry, so every failure reaches
the product; the seeds are fixed and chosen so that each kind fails at least once (asserted from
the sandbox's call log, not assumed). Reruns go on until a run succeeds, within a bound, and then
DataZone must hold every edge with exactly one START and one COMPLETE per schema version.
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
#: The demo platform's table topics and the Iceberg tables its sink writes them to.
EDGES = {
    "shop.archive.orders": "table/lakehouse/orders_history",
    "shop.inventory.customers": "table/lakehouse/inventory_customers",
    "shop.inventory.products": "table/lakehouse/inventory_products",
    "shop.inventory.stock_levels": "table/lakehouse/inventory_stock_levels",
    "shop.sales.order_lines": "table/lakehouse/sales_order_lines",
    "shop.sales.orders": "table/lakehouse/sales_orders",
    "shop.sales.payments": "table/lakehouse/sales_payments",
}


@pytest.fixture
def platform(sandbox, monkeypatch):
    monkeypatch.setenv("DZLINEAGE_MAX_ATTEMPTS", "1")
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
    """Each write call of one run with its kind; lineage posts split into START and COMPLETE.

    A topic posts its START and then, at once, its COMPLETE (nothing in between), and a failed
    START ends the topic: so a post right after a successful START is a COMPLETE.
    """
    kinds = []
    previous_kind = None
    for record in log:
        kind = record.operation
        if kind == "PostLineageEvent":
            kind = "COMPLETE" if previous_kind == "START" else "START"
        if (record.service, record.operation) in THROTTLED_WRITES:
            kinds.append((kind, record))
        previous_kind = kind if not record.injected else None
    return kinds


def events_per_edge(platform) -> dict[tuple[str, str], Counter[tuple[str, str]]]:
    """(input, output) dataset names -> (runId, eventType) -> events DataZone holds."""
    datazone = platform.client("datazone")
    pages = datazone.get_paginator("list_lineage_events").paginate(
        domainIdentifier=platform.settings.domain_id
    )
    found: dict[tuple[str, str], Counter[tuple[str, str]]] = {}
    for page in pages:
        for item in page["items"]:
            summary = item["eventSummary"]["openLineageRunEventSummary"]
            [source] = summary["inputs"]
            [target] = summary["outputs"]
            edge = found.setdefault((source["name"], target["name"]), Counter())
            edge[(summary["runId"], summary["eventType"])] += 1
    return found


def assert_every_edge_has_one_start_and_complete_per_version(platform, versions: int) -> None:
    edges = events_per_edge(platform)
    assert sorted(edges) == sorted(EDGES.items())
    for edge, events in edges.items():
        run_ids = {run_id for run_id, _ in events}
        assert len(run_ids) == versions, (edge, events)
        expected = {(run_id, kind): 1 for run_id in run_ids for kind in ("START", "COMPLETE")}
        assert events == Counter(expected), (edge, events)


def test_throttled_writes_of_every_kind_converge_without_a_duplicate(platform):
    created = sync_until_success(platform, CREATE_SEEDS)
    assert_every_edge_has_one_start_and_complete_per_version(platform, versions=1)

    for topic in EDGES:
        platform.register_new_version(topic, "added_under_faults")
    revised = sync_until_success(platform, REVISE_SEEDS)
    assert_every_edge_has_one_start_and_complete_per_version(platform, versions=2)

    failed = Counter(
        kind for log in created + revised for kind, r in write_kinds(log) if r.injected
    )
    wanted = {"CreateAsset", "CreateAssetRevision", "PutParameter", "START", "COMPLETE"}
    assert wanted <= set(failed), failed
    assert len(created) > 1 and len(revised) > 1, "the faults made reruns necessary"
    # One asset per schema however many runs it took, at the second revision.
    datazone = platform.client("datazone")
    assets = datazone.search(
        domainIdentifier=platform.settings.domain_id,
        searchScope="ASSET",
        owningProjectIdentifier=platform.settings.project_id,
        maxResults=50,
    )["items"]
    by_schema = Counter(item["assetItem"]["externalIdentifier"] for item in assets)
    assert sorted(by_schema) == sorted(platform.schema_arn(t) for t in EDGES)
    assert set(by_schema.values()) == {1}
    revisions = {
        datazone.get_asset(
            domainIdentifier=platform.settings.domain_id,
            identifier=item["assetItem"]["identifier"],
        )["revision"]
        for item in assets
    }
    assert revisions == {"2"}
