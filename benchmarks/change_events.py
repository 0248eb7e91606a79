"""One change found by events against by listing: ``python -m benchmarks.change_events [N ...]``.

Per N (default 1,000 and 5,000): a fresh sandbox (child process) seeded with N schemas and the
change queue (EventBridge rules -> SQS, as deploy/change-events.yaml makes them). One topic's
new version is found by ``registry_schema_sensor`` (the listing) and another's by
``change_queue_sensor`` (its event), side by side; each detection's AWS calls and wall time,
then the one-topic run each requests (executed in process), then an idle tick of each. Calls
are counted by the sandbox's call log. Nothing here is asserted: it prints.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from datetime import datetime, timezone

from dagster import build_sensor_context

from benchmarks.scenarios import fresh_platform, print_per_size
from benchmarks.synthetic_platform import boto3_client, register_new_version
from benchmarks.systems import SensorJobSystem, environment, pointed_at
from dzlineage_dagster.sandbox.demo.change_queue import create_change_queue
from dzlineage_dagster.sensors import change_queue_tick


def measured(endpoint, action) -> tuple[object, float, Counter]:
    """``action()``'s result, wall time and AWS calls (the sandbox's log)."""
    endpoint.control.clear_calls()
    started = time.perf_counter()
    result = action()
    return result, time.perf_counter() - started, Counter(endpoint.control.call_counts())


def queue_tick(system: SensorJobSystem, state: dict) -> object:
    """One tick of ``change_queue_sensor`` on the listing system's instance (its partitions)."""
    definitions = system.definitions
    with build_sensor_context(
        instance=system.instance,
        cursor=state.get("cursor"),
        definitions=definitions,
        resources=definitions.resources,
    ) as context:
        result = change_queue_tick(
            context,
            context.resources.lineage_sync,
            context.resources.change_queue,
            datetime.now(timezone.utc),
        )
    state["cursor"] = result.cursor
    return result


def line(label: str, seconds: float, calls: Counter) -> str:
    shown = ", ".join(f"{s}.{o} {n}" for (s, o), n in sorted(calls.items()))
    return f"    {label:28} {seconds:6.2f} s  {sum(calls.values()):5} calls  ({shown})"


def measure(endpoint, topics: int) -> list[str]:
    fresh = fresh_platform(endpoint, topics)
    platform = fresh.platform
    url = create_change_queue(
        boto3_client(platform.endpoint_url, "sqs"), boto3_client(platform.endpoint_url, "events")
    )
    lines = [f"N = {topics:,} schemas (seeded in {fresh.seed_seconds:.0f} s)"]
    names = sorted(platform.topics)
    by_listing, by_event = names[len(names) // 3], names[2 * len(names) // 3]
    queue_settings = {"DZLINEAGE_CHANGE_QUEUE_URL": url, "DZLINEAGE_CHANGE_QUEUE_WAIT_SECONDS": "0"}
    with pointed_at(platform):
        listing = SensorJobSystem()
        listing.tick()  # the first listing: every partition, its first sync not run here
        register_new_version(platform, by_listing)
        result, seconds, calls = measured(endpoint, listing.tick)
        lines.append("  by listing (registry_schema_sensor, no queue):")
        lines.append(line("detection tick", seconds, calls))
        [request] = result.run_requests
        _, seconds, calls = measured(endpoint, lambda: listing.execute(request))
        lines.append(line("its run (1 topic)", seconds, calls))
        _, seconds, calls = measured(endpoint, listing.tick)
        lines.append(line("idle tick", seconds, calls))
        boto3_client(platform.endpoint_url, "sqs").purge_queue(QueueUrl=url)
        with environment(queue_settings):
            events = SensorJobSystem(instance=listing.instance)
            state: dict = {}
            register_new_version(platform, by_event)
            result, seconds, calls = measured(endpoint, lambda: queue_tick(events, state))
            lines.append("  by events (change_queue_sensor):")
            lines.append(line("detection tick", seconds, calls))
            [request] = result.run_requests
            _, seconds, calls = measured(endpoint, lambda: events.execute(request))
            lines.append(line("its run (1 topic)", seconds, calls))
            _, seconds, calls = measured(endpoint, lambda: queue_tick(events, state))
            lines.append(line("next tick (deletes it)", seconds, calls))
            _, seconds, calls = measured(endpoint, lambda: queue_tick(events, state))
            lines.append(line("idle tick", seconds, calls))
            lines.append(f"    cursor {len(state['cursor']):,} bytes")
    return lines


def main(argv: list[str] | None = None) -> int:
    return print_per_size(measure, sys.argv[1:] if argv is None else argv, [1_000, 5_000])


if __name__ == "__main__":
    raise SystemExit(main())
