"""The sensors: the registry's new, changed and deleted schemas become partitions and runs;
changed connector configurations re-derive the lineage of the topics whose mapping changed."""

import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime, timezone

from botocore.exceptions import BotoCoreError, ClientError
from dagster import (
    AssetPartitionStatus,
    DagsterRunStatus,
    DefaultSensorStatus,
    RunRequest,
    RunsFilter,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from dzlineage_dagster.assets.common import kafka_topics
from dzlineage_dagster.assets.topics import STAGE_ASSET_KEYS
from dzlineage_dagster.components.platform_graph import REFRESH_HINT, STALENESS_CHECK
from dzlineage_dagster.core.catalog.discovery import SensorCursor, SweepState, changed_topics
from dzlineage_dagster.core.catalog.partition_ranges import changed_ranges
from dzlineage_dagster.core.catalog.registry_cursor import Backoff, RetrySchedule
from dzlineage_dagster.core.connectors.report import changed_topics as changed_lineage_topics
from dzlineage_dagster.core.connectors.report import lineage_signatures
from dzlineage_dagster.jobs import (
    CATALOG_CHECKS_JOB,
    CATALOG_SYNC_JOB,
    CONNECTOR_TOPOLOGY_JOB,
    RETIRE_TOPICS_JOB,
    retire_run_config,
)
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sync.catalog.version_sweep import VersionSweep, sweep_versions
from dzlineage_dagster.sync.errors import describe_error
from dzlineage_dagster.sync.run_state import SyncRun

#: A topic that failed transiently (throttling past botocore's retries) is retried first by the
#: run retry, where the instance enables run retries (`run_retries: enabled: true` in
#: dagster.yaml; the demo's instance does; the retry skips every topic that already succeeded as
#: unchanged), then by later ticks, with backoff (:class:`RetrySchedule`), until it syncs.
RETRY_TAGS = {"dagster/max_retries": "2", "dagster/retry_strategy": "FROM_FAILURE"}
#: Changed topics scattered through the partition order are batched into at most this many runs.
MAX_RUNS_PER_TICK = 4


@sensor(
    name="registry_schema_sensor",
    jobs=[CATALOG_SYNC_JOB, RETIRE_TOPICS_JOB],
    minimum_interval_seconds=60,
    default_status=DefaultSensorStatus.RUNNING,
    description=(
        "Lists the Glue Schema Registry each tick, keeps one `kafka_topics` partition per "
        "topic, and requests the catalog sync only for topics whose schema changed since the "
        "cursor, batched into a few runs over partition ranges. A rotating slice of the topics "
        "is also checked each tick (GetSchema, and their mapping records): a sixtieth where "
        "UpdatedTime has shown it does not move with new versions (found within 60 ticks), a "
        "few topics where it moves, twenty until the registry shows which. Deleted "
        "schemas lose their partition and their asset is retired per DZLINEAGE_DELETED_SCHEMA_POLICY. "
        "A topic whose partition is failed is synced again DZLINEAGE_SENSOR_RETRY_SECONDS "
        "after a tick first sees it, each further retry waiting twice as long, up to "
        "DZLINEAGE_SENSOR_RETRY_MAX_SECONDS."
    ),
)
def registry_schema_sensor(
    context: SensorEvaluationContext, lineage_sync: LineageSyncResource
) -> SensorResult:
    return registry_schema_tick(context, lineage_sync, datetime.now(timezone.utc))


def registry_schema_tick(
    context: SensorEvaluationContext, lineage_sync: LineageSyncResource, now: datetime
) -> SensorResult:
    """One tick of :func:`registry_schema_sensor` at ``now`` (its clock, given so a test can
    move it)."""
    run = SyncRun(lineage_sync, context.log)
    current = run.registry_topics
    changed = changed_topics(current, context.cursor)
    state = SweepState.from_text(context.cursor)
    try:
        sweep = sweep_versions(run, state)
    except (ClientError, BotoCoreError) as error:
        # The listing still finds new, changed and deleted schemas; the slice waits a tick.
        context.log.warning(f"version sweep skipped this tick: {describe_error(error)}")
        sweep = VersionSweep(state.swept_to, {}, state.updated_time)

    existing = context.instance.get_dynamic_partitions(kafka_topics.name)
    existing_set = set(existing)
    added = [topic for topic in current if topic not in existing_set]
    removed = [topic for topic in existing if topic not in current]
    order = [topic for topic in existing if topic in current] + added
    behind = set(sweep.behind) - set(changed)
    found = set(changed) | set(added) | behind
    failed, busy = failed_partitions(context, [t for t in existing if t in current])
    backoff = Backoff(run.settings.sensor_retry_seconds, run.settings.sensor_retry_max_seconds)
    retries, schedule = RetrySchedule.from_text(context.cursor).plan(
        failed, busy | found, now.timestamp(), backoff
    )
    to_sync = found | set(retries)

    run_requests = catalog_sync_requests(
        order,
        to_sync,
        # A behind topic's key names its latest version: its UpdatedTime, so its token, may not
        # move, and a run key Dagster has seen requests nothing; a retry's names its attempt.
        {
            t: current[t].change_token
            + (f"@v{sweep.behind[t]}" if t in behind else "")
            + (f"@{retries[t]}" if t in retries else "")
            for t in to_sync
        },
    )
    if removed:
        run_requests.append(
            RunRequest(
                run_key=_run_key(removed[0], removed[-1], dict.fromkeys(removed, "removed")),
                job_name=RETIRE_TOPICS_JOB.name,
                run_config=retire_run_config(removed),
            )
        )
    partition_requests = []
    if added:
        partition_requests.append(kafka_topics.build_add_request(added))
    if removed:
        partition_requests.append(kafka_topics.build_delete_request(removed))
    cursor = SensorCursor.after(
        current, now, sweep.swept_to, sweep.updated_time, schedule.to_json()
    ).to_json()
    waiting = retry_wait_note(schedule, failed - set(retries), now)
    if not run_requests and not partition_requests:
        return SensorResult(
            skip_reason=f"no schema changed among {len(current)} topics{waiting}", cursor=cursor
        )
    found_by_sweep = (
        f"; {len(behind)} behind their latest version though their UpdatedTime did not move "
        f"({', '.join(sorted(behind))})"
        if behind
        else ""
    )
    retried = (
        f"; {len(retries)} synced again as their last run failed ({', '.join(sorted(retries))})"
        if retries
        else ""
    )
    context.log.info(
        f"{len(added)} new, {len(set(changed) - set(added))} changed, {len(removed)} removed "
        f"topics{found_by_sweep}{retried}{waiting}; {len(run_requests)} runs requested"
    )
    return SensorResult(
        run_requests=run_requests, dynamic_partitions_requests=partition_requests, cursor=cursor
    )


def failed_partitions(
    context: SensorEvaluationContext, topics: Sequence[str]
) -> tuple[set[str], set[str]]:
    """Of ``topics``, those whose partition of a stage's asset is failed (its last planned
    materialization ended in a failed run, whichever launched it), and those a run is
    materializing now, as Dagster's instance records them (what the UI shows red and
    in progress)."""
    failed: set[str] = set()
    busy: set[str] = set()
    for key in STAGE_ASSET_KEYS.values():
        statuses = context.instance.get_status_by_partition(key, topics, kafka_topics) or {}
        for topic, status in statuses.items():
            if status is AssetPartitionStatus.FAILED:
                failed.add(topic)
            elif status is AssetPartitionStatus.IN_PROGRESS:
                busy.add(topic)
    return failed - busy, busy


def retry_wait_note(schedule: RetrySchedule, waiting: Collection[str], now: datetime) -> str:
    """What the skip reason or log says of failed topics left for a later tick ("": none)."""
    times = [schedule.topics[t][1] for t in waiting if t in schedule.topics]
    if not times:
        return ""
    return (
        f"; {len(times)} failed topics wait to be synced again, the first in "
        f"{max(0, round(min(times) - now.timestamp()))} s"
    )


def catalog_sync_requests(
    order: Sequence[str], to_sync: Collection[str], tokens: Mapping[str, str]
) -> list[RunRequest]:
    """``catalog_sync`` runs over the ranges of ``order`` that cover ``to_sync`` (at most
    :data:`MAX_RUNS_PER_TICK`), keyed by each range and the ``tokens`` of what changed."""
    if not to_sync:
        return []
    return [
        RunRequest(
            run_key=_run_key(start, end, tokens),
            job_name=CATALOG_SYNC_JOB.name,
            tags={
                "dagster/asset_partition_range_start": start,
                "dagster/asset_partition_range_end": end,
                **RETRY_TAGS,
            },
        )
        for start, end in changed_ranges(order, to_sync, max_ranges=MAX_RUNS_PER_TICK)
    ]


def platform_graph_staleness(context: SensorEvaluationContext, connectors_digest: str) -> str:
    """What to say when the platform graph in this code location was drawn from other
    connectors than the ones running now (empty: it was not, or there is no graph)."""
    repository = context.repository_def
    checks = repository.asset_checks_defs_by_key if repository else {}
    for key, checks_def in checks.items():
        if key.name != STALENESS_CHECK:
            continue
        drawn_from = checks_def.get_spec_for_check_key(key).metadata.get("connectors_digest")
        if drawn_from and drawn_from != connectors_digest:
            return (
                "the platform graph in Dagster's asset graph was drawn from other connector "
                f"configurations than the ones running now: {REFRESH_HINT}"
            )
    return ""


def _with(note: str, reason: str) -> str:
    return f"{reason}; {note}" if note else reason


def _run_key(start: str, end: str, tokens: Mapping[str, str]) -> str:
    digest = hashlib.sha256(json.dumps(tokens, sort_keys=True).encode()).hexdigest()[:16]
    return f"{start}..{end}@{digest}"


@sensor(
    name="connector_config_sensor",
    jobs=[CATALOG_SYNC_JOB, CONNECTOR_TOPOLOGY_JOB],
    minimum_interval_seconds=120,
    default_status=DefaultSensorStatus.RUNNING,
    description=(
        "Notices changed connector configurations: each tick lists the connectors (MSK Connect "
        "ListConnectors: their currentVersion and creation time; Kafka Connect REST: their "
        "configs) and compares a digest with the cursor. Only when it moved does it derive the "
        "topology and request the lineage of just the topics whose mapping changed, plus an "
        "observation of connector_topology (on the first tick too)."
    ),
)
def connector_config_sensor(
    context: SensorEvaluationContext, lineage_sync: LineageSyncResource
) -> SensorResult:
    run = SyncRun(lineage_sync, context.log)
    seen = json.loads(context.cursor) if context.cursor else {}
    digest = run.connectors_digest
    stale = platform_graph_staleness(context, digest)
    if stale:
        context.log.warning(stale)
    if seen.get("digest") == digest:
        return SensorResult(
            skip_reason=_with(stale, "no connector configuration changed"), cursor=context.cursor
        )
    signatures = lineage_signatures(run.topology)
    cursor = json.dumps({"digest": digest, "topics": signatures})
    if not seen:
        # The first tick records the topology and has it observed, so connector_topology shows
        # what the lineage is derived from; the registry sensor's first sync posts that lineage.
        context.log.info(
            "recorded the connector topology; requested its observation (connector_topology)"
        )
        return SensorResult(run_requests=[topology_observation(digest)], cursor=cursor)
    partitions = context.instance.get_dynamic_partitions(kafka_topics.name)
    changed = set(changed_lineage_topics(seen.get("topics", {}), signatures)) & set(partitions)
    run_requests = [topology_observation(digest)]
    run_requests += catalog_sync_requests(
        partitions, changed, {t: signatures.get(t, "gone") for t in changed}
    )
    context.log.info(
        f"connector configurations changed; lineage of {len(changed)} topics re-derived: "
        f"{', '.join(sorted(changed)) or 'none'}"
    )
    return SensorResult(run_requests=run_requests, cursor=cursor)


def topology_observation(connectors_digest: str) -> RunRequest:
    """A run observing connector_topology, once per configuration of the connectors."""
    return RunRequest(
        run_key=f"topology@{connectors_digest[:16]}", job_name=CONNECTOR_TOPOLOGY_JOB.name
    )


@sensor(
    name="catalog_checks_after_first_sync",
    job=CATALOG_CHECKS_JOB,
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.RUNNING,
    description=(
        "Runs the catalog checks once, after the first catalog_sync that succeeded, so every "
        "check shows a result from the start instead of 'Not evaluated'. Later runs are "
        "catalog_checks_daily's (off by default) or by hand. Reads only Dagster's run records."
    ),
)
def catalog_checks_after_first_sync(context: SensorEvaluationContext) -> RunRequest | SkipReason:
    instance = context.instance
    [checked] = instance.get_runs(RunsFilter(job_name=CATALOG_CHECKS_JOB.name), limit=1) or [None]
    if checked is not None:
        return SkipReason(f"the catalog checks have run (run {checked.run_id}): nothing to do")
    synced = instance.get_runs(
        RunsFilter(job_name=CATALOG_SYNC_JOB.name, statuses=[DagsterRunStatus.SUCCESS]), limit=1
    )
    if not synced:
        return SkipReason("waiting for the first catalog_sync to succeed")
    context.log.info(f"the first catalog_sync succeeded (run {synced[0].run_id}): checking")
    return RunRequest(run_key="after-the-first-catalog-sync")
