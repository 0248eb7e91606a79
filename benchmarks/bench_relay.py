"""How fast the OpenLineage relay takes events and gets them into DataZone, and at what cost.

Several concurrent producers (openlineage-python's own ``HttpTransport``, one per thread) post
run events to a ``dzlineage relay`` process on loopback, which forwards them to a sandbox in
another process. Per scenario the table shows events/s accepted (every producer had its
answer) and forwarded (DataZone had every event), the AWS calls from the sandbox's exact call
log, the relay's peak memory, and whether every event arrived exactly once.

    .venv/bin/python -m benchmarks.bench_relay                      # 3000 events, 6 producers
    .venv/bin/python -m benchmarks.bench_relay --events 500 --clients 4 --json out.json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState

from benchmarks.relay_process import API_KEY, RelayProcess, relay_environment, running_relay
from benchmarks.sandbox_process import SandboxProcess
from benchmarks.synthetic_platform import boto3_client
from dzlineage_dagster.sandbox.demo.seed import seed_platform
from dzlineage_dagster.sandbox.server.faults import FaultRule

PRODUCER = "https://github.com/dzlineage/dzlineage-dagster/benchmarks/bench_relay"


@dataclass(frozen=True)
class Scenario:
    name: str
    compression: str | None = None
    #: share of PostLineageEvent calls the sandbox throttles (the relay spools and retries)
    throttle_rate: float = 0.0


SCENARIOS = (
    Scenario("plain JSON"),
    Scenario("gzip", compression="gzip"),
    Scenario("5% throttled", throttle_rate=0.05),
)


@dataclass(frozen=True)
class LoadResult:
    scenario: str
    events: int
    clients: int
    accept_seconds: float
    forward_seconds: float
    answers: dict[str, int]
    relay_status: dict[str, Any]
    aws_calls: dict[str, int]
    delivered_once: int
    lost: int
    duplicated: int
    peak_rss_mb: float | None

    @property
    def accepted_per_second(self) -> float:
        return self.events / self.accept_seconds

    @property
    def forwarded_per_second(self) -> float:
        return self.events / self.forward_seconds


def producer_events(count: int, tag: str) -> list[RunEvent]:
    """START/COMPLETE pairs of distinct runs, each reading a topic and writing a table."""
    events = []
    for index in range(0, count, 2):
        run = Run(runId=str(uuid.uuid4()))
        job = Job(namespace="bench", name=f"{tag}_job_{index // 2}")
        datasets = {
            "inputs": [InputDataset("kafka://broker:9092", f"bench.topic_{index}")],
            "outputs": [OutputDataset("s3://bench", f"table_{index}")],
        }
        for state in (RunState.START, RunState.COMPLETE)[: count - index]:
            events.append(
                RunEvent(
                    eventType=state,
                    eventTime=time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
                    run=run,
                    job=job,
                    producer=PRODUCER,
                    **datasets,
                )
            )
    return events


def post_concurrently(
    relay: RelayProcess, events: list[RunEvent], clients: int, compression: str | None
) -> Counter[str]:
    """Each client thread posts its share through its own HttpTransport; answers by status."""
    answers: Counter[str] = Counter()
    lock = threading.Lock()

    def client(share: list[RunEvent]) -> None:
        transport = relay.transport(compression=compression)
        for event in share:
            status = transport.emit(event).json()["status"]
            with lock:
                answers[status] += 1

    threads = [threading.Thread(target=client, args=(events[i::clients],)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def delivered_counts(datazone: Any, domain_id: str) -> Counter[tuple[str, str]]:
    """Events DataZone holds per (run id, event type), all pages of ListLineageEvents."""
    counts: Counter[tuple[str, str]] = Counter()
    paginator_args: dict[str, Any] = {"domainIdentifier": domain_id, "maxResults": 50}
    while True:
        page = datazone.list_lineage_events(**paginator_args)
        for item in page["items"]:
            summary = item["eventSummary"]["openLineageRunEventSummary"]
            counts[(summary["runId"], summary["eventType"])] += 1
        if not page.get("nextToken"):
            return counts
        paginator_args["nextToken"] = page["nextToken"]


def peak_rss_mb(pid: int) -> float | None:
    """The process's peak resident memory (Linux /proc), in MB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def run_load(
    relay: RelayProcess,
    control: Any,
    datazone: Any,
    domain_id: str,
    *,
    scenario: Scenario,
    events: int,
    clients: int,
    timeout: float = 600.0,
) -> LoadResult:
    """One scenario against a running relay; DataZone is read back to count every event."""
    load = producer_events(events, tag=uuid.uuid4().hex[:8])
    before = delivered_counts(datazone, domain_id)
    start_status = relay.status()
    control.clear_calls()
    if scenario.throttle_rate:
        control.set_faults(
            FaultRule(
                service="datazone",
                operation="PostLineageEvent",
                kind="throttle",
                rate=scenario.throttle_rate,
            )
        )
    try:
        started = time.monotonic()
        answers = post_concurrently(relay, load, clients, scenario.compression)
        accepted = time.monotonic() - started
        target = start_status["forwarded"] + events
        status = relay.wait_until(
            lambda s: s["forwarded"] >= target and s["spool_depth"] == 0, timeout=timeout
        )
        forwarded = time.monotonic() - started
    finally:
        control.clear_faults()
    calls = Counter(f"{r.service}.{r.operation}" for r in control.calls())
    after = delivered_counts(datazone, domain_id)
    expected = Counter((e.run.runId, e.eventType.value) for e in load)
    arrived = {key: after[key] - before[key] for key in expected}
    return LoadResult(
        scenario=scenario.name,
        events=events,
        clients=clients,
        accept_seconds=accepted,
        forward_seconds=forwarded,
        answers=dict(answers),
        relay_status=status,
        aws_calls=dict(sorted(calls.items())),
        delivered_once=sum(1 for n in arrived.values() if n == 1),
        lost=sum(1 for n in arrived.values() if n == 0),
        duplicated=sum(1 for n in arrived.values() if n > 1),
        peak_rss_mb=peak_rss_mb(relay.process.pid),
    )


def table(results: list[LoadResult]) -> str:
    header = (
        "scenario", "events", "clients", "accepted/s", "forwarded/s", "answers",
        "AWS calls", "PostLineageEvent", "calls/event", "once", "lost", "dup", "relay peak MB",
    )  # fmt: skip
    rows = [header]
    for r in results:
        total = sum(r.aws_calls.values())
        rows.append(
            (
                r.scenario,
                str(r.events),
                str(r.clients),
                f"{r.accepted_per_second:.0f}",
                f"{r.forwarded_per_second:.0f}",
                " ".join(f"{k}={v}" for k, v in sorted(r.answers.items())),
                str(total),
                str(r.aws_calls.get("datazone.PostLineageEvent", 0)),
                f"{total / r.events:.2f}",
                str(r.delivered_once),
                str(r.lost),
                str(r.duplicated),
                f"{r.peak_rss_mb:.0f}" if r.peak_rss_mb else "?",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"
        for row in rows
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def bench(
    events: int, clients: int, scenarios: tuple[Scenario, ...] = SCENARIOS
) -> Iterator[LoadResult]:
    """Every scenario in turn against one sandbox process and one relay process."""
    with SandboxProcess() as sandbox, tempfile.TemporaryDirectory() as spool_dir:
        platform = seed_platform(sandbox.endpoint_url)
        environment = relay_environment(
            {**sandbox.environment(), **platform}, DZLINEAGE_RELAY_API_KEY=API_KEY
        )
        datazone = boto3_client(sandbox.endpoint_url, "datazone")
        with running_relay(environment, Path(spool_dir) / "spool.db") as relay:
            # Unmeasured: the first calls build botocore's models and the sandbox's handlers.
            post_concurrently(relay, producer_events(2 * clients, "warm_up"), clients, None)
            for scenario in scenarios:
                yield run_load(
                    relay,
                    sandbox.control,
                    datazone,
                    platform["DZLINEAGE_DOMAIN_ID"],
                    scenario=scenario,
                    events=events,
                    clients=clients,
                )
            relay.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_relay", description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=3000, help="events per scenario")
    parser.add_argument("--clients", type=int, default=6, help="concurrent producers")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write every number")
    args = parser.parse_args(argv)
    results = list(bench(args.events, args.clients))
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=2, default=str))
    return 0 if all(r.lost == r.duplicated == 0 for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
