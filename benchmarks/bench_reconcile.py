"""What `dzlineage sync --reconcile` costs on top of a sync, counted from the sandbox's log.

Per size N: a fresh sandbox process, the synthetic platform seeded and synced once (not
measured), then (1) the plain idle sync, (2) the idle sync with ``--reconcile`` (nothing to
repair), (3) ``--reconcile`` after 5 topic assets were deleted by hand. Each row gives the
calls of exactly that sync: all of them, Search pages, ListLineageEvents pages, writes.

    .venv/bin/python -m benchmarks.bench_reconcile --topics 100 1000
"""

from __future__ import annotations

import argparse
import io
import time
from collections import Counter

from benchmarks.sandbox_process import SandboxProcess
from benchmarks.synthetic_platform import boto3_client, seed_synthetic_platform
from benchmarks.systems import environment
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.headless import run_headless_sync

HAND_DELETED = 5
READS = ("Get", "List", "Search", "Describe")


def measured_sync(sandbox: SandboxProcess, *, reconcile: bool) -> tuple[Counter, float]:
    sandbox.control.clear_calls()
    started = time.perf_counter()
    code = run_headless_sync(
        LineageSettings.from_env(), dry_run=False, reconcile=reconcile, out=io.StringIO()
    )
    seconds = time.perf_counter() - started
    if code != 0:
        raise RuntimeError("the measured sync failed")
    return sandbox.control.call_counts(), seconds


def row(label: str, counts: Counter, seconds: float) -> str:
    writes = sum(n for (_, op), n in counts.items() if not (op or "").startswith(READS))
    return (
        f"| {label} | {sum(counts.values())} | {counts[('datazone', 'Search')]} | "
        f"{counts[('datazone', 'ListLineageEvents')]} | {writes} | {seconds:.1f} |"
    )


def bench(size: int) -> list[str]:
    with SandboxProcess() as sandbox:
        platform = seed_synthetic_platform(sandbox.endpoint_url, size)
        variables = {**sandbox.environment(), **platform.environment}
        with environment(variables):
            measured_sync(sandbox, reconcile=False)  # the first sync: not measured here
            rows = [f"| **N={size}** | | | | | |"]
            rows.append(row("idle sync", *measured_sync(sandbox, reconcile=False)))
            rows.append(row("idle sync --reconcile", *measured_sync(sandbox, reconcile=True)))
            datazone = boto3_client(sandbox.endpoint_url, "datazone")
            settings = LineageSettings.from_env()
            pages = datazone.get_paginator("search").paginate(
                domainIdentifier=settings.domain_id, searchScope="ASSET"
            )
            items = [i["assetItem"] for page in pages for i in page["items"]]
            for item in items[:HAND_DELETED]:
                datazone.delete_asset(
                    domainIdentifier=settings.domain_id, identifier=item["identifier"]
                )
            label = f"--reconcile, {HAND_DELETED} assets deleted by hand"
            rows.append(row(label, *measured_sync(sandbox, reconcile=True)))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, nargs="+", default=[100, 1000])
    args = parser.parse_args(argv)
    print("| sync | AWS calls | Search pages | ListLineageEvents pages | writes | seconds |")
    print("|---|---|---|---|---|---|")
    for size in args.topics:
        for line in bench(size):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
