"""The mapping store at scale, side by side: ``python -m benchmarks.bench_mapping_store``.

A standard-tier sandbox account (AWS's 10,000-parameter cap, enforced) that already holds
``--foreign`` parameters of other applications; for each layout, in its own fresh state:

- *first sync*: the store as a first sync uses it, every topic's record staged and committed
  from ``--threads`` threads (the sync's concurrency), after the whole-mapping read;
- *read all*: a new run reading the whole mapping (what a headless sync does when the registry
  digest moved and the mapping must be compared);
- *one new version*: a new run reading one topic by name and committing its new record (a
  one-topic Dagster run, or a headless sync that found one changed schema).

The one-per-topic layout stops at the cap (``ParameterLimitExceeded``): the table says after how
many topics. Only SSM is measured (the DataZone side of a sync is the same in both layouts; see
``benchmarks/bench_sync.py``). Calls come from the sandbox's own log, times from this process;
the sandbox runs in a child process on a free port.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from benchmarks.sandbox_process import SandboxProcess
from dzlineage_dagster.core.mapping.pack import parameters_needed
from dzlineage_dagster.core.mapping.ssm_names import MappingRecord
from dzlineage_dagster.resources import SsmMappingResource
from dzlineage_dagster.sync.catalog.mapping_store import PACKED, PER_TOPIC, MappingStore
from dzlineage_dagster.sync.errors import SyncError

PREFIX = "/dzlineage/bench"
DOMAIN, PROJECT = "dzd_bench1234567", "prj_bench12345"
REGISTRY = "arn:aws:glue:us-east-1:123456789012:registry/cdc"


def bench_record(index: int, revision: str = "1") -> MappingRecord:
    """A record as the sync writes it: SHA-256 fingerprints, a lineage state, a scope."""
    digest = hashlib.sha256(f"{index}/{revision}".encode()).hexdigest()
    base = hashlib.sha256(f"base {index}".encode()).hexdigest()
    return MappingRecord(
        schema_arn=f"arn:aws:glue:us-east-1:123456789012:schema/cdc/shop.inventory.t{index:05d}-value",
        topic=f"shop.inventory.t{index:05d}",
        asset_id=f"a{hashlib.sha256(str(index).encode()).hexdigest()[:13]}",
        asset_revision=revision,
        schema_version=int(revision),
        content_fingerprint=digest,
        asset_type_revision="3",
        lineage_fingerprint=(
            f'{{"v":2,"content":"{digest}","base":"{base}","jobs":[["source",'
            f'"kafka-connect://cdc","shop-debezium-source"],["sink","kafka-connect://cdc",'
            f'"iceberg-sink"]]}}'
        ),
        registry_token=hashlib.sha256(f"token {index}/{revision}".encode()).hexdigest(),
        domain_id=DOMAIN,
        project_id=PROJECT,
        registry_arn=REGISTRY,
        published_revision=revision,
    )


@dataclass
class Measured:
    calls: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    outcome: str = "ok"


@dataclass
class LayoutResult:
    layout: str
    first_sync: Measured
    read_all: Measured
    one_new_version: Measured
    parameters: int


def store(layout: str) -> MappingStore:
    return MappingStore(
        SsmMappingResource(), PREFIX, domain_id=DOMAIN, project_id=PROJECT, layout=layout
    )


def measure(sandbox: SandboxProcess, work) -> Measured:
    sandbox.control.clear_calls()
    started = time.monotonic()
    outcome = "ok"
    try:
        result = work()
        if isinstance(result, str):
            outcome = result
    except SyncError as error:
        outcome = f"failed: {error}"
    seconds = time.monotonic() - started
    calls = Counter(
        {op: n for (service, op), n in sandbox.control.call_counts().items() if service == "ssm"}
    )
    return Measured(calls, seconds, outcome)


def first_sync(layout: str, topics: int, threads: int) -> str:
    run = store(layout)
    run.all()
    written = 0

    def commit(index: int) -> None:
        nonlocal written
        record = bench_record(index)
        run.stage(record)
        run.commit(record.schema_arn)
        written += 1

    with ThreadPoolExecutor(max_workers=threads) as pool:
        for done in pool.map(commit, range(topics)):
            del done
    return f"ok ({written} topics)"


def one_new_version(layout: str, topics: int) -> str:
    run = store(layout)
    changed = bench_record(topics // 2, revision="2")
    run.read([changed.schema_arn])
    if run.get(changed.schema_arn) is None:
        return "its record was never written"
    run.stage(changed)
    run.commit(changed.schema_arn)
    return "ok"


def standard_parameters(sandbox: SandboxProcess) -> int:
    ssm = SsmMappingResource().client()
    return sum(
        len(page["Parameters"]) for page in ssm.get_paginator("describe_parameters").paginate()
    )


def bench_layout(sandbox: SandboxProcess, layout: str, topics: int, foreign: int, threads: int):
    sandbox.control.reset()
    ssm = SsmMappingResource().client()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(
            pool.map(
                lambda i: ssm.put_parameter(
                    Name=f"/other-application/p{i:05d}", Value="x", Type="String"
                ),
                range(foreign),
            )
        )
    first = measure(sandbox, lambda: first_sync(layout, topics, threads))
    everything = measure(sandbox, lambda: f"ok ({len(store(layout).all())} records)")
    one = measure(sandbox, lambda: one_new_version(layout, topics))
    return LayoutResult(layout, first, everything, one, standard_parameters(sandbox) - foreign)


def _calls(measured: Measured) -> str:
    return ", ".join(f"{op} {n}" for op, n in sorted(measured.calls.items())) or "none"


def report(results: list[LayoutResult], topics: int, foreign: int, threads: int) -> str:
    lines = [
        f"mapping store: {topics} topics, standard tier (cap 10,000), {foreign} foreign "
        f"parameters present, {threads} threads",
        f"{'':18}" + "".join(f"{r.layout:>44}" for r in results),
    ]
    rows = [
        ("first sync calls", lambda r: _calls(r.first_sync)),
        ("first sync time", lambda r: f"{r.first_sync.seconds:.1f} s"),
        ("first sync result", lambda r: r.first_sync.outcome[:42]),
        ("parameters used", lambda r: str(r.parameters)),
        ("read all calls", lambda r: _calls(r.read_all)),
        ("read all time", lambda r: f"{r.read_all.seconds:.2f} s"),
        ("read all result", lambda r: r.read_all.outcome[:42]),
        ("1 new version calls", lambda r: _calls(r.one_new_version)),
        ("1 new version time", lambda r: f"{r.one_new_version.seconds:.2f} s"),
        ("1 new version", lambda r: r.one_new_version.outcome[:42]),
    ]
    for label, cell in rows:
        lines.append(f"{label:18}" + "".join(f"{cell(r):>44}" for r in results))
    lines.append(f"estimate (parameters_needed): {parameters_needed(topics)} standard parameters")
    for result in results:
        if result.first_sync.outcome.startswith("failed"):
            lines.append(f"{result.layout}: {result.first_sync.outcome}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_mapping_store")
    parser.add_argument("--topics", type=int, default=20_000)
    parser.add_argument("--foreign", type=int, default=2_000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--layouts", nargs="+", default=[PER_TOPIC, PACKED])
    args = parser.parse_args(argv)
    with SandboxProcess() as sandbox:
        os.environ.update(sandbox.environment())
        results = [
            bench_layout(sandbox, layout, args.topics, args.foreign, args.threads)
            for layout in args.layouts
        ]
    print(report(results, args.topics, args.foreign, args.threads))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
