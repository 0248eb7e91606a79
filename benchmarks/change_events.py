"""One change found by events against by listing, at scale: ``python -m benchmarks.change_events
[N ...]`` (default 10,000 30,000 50,000; ``--json PATH`` also writes the numbers, ``--report PATH``
prints their report again).

Per N, one sandbox (child process) emptied and seeded with N schemas and their Glue tables (the
registry's schema quota raised as ``bench_estate`` does; seeding timed on its own), then the
change queue (EventBridge rules -> SQS, as ``deploy/change-events.yaml`` makes them) and a Dagster
instance on disk (SQLite in a temporary ``DAGSTER_HOME``, as a deployment's storage is outside
its processes). Each step below runs in a fresh Python process of its own, as a sensor tick and
a run do in a deployment, so its peak memory is its own (``VmHWM``; the process's resident
memory before the step, its imports and definitions, is printed too):

1. ``registry_schema_sensor``'s first tick lists the registry and adds the N partitions (its
   first sync is not run), then one run syncs the two topics about to change (not measured:
   each is then a topic synced before, as in a running deployment).
2. By listing (no queue): one topic gets a new version; the detection tick, the one-topic run it
   requests, an idle tick 11 minutes later (the cursor then holds only recent changes).
3. By events (``change_queue_sensor``): another topic gets a new version; the detection tick,
   the run, the next tick (deletes the message), an idle tick.

Measured per step: wall time inside the process (imports and definitions loading excluded),
AWS calls (the sandbox's exact log), the time spent in AWS calls by operation (botocore's
``_make_api_call`` timed, summed over threads), the Dagster storage calls and their time (the
instance's event log, run and schedule storages' methods, outermost calls only), the cursor's
size. "Event to DataZone" is the detection tick's time plus the run's: a deployment adds up to
one sensor interval (30 s for ``change_queue_sensor``) and the run's process start. The idle
ticks do not long-poll here (``DZLINEAGE_CHANGE_QUEUE_WAIT_SECONDS=0``). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import FunctionType, MethodType
from typing import Any

#: The listing sensor's idle tick runs this much later than the changes: they have settled
#: (``SETTLING_SECONDS``, 10 minutes), and its cursor holds only what is newer.
SETTLED = timedelta(minutes=11)
QUEUE_WAIT = {"DZLINEAGE_CHANGE_QUEUE_WAIT_SECONDS": "0"}


# --- the measured process -------------------------------------------------------------------


class Timings:
    """Time and calls by AWS operation and by Dagster storage method, in this process."""

    def __init__(self) -> None:
        self.aws: defaultdict[str, float] = defaultdict(float)
        self.storage: defaultdict[str, list[float]] = defaultdict(lambda: [0, 0.0])
        self._lock = threading.Lock()
        self._depth = threading.local()

    def time_aws_calls(self) -> None:
        from botocore.client import BaseClient

        original = BaseClient._make_api_call
        timings = self

        def timed(client, operation_name, api_params):
            started = time.perf_counter()
            try:
                return original(client, operation_name, api_params)
            finally:
                key = f"{client.meta.service_model.service_name}.{operation_name}"
                with timings._lock:
                    timings.aws[key] += time.perf_counter() - started

        BaseClient._make_api_call = timed

    def time_storage(self, instance: Any) -> None:
        for label, storage in (
            ("event_log", instance.event_log_storage),
            ("run", instance.run_storage),
            ("schedule", instance.schedule_storage),
        ):
            if storage is None:
                continue
            for name in dir(type(storage)):
                if name.startswith("_"):
                    continue
                if not isinstance(inspect.getattr_static(type(storage), name), FunctionType):
                    continue
                method = getattr(storage, name)
                if isinstance(method, MethodType):
                    setattr(storage, name, self._timed(f"{label}.{name}", method))

    def _timed(self, key: str, method: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            depth = getattr(self._depth, "value", 0)
            self._depth.value = depth + 1
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self._depth.value = depth
                if depth == 0:
                    with self._lock:
                        entry = self.storage[key]
                        entry[0] += 1
                        entry[1] += time.perf_counter() - started

        return timed


def high_water_mb() -> float:
    """This process's peak resident memory (Linux ``VmHWM``, reset by ``exec``: where
    ``ru_maxrss`` keeps the forking parent's, which holds the seeded platform), in MB."""
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def _request_json(request: Any) -> dict[str, Any]:
    return {
        "job_name": request.job_name,
        "run_key": request.run_key,
        "tags": dict(request.tags),
        "run_config": dict(request.run_config or {}),
    }


def run_step(step: str, state: dict[str, Any]) -> dict[str, Any]:
    """One step in this (fresh) process: a tick of either sensor, or the runs of ``state``."""
    warnings.filterwarnings("ignore")
    from dagster import (
        AddDynamicPartitionsRequest,
        DagsterInstance,
        DeleteDynamicPartitionsRequest,
        RunRequest,
        build_sensor_context,
    )

    from benchmarks.measure import resident_mb
    from benchmarks.systems import QUIET_RUN_CONFIG, code_location
    from dzlineage_dagster.sensors import change_queue_tick, registry_schema_tick

    definitions = code_location(os.environ)
    instance = DagsterInstance.get()
    timings = Timings()
    timings.time_aws_calls()
    timings.time_storage(instance)
    now = datetime.now(timezone.utc) + timedelta(seconds=state.get("later_seconds", 0))
    before_mb = resident_mb()
    started = time.perf_counter()
    answer: dict[str, Any] = {}
    if step == "run":
        for request in state["requests"]:
            job = definitions.resolve_job_def(request["job_name"])
            result = job.execute_in_process(
                instance=instance,
                tags=request["tags"],
                run_config={**request["run_config"], **QUIET_RUN_CONFIG},
                raise_on_error=False,
            )
            answer.setdefault("succeeded", []).append(result.success)
    else:
        with build_sensor_context(
            instance=instance,
            cursor=state.get("cursor"),
            definitions=definitions,
            resources=definitions.resources,
        ) as context:
            resources = context.resources
            if step == "listing":
                result = registry_schema_tick(context, resources.lineage_sync, now)
            else:
                result = change_queue_tick(
                    context, resources.lineage_sync, resources.change_queue, now
                )
        for request in getattr(result, "dynamic_partitions_requests", None) or []:
            keys = list(request.partition_keys)
            if isinstance(request, AddDynamicPartitionsRequest):
                instance.add_dynamic_partitions(request.partitions_def_name, keys)
            elif isinstance(request, DeleteDynamicPartitionsRequest):
                for key in keys:
                    instance.delete_dynamic_partition(request.partitions_def_name, key)
        answer["cursor"] = result.cursor
        answer["requests"] = [
            _request_json(r) for r in result.run_requests or [] if isinstance(r, RunRequest)
        ]
    answer.update(
        seconds=time.perf_counter() - started,
        before_mb=before_mb,
        peak_mb=high_water_mb(),
        aws_seconds=dict(timings.aws),
        storage=dict(timings.storage),
    )
    return answer


# --- the driving process --------------------------------------------------------------------


def in_fresh_process(
    step: str, state: dict[str, Any], environ: dict[str, str], control: Any
) -> dict[str, Any]:
    """``step`` in a child interpreter with ``environ``; its answer and the AWS calls it made."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(state, handle)
    control.clear_calls()
    command = [sys.executable, "-m", "benchmarks.change_events", "--step", step, handle.name]
    done = subprocess.run(command, env=environ, capture_output=True, text=True, check=False)
    calls = {
        f"{service}.{operation}": n for (service, operation), n in control.call_counts().items()
    }
    Path(handle.name).unlink()
    if done.returncode != 0:
        raise RuntimeError(f"step {step} failed:\n{done.stderr[-4000:]}")
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    answer["calls"] = dict(calls)
    return answer


def measure_size(sandbox: Any, topics: int, progress: Any) -> dict[str, Any]:
    from benchmarks.synthetic_platform import (
        boto3_client,
        register_new_version,
        seed_synthetic_platform,
    )
    from benchmarks.systems import pointed_at
    from dzlineage_dagster.sandbox.demo.change_queue import create_change_queue
    from dzlineage_dagster.sandbox.moto_patches import GLUE_SCHEMA_QUOTA, GLUE_SCHEMA_VERSION_CAP
    from dzlineage_dagster.sensors import catalog_sync_request

    sandbox.control.reset()
    # Every schema's first version counts against moto's account-wide cap of versions (100,000):
    # raised with the schemas, so the changes below can be registered at 100,000 topics.
    sandbox.control.set_glue_limits(
        schemas=max(topics, GLUE_SCHEMA_QUOTA),
        schema_versions=max(GLUE_SCHEMA_VERSION_CAP, 2 * topics),
    )
    started = time.perf_counter()
    platform = seed_synthetic_platform(sandbox.endpoint_url, topics)
    result: dict[str, Any] = {"topics": topics, "seed_seconds": time.perf_counter() - started}
    progress(f"N={topics:,}: seeded in {result['seed_seconds']:.0f} s")
    sqs = boto3_client(platform.endpoint_url, "sqs")
    url = create_change_queue(sqs, boto3_client(platform.endpoint_url, "events"))
    names = sorted(platform.topics)
    by_listing, by_event = names[len(names) // 3], names[2 * len(names) // 3]
    with (
        tempfile.TemporaryDirectory(prefix="dzlineage-change-events-") as home,
        pointed_at(platform),
    ):
        listing_env = {**os.environ, "DAGSTER_HOME": home}
        listing_env.pop("DZLINEAGE_CHANGE_QUEUE_URL", None)
        queue_env = {**listing_env, "DZLINEAGE_CHANGE_QUEUE_URL": url, **QUEUE_WAIT}

        def step(label: str, name: str, state: dict[str, Any], environ: dict[str, str]) -> dict:
            answer = in_fresh_process(name, state, environ, sandbox.control)
            result[label] = answer
            progress(
                f"N={topics:,}: {label}: {answer['seconds']:.2f} s, "
                f"{sum(answer['calls'].values())} calls, peak {answer['peak_mb']:.0f} MB"
            )
            return answer

        first = step("first listing", "listing", {}, listing_env)
        warm = [
            json.loads(json.dumps(_warm_request(catalog_sync_request, topic)))
            for topic in (by_listing, by_event)
        ]
        step("warm-up run", "run", {"requests": warm}, listing_env)

        register_new_version(platform, by_listing)
        detected = step("listing: detection", "listing", {"cursor": first["cursor"]}, listing_env)
        step("listing: run", "run", {"requests": detected["requests"]}, listing_env)
        step(
            "listing: idle",
            "listing",
            {"cursor": detected["cursor"], "later_seconds": SETTLED.total_seconds()},
            listing_env,
        )
        sqs.purge_queue(QueueUrl=url)  # the listing's change was announced too

        register_new_version(platform, by_event)
        event_at = time.perf_counter()
        found = step("events: detection", "queue", {}, queue_env)
        step("events: run", "run", {"requests": found["requests"]}, queue_env)
        result["events: wall from the event, process starts included"] = (
            time.perf_counter() - event_at
        )
        deleted = step("events: next tick", "queue", {"cursor": found["cursor"]}, queue_env)
        step("events: idle", "queue", {"cursor": deleted["cursor"]}, queue_env)
    return result


def _warm_request(catalog_sync_request: Any, topic: str) -> dict[str, Any]:
    return _request_json(catalog_sync_request(topic, topic, {topic: "warm-up"}))


# --- the report -----------------------------------------------------------------------------


def _calls(answer: dict[str, Any]) -> int:
    return sum(answer["calls"].values())


def _storage(answer: dict[str, Any]) -> tuple[int, float]:
    entries = answer["storage"].values()
    return sum(int(n) for n, _ in entries), sum(s for _, s in entries)


def _cursor(answer: dict[str, Any]) -> int:
    return len(answer.get("cursor") or "")


ROWS: list[tuple[str, str, str, Any]] = [
    # (label, listing step, events step, value of a step)
    ("detection tick: AWS calls", "listing: detection", "events: detection", _calls),
    ("detection tick: s", "listing: detection", "events: detection", lambda a: a["seconds"]),
    ("the one-topic run: AWS calls", "listing: run", "events: run", _calls),
    ("the one-topic run: s", "listing: run", "events: run", lambda a: a["seconds"]),
    ("idle tick: AWS calls", "listing: idle", "events: idle", _calls),
    ("idle tick: s", "listing: idle", "events: idle", lambda a: a["seconds"]),
    ("cursor after detection: bytes", "listing: detection", "events: detection", _cursor),
    ("cursor, idle (settled): bytes", "listing: idle", "events: idle", _cursor),
    (
        "detection tick: Dagster storage calls",
        "listing: detection",
        "events: detection",
        lambda a: _storage(a)[0],
    ),
    (
        "detection tick: Dagster storage s",
        "listing: detection",
        "events: detection",
        lambda a: _storage(a)[1],
    ),
    (
        "idle tick: Dagster storage calls",
        "listing: idle",
        "events: idle",
        lambda a: _storage(a)[0],
    ),
    ("detection tick: peak MB", "listing: detection", "events: detection", lambda a: a["peak_mb"]),
    ("the run: peak MB", "listing: run", "events: run", lambda a: a["peak_mb"]),
]


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}" if value < 100 else f"{value:,.0f}"
    return f"{value:,}"


def table(results: list[dict[str, Any]]) -> str:
    header = ["", *(f"{kind} {r['topics']:,}" for r in results for kind in ("listing", "events"))]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, listing, events, value in ROWS:
        cells = [_shown(value(r[step])) for r in results for step in (listing, events)]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    event_to_datazone = [
        _shown(r[listing]["seconds"] + r[run]["seconds"])
        for r in results
        for listing, run in (
            ("listing: detection", "listing: run"),
            ("events: detection", "events: run"),
        )
    ]
    lines.append("| change to DataZone (tick + run): s | " + " | ".join(event_to_datazone) + " |")
    return "\n".join(lines)


def where_the_time_goes(result: dict[str, Any]) -> list[str]:
    lines = [
        f"N = {result['topics']:,}: seeded in {result['seed_seconds']:.0f} s; first listing tick "
        f"(adds the partitions) {result['first listing']['seconds']:.1f} s, "
        f"{_calls(result['first listing'])} calls, peak {result['first listing']['peak_mb']:.0f} "
        f"MB; events: from the new version to its run's end, two process starts included, "
        f"{result['events: wall from the event, process starts included']:.1f} s"
    ]
    for label in (
        "listing: detection",
        "listing: run",
        "events: detection",
        "events: run",
        "events: next tick",
        "events: idle",
    ):
        answer = result[label]
        aws = sorted(answer["aws_seconds"].items(), key=lambda item: -item[1])[:4]
        storage = sorted(answer["storage"].items(), key=lambda item: -item[1][1])[:3]
        calls = ", ".join(f"{k} {n}" for k, n in sorted(answer["calls"].items()))
        lines.append(
            f"  {label:20} {answer['seconds']:7.2f} s (process before: {answer['before_mb']:.0f} "
            f"MB, peak {answer['peak_mb']:.0f} MB); calls: {calls or 'none'}"
        )
        aws_total, storage_total = sum(answer["aws_seconds"].values()), _storage(answer)[1]
        lines.append(
            f"    AWS calls {aws_total:.2f} s (summed over threads), Dagster storage "
            f"{storage_total:.2f} s, the rest (Python: Dagster's machinery, the product) "
            f"{max(0.0, answer['seconds'] - aws_total - storage_total):.2f} s"
        )
        lines.append(
            "    AWS time: "
            + (", ".join(f"{k} {s:.2f} s" for k, s in aws) or "none")
            + "; Dagster storage: "
            + (", ".join(f"{k} {int(n)}x {s:.2f} s" for k, (n, s) in storage) or "none")
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.change_events", description=__doc__)
    parser.add_argument("topics", type=int, nargs="*", default=[10_000, 30_000, 50_000])
    parser.add_argument("--json", type=Path, help="also write the measurements here")
    parser.add_argument("--report", type=Path, help="print the report of a --json file, no run")
    parser.add_argument("--step", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.report:
        saved = json.loads(args.report.read_text())
        for result in saved:
            print(*where_the_time_goes(result), sep="\n")
        print(table(saved))
        return 0
    if args.step:
        name, state_path = args.step
        print(json.dumps(run_step(name, json.loads(Path(state_path).read_text()))))
        return 0
    from benchmarks.sandbox_process import SandboxProcess
    from benchmarks.scenarios import warm_up

    warnings.filterwarnings("ignore")
    started = time.perf_counter()

    def progress(message: str) -> None:
        print(f"[{time.perf_counter() - started:7.1f}s] {message}", file=sys.stderr, flush=True)

    results = []
    with SandboxProcess() as sandbox:
        warm_up(sandbox)
        for topics in args.topics:
            results.append(measure_size(sandbox, topics, progress))
            print(*where_the_time_goes(results[-1]), sep="\n", flush=True)
            if args.json:
                args.json.write_text(json.dumps(results, indent=1))
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
