"""The sensor path converges by itself once DataZone's faults clear.

A sensor-launched `catalog_sync` run fails some topics (their assets throttled, a lineage post
throttled); later ticks sync them again, with no manual step, each failed topic waiting longer
after every failed retry, until every partition is materialized and DataZone holds each asset
once and every hop's lineage. The sensor's clock is given, so waiting costs no time.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone

from dagster import AssetPartitionStatus, DagsterRunStatus, Definitions

from dzlineage_dagster.assets.common import kafka_topics
from dzlineage_dagster.assets.topics import STAGE_ASSET_KEYS
from dzlineage_dagster.core.catalog.registry_cursor import Backoff
from dzlineage_dagster.definitions import build_resources, defs
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster_tests.test_fault_convergence import (
    EDGES,
    assert_every_hop_has_one_complete_per_version,
    assert_one_asset_per_schema,
)

#: The sensor's minimum interval: the next tick comes this much later.
INTERVAL = timedelta(seconds=61)


class Sensor:
    """The registry sensor's ticks on a clock the test moves, each requested run executed."""

    def __init__(self, platform) -> None:
        self.platform = platform
        # Settings that are numbers are read when the definitions load: these read the test's.
        self.definitions = Definitions(
            assets=defs.assets, jobs=defs.jobs, sensors=defs.sensors, resources=build_resources()
        )
        self.now = datetime.now(timezone.utc)
        self.cursor: str | None = None

    def tick(self, after: timedelta = INTERVAL):
        """One tick ``after`` the last; its runs, executed in process: (the tick, the runs)."""
        self.now += after
        result = self.platform.tick(self.cursor, now=self.now, definitions=self.definitions)
        self.cursor = result.cursor
        runs = [
            self.definitions.resolve_job_def(request.job_name).execute_in_process(
                instance=self.platform.instance, tags=request.tags, raise_on_error=False
            )
            for request in result.run_requests or []
        ]
        return result, runs

    def requested_topics(self, result) -> set[str]:
        """The topics of the partition ranges the tick requested."""
        keys = self.platform.instance.get_dynamic_partitions(kafka_topics.name)
        topics: set[str] = set()
        for request in result.run_requests or []:
            start = keys.index(request.tags["dagster/asset_partition_range_start"])
            end = keys.index(request.tags["dagster/asset_partition_range_end"])
            topics |= set(keys[start : end + 1])
        return topics

    def statuses(self) -> dict[str, set[AssetPartitionStatus | None]]:
        """Each topic's partition status across the three per-topic assets."""
        instance = self.platform.instance
        keys = instance.get_dynamic_partitions(kafka_topics.name)
        found: dict[str, set[AssetPartitionStatus | None]] = {key: set() for key in keys}
        for asset_key in STAGE_ASSET_KEYS.values():
            for topic, status in instance.get_status_by_partition(
                asset_key, keys, kafka_topics
            ).items():
                found[topic].add(status)
        return found


def test_failed_topics_are_synced_again_by_later_ticks_with_backoff_until_all_are_green(
    platform, monkeypatch
):
    # Every injected throttle reaches the product, and topics are synced one at a time, in
    # order, so the fault rules below fail the same topics on every machine.
    monkeypatch.setenv("DZLINEAGE_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("DZLINEAGE_CONCURRENCY", "1")
    # A first wait of two minutes, not the default five: the setting reaches the sensor.
    monkeypatch.setenv("DZLINEAGE_SENSOR_RETRY_SECONDS", "120")
    backoff = Backoff(120, LineageSettings.model_fields["sensor_retry_max_seconds"].default)
    sensor = Sensor(platform)
    table_topics = sorted(EDGES)
    # The first six table topics' CreateAsset is throttled; the seventh's asset is created and
    # its lineage post throttled: seven of the eight topics fail, one only in its lineage.
    platform.control.set_faults(
        FaultRule(service="datazone", operation="CreateAsset", count=6),
        FaultRule(service="datazone", operation="PostLineageEvent", count=1),
    )
    first, [failed_run] = sensor.tick()
    assert sensor.requested_topics(first) == set(platform.registry_topics())
    assert not failed_run.success
    failure = failed_run.get_step_failure_events()[0].step_failure_data.error
    assert "7 of 8 topics failed" in failure.message
    assert "and 2 more (failed_topics lists every one)" in failure.message
    statuses = sensor.statuses()
    assert {t for t, s in statuses.items() if AssetPartitionStatus.FAILED in s} == set(table_topics)
    platform.control.clear_faults()

    # Nothing changed in the registry: the next tick sees the failures and leaves them to their
    # backoff (Dagster's own run retries, where the instance enables them, go first), and so
    # does every tick until the first wait is over.
    waiting, runs = sensor.tick()
    assert not runs
    assert waiting.skip_reason.skip_message == (
        "no schema changed among 8 topics; 7 failed topics wait to be synced again, the first "
        f"in {backoff.delay(0):.0f} s"
    )
    assert not sensor.tick(timedelta(seconds=backoff.delay(0) - 1))[1]

    retried, [retry_run] = sensor.tick(timedelta(seconds=1))
    assert sensor.requested_topics(retried) == set(table_topics)
    assert retry_run.success
    quiet, runs = sensor.tick()
    assert not runs and quiet.skip_reason.skip_message == "no schema changed among 8 topics"
    assert set(map(frozenset, sensor.statuses().values())) == {
        frozenset({AssetPartitionStatus.MATERIALIZED})
    }
    assert_one_asset_per_schema(platform)
    assert_every_hop_has_one_complete_per_version(platform, versions=1)

    # A new version of every table topic whose lineage DataZone keeps throttling: a failure in
    # the lineage stage alone, retried while it lasts, each wait twice the one before.
    for topic in table_topics:
        platform.register_new_version(topic, "added_under_faults")
    platform.control.set_faults(FaultRule(service="datazone", operation="PostLineageEvent"))
    changed, [lineage_failed] = sensor.tick()
    assert sensor.requested_topics(changed) == set(table_topics)
    assert not lineage_failed.success
    assert not sensor.tick()[1]
    first_retry, [still_failing] = sensor.tick(timedelta(seconds=backoff.delay(0)))
    assert sensor.requested_topics(first_retry) == set(table_topics)
    assert not still_failing.success
    # The first wait has passed again, but the second is twice as long.
    too_early, runs = sensor.tick(timedelta(seconds=backoff.delay(0)))
    assert not runs, too_early.skip_reason
    platform.control.clear_faults()
    second_retry, [converged] = sensor.tick(timedelta(seconds=backoff.delay(1) - backoff.delay(0)))
    assert sensor.requested_topics(second_retry) == set(table_topics)
    assert converged.success
    assert not sensor.tick()[1]

    assert set(map(frozenset, sensor.statuses().values())) == {
        frozenset({AssetPartitionStatus.MATERIALIZED})
    }
    assert_one_asset_per_schema(platform)
    assert_every_hop_has_one_complete_per_version(platform, versions=2)
    sensor_runs = platform.instance.get_run_records()
    assert Counter(record.dagster_run.status for record in sensor_runs) == Counter(
        {DagsterRunStatus.FAILURE: 3, DagsterRunStatus.SUCCESS: 2}
    )
