"""The registry sensor at a large registry: ``python -m benchmarks.sensor_scale [N ...]``.

Per N (default 10,000): a fresh sandbox (child process) seeded with N schemas, then two ticks of
``registry_schema_sensor`` (the first adds N partitions and requests the first sync, the second
is idle) and a third after one schema got a new version. Prints each tick's wall time (Dagster's
limit is 60 s) and calls, and the cursor's size next to what a cursor holding every topic's
token would take.
"""

from __future__ import annotations

import json
import sys
import time
from datetime import datetime, timedelta, timezone

from benchmarks.scenarios import changed_topic, fresh_platform, print_per_size
from benchmarks.synthetic_platform import boto3_client, register_new_version
from benchmarks.systems import SensorJobSystem, pointed_at
from dzlineage_dagster.core.catalog.discovery import SensorCursor, registry_topics


def measure_sensor(endpoint, topics: int) -> list[str]:
    fresh = fresh_platform(endpoint, topics)
    platform = fresh.platform
    lines = [f"N = {topics:,} schemas (seeded in {fresh.seed_seconds:.0f} s)"]
    with pointed_at(platform):
        system = SensorJobSystem()
        for label in ("first tick", "idle tick", "one new version"):
            if label == "one new version":
                register_new_version(platform, changed_topic(platform))
            endpoint.control.clear_calls()
            started = time.perf_counter()
            result = system.tick()
            seconds = time.perf_counter() - started
            calls = len(endpoint.control.calls())
            requested = len(result.run_requests or [])
            lines.append(
                f"  {label:16} {seconds:6.2f} s  {calls:4} calls  {requested} runs requested  "
                f"cursor {len(system.cursor or ''):,} bytes"
            )
        glue = boto3_client(platform.endpoint_url, "glue")
        pages = glue.get_paginator("list_schemas").paginate(
            RegistryId={"RegistryName": platform.registry_name}
        )
        current = registry_topics(item for page in pages for item in page["Schemas"])
        every_token = json.dumps({topic: info.change_token for topic, info in current.items()})
        settled = SensorCursor.after(current, datetime.now(timezone.utc) + timedelta(minutes=11))
        lines.append(
            f"  cursor once these changes settle (a tick 11 min later): "
            f"{len(settled.to_json()):,} bytes; one with every topic's token: "
            f"{len(every_token):,} bytes"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    return print_per_size(measure_sensor, sys.argv[1:] if argv is None else argv, [10_000])


if __name__ == "__main__":
    raise SystemExit(main())
