"""A run someone else posts under one of the sync's own jobs, straight to DataZone (past the
relay, which refuses it), replaces the platform's edge; the next sync, plain or reconcile,
notices it, posts the true edge again under a new run dated after it, and says so."""

from __future__ import annotations

import json
import logging
import re
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.core.lineage.openlineage import hop_job

TOPIC = "shop.sales.orders"
TABLE = "lakehouse.sales_orders"
#: The product's sink job of the orders topic, as the sync names it.
SINK_JOB = hop_job("shop-iceberg-sink", TOPIC)


@pytest.fixture
def synced(platform, capsys):
    assert dzlineage(["sync"]) == 0
    capsys.readouterr()
    return platform


def sink_event(platform) -> dict:
    """The event the sync posted for the orders topic's sink hop, as DataZone keeps it."""
    datazone = platform.client("datazone")
    domain = platform.settings.domain_id
    pages = datazone.get_paginator("list_lineage_events").paginate(domainIdentifier=domain)
    for item in (item for page in pages for item in page["items"]):
        job = item["eventSummary"]["openLineageRunEventSummary"]["job"]
        if (job["namespace"], job["name"]) == SINK_JOB:
            answer = datazone.get_lineage_event(domainIdentifier=domain, identifier=item["id"])
            return json.loads(answer["event"].read())
    raise AssertionError(f"no event of {SINK_JOB}")


def forge(platform, at: datetime | None = None) -> str:
    """A COMPLETE under the sync's sink job claiming the topic now feeds a revenue dataset
    (none of the sync's tables), posted with boto3 as anyone with datazone:PostLineageEvent
    could, dated ``at`` (default now); its run id."""
    event = sink_event(platform)
    event["outputs"] = [{"namespace": "s3://lake", "name": "warehouse/daily_revenue"}]
    event["run"] = {"runId": str(uuid.uuid4())}
    event["eventTime"] = (at or datetime.now(timezone.utc)).isoformat()
    platform.client("datazone").post_lineage_event(
        domainIdentifier=platform.settings.domain_id, event=json.dumps(event).encode()
    )
    return event["run"]["runId"]


def upstream(capsys) -> str:
    assert dzlineage(["trace", TABLE, "--upstream", "--no-owners"]) == 0
    return capsys.readouterr().out


def orphan_topics(capsys) -> list[str]:
    assert dzlineage(["orphans", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)["topics_without_downstream_table"]


@pytest.mark.parametrize("command", [["sync"], ["sync", "--reconcile"]], ids=" ".join)
def test_a_foreign_run_on_the_syncs_job_is_noticed_and_the_true_edge_posted_again(
    synced, capsys, caplog, command
):
    assert TOPIC in upstream(capsys)
    foreign = forge(synced)
    assert TOPIC not in upstream(capsys)  # the symptom: the edge is gone
    assert TOPIC in orphan_topics(capsys)

    assert dzlineage([*command, "--dry-run"]) == 0
    plan = capsys.readouterr().out
    assert re.search(
        rf"^{re.escape(TOPIC)}\s.*re-post: .*not the sync's: run {foreign} ", plan, re.M
    )

    with caplog.at_level(logging.WARNING):
        assert dzlineage(command) == 0
    out = capsys.readouterr().out
    job = f"[{SINK_JOB[0]}.{SINK_JOB[1]}]"
    assert re.search(
        rf"^{re.escape(TOPIC)}\s.*re-posted: .*over a foreign run of {re.escape(job)}", out, re.M
    ), out
    assert (
        f"whose job's latest run in DataZone was not the sync's (see the WARNINGs): {TOPIC}" in out
    )
    [warning] = [r.getMessage() for r in caplog.records if foreign in r.getMessage()]
    assert (
        f"{TOPIC}: the latest run of the sync's job {job} in DataZone is not the sync's" in warning
    )

    assert TOPIC in upstream(capsys)
    assert TOPIC not in orphan_topics(capsys)

    # The sync's run is the latest again: the next sync has nothing to repair.
    caplog.clear()
    assert dzlineage(["sync"]) == 0
    assert "foreign run" not in capsys.readouterr().out
    assert not [r for r in caplog.records if "not the sync's" in r.getMessage()]


def test_an_idle_sync_looks_at_one_page_of_events_while_nobody_else_posts(synced, capsys):
    synced.control.clear_calls()
    assert dzlineage(["sync"]) == 0
    assert "nothing to do" in capsys.readouterr().out
    # The failures' listing (one page) and the look for foreign runs, down to the sync's newest.
    assert synced.control.call_counts()[("datazone", "ListLineageEvents")] == 2


def test_a_foreign_run_dated_ahead_is_outdated_by_the_repost(synced, capsys):
    """DataZone's latest run of a job is the one with the latest eventTime: the re-post is
    dated after the foreign run, even one dated an hour ahead."""
    foreign = forge(synced, at=datetime.now(timezone.utc) + timedelta(hours=1))
    assert dzlineage(["sync"]) == 0
    assert "over a foreign run of" in capsys.readouterr().out
    datazone = synced.client("datazone")
    pages = datazone.get_paginator("list_lineage_events").paginate(
        domainIdentifier=synced.settings.domain_id, sortOrder="DESCENDING"
    )
    items = (item for page in pages for item in page["items"])
    summaries = (item["eventSummary"]["openLineageRunEventSummary"] for item in items)
    latest = next(s for s in summaries if (s["job"]["namespace"], s["job"]["name"]) == SINK_JOB)
    assert latest["runId"] != foreign


def test_a_foreign_run_dated_below_the_syncs_newest_is_found_by_a_reconcile(synced, capsys):
    """A plain sync looks down to its newest run; a run forged with an eventTime just below it
    (after the topic's own run) escapes that look, and a reconcile, reading the whole lookback
    window, repairs it."""
    synced.register_new_version("shop.sales.payments", "refund_reason")
    assert dzlineage(["sync"]) == 0
    capsys.readouterr()
    datazone = synced.client("datazone")
    newest = datazone.list_lineage_events(
        domainIdentifier=synced.settings.domain_id, sortOrder="DESCENDING", maxResults=1
    )["items"][0]["eventTime"]
    forge(synced, at=newest - timedelta(milliseconds=1))
    assert TOPIC not in upstream(capsys)

    assert dzlineage(["sync"]) == 0
    assert "foreign run" not in capsys.readouterr().out  # below the sync's newest: not seen
    assert dzlineage(["sync", "--reconcile"]) == 0
    assert "over a foreign run of" in capsys.readouterr().out
    assert TOPIC in upstream(capsys)


def test_doctor_names_the_foreign_run_and_the_sync_that_repairs_it(synced, capsys):
    foreign = forge(synced)
    assert dzlineage(["doctor", "--format", "json"]) == 1
    rows = json.loads(capsys.readouterr().out)["checks"]
    [row] = [r for r in rows if r["check"] == "lineage-landed" and r["status"] == "FAIL"]
    assert row["subject"] == TOPIC
    assert foreign in row["detail"] and ".".join(SINK_JOB) in row["detail"]
    assert "`dzlineage sync`" in row["fix"] and "relay" in row["fix"]

    # The fix it names is the one that works.
    assert dzlineage(["sync"]) == 0
    capsys.readouterr()
    assert dzlineage(["doctor", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["checks"]
    assert [r["status"] for r in rows if r["check"] == "lineage-landed"] == ["OK"]
