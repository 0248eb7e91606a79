"""The quota-bound scenario: the first sync against a sandbox as slow and as strict as AWS.

The sandbox is seeded at full speed, then paced (``--latency aws --quotas aws``) for the
measured syncs: the first sync, then an idle rerun. The floor is what no client can beat: for
each quota bucket, the calls the sync needed there (refused calls not counted) over the
bucket's rate; the busiest bucket sets it. ``seconds / floor`` is how close to the quota the
system ran (1.0 is at the quota).
"""

from __future__ import annotations

import resource
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from benchmarks.measure import CallMetrics, CatalogCheck, check_catalog
from benchmarks.scenarios import Endpoint, fresh_platform
from benchmarks.systems import make_system, pointed_at
from dzlineage_dagster.core.aws_quotas import AWS_QUOTAS
from dzlineage_dagster.sandbox.server.faults import CallRecord


@dataclass(frozen=True)
class QuotaFloor:
    seconds: float
    bucket: str
    calls: int
    rate: float


def quota_floor(records: list[CallRecord]) -> QuotaFloor:
    """The busiest quota bucket's calls over its rate, from the calls the sandbox served."""
    served = Counter(
        AWS_QUOTAS[name].bucket
        for record in records
        if not record.throttled and (name := f"{record.service}.{record.operation}") in AWS_QUOTAS
    )
    rates = {quota.bucket: quota.rate for quota in AWS_QUOTAS.values()}
    if not served:
        return QuotaFloor(0.0, "-", 0, 0.0)
    bucket = max(served, key=lambda b: served[b] / rates[b])
    return QuotaFloor(served[bucket] / rates[bucket], bucket, served[bucket], rates[bucket])


def peak_rss_mb() -> float:
    """The benchmark process's peak resident memory so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass(frozen=True)
class QuotaRun:
    seconds: float
    calls: CallMetrics
    throttled: int
    floor: QuotaFloor
    ok: bool

    @property
    def ratio(self) -> float:
        return self.seconds / self.floor.seconds if self.floor.seconds else float("nan")

    def to_json(self) -> dict[str, Any]:
        return {
            "seconds": round(self.seconds, 2),
            "calls": self.calls.total,
            "by_operation": self.calls.by_operation,
            "throttled": self.throttled,
            "floor_seconds": round(self.floor.seconds, 2),
            "floor_bucket": self.floor.bucket,
            "floor_calls": self.floor.calls,
            "time_over_floor": round(self.ratio, 3),
            "ok": self.ok,
        }


@dataclass(frozen=True)
class QuotaCell:
    topics: int
    system: str
    first: QuotaRun
    idle: QuotaRun
    catalog: CatalogCheck
    peak_rss_mb: float

    def to_json(self) -> dict[str, Any]:
        return {
            "topics": self.topics,
            "system": self.system,
            "first_sync": self.first.to_json(),
            "idle_rerun": self.idle.to_json(),
            "catalog": self.catalog.to_json(),
            "peak_rss_mb": round(self.peak_rss_mb, 1),
        }


def _paced_run(endpoint: Endpoint, action: Any) -> QuotaRun:
    endpoint.control.clear_calls()
    started = time.perf_counter()
    outcome = action()
    seconds = time.perf_counter() - started
    records = endpoint.control.calls()
    return QuotaRun(
        seconds,
        CallMetrics.from_records(records),
        sum(r.throttled for r in records),
        quota_floor(records),
        outcome.ok,
    )


def bench_quota_bound(endpoint: Endpoint, system_name: str, topics: int) -> QuotaCell:
    platform = fresh_platform(endpoint, topics).platform
    with pointed_at(platform, client_rate_limits="aws"):
        system = make_system(system_name, platform)
        system.prepare()
        endpoint.control.set_pacing(latency="aws", quotas="aws")
        try:
            first = _paced_run(endpoint, system.sync)
            idle = _paced_run(endpoint, system.sync)
        finally:
            endpoint.control.set_pacing()
        catalog = check_catalog(platform)
    return QuotaCell(topics, system_name, first, idle, catalog, peak_rss_mb())


def quota_table(cells: list[QuotaCell]) -> str:
    """One row per system and size: time against the quota floor, and the idle rerun."""
    header = (
        f"{'quota-bound (--latency aws --quotas aws)':44}{'first sync':>12}{'floor':>9}"
        f"{'ratio':>7}{'throttled':>10}{'assets ok':>11}{'idle calls':>11}{'idle s':>8}"
        f"{'peak MB':>9}"
    )
    lines = [header, "-" * len(header)]
    for cell in cells:
        label = f"N = {cell.topics:,} {cell.system} (floor: {cell.first.floor.bucket})"
        lines.append(
            f"{label:44}{cell.first.seconds:>11.1f}s{cell.first.floor.seconds:>8.1f}s"
            f"{cell.first.ratio:>7.2f}{cell.first.throttled:>10,}"
            f"{cell.catalog.schemas_with_one_asset:>11,}{cell.idle.calls.total:>11,}"
            f"{cell.idle.seconds:>8.1f}{cell.peak_rss_mb:>9.0f}"
        )
    return "\n".join(lines)
