"""Measured speed, side by side: ``python -m benchmarks.bench_sync [--topics 100 1000]``.

First the probe of the reference's own SSM delimiter; then, for each size, each system runs the
three scenarios on its own freshly seeded sandbox state (see :mod:`benchmarks.scenarios`), with
a ratio line (our calls / the reference's); then the quota-bound scenario (the first sync at
AWS's latency and quotas, against its floor: :mod:`benchmarks.quota_bound`); last the fault
scenarios, a few at a time in worker processes. Every sandbox runs in a child process
on a free port. ``--json PATH`` keeps every number, ``--profile PATH`` a cProfile of this
process (the sandbox's own work is not in it).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import multiprocessing
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks.published_quotas import PUBLISHED
from benchmarks.quota_bound import bench_quota_bound, peak_rss_mb, quota_table
from benchmarks.report import calls_ratio_lines, delimiter_report, fault_table, size_table, verdicts
from benchmarks.sandbox_process import SandboxProcess
from benchmarks.scenarios import (
    Cell,
    Endpoint,
    FaultPlan,
    FaultResult,
    bench_system,
    faults_in_own_sandbox,
    probe_literal_delimiter,
    warm_up,
)
from benchmarks.systems import SYSTEM_NAMES, environment


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_sync", description=__doc__)
    parser.add_argument("--topics", type=int, nargs="+", default=[100, 1000], metavar="N")
    parser.add_argument("--repeat", type=int, default=1, help="fresh runs per size (median time)")
    parser.add_argument("--systems", nargs="+", default=list(SYSTEM_NAMES), choices=SYSTEM_NAMES)
    parser.add_argument(
        "--quota-topics",
        type=int,
        nargs="+",
        default=[1000],
        metavar="N",
        help="sizes of the quota-bound scenario (default 1000; each takes ~2 min a system)",
    )
    parser.add_argument(
        "--quota-systems",
        nargs="+",
        default=["sensor+job", "sync"],
        choices=SYSTEM_NAMES,
        help="systems of the quota-bound scenario (the baseline, one call after the other, "
        "takes ~10x its floor)",
    )
    parser.add_argument(
        "--sandbox-quotas",
        default=PUBLISHED,
        metavar="published|aws|RATES|FILE.json",
        help="the quotas the sandbox enforces in the quota-bound scenario, and its floor's: "
        "'published' (default: AWS's figures typed in benchmarks/aws_quotas.json, each with "
        "its page or 'assumed'), 'aws' (the product's pacing table), or figures of one's own "
        "('datazone.CreateAsset=20,ssm.GetParameter+ssm.GetParameters=40' or a JSON file), "
        "e.g. an account's real quotas",
    )
    parser.add_argument("--no-quota", action="store_true", help="skip the quota-bound scenario")
    parser.add_argument("--fault-topics", type=int, default=100, metavar="N")
    parser.add_argument("--fault-rate", type=float, default=0.3)
    parser.add_argument("--no-faults", action="store_true", help="skip the fault scenario")
    parser.add_argument(
        "--lineage-destinations",
        metavar="datazone|glue|datazone,glue",
        help="DZLINEAGE_LINEAGE_DESTINATIONS of the project's systems (default: the setting's, "
        "DataZone): with glue, the table counts glue.PostLineageEvent beside DataZone's posts",
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="save the raw numbers")
    parser.add_argument("--profile", type=Path, metavar="PATH", help="save a cProfile of the run")
    return parser.parse_args(argv)


class Progress:
    """Lines on stderr with the time since the start, so a long run shows where it is."""

    def __init__(self) -> None:
        self.started = time.perf_counter()

    def __call__(self, message: str) -> None:
        print(f"[{time.perf_counter() - self.started:7.1f}s] {message}", file=sys.stderr)


def bench_size(
    endpoint: Endpoint, topics: int, args: argparse.Namespace, progress: Progress
) -> tuple[list[Cell], list[dict[str, Any]]]:
    cells, seeding = [], []
    for repeat in range(1, args.repeat + 1):
        for system in args.systems:
            progress(f"N={topics:,} {system} (repeat {repeat})")
            run = bench_system(endpoint, system, topics, repeat)
            cells += run.cells
            seeding.append({"topics": topics, "system": system, "seconds": run.seed_seconds})
    return cells, seeding


#: Throttling of lineage posts in the second fault plan: low enough that the reference gets
#: some way through its lineage before a failure ends its run.
LINEAGE_FAULT_RATE = 0.05
#: Fault runs at a time (each in its own process with its own sandbox).
FAULT_WORKERS = 3


def fault_plans(rate: float) -> tuple[FaultPlan, ...]:
    """The fault scenario; then lineage posts throttled with no retries, so that reruns do the
    recovering and show what random client tokens do."""
    return (
        FaultPlan(rate),
        FaultPlan(LINEAGE_FAULT_RATE, operation="PostLineageEvent", attempts_per_call=1),
    )


def bench_all_faults(args: argparse.Namespace, progress: Progress) -> list[list[FaultResult]]:
    """Every plan for every system, a few at a time: they mostly wait for backoff."""
    plans = fault_plans(args.fault_rate)
    runs = [(plan, system) for plan in plans for system in args.systems]
    progress(f"faults: {len(runs)} runs at N={args.fault_topics:,}, {FAULT_WORKERS} at a time")
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(FAULT_WORKERS, mp_context=spawn) as pool:
        futures = {
            (plan, system): pool.submit(faults_in_own_sandbox, system, args.fault_topics, plan)
            for plan, system in runs
        }
        return [[futures[(plan, system)].result() for system in args.systems] for plan in plans]


def run(args: argparse.Namespace) -> dict[str, Any]:
    progress = Progress()
    raw: dict[str, Any] = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "load_average_at_start": os.getloadavg(),
        "cells": [],
        "seeding": [],
    }
    with SandboxProcess() as endpoint:
        progress(f"sandbox on {endpoint.endpoint_url}")
        warm_up(endpoint)
        probe = probe_literal_delimiter(endpoint)
        print(delimiter_report(probe), end="\n\n")
        raw["literal_delimiter"] = probe.to_json()
        for topics in args.topics:
            cells, seeding = bench_size(endpoint, topics, args, progress)
            print(size_table(cells), *verdicts(cells), *calls_ratio_lines(cells), sep="\n")
            print(f"peak memory of the benchmark process so far: {peak_rss_mb():.0f} MB\n")
            raw["cells"] += [cell.to_json() for cell in cells]
            raw["seeding"] += seeding
            raw.setdefault("peak_rss_mb", {})[topics] = round(peak_rss_mb(), 1)
        quota_cells = []
        for topics in [] if args.no_quota else args.quota_topics:
            for system in args.quota_systems:
                progress(f"quota-bound N={topics:,} {system}")
                quota_cells.append(bench_quota_bound(endpoint, system, topics, args.sandbox_quotas))
        if quota_cells:
            print(quota_table(quota_cells), end="\n\n")
        raw["quota_bound"] = [cell.to_json() for cell in quota_cells]
    variants = [] if args.no_faults else bench_all_faults(args, progress)
    print(*(fault_table(results) for results in variants), sep="\n\n")
    raw["faults"] = [result.to_json() for results in variants for result in results]
    raw["total_seconds"] = round(time.perf_counter() - progress.started, 1)
    progress("done")
    return raw


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Dagster's beta/preview notices are not results.
    warnings.filterwarnings("ignore")
    profiler = cProfile.Profile() if args.profile else None
    if profiler:
        profiler.enable()
    destinations = (
        {"DZLINEAGE_LINEAGE_DESTINATIONS": args.lineage_destinations}
        if args.lineage_destinations
        else {}
    )
    with environment(destinations):
        raw = run(args)
    if profiler:
        profiler.disable()
        profiler.dump_stats(args.profile)
    if args.json:
        args.json.write_text(json.dumps(raw, indent=2, default=str))
        print(f"every number: {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
