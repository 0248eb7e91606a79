"""Lineage events DataZone fails after accepting them are noticed and re-posted by the next
sync, exactly those, and the run says so (CLI summary, Dagster metadata)."""

from __future__ import annotations

import re
import uuid
from collections import Counter
from datetime import datetime, timedelta, timezone

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.core.lineage.openlineage import DatasetSpec, build_run_events, event_json
from dzlineage_dagster.core.schemas.avro import Column
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster.sync.lineage.health import LIST_PAGE_SIZE
from dzlineage_dagster_tests.test_catalog_sync import latest_metadata, table_topics

#: The first table topic's two hops (source and sink), one COMPLETE each: the first two events
#: a first sync posts.
FIRST_TOPIC_EVENTS = 2


def fail_after_accept(platform, count: int) -> None:
    platform.control.set_faults(
        FaultRule(
            service="datazone",
            operation="PostLineageEvent",
            kind="fail-after-accept",
            count=count,
        )
    )


def lineage_events(platform, **filters) -> list[dict]:
    pages = (
        platform.client("datazone")
        .get_paginator("list_lineage_events")
        .paginate(domainIdentifier=platform.settings.domain_id, **filters)
    )
    return [item for page in pages for item in page["items"]]


def summaries(items: list[dict]) -> list[dict]:
    return [item["eventSummary"]["openLineageRunEventSummary"] for item in items]


def glue_arn(dataset: dict) -> str:
    """The Glue table's node: DataZone's ``<namespace>/<name>`` of the product's naming."""
    return f"{dataset['namespace']}/{dataset['name']}"


def is_topic(dataset: dict) -> bool:
    return dataset["namespace"].startswith("kafka://")


def topic_of(summary: dict) -> str:
    """The topic of either hop: the source hop's output, the sink hop's input."""
    [topic] = [d["name"] for d in summary["inputs"] + summary["outputs"] if is_topic(d)]
    return topic


def is_sink_hop(summary: dict) -> bool:
    return not any(is_topic(d) for d in summary["outputs"])


def upstream_of_table(platform, table_arn: str) -> list[dict]:
    datazone = platform.client("datazone")
    try:
        node = datazone.get_lineage_node(
            domainIdentifier=platform.settings.domain_id, identifier=table_arn
        )
    except datazone.exceptions.ResourceNotFoundException:
        return []
    return node["upstreamNodes"]


def posts(platform) -> int:
    return platform.control.call_counts()[("datazone", "PostLineageEvent")]


def assert_every_edge_in_the_graph(platform) -> None:
    successes = summaries(lineage_events(platform, processingStatus="SUCCESS"))
    for hop_is_sink in (False, True):
        posted_topics = {topic_of(s) for s in successes if is_sink_hop(s) == hop_is_sink}
        assert set(table_topics(platform)) <= posted_topics
    for summary in filter(is_sink_hop, successes):
        assert upstream_of_table(platform, glue_arn(summary["outputs"][0])), summary


def test_events_failed_after_acceptance_are_reposted_by_the_next_sync(
    platform, capsys, monkeypatch
):
    # One topic at a time, so the first two events posted are the first topic's two hops.
    monkeypatch.setenv("DZLINEAGE_CONCURRENCY", "1")
    fail_after_accept(platform, FIRST_TOPIC_EVENTS)
    assert dzlineage(["sync"]) == 0  # DataZone accepted every event: nothing failed yet
    capsys.readouterr()

    failed = summaries(lineage_events(platform, processingStatus="FAILED"))
    assert len(failed) == FIRST_TOPIC_EVENTS
    [broken_topic] = {topic_of(s) for s in failed}
    assert sorted(map(is_sink_hop, failed)) == [False, True]
    [broken_sink_hop] = filter(is_sink_hop, failed)
    broken_table = glue_arn(broken_sink_hop["outputs"][0])
    assert upstream_of_table(platform, broken_table) == []

    platform.control.clear_faults()
    assert dzlineage(["sync", "--dry-run"]) == 0
    plan = capsys.readouterr().out
    planned = rf"^{re.escape(broken_topic)}\s.*re-post: .*its events failed after acceptance"
    assert re.search(planned, plan, re.M)
    assert plan.count("re-post: ") == 1
    # Reconcile reads every lineage event, whatever the lookback, and names the failed runs.
    assert dzlineage(["sync", "--dry-run", "--reconcile"]) == 0
    repairs = [
        line.split(None, 2)
        for line in capsys.readouterr().out.splitlines()
        if " repost-lineage " in line
    ]
    [[topic, _, detail]] = repairs
    named = re.fullmatch(
        r"lineage run (\S+), (\S+) is FAILED in DataZone: re-post", detail.rstrip()
    )
    assert topic == broken_topic and named, detail
    assert set(named.groups()) == {s["runId"] for s in failed}
    platform.control.clear_calls()
    assert dzlineage(["sync"]) == 0
    out = capsys.readouterr().out
    assert re.search(rf"^{re.escape(broken_topic)}\s.*re-posted: .*2 events had failed", out, re.M)
    assert (
        f"lineage re-posted for 1 topics whose events DataZone had failed after accepting them: {broken_topic}"
        in out
    )
    # Exactly the failed runs again (one COMPLETE per hop), nothing else.
    assert posts(platform) == FIRST_TOPIC_EVENTS
    succeeded = summaries(lineage_events(platform, processingStatus="SUCCESS"))
    failed_runs = {s["runId"] for s in failed}
    reposted = [s for s in succeeded if s["runId"] in failed_runs]
    assert sorted((s["runId"], s["eventType"]) for s in reposted) == sorted(
        (run_id, "COMPLETE") for run_id in failed_runs
    )
    assert upstream_of_table(platform, broken_table)
    assert_every_edge_in_the_graph(platform)

    platform.control.clear_calls()
    assert dzlineage(["sync"]) == 0
    assert "re-posted" not in capsys.readouterr().out
    assert posts(platform) == 0


def test_the_dagster_run_says_which_topic_re_posted_its_lineage(platform):
    fail_after_accept(platform, FIRST_TOPIC_EVENTS)
    assert platform.sync().success
    # Topics are synced concurrently, so the two failed events may be of one topic or of two.
    failed = Counter(
        topic_of(s) for s in summaries(lineage_events(platform, processingStatus="FAILED"))
    )
    assert sum(failed.values()) == FIRST_TOPIC_EVENTS
    platform.control.clear_faults()

    assert platform.sync().success
    for topic, count in failed.items():
        edge = latest_metadata(platform, "topic_lineage", topic)["edge"]
        assert edge.startswith("re-posted: ")
        assert f"{count} events had failed after acceptance" in edge
    others = [t for t in table_topics(platform) if t not in failed]
    assert "re-posted" not in latest_metadata(platform, "topic_lineage", others[0])["edge"]
    assert_every_edge_in_the_graph(platform)


def test_the_second_listing_covers_only_the_events_since_the_first_failure(
    platform, capsys, monkeypatch
):
    # One topic at a time, so the two events that fail are the first topic's two hops.
    monkeypatch.setenv("DZLINEAGE_CONCURRENCY", "1")
    # Another producer's history from two days ago: a page of events the check need not read.
    datazone = platform.client("datazone")
    columns = [Column("id", "long", True, None)]
    for _ in range(LIST_PAGE_SIZE // 2):
        for event in build_run_events(
            job_namespace="airflow",
            job_name="nightly_export",
            inputs=[DatasetSpec("postgres://erp-db:5432", "erp.public.invoices", columns)],
            outputs=[DatasetSpec("s3://exports", "invoices", columns)],
            run_id=str(uuid.uuid4()),
            event_time=datetime.now(timezone.utc) - timedelta(days=2),
            producer="https://github.com/apache/airflow",
        ):
            datazone.post_lineage_event(
                domainIdentifier=platform.settings.domain_id, event=event_json(event).encode()
            )
    fail_after_accept(platform, FIRST_TOPIC_EVENTS)
    assert dzlineage(["sync"]) == 0
    platform.control.clear_faults()
    platform.control.clear_calls()

    assert dzlineage(["sync"]) == 0
    assert re.search("re-posted: .*2 events had failed", capsys.readouterr().out)
    # The failed events, then the events since the earliest of them (this run's first sync's),
    # one page each; a listing of every event would take a second page. The look for foreign
    # runs on the sync's jobs stops at the sync's newest run: one page. The read-back waits on
    # this sync's few re-posted events by id, so it lists nothing.
    calls = platform.control.call_counts()
    assert calls[("datazone", "ListLineageEvents")] == 3
    assert calls[("datazone", "GetLineageEvent")] >= 2
    assert len(lineage_events(platform)) > LIST_PAGE_SIZE
