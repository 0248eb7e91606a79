"""Peak memory per process as the estate grows: ``python -m benchmarks.bench_memory``.

Per size (``--topics``, default 1,000 3,000 10,000) and system (``--systems``, default
``sensor+job`` and ``sync``): a process of its own (so no earlier run's peak carries over) with
its own sandbox child, seeded with that many topics (the sandbox's schema quota raised as
``bench_estate`` does), then the first sync, an idle rerun and one new version, each counted
from the sandbox's call log. Printed side by side: the syncing process's peak resident memory
(``VmRSS`` sampled every 50 ms, minus what it held before the first sync: the interpreter,
the imports and the seeded platform's description) and the calls of each scenario, and the
slope in MB per 1,000 topics.

``--trace all`` also runs :mod:`tracemalloc` in the measured process and prints the allocation
sites (by line, and by the product's innermost frame) that held the most near the traced peak;
``--trace steady`` starts it after the untraced first sync (the idle rerun and one new version:
cheap at any size). Tracing slows a run several times; its peaks are Python objects only,
and the resident memory of a traced scenario is not comparable with an untraced one.

``--holders`` (no sandbox, seconds a size) prints instead what the two collections of a run that grow
with the estate hold at N topics, by tracemalloc: the registry listing folded into topics
(while its pages are folded, and after) and the whole packed mapping decoded, with
``--compare`` side by side.

``--compare PATH`` runs the same measurement against another checkout too (a ``git worktree``
of main, say), side by side: the process is started with that checkout first on the path, and
only its ``benchmarks`` helpers that both checkouts share are used.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
import warnings
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

#: Where the measured process stops: the product's own frames are attributed, not Python's.
PRODUCT_PACKAGE = "dzlineage_dagster"
TRACE_FRAMES = 25
TOP_SITES = 12
SAMPLE_SECONDS = 0.05
#: A new tracemalloc snapshot is taken when the traced memory exceeds the last one's by this.
SNAPSHOT_GROWTH = 1.05
SCENARIOS = ("first sync", "idle rerun", "one new version")
#: ``sensor+job/disk``: the sensor and runs on a Dagster instance stored in a temporary
#: directory (SQLite files, as a deployment's storage is outside the process), where
#: ``sensor+job``'s ephemeral instance keeps the runs' event logs in the measured process.
ON_DISK = "/disk"


class TracedPeak:
    """A thread that keeps the tracemalloc snapshot taken nearest the traced peak."""

    def __init__(self) -> None:
        self.snapshot: tracemalloc.Snapshot | None = None
        self.snapshot_bytes = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> TracedPeak:
        tracemalloc.start(TRACE_FRAMES)
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._done.wait(0.5):
            current, _ = tracemalloc.get_traced_memory()
            if current > self.snapshot_bytes * SNAPSHOT_GROWTH:
                self.snapshot = tracemalloc.take_snapshot()
                self.snapshot_bytes = current

    def __exit__(self, *exc_info: object) -> None:
        self._done.set()
        self._thread.join()
        self.peak_bytes = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()

    def report(self) -> dict[str, Any]:
        snapshot = self.snapshot
        if snapshot is None:
            return {}
        by_line = snapshot.statistics("lineno")[:TOP_SITES]
        by_product: dict[str, int] = {}
        for stat in snapshot.statistics("traceback"):
            frame = next(
                (f for f in reversed(stat.traceback) if PRODUCT_PACKAGE in f.filename),
                stat.traceback[-1],
            )
            site = f"{_short(frame.filename)}:{frame.lineno}"
            by_product[site] = by_product.get(site, 0) + stat.size
        top_product = sorted(by_product.items(), key=lambda item: -item[1])[:TOP_SITES]
        return {
            "traced_peak_mb": self.peak_bytes / 2**20,
            "snapshot_mb": self.snapshot_bytes / 2**20,
            "by_line": [
                [f"{_short(s.traceback[0].filename)}:{s.traceback[0].lineno}", s.size, s.count]
                for s in by_line
            ],
            "by_product_frame": [[site, size, 0] for site, size in top_product],
        }


def _short(filename: str) -> str:
    for marker in (f"/{PRODUCT_PACKAGE}/", "/site-packages/", "/lib/python"):
        if marker in filename:
            return marker.strip("/") + "/" + filename.split(marker, 1)[1]
    return filename


def measure_in_this_process(topics: int, system_name: str, trace: str | None) -> dict[str, Any]:
    """The three scenarios of one system at one size, in this process (the child's side)."""
    from dagster import DagsterInstance

    from benchmarks.measure import CallMetrics, peak_resident_mb, resident_mb
    from benchmarks.sandbox_process import SandboxProcess
    from benchmarks.scenarios import changed_topic, warm_up
    from benchmarks.synthetic_platform import register_new_version, seed_synthetic_platform
    from benchmarks.systems import SensorJobSystem, make_system, pointed_at
    from dzlineage_dagster.sandbox.moto_patches import GLUE_SCHEMA_QUOTA

    warnings.filterwarnings("ignore")
    result: dict[str, Any] = {"topics": topics, "system": system_name, "scenarios": {}}
    with SandboxProcess() as sandbox, tempfile.TemporaryDirectory() as storage_dir:
        warm_up(sandbox)
        sandbox.control.reset()
        sandbox.control.set_glue_limits(schemas=max(topics, GLUE_SCHEMA_QUOTA))
        started = time.perf_counter()
        platform = seed_synthetic_platform(sandbox.endpoint_url, topics)
        result["seed_seconds"] = time.perf_counter() - started
        with pointed_at(platform):
            system = make_system(system_name.removesuffix(ON_DISK), platform)
            if system_name.endswith(ON_DISK):
                system = SensorJobSystem(instance=DagsterInstance.local_temp(storage_dir))
            system.prepare()
            result["before_mb"] = resident_mb()
            tracer = TracedPeak() if trace else None
            try:
                for scenario in SCENARIOS:
                    if tracer is not None and scenario == SCENARIOS[trace == "steady"]:
                        tracer.__enter__()
                    if scenario == "one new version":
                        register_new_version(platform, changed_topic(platform))
                    sandbox.control.clear_calls()
                    started = time.perf_counter()
                    with peak_resident_mb(SAMPLE_SECONDS) as peak:
                        outcome = system.sync()
                    calls = CallMetrics.from_records(sandbox.control.calls())
                    result["scenarios"][scenario] = {
                        "ok": outcome.ok,
                        "detail": outcome.detail,
                        "seconds": time.perf_counter() - started,
                        "peak_mb": peak[0],
                        "calls": calls.total,
                        "list_schemas": calls.by_operation.get("glue.ListSchemas", 0),
                    }
            finally:
                if tracer is not None:
                    tracer.__exit__(None, None, None)
                    result["trace"] = tracer.report()
    return result


def _listing_pages(topics: int) -> Iterator[dict[str, Any]]:
    """A registry's `SchemaListItem`s as botocore parses ListSchemas' pages (100 a page, times
    as aware datetimes), one page built at a time."""
    created = datetime(2026, 12, 1, tzinfo=timezone.utc)
    arn = "arn:aws:glue:eu-west-1:123456789012:schema/cdc-registry/"
    for start in range(0, topics, 100):
        page = [
            {
                "RegistryName": "cdc-registry",
                "SchemaName": f"shop.sales.orders_{index:06d}-value",
                "SchemaArn": f"{arn}shop.sales.orders_{index:06d}-value",
                "Description": "",
                "SchemaStatus": "AVAILABLE",
                "CreatedTime": created + timedelta(seconds=index),
                "UpdatedTime": created + timedelta(seconds=index, milliseconds=1),
            }
            for index in range(start, min(start + 100, topics))
        ]
        yield from page


def _mapping_values(topics: int) -> list[str]:
    """The packed mapping of ``topics`` schemas as SSM returns it: bucket values of about as
    many records as a standard parameter takes."""
    from dzlineage_dagster.core.mapping.pack import PackEntry, encode_pack
    from dzlineage_dagster.core.mapping.ssm_names import MappingRecord

    def digest(index: int, salt: str) -> str:
        return hashlib.sha256(f"{index}/{salt}".encode()).hexdigest()

    records = [
        MappingRecord(
            schema_arn=f"arn:aws:glue:eu-west-1:123456789012:schema/cdc/shop.t{index}-value",
            topic=f"shop.t{index}",
            asset_id=f"a{index:013d}",
            asset_revision="2",
            schema_version=3,
            content_fingerprint=digest(index, "content"),
            asset_type_revision="4",
            lineage_fingerprint=digest(index, "lineage") + digest(index, "base"),
            registry_token=digest(index, "token")[:16],
            domain_id="dzd_abcdef123456",
            project_id="prj123456789",
            registry_arn="arn:aws:glue:eu-west-1:123456789012:registry/cdc",
            published_revision="2",
        )
        for index in range(topics)
    ]
    per_bucket = 20
    return [
        encode_pack({r.schema_arn: PackEntry(1, r) for r in records[start : start + per_bucket]})
        for start in range(0, topics, per_bucket)
    ]


def holders_in_this_process(topics: int) -> dict[str, Any]:
    """What the run's two collections that grow with the estate hold at ``topics`` topics,
    by tracemalloc (Python objects only): the registry listing folded into topics (its peak
    while the pages are folded, what stays), and the whole mapping decoded (what stays)."""
    from dzlineage_dagster.core.catalog.discovery import registry_topics
    from dzlineage_dagster.core.mapping.pack import decode_bucket

    values = _mapping_values(topics)
    tracemalloc.start(1)
    listing = registry_topics(_listing_pages(topics))
    listing_kept, listing_peak = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    start = tracemalloc.get_traced_memory()[0]
    mapping = {arn: entry for value in values for arn, entry in decode_bucket(value).pack.items()}
    mapping_kept = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    assert len(listing) == len(mapping) == topics
    return {
        "topics": topics,
        "listing_peak_mb": listing_peak / 2**20,
        "listing_kept_mb": listing_kept / 2**20,
        "mapping_kept_mb": mapping_kept / 2**20,
    }


def in_child(arguments: list[str], checkout: Path | None) -> dict[str, Any]:
    """This file's ``--child`` or ``--holders-child`` in a fresh interpreter, optionally with
    another checkout first on the path; its JSON answer."""
    env = dict(os.environ)
    if checkout is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(checkout), env.get("PYTHONPATH")]))
    command = [sys.executable, __file__, *arguments]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(arguments)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def holders_table(rows: list[tuple[str, dict[str, Any]]]) -> str:
    lines = [f"{'code':8}{'N':>9}{'listing fold peak':>19}{'topics kept':>13}{'mapping kept':>14}"]
    for label, row in rows:
        lines.append(
            f"{label or 'this':8}{row['topics']:>9,}{row['listing_peak_mb']:>17.1f}MB"
            f"{row['listing_kept_mb']:>11.1f}MB{row['mapping_kept_mb']:>12.1f}MB"
        )
    return "\n".join(lines)


def _row_label(result: dict[str, Any], label: str) -> str:
    return f"{label + ' ' if label else ''}{result['system']}"


def table(results: list[tuple[str, dict[str, Any]]]) -> str:
    """One row per measured process: peak above its start per scenario, and calls."""
    header = f"{'system':28}{'N':>8}{'start':>8}"
    for scenario in SCENARIOS:
        header += f"{scenario + ' MB':>20}{'calls':>8}"
    lines = [header]
    for label, result in results:
        line = f"{_row_label(result, label):28}{result['topics']:>8,}{result['before_mb']:>7.0f}M"
        for scenario in SCENARIOS:
            cell = result["scenarios"][scenario]
            growth = cell["peak_mb"] - result["before_mb"]
            line += f"{cell['peak_mb']:>13.0f} (+{growth:.0f})"
            line += f"{cell['calls']:>8,}" + ("" if cell["ok"] else "!")
        lines.append(line)
    lines += _slopes(results)
    return "\n".join(lines)


def _slopes(results: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """MB per 1,000 topics of each system's highest peak, from its smallest to largest size."""
    lines = []
    rows: dict[str, list[dict[str, Any]]] = {}
    for label, result in results:
        rows.setdefault(_row_label(result, label), []).append(result)
    for name, runs in rows.items():
        runs.sort(key=lambda r: r["topics"])
        if len(runs) < 2:
            continue
        low, high = runs[0], runs[-1]
        peak = [max(c["peak_mb"] for c in r["scenarios"].values()) for r in (low, high)]
        slope = (peak[1] - peak[0]) / ((high["topics"] - low["topics"]) / 1000)
        lines.append(f"{name}: {slope:.1f} MB per 1,000 topics (highest peak)")
    return lines


def trace_report(label: str, result: dict[str, Any]) -> str:
    trace = result.get("trace") or {}
    if not trace:
        return ""
    lines = [
        f"{_row_label(result, label)} at {result['topics']:,} topics: tracemalloc peak "
        f"{trace['traced_peak_mb']:.0f} MB; snapshot at {trace['snapshot_mb']:.0f} MB holds"
    ]
    for title, key in (
        ("by line", "by_line"),
        ("by the product's innermost frame", "by_product_frame"),
    ):
        lines.append(f"  {title}:")
        for site, size, _count in trace[key]:
            lines.append(f"    {size / 2**20:8.1f} MB  {site}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    if args_in[:1] == ["--holders-child"]:
        print(json.dumps(holders_in_this_process(int(args_in[1]))))
        return 0
    if args_in[:1] == ["--child"]:
        topics, system_name = int(args_in[1]), args_in[2]
        trace = args_in[args_in.index("--trace") + 1] if "--trace" in args_in else None
        print(json.dumps(measure_in_this_process(topics, system_name, trace)))
        return 0
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_memory", description=__doc__)
    parser.add_argument("--topics", type=int, nargs="+", default=[1_000, 3_000, 10_000])
    parser.add_argument("--systems", nargs="+", default=["sensor+job", "sync"])
    parser.add_argument(
        "--trace",
        choices=["all", "steady"],
        help="tracemalloc's top allocation sites over every scenario, or only after the first "
        "sync (steady: the idle rerun and one new version, cheap at any size)",
    )
    parser.add_argument("--compare", type=Path, help="another checkout, measured side by side")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--holders", action="store_true", help="the growing collections only")
    args = parser.parse_args(args_in)
    checkouts: list[tuple[str, Path | None]] = [("", None)]
    if args.compare is not None:
        checkouts = [("before", args.compare.resolve()), ("after", None)]
    if args.holders:
        rows = [
            (label, in_child(["--holders-child", str(topics)], checkout))
            for topics in args.topics
            for label, checkout in checkouts
        ]
        print(holders_table(rows))
        return 0
    results = []
    for topics in args.topics:
        for system_name in args.systems:
            for label, checkout in checkouts:
                trace = ["--trace", args.trace] if args.trace else []
                result = in_child(["--child", str(topics), system_name, *trace], checkout)
                results.append((label, result))
                # Each row as it is measured: a long run stopped early keeps what it measured.
                print(table([(label, result)]).splitlines()[-1], file=sys.stderr, flush=True)
                if args.trace:
                    print(trace_report(label, result), file=sys.stderr, flush=True)
    print(table(results))
    if args.trace:
        print("\n".join(trace_report(label, result) for label, result in results))
    if args.json is not None:
        args.json.write_text(json.dumps([[label, r] for label, r in results], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
