"""Many topics at once: threads give the same calls and the same catalog as one thread, and an
idle headless sync costs the registry listing and a constant."""

from __future__ import annotations

import gc
import io
import math
import time
from collections import Counter

import pytest

from benchmarks.bench_estate import bench_estate, report
from benchmarks.measure import check_catalog
from benchmarks.synthetic_platform import seed_synthetic_platform
from benchmarks.systems import pointed_at
from dzlineage_dagster.core.aws.quotas import AWS_QUOTAS
from dzlineage_dagster.core.catalog.discovery import (
    UNKNOWN_SWEEP_SIZE,
    UpdatedTimeBehaviour,
    clock_sweep,
)
from dzlineage_dagster.core.catalog.registry_cursor import topic_bucket
from dzlineage_dagster.core.lineage.readback import POLL_BATCH_TOPICS
from dzlineage_dagster.resources.base import AwsClientResource
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.headless import run_headless_sync
from dzlineage_dagster.sync.runner import TopicOutcome


def headless_sync(platform, monkeypatch, concurrency: int, *, dry_run: bool = False) -> str:
    monkeypatch.setenv("DZLINEAGE_CONCURRENCY", str(concurrency))
    out = io.StringIO()
    with pointed_at(platform):
        code = run_headless_sync(LineageSettings.from_env(), dry_run=dry_run, out=out)
    assert code == 0, out.getvalue()
    return out.getvalue()


def lineage_columns(summary: str) -> dict[str, str]:
    """Topic -> its lineage column, from a sync's or a dry run's table (the column is last,
    after two spaces)."""
    rows = summary.split("\n\n")[0].splitlines()[2:]
    return {row.split()[0]: row.rstrip().rsplit("  ", 1)[-1].strip() for row in rows}


def first_sync_calls(sandbox, monkeypatch, topics: int, concurrency: int):
    sandbox.control.reset()
    platform = seed_synthetic_platform(sandbox.endpoint_url, topics)
    sandbox.control.clear_calls()
    summary = headless_sync(platform, monkeypatch, concurrency)
    return platform, sandbox.control.call_counts(), summary


def packed_buckets(sandbox) -> list[str]:
    """The names of the packed mapping's bucket parameters (``.../p/x``, ``.../p/x1``, ...)."""
    pages = sandbox.client("ssm").get_paginator("describe_parameters").paginate()
    names = [p["Name"] for page in pages for p in page["Parameters"]]
    return [name for name in names if "/p/" in name]


def test_threads_make_exactly_the_calls_one_thread_makes(sandbox, monkeypatch):
    topics = 20
    _, sequential, _ = first_sync_calls(sandbox, monkeypatch, topics, concurrency=1)
    overflowed_sequentially = len(packed_buckets(sandbox)) - 1
    platform, threaded, summary = first_sync_calls(sandbox, monkeypatch, topics, concurrency=8)
    # The same calls, but for the packed store's writes: which records fill a bucket before it
    # overflows, and so how many overflow marks are written, follows the threads' order.
    writes = ("ssm", "PutParameter")
    assert +Counter({**threaded, writes: 0}) == +Counter({**sequential, writes: 0})
    catalog = check_catalog(platform)
    assert catalog.schemas_with_one_asset == topics, catalog
    assert catalog.duplicated_schemas == 0
    assert catalog.edges_present == topics
    assert catalog.min_events_per_edge == catalog.max_events_per_edge
    assert threaded[("datazone", "CreateAsset")] == topics
    # One mapping write per topic, at most one more for each bucket a full one overflowed into
    # (how many marks that takes depends on which records filled the bucket first), and the
    # registry cursor (the version sweep learnt nothing of UpdatedTime: nothing is written).
    overflowed = len(packed_buckets(sandbox)) - 1
    assert topics + 1 <= threaded[writes] <= topics + overflowed + 1
    assert topics + 1 <= sequential[writes] <= topics + overflowed_sequentially + 1
    # The once-per-run lookups stay once per run with eight threads asking.
    assert threaded[("kafka", "DescribeClusterV2")] + threaded[("kafka", "DescribeCluster")] == 1
    assert threaded[("datazone", "GetAssetType")] <= 1
    listed = [line.split()[0] for line in summary.splitlines()[2 : 2 + topics]]
    assert sorted(listed) == sorted(platform.topics)


def _datazone_and_ssm_writes(counts) -> dict:
    return {
        key: n
        for key, n in counts.items()
        if key[0] in ("datazone", "ssm") and not key[1].startswith(("Get", "List", "Search"))
    }


def test_an_idle_headless_sync_lists_the_registry_and_reads_one_cursor(sandbox, monkeypatch):
    topics = 210
    platform, _, _ = first_sync_calls(sandbox, monkeypatch, topics, concurrency=8)
    sandbox.control.clear_calls()
    summary = headless_sync(platform, monkeypatch, concurrency=8)
    idle = sandbox.control.call_counts()
    assert "unchanged since the last complete sync" in summary
    assert idle[("glue", "ListSchemas")] == math.ceil(topics / 100)
    # The version sweep's slice, a constant while the registry (every schema at version 1) has
    # not shown what UpdatedTime does: its GetSchema, its records by name; the cursor and the
    # sweep's state in one GetParameters. In the packed layout (the default) the swept topics'
    # chains are read level by level, a bucket only below one that overflowed, and no
    # one-per-topic name once the root says they were all moved: about 10 topics a call, as
    # the one-per-topic layout (which bucket a record sits in depends on the first sync's
    # threads' order, so the levels read may vary by one). Before the buckets' flags: a
    # chain and two one-per-topic names a topic, from ceil(2 * sweep / 10) to sweep calls.
    sweep = UNKNOWN_SWEEP_SIZE
    assert idle[("glue", "GetSchema")] == sweep
    assert idle[("glue", "GetSchemaVersion")] == 0
    assert idle[("ssm", "GetParametersByPath")] == 0
    record_reads = idle[("ssm", "GetParameters")] - 1
    assert record_reads <= math.ceil(sweep / 10) + 1
    # Nothing written: the sweep's slice is the run's minute's, and it learnt nothing new.
    assert _datazone_and_ssm_writes(idle) == {}
    # The start-up checks (domain, project, cluster), the custom types' reads and the cursor:
    # a few calls each, none of them per topic.
    constant = sum(idle.values()) - math.ceil(topics / 100) - sweep - record_reads
    assert constant <= 16, idle
    per_topic = (("glue", "ListSchemas"), ("glue", "GetSchema"), ("ssm", "GetParameters"))
    assert max(n for key, n in idle.items() if key not in per_topic) <= 5, idle


def test_a_changed_schema_is_the_only_one_read_after_the_cursor_moves(sandbox, monkeypatch):
    from benchmarks.synthetic_platform import register_new_version

    topics = 40
    platform, _, _ = first_sync_calls(sandbox, monkeypatch, topics, concurrency=4)
    # A topic the version sweep does not check this minute nor the next (its slice is the
    # minute's): the sweep would probe its new version (one GetSchemaVersion more).
    minute = int(time.time() // 60)
    swept = {
        *clock_sweep(list(platform.topics), minute, UpdatedTimeBehaviour.UNKNOWN),
        *clock_sweep(list(platform.topics), minute + 1, UpdatedTimeBehaviour.UNKNOWN),
    }
    changed = min(set(platform.topics) - swept)
    register_new_version(platform, changed)
    sandbox.control.clear_calls()
    summary = headless_sync(platform, monkeypatch, concurrency=4)
    calls = sandbox.control.call_counts()
    # The changed topic's read, and the version sweep's slice (20 topics while the registry has
    # not shown what UpdatedTime does).
    assert calls[("glue", "GetSchema")] == 1 + UNKNOWN_SWEEP_SIZE
    assert calls[("glue", "GetSchemaVersion")] == 1
    assert calls[("datazone", "CreateAssetRevision")] == 1
    # The topic's record (asset, lineage and token at once) and the new cursor.
    assert calls[("ssm", "PutParameter")] == 2
    assert calls[("ssm", "GetParametersByPath")] == 0, "every mapping was read for one change"
    # Only the topics of the changed topic's cursor bucket are considered.
    same_bucket = [t for t in platform.topics if topic_bucket(t) == topic_bucket(changed)]
    lineage = lineage_columns(summary)
    assert sorted(lineage) == sorted(same_bucket), summary
    # The topics the registry token vouches for are told as a dry run tells them.
    planned = lineage_columns(headless_sync(platform, monkeypatch, 4, dry_run=True))
    assert {t: lineage[t] for t in same_bucket if t != changed} == {
        t: planned[t] for t in same_bucket if t != changed
    }
    assert all(lineage[t].startswith("unchanged: ") for t in same_bucket if t != changed), summary
    sandbox.control.clear_calls()
    assert "unchanged since the last complete sync" in headless_sync(platform, monkeypatch, 4)


def test_an_invalid_concurrency_is_refused_naming_the_variable(monkeypatch):
    with pytest.raises(ValueError, match="DZLINEAGE_CONCURRENCY='0'"):
        LineageSettings.from_env(
            {
                "DZLINEAGE_DOMAIN_ID": "dzd_x",
                "DZLINEAGE_PROJECT_ID": "p",
                "DZLINEAGE_REGISTRY_NAME": "r",
                "DZLINEAGE_MSK_CLUSTER_ARN": "arn:aws:kafka:us-east-1:123456789012:cluster/c/u-1",
                "DZLINEAGE_CONCURRENCY": "0",
            }
        )


def test_clients_pace_themselves_to_their_rate_limits(sandbox_env):
    import time

    from dzlineage_dagster.resources import SsmMappingResource

    paced = SsmMappingResource(rate_limits="aws,ssm.GetParameters=10")
    started = time.monotonic()
    for _ in range(6):
        paced.parameters_named(["/dzlineage-pacing-probe"])
    # A bucket of 10 a second with a burst of one: the sixth call waits half a second.
    assert time.monotonic() - started >= 0.5
    assert paced.api_calls["ssm.GetParameters"] == 6
    with pytest.raises(ValueError, match="DZLINEAGE_CLIENT_RATE_LIMITS"):
        SsmMappingResource(rate_limits="fast").client()


def test_a_sync_at_the_default_pacing_is_never_throttled_by_aws_s_quotas(sandbox):
    """The product's default (``aws``), which the platform tests turn off on the unpaced shared
    sandbox: 40 topics post more lineage than a second of AWS's burst, and none is refused."""
    sandbox.control.reset()
    platform = seed_synthetic_platform(sandbox.endpoint_url, 40)
    sandbox.control.clear_calls()
    sandbox.control.set_pacing(quotas="aws")
    default = AwsClientResource.model_fields["rate_limits"].default
    try:
        with pointed_at(platform, client_rate_limits=default):
            code = run_headless_sync(LineageSettings.from_env(), dry_run=False, out=io.StringIO())
    finally:
        sandbox.control.set_pacing()
    assert code == 0
    calls = sandbox.control.calls()
    posts = sum(c.operation == "PostLineageEvent" for c in calls)
    assert posts > 2 * AWS_QUOTAS["datazone.PostLineageEvent"].rate  # two seconds of burst
    assert [c for c in calls if c.throttled] == []


def test_a_bad_rate_limit_setting_stops_the_sync_in_one_line(platform, monkeypatch, capsys):
    monkeypatch.setenv("DZLINEAGE_CLIENT_RATE_LIMITS", "aws,datazone.CreateAsset=fast")
    code = run_headless_sync(platform.settings, dry_run=False, out=io.StringIO())
    error = capsys.readouterr().err
    assert code == 1
    assert "could not start: DZLINEAGE_CLIENT_RATE_LIMITS=" in error
    assert "'fast' is not a number" in error
    assert "Traceback" not in error


def test_more_topics_than_ssm_s_cap_sync_packed_beside_other_applications(sandbox, monkeypatch):
    """Issue 18's 20,000 topics beside 2,000 foreign parameters, scaled down (the benchmark's own
    run, :mod:`benchmarks.bench_estate`): the one-per-topic layout stops at the cap naming the
    setting that helps; the default (packed) syncs every topic without a duplicate asset, maps
    each, and an idle rerun finds nothing to do."""
    from dzlineage_dagster.sandbox.moto_patches.ssm_rules import SsmLimits

    topics, cap, foreign = 120, 60, 30
    monkeypatch.delenv("DZLINEAGE_SSM_MAPPING_LAYOUT", raising=False)
    try:
        per_topic = bench_estate(sandbox, topics, foreign, cap, layout="per-topic")
        assert per_topic.first.exit_code == 1 and not per_topic.ok
        assert per_topic.first.output.count("DZLINEAGE_SSM_MAPPING_LAYOUT=packed") > 1
        assert per_topic.mapped == cap - foreign

        packed = bench_estate(sandbox, topics, foreign, cap)  # the default layout
        assert packed.layout == "packed"
        assert packed.ok, report(packed)
        assert packed.catalog.duplicated_schemas == 0 and packed.mapped == topics
        assert packed.parameters_used + foreign <= cap
        assert packed.idle.datazone_writes == 0
    finally:
        sandbox.control.set_ssm_limits(**SsmLimits().__dict__)


def test_the_read_back_reads_the_first_topics_while_the_later_ones_still_post(sandbox, monkeypatch):
    """DataZone's read-back reads a topic as soon as its events are processed, beside the
    later topics' posts (GetLineageNode and PostLineageEvent are quotas of their own), three
    nodes a topic, and reports them all."""
    topics = 3 * POLL_BATCH_TOPICS
    sandbox.control.reset()
    platform = seed_synthetic_platform(sandbox.endpoint_url, topics)
    sandbox.control.clear_calls()
    summary = headless_sync(platform, monkeypatch, 4)
    operations = [c.operation for c in sandbox.control.calls() if c.service == "datazone"]
    last_post = max(i for i, name in enumerate(operations) if name == "PostLineageEvent")
    assert operations.index("GetLineageNode") < last_post
    assert operations.count("GetLineageNode") == 3 * topics
    assert (
        f"lineage read-back: all landed ({topics} tables, {topics} topic assets of {topics} "
        f"topics, {3 * topics} GetLineageNode calls)"
    ) in summary


class CountingOutcomesAtPrint(io.StringIO):
    """The sync's summary stream: at each write, how many topic outcomes are still alive."""

    def __init__(self) -> None:
        super().__init__()
        self.live_outcomes: list[int] = []

    def write(self, text: str) -> int:
        gc.collect()
        self.live_outcomes.append(sum(isinstance(o, TopicOutcome) for o in gc.get_objects()))
        return super().write(text)


def test_the_summary_keeps_rows_not_the_topics_outcomes(sandbox, monkeypatch):
    """A first sync's memory must not grow with every topic's outcome (its schema snapshot,
    lineage plan and events): the summary keeps each topic's row, the read-back what it reads
    back, so when the table is printed, every topic done, at most the topics a window of
    threads had in flight are still alive (before, all of them were)."""
    concurrency, topics = 2, 16
    sandbox.control.reset()
    platform = seed_synthetic_platform(sandbox.endpoint_url, topics)
    monkeypatch.setenv("DZLINEAGE_CONCURRENCY", str(concurrency))
    out = CountingOutcomesAtPrint()
    with pointed_at(platform):
        assert run_headless_sync(LineageSettings.from_env(), dry_run=False, out=out) == 0
    assert f"{topics} topics, 0 failed" in out.getvalue()
    assert out.live_outcomes
    assert max(out.live_outcomes) <= 2 * concurrency + 1
