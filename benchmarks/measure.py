"""What a run cost (from the sandbox's exact call log) and what it left in DataZone."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

from benchmarks.synthetic_platform import SeededPlatform, boto3_client
from dzlineage_dagster.sandbox.server.faults import CallRecord

#: Operations that only read; every other operation counts as a write.
READ_PREFIXES = ("Get", "List", "Search", "Describe")
SCHEMA_FORM_TYPE = "KafkaSchemaFormType"


def resident_mb() -> float:
    """This process's resident memory now (Linux ``VmRSS``, KiB), in MB."""
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


@contextmanager
def peak_resident_mb(interval: float = 0.05) -> Iterator[list[float]]:
    """The highest resident memory seen while the block ran, sampled every ``interval``
    seconds: one system's peak, where the process's lifetime peak (``ru_maxrss``) would
    carry over the peak of whatever ran before it. Yields a one-item list filled on exit."""
    peak = [resident_mb()]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(interval):
            peak[0] = max(peak[0], resident_mb())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        done.set()
        sampler.join()
        peak[0] = max(peak[0], resident_mb())


def is_write(operation: str | None) -> bool:
    return not (operation or "").startswith(READ_PREFIXES)


def _counts(keys: Iterable[str]) -> dict[str, int]:
    return dict(sorted(Counter(keys).items()))


@dataclass(frozen=True)
class CallMetrics:
    """The calls a run made, each attempt counted (a retried call is several calls)."""

    total: int
    by_service: dict[str, int]
    writes_by_service: dict[str, int]
    by_operation: dict[str, int]
    injected: int

    @classmethod
    def from_records(cls, records: list[CallRecord]) -> CallMetrics:
        writes = [r for r in records if is_write(r.operation)]
        return cls(
            total=len(records),
            by_service=_counts(r.service for r in records),
            writes_by_service=_counts(r.service for r in writes),
            by_operation=_counts(f"{r.service}.{r.operation}" for r in records),
            injected=sum(r.injected for r in records),
        )

    @property
    def writes(self) -> int:
        return sum(self.writes_by_service.values())

    @property
    def datazone_writes(self) -> int:
        return self.writes_by_service.get("datazone", 0)

    @property
    def lineage_posts(self) -> int:
        """PostLineageEvent calls to every destination (DataZone's and Glue's)."""
        return sum(n for op, n in self.by_operation.items() if op.endswith(".PostLineageEvent"))


@dataclass(frozen=True)
class CatalogCheck:
    """DataZone against the registry: one current asset per schema, one edge per topic."""

    schemas: int
    assets: int
    schemas_with_one_asset: int
    duplicated_schemas: int
    missing_schemas: int
    stale_schemas: int
    edges_expected: int
    edges_present: int
    lineage_events: int
    min_events_per_edge: int
    max_events_per_edge: int

    @property
    def ok(self) -> bool:
        return (
            self.schemas_with_one_asset == self.schemas
            and self.stale_schemas == 0
            and self.edges_present == self.edges_expected
        )

    def assets_summary(self) -> str:
        problems = [
            f"{count} {what}"
            for count, what in (
                (self.duplicated_schemas, "dup"),
                (self.missing_schemas, "missing"),
                (self.stale_schemas, "stale"),
            )
            if count
        ]
        return f"{self.schemas_with_one_asset}/{self.schemas} ok" + (
            f" ({', '.join(problems)})" if problems else ""
        )

    def lineage_summary(self) -> str:
        spread = f"{self.min_events_per_edge}"
        if self.max_events_per_edge != self.min_events_per_edge:
            spread += f"-{self.max_events_per_edge}"
        return f"{self.edges_present}/{self.edges_expected}, {spread} ev/edge"

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


def _pages(client: Any, operation: str, result_key: str, **params: Any) -> list[dict[str, Any]]:
    paginator = client.get_paginator(operation)
    return [item for page in paginator.paginate(**params) for item in page[result_key]]


def _schema_form(asset_item: dict[str, Any]) -> dict[str, Any] | None:
    forms = asset_item.get("additionalAttributes", {}).get("formsOutput", [])
    for form in forms:
        if form.get("typeName", "").endswith(SCHEMA_FORM_TYPE):
            return json.loads(form["content"])
    return None


def asset_versions_by_schema(platform: SeededPlatform, datazone: Any) -> dict[str, list[int]]:
    """Schema ARN -> the schema version of each topic asset carrying it (one entry per asset)."""
    items = _pages(
        datazone,
        "search",
        "items",
        domainIdentifier=platform.environment["DZLINEAGE_DOMAIN_ID"],
        owningProjectIdentifier=platform.environment["DZLINEAGE_PROJECT_ID"],
        searchScope="ASSET",
        additionalAttributes=["FORMS"],
    )
    found: dict[str, list[int]] = {}
    for item in items:
        form = _schema_form(item["assetItem"])
        if form is not None:
            found.setdefault(form["schema_arn"], []).append(int(form["schema_version"]))
    return found


def lineage_edges(platform: SeededPlatform, datazone: Any) -> Counter[tuple[str, str]]:
    """(input dataset name, output dataset name) -> how many posted events draw that edge.

    A Glue table's name is ``<db>/<table>`` whichever naming posted it: the product's
    (``<db>/<table>`` under ``arn:aws:glue:<r>:<a>:table``) or OpenLineage's
    (``table/<db>/<table>``, the reference implementation's)."""
    events = _pages(
        datazone,
        "list_lineage_events",
        "items",
        domainIdentifier=platform.environment["DZLINEAGE_DOMAIN_ID"],
    )
    edges: Counter[tuple[str, str]] = Counter()
    for event in events:
        summary = event["eventSummary"]["openLineageRunEventSummary"]
        for source in summary.get("inputs", []):
            for target in summary.get("outputs", []):
                edges[(source["name"], target["name"].removeprefix("table/"))] += 1
    return edges


def check_catalog(platform: SeededPlatform) -> CatalogCheck:
    datazone = boto3_client(platform.endpoint_url, "datazone")
    assets = asset_versions_by_schema(platform, datazone)
    edges = lineage_edges(platform, datazone)
    topics = platform.topics.values()
    per_schema = [assets.get(t.schema_arn, []) for t in topics]
    expected_edges = [(t.topic, f"{platform.glue_database}/{t.glue_table}") for t in topics]
    events_per_edge = [edges.get(edge, 0) for edge in expected_edges]
    return CatalogCheck(
        schemas=len(per_schema),
        assets=sum(len(found) for found in assets.values()),
        schemas_with_one_asset=sum(len(found) == 1 for found in per_schema),
        duplicated_schemas=sum(len(found) > 1 for found in per_schema),
        missing_schemas=sum(not found for found in per_schema),
        stale_schemas=sum(
            any(version != t.version for version in found)
            for t, found in zip(topics, per_schema, strict=True)
        ),
        edges_expected=len(expected_edges),
        edges_present=sum(count > 0 for count in events_per_edge),
        lineage_events=sum(edges.values()),
        min_events_per_edge=min(events_per_edge, default=0),
        max_events_per_edge=max(events_per_edge, default=0),
    )
