"""Fixtures of the relay tests: a seeded platform (a DataZone domain) shared by a module."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.relay_process import DZLINEAGE
from dzlineage_dagster_tests.platform import DemoPlatform, fresh_platform


@pytest.fixture(scope="module")
def module_platform(sandbox) -> Iterator[DemoPlatform]:
    """The demo platform, seeded once for the module's tests (they post distinct runs)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield fresh_platform(sandbox, monkeypatch)


def lineage_events(platform: DemoPlatform) -> list[dict]:
    """Every event DataZone holds in the platform's domain, as posted (ListLineageEvents)."""
    datazone = platform.client("datazone")
    domain = platform.settings.domain_id
    events, token = [], None
    while True:
        page = datazone.list_lineage_events(
            domainIdentifier=domain, maxResults=50, **({"nextToken": token} if token else {})
        )
        events += page["items"]
        token = page.get("nextToken")
        if not token:
            return events


def events_per_run(platform: DemoPlatform) -> Counter[tuple[str, str]]:
    """How many events DataZone holds per (run id, event type)."""
    return Counter(
        (
            item["eventSummary"]["openLineageRunEventSummary"]["runId"],
            item["eventSummary"]["openLineageRunEventSummary"]["eventType"],
        )
        for item in lineage_events(platform)
    )


def posted_event(platform: DemoPlatform, event_id: str) -> dict:
    """The event DataZone stored under ``event_id`` (GetLineageEvent returns it as posted)."""
    answer = platform.client("datazone").get_lineage_event(
        domainIdentifier=platform.settings.domain_id, identifier=event_id
    )
    return json.loads(answer["event"].read())


def datazone_calls(platform: DemoPlatform) -> int:
    return sum(
        n for (service, _), n in platform.control.call_counts().items() if service == "datazone"
    )


def create_glue_table(platform: DemoPlatform, database: str, table: str, location: str) -> None:
    """A table as a producer's catalog creates it (Spark's Iceberg GlueCatalog) before the
    event that writes it: a name and a storage location."""
    platform.client("glue").create_table(
        DatabaseName=database,
        TableInput={
            "Name": table,
            "TableType": "EXTERNAL_TABLE",
            "StorageDescriptor": {"Location": location},
        },
    )


def refused_start(environment: dict[str, str], cwd: Path, *options: str) -> str:
    """`dzlineage relay` started with settings it refuses: its stderr, once it has exited 1
    without a traceback."""
    result = subprocess.run(
        [DZLINEAGE, "relay", "--port", "0", *options],
        env=environment,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr
