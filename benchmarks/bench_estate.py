"""A real estate's size on a standard-tier account: ``python -m benchmarks.bench_estate``.

Issue 18's acceptance run: ``--topics`` synthetic table topics (default 20,000), synced by
``dzlineage sync`` (the headless product path, unpaced: no latency, no quotas) on a sandbox
account that enforces SSM's standard-tier cap (``--cap``, AWS's 10,000 by default) and already
holds ``--foreign`` parameters of other applications (default 2,000). Then an idle rerun, which
must find nothing to do.

Checked after the first run: one DataZone asset per schema (no duplicate, none missing), one
lineage edge per topic, and every schema's mapping present in the store (read through the
product's own store, whatever ``--layout``). Printed: calls by operation for both runs, their
times, the standard parameters the mapping uses, and this process's peak memory
(``resource.getrusage``; the sandbox runs in its own process, see
:mod:`benchmarks.sandbox_process`).

With ``--layout per-topic`` the first run stops at the cap (``ParameterLimitExceeded``), which is
why ``packed`` is the default.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from benchmarks.measure import CatalogCheck, check_catalog, is_write
from benchmarks.quota_bound import peak_rss_mb
from benchmarks.sandbox_process import SandboxProcess
from benchmarks.scenarios import Endpoint
from benchmarks.synthetic_platform import SeededPlatform, boto3_client, seed_synthetic_platform
from benchmarks.systems import environment, pointed_at
from dzlineage_dagster.core.mapping.pack import parameters_needed
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sandbox.moto_patches import GLUE_SCHEMA_QUOTA
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.headless import run_headless_sync
from dzlineage_dagster.sync.run_state import SyncRun

FOREIGN_PREFIX = "/other-application/p"


@dataclass(frozen=True)
class EstateRun:
    exit_code: int
    output: str
    seconds: float
    calls: Counter

    @property
    def summary(self) -> str:
        lines = self.output.strip().splitlines()
        return lines[-1] if lines else ""

    @property
    def datazone_writes(self) -> int:
        return sum(
            count
            for (service, operation), count in self.calls.items()
            if service == "datazone" and is_write(operation)
        )


@dataclass(frozen=True)
class EstateResult:
    topics: int
    foreign: int
    cap: int
    layout: str
    seed_seconds: float
    first: EstateRun
    idle: EstateRun
    catalog: CatalogCheck
    mapped: int
    mapped_assets: int
    parameters_used: int
    peak_rss_mb: float

    @property
    def ok(self) -> bool:
        return (
            self.first.exit_code == 0
            and self.catalog.ok
            and self.mapped == self.topics == self.mapped_assets
            and self.idle.exit_code == 0
            and "unchanged since the last complete sync" in self.idle.output
            and self.idle.datazone_writes == 0
        )


def put_foreign_parameters(platform: SeededPlatform, count: int) -> None:
    ssm = boto3_client(platform.endpoint_url, "ssm", max_pool_connections=8)
    with ThreadPoolExecutor(8) as pool:
        list(
            pool.map(
                lambda index: ssm.put_parameter(
                    Name=f"{FOREIGN_PREFIX}{index:05d}", Value="x", Type="String"
                ),
                range(count),
            )
        )


def standard_parameters(platform: SeededPlatform) -> int:
    pages = boto3_client(platform.endpoint_url, "ssm").get_paginator("describe_parameters")
    return sum(
        parameter.get("Tier", "Standard") == "Standard"
        for page in pages.paginate()
        for parameter in page["Parameters"]
    )


def headless_run(sandbox: Endpoint) -> EstateRun:
    sandbox.control.clear_calls()
    out = io.StringIO()
    started = time.perf_counter()
    code = run_headless_sync(LineageSettings.from_env(), dry_run=False, out=out)
    seconds = time.perf_counter() - started
    return EstateRun(code, out.getvalue(), seconds, sandbox.control.call_counts())


def stored_mapping() -> dict:
    """The whole mapping as a fresh run of the product reads it (read-only)."""
    run = SyncRun(LineageSyncResource.with_settings(LineageSettings.from_env()))
    run.mappings.read_only = True
    return run.mappings.all()


def bench_estate(
    sandbox: Endpoint,
    topics: int,
    foreign: int,
    cap: int,
    layout: str | None = None,
    progress: Callable[[str], None] = lambda message: None,
) -> EstateResult:
    """Seed the estate on ``sandbox`` (emptied first), sync it, check it, sync it again, in
    the mapping ``layout`` (None: the product's default)."""
    sandbox.control.reset()
    # AWS's default is 10,000 schemas per account and Region, adjustable: an estate of more
    # topics has had its quota raised.
    sandbox.control.set_glue_limits(schemas=max(topics, GLUE_SCHEMA_QUOTA))
    started = time.perf_counter()
    platform = seed_synthetic_platform(sandbox.endpoint_url, topics)
    put_foreign_parameters(platform, foreign)
    sandbox.control.set_ssm_limits(standard_parameters=cap)
    seed_seconds = time.perf_counter() - started
    progress(f"seeded {topics:,} topics and {foreign:,} foreign parameters in {seed_seconds:.0f} s")
    chosen = {"DZLINEAGE_SSM_MAPPING_LAYOUT": layout} if layout else {}
    with pointed_at(platform), environment(chosen):
        layout = LineageSettings.from_env().ssm_mapping_layout
        first = headless_run(sandbox)
        progress(f"first sync: exit {first.exit_code} in {first.seconds:.0f} s: {first.summary}")
        catalog = check_catalog(platform)
        mapping = stored_mapping()
        idle = headless_run(sandbox)
        progress(f"idle rerun: exit {idle.exit_code} in {idle.seconds:.1f} s: {idle.summary}")
    return EstateResult(
        topics=topics,
        foreign=foreign,
        cap=cap,
        layout=layout,
        seed_seconds=seed_seconds,
        first=first,
        idle=idle,
        catalog=catalog,
        mapped=sum(topic.schema_arn in mapping for topic in platform.topics.values()),
        mapped_assets=len({record.asset_id for record in mapping.values()}),
        parameters_used=standard_parameters(platform) - foreign,
        peak_rss_mb=peak_rss_mb(),
    )


def report(result: EstateResult) -> str:
    lines = [
        f"dzlineage sync, {result.topics:,} topics, layout {result.layout}, standard tier "
        f"(cap {result.cap:,}), {result.foreign:,} foreign parameters present, unpaced",
        f"{'operation':40}{'first sync':>12}{'idle rerun':>12}",
    ]
    operations = sorted(set(result.first.calls) | set(result.idle.calls), key=str)
    for service, operation in operations:
        key = (service, operation)
        lines.append(
            f"{f'{service}.{operation}':40}{result.first.calls[key]:>12,}{result.idle.calls[key]:>12,}"
        )
    lines += [
        f"{'calls, total':40}{sum(result.first.calls.values()):>12,}"
        f"{sum(result.idle.calls.values()):>12,}",
        f"{'time':40}{result.first.seconds:>11.0f}s{result.idle.seconds:>11.1f}s",
        f"{'exit code':40}{result.first.exit_code:>12}{result.idle.exit_code:>12}",
        f"first sync: {result.first.summary}",
        f"idle rerun: {result.idle.summary}",
        f"assets: {result.catalog.assets_summary()}; lineage: {result.catalog.lineage_summary()}",
        f"mappings in the store: {result.mapped:,} schemas, {result.mapped_assets:,} distinct "
        f"assets",
        f"standard parameters used by the mapping: {result.parameters_used:,} (estimate "
        f"{parameters_needed(result.topics):,}), {result.parameters_used + result.foreign:,} "
        f"of {result.cap:,} in the account",
        f"seeding: {result.seed_seconds:.0f} s; peak memory of the syncing process: "
        f"{result.peak_rss_mb:.0f} MB",
        f"verdict: {'OK' if result.ok else 'NOT OK'}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_estate", description=__doc__)
    parser.add_argument("--topics", type=int, default=20_000)
    parser.add_argument("--foreign", type=int, default=2_000)
    parser.add_argument("--cap", type=int, default=10_000, help="standard parameters allowed")
    parser.add_argument(
        "--layout",
        choices=["packed", "per-topic"],
        help="the mapping layout (default: the product's)",
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()

    def progress(message: str) -> None:
        print(f"[{time.perf_counter() - started:7.1f}s] {message}", file=sys.stderr, flush=True)

    with SandboxProcess() as sandbox:
        result = bench_estate(sandbox, args.topics, args.foreign, args.cap, args.layout, progress)
    print(report(result))
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
