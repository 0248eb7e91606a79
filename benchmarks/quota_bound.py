"""The quota-bound scenario: the first sync against a sandbox as slow and as strict as AWS.

The sandbox is seeded at full speed, then paced (``--latency aws`` and, by default, the quota
figures typed from AWS's pages in ``aws_quotas.json``, not the product's table) for the
measured syncs: the first sync, then an idle rerun. The floor is what no client can beat: for
each quota bucket, the calls the sync needed there (refused calls not counted) over the
bucket's rate; the busiest bucket sets it (the headless sync's lineage read-back, which reads
while the sync posts, among them). ``seconds / floor`` is how close to the quota the
system ran (1.0 is at the quota).
"""

from __future__ import annotations

import resource
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchmarks.measure import CallMetrics, CatalogCheck, check_catalog
from benchmarks.published_quotas import PUBLISHED, sandbox_quota_spec
from benchmarks.scenarios import Endpoint, fresh_platform
from benchmarks.systems import make_system, pointed_at
from dzlineage_dagster.sandbox.server.faults import CallRecord
from dzlineage_dagster.sandbox.server.pacing import Quotas

#: Calls of the headless sync's lineage read-back (``sync/lineage/readback.py``): it reads each
#: topic back as soon as DataZone has processed its events, while the sync posts the later
#: topics', so its bucket competes with the sync's for the floor instead of adding to it.
READBACK_OPERATIONS = frozenset({"datazone.GetLineageNode"})


@dataclass(frozen=True)
class QuotaFloor:
    #: The busiest bucket, the read-back's included: its calls over its rate.
    seconds: float
    bucket: str
    calls: int
    rate: float
    #: The read-back's calls and its bucket's own floor (0: no read-back).
    readback_seconds: float = 0.0
    readback_calls: int = 0


def quota_floor(
    records: list[CallRecord], rates: Mapping[str, float], buckets: Mapping[str, str]
) -> QuotaFloor:
    """What no client can beat, from the calls the sandbox served, at the rates the sandbox
    enforced (``rates`` and ``buckets`` by ``service.Operation``, the benchmark's own figures):
    the busiest bucket's calls over its rate, the read-back's (:data:`READBACK_OPERATIONS`)
    among them, as it runs beside the sync's writes."""
    served: Counter[str] = Counter()
    readback: Counter[str] = Counter()
    for record in records:
        name = f"{record.service}.{record.operation}"
        if not record.throttled and name in rates:
            served[buckets[name]] += 1
            if name in READBACK_OPERATIONS:
                readback[buckets[name]] += 1
    bucket_rates = {buckets[name]: rate for name, rate in rates.items()}
    if not served:
        return QuotaFloor(0.0, "-", 0, 0.0)
    bucket = max(served, key=lambda b: served[b] / bucket_rates[b])
    return QuotaFloor(
        served[bucket] / bucket_rates[bucket],
        bucket,
        served[bucket],
        bucket_rates[bucket],
        readback_seconds=max((served[b] / bucket_rates[b] for b in readback), default=0.0),
        readback_calls=sum(readback.values()),
    )


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
            "readback_floor_seconds": round(self.floor.readback_seconds, 2),
            "readback_calls": self.floor.readback_calls,
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
    #: The quotas the sandbox enforced (``--sandbox-quotas``: ``published``, ``aws`` or rates).
    sandbox_quotas: str = PUBLISHED

    def to_json(self) -> dict[str, Any]:
        return {
            "topics": self.topics,
            "system": self.system,
            "sandbox_quotas": self.sandbox_quotas,
            "first_sync": self.first.to_json(),
            "idle_rerun": self.idle.to_json(),
            "catalog": self.catalog.to_json(),
            "peak_rss_mb": round(self.peak_rss_mb, 1),
        }


def _paced_run(endpoint: Endpoint, action: Any, given: Quotas) -> QuotaRun:
    endpoint.control.clear_calls()
    started = time.perf_counter()
    outcome = action()
    seconds = time.perf_counter() - started
    records = endpoint.control.calls()
    floor = quota_floor(records, given.rates, given.buckets_of)
    return QuotaRun(
        seconds,
        CallMetrics.from_records(records),
        sum(r.throttled for r in records),
        floor,
        outcome.ok,
    )


def bench_quota_bound(
    endpoint: Endpoint, system_name: str, topics: int, sandbox_quotas: str = PUBLISHED
) -> QuotaCell:
    """``sandbox_quotas``: what the sandbox enforces (``--quotas``): ``published`` (AWS's
    figures as typed in ``benchmarks/aws_quotas.json``), ``aws`` (the product's own table), or
    rates of one's own. The floor is reckoned at the same figures, read here, not at what the
    product paces at."""
    spec = sandbox_quota_spec(sandbox_quotas)
    given = Quotas.parse(spec)
    platform = fresh_platform(endpoint, topics).platform
    with pointed_at(platform, client_rate_limits="aws"):
        system = make_system(system_name, platform)
        system.prepare()
        endpoint.control.set_pacing(latency="aws", quotas=spec)
        try:
            first = _paced_run(endpoint, system.sync, given)
            idle = _paced_run(endpoint, system.sync, given)
        finally:
            endpoint.control.set_pacing()
        catalog = check_catalog(platform)
    return QuotaCell(topics, system_name, first, idle, catalog, peak_rss_mb(), sandbox_quotas)


def quota_table(cells: list[QuotaCell]) -> str:
    """One row per system and size: time against the quota floor, and the idle rerun."""
    given = sorted({cell.sandbox_quotas for cell in cells}) or [PUBLISHED]
    title = f"quota-bound (--latency aws --quotas {' / '.join(given)})"
    header = (
        f"{title:44}{'first sync':>12}{'floor':>9}"
        f"{'ratio':>7}{'throttled':>10}{'assets ok':>11}{'idle calls':>11}{'idle s':>8}"
        f"{'peak MB':>9}"
    )
    lines = [header, "-" * len(header)]
    for cell in cells:
        floor = cell.first.floor
        label = f"N = {cell.topics:,} {cell.system} (floor: {floor.bucket})"
        lines.append(
            f"{label:44}{cell.first.seconds:>11.1f}s{cell.first.floor.seconds:>8.1f}s"
            f"{cell.first.ratio:>7.2f}{cell.first.throttled:>10,}"
            f"{cell.catalog.schemas_with_one_asset:>11,}{cell.idle.calls.total:>11,}"
            f"{cell.idle.seconds:>8.1f}{cell.peak_rss_mb:>9.0f}"
        )
    return "\n".join(lines)
