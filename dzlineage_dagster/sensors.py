"""The sensors: the registry's new, changed and deleted schemas become partitions and runs;
changed connector configurations re-derive the lineage of the topics whose mapping changed."""

import functools
import hashlib
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import cached_property

from botocore.exceptions import BotoCoreError, ClientError
from dagster import (
    AssetPartitionStatus,
    AssetRecordsFilter,
    DagsterInstance,
    DagsterRun,
    DagsterRunStatus,
    DefaultSensorStatus,
    RunRequest,
    RunsFilter,
    SensorDefinition,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from dzlineage_dagster.assets.common import UNSCOPED, ScopePartitions, kafka_topics
from dzlineage_dagster.assets.topics import REGISTRY_SCHEMA, STAGE_ASSET_KEYS
from dzlineage_dagster.components.platform_graph import REFRESH_HINT, STALENESS_CHECK
from dzlineage_dagster.core.catalog.discovery import (
    SETTLING_SECONDS,
    RegistryTopic,
    SensorCursor,
    SweepState,
    changed_topics,
)
from dzlineage_dagster.core.catalog.partition_ranges import changed_ranges
from dzlineage_dagster.core.catalog.registry_cursor import Backoff, RetrySchedule
from dzlineage_dagster.core.changes.cloudtrail import (
    ConnectorChange,
    Ignored,
    SchemaChange,
    TableChange,
)
from dzlineage_dagster.core.changes.queue_cursor import REMOVED, QueueCursor
from dzlineage_dagster.core.connectors.report import changed_topics as changed_lineage_topics
from dzlineage_dagster.core.connectors.report import lineage_signatures
from dzlineage_dagster.jobs import (
    CATALOG_CHECKS_JOB,
    CATALOG_SYNC_JOB,
    CONNECTOR_TOPOLOGY_JOB,
    RETIRE_TOPICS_JOB,
    retire_run_config,
)
from dzlineage_dagster.resources import ChangeQueueResource, LineageSyncResource
from dzlineage_dagster.scopes import in_scope_terms
from dzlineage_dagster.sync.catalog.version_sweep import VersionSweep, sweep_versions
from dzlineage_dagster.sync.changes import ChangedTopics, describe_topics, read_queue
from dzlineage_dagster.sync.errors import SyncError, describe_error
from dzlineage_dagster.sync.run_state import SyncRun

#: A topic that failed transiently (throttling past botocore's retries) is retried first by the
#: run retry, where the instance enables run retries (`run_retries: enabled: true` in
#: dagster.yaml; the demo's instance does; the retry skips every topic that already succeeded as
#: unchanged), then by later ticks, with backoff (:class:`RetrySchedule`), until it syncs.
RETRY_TAGS = {"dagster/max_retries": "2", "dagster/retry_strategy": "FROM_FAILURE"}
#: Changed topics scattered through the partition order are batched into at most this many runs.
MAX_RUNS_PER_TICK = 4


def sensor_name(sensor: str, scope: str | None) -> str:
    """``sensor``'s name in ``scope``: its own without scopes, ``<sensor>__<scope>`` with."""
    return sensor if scope is None else f"{sensor}__{scope}"


def scope_note(scope: str | None) -> str:
    """What a scope's sensor adds to its description."""
    if scope is None:
        return ""
    return (
        f" This one serves scope {scope} (DZLINEAGE_SCOPES): its registry, connectors and "
        f"queue, in its Region and account; its partitions are {scope}/<topic>."
    )


def scope_sensor(
    name: str, scope: str | None, *, jobs: list, minimum_interval_seconds: int, description: str
):
    """The ``@sensor`` of sensor ``name`` in ``scope``: its name and description say the
    scope; it runs by default, as every sensor of the sync does. A scope's tick that AWS
    refuses fails naming the scope (:func:`scope_tick_failure`)."""
    decorate = sensor(
        name=sensor_name(name, scope),
        jobs=jobs,
        minimum_interval_seconds=minimum_interval_seconds,
        default_status=DefaultSensorStatus.RUNNING,
        description=description + scope_note(scope),
    )
    if scope is None:
        return decorate

    def in_scope(evaluate):
        @functools.wraps(evaluate)
        def tick(*args, **kwargs):
            try:
                return evaluate(*args, **kwargs)
            except (ClientError, BotoCoreError, SyncError) as error:
                raise SyncError(scope_tick_failure(scope, kwargs["lineage_sync"], error)) from error

        return decorate(tick)

    return in_scope


def scope_tick_failure(scope: str, lineage_sync: LineageSyncResource, error: Exception) -> str:
    """What a scope's failed tick says: the scope, its registry, Region and role (a botocore
    error names none of them), the error in the scope's terms, and where to look."""
    config = lineage_sync.scope(scope)
    where = f"registry_name={config.settings.get('registry_name')!r}"
    if config.region_name:
        where += f" in {config.region_name}"
    if config.role_arn:
        where += f" as role_arn={config.role_arn}"
    return (
        f"scope {scope} ({where}): {in_scope_terms(config, describe_error(error))}; the other "
        f"scopes' sensors tick on (`dzlineage doctor --scope {scope}` checks its settings and "
        "access)"
    )


def registry_schema_sensor_for(scope: str | None) -> SensorDefinition:
    """The registry sensor of ``scope`` (None: the deployment's one registry)."""

    @scope_sensor(
        "registry_schema_sensor",
        scope,
        jobs=[CATALOG_SYNC_JOB, RETIRE_TOPICS_JOB],
        minimum_interval_seconds=60,
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
            "DZLINEAGE_SENSOR_RETRY_MAX_SECONDS. With DZLINEAGE_CHANGE_QUEUE_URL set, "
            "change_queue_sensor syncs the changes as their events arrive, and this sensor lists "
            "the registry only every DZLINEAGE_REGISTRY_LISTING_SECONDS (a day), as a safety net "
            "that logs what the events missed."
        ),
    )
    def registry_schema_sensor(
        context: SensorEvaluationContext, lineage_sync: LineageSyncResource
    ) -> SensorResult:
        return registry_schema_tick(
            context,
            lineage_sync.for_scope(scope),
            datetime.now(timezone.utc),
            ScopePartitions(scope),
        )

    return registry_schema_sensor


registry_schema_sensor = registry_schema_sensor_for(None)


def registry_schema_tick(
    context: SensorEvaluationContext,
    lineage_sync: LineageSyncResource,
    now: datetime,
    partitions: ScopePartitions = UNSCOPED,
) -> SensorResult:
    """One tick of :func:`registry_schema_sensor` at ``now`` (its clock, given so a test can
    move it), over the registry of ``lineage_sync`` (a scope's: ``partitions`` names it)."""
    queued = bool(lineage_sync.settings.change_queue_url)
    if queued:
        wait = listing_wait(context.cursor, now, lineage_sync.settings.registry_listing_seconds)
        if wait > 0:
            return SensorResult(
                skip_reason=(
                    "change_queue_sensor syncs the changes as their events arrive "
                    "(DZLINEAGE_CHANGE_QUEUE_URL); the registry is listed next, as a safety "
                    f"net, in {round(wait)} s"
                ),
                cursor=context.cursor,
            )
    run = SyncRun(lineage_sync, context.log)
    current = run.registry_topics
    changed = changed_topics(current, context.cursor)
    if queued and context.cursor:
        changed = missed_by_events(context, current, changed, partitions)
    state = SweepState.from_text(context.cursor)
    try:
        sweep = sweep_versions(run, state)
    except (ClientError, BotoCoreError) as error:
        # The listing still finds new, changed and deleted schemas; the slice waits a tick.
        context.log.warning(f"version sweep skipped this tick: {describe_error(error)}")
        sweep = VersionSweep(state.swept_to, {}, state.updated_time)

    existing = partitions.topics(context.instance)
    existing_set = set(existing)
    added = [topic for topic in current if topic not in existing_set]
    removed = [topic for topic in existing if topic not in current]
    order = [topic for topic in existing if topic in current] + added
    behind = set(sweep.behind) - set(changed)
    found = set(changed) | set(added) | behind
    failed, busy = failed_partitions(context, [t for t in existing if t in current], partitions)
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
        partitions,
    )
    if removed:
        run_requests.append(
            RunRequest(
                run_key=_run_key(removed[0], removed[-1], dict.fromkeys(removed, "removed")),
                job_name=RETIRE_TOPICS_JOB.name,
                run_config=retire_run_config(partitions.keys(removed)),
                tags=partitions.tags,
            )
        )
    partition_requests = []
    if added:
        partition_requests.append(partitions.add_request(added))
    if removed:
        partition_requests.append(partitions.delete_request(removed))
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


def listing_wait(cursor_text: str | None, now: datetime, interval_seconds: int) -> float:
    """Seconds until the registry sensor lists the registry again as the change queue's
    safety net (0: now; a first tick always lists, the partitions come from it): its cursor's
    horizon is its last listing's time less :data:`SETTLING_SECONDS`."""
    horizon = json.loads(cursor_text).get("horizon") if cursor_text else None
    if not horizon:
        return 0.0
    listed = datetime.fromisoformat(horizon) + timedelta(seconds=SETTLING_SECONDS)
    return max(0.0, interval_seconds - (now - listed).total_seconds())


def missed_by_events(
    context: SensorEvaluationContext,
    current: Mapping[str, RegistryTopic],
    changed: list[str],
    partitions: ScopePartitions,
) -> list[str]:
    """Of the topics the safety net's listing found changed, those the change queue's events
    missed: no run materialized their schema since their ``UpdatedTime``. Logged, so a queue
    that loses events (a rule changed, a target's permission gone) shows."""
    missed = []
    for topic in changed:
        changed_at = current[topic].updated_at
        records = context.instance.fetch_materializations(
            AssetRecordsFilter(asset_key=REGISTRY_SCHEMA, asset_partitions=[partitions.key(topic)]),
            limit=1,
        ).records
        if changed_at is None or not records or records[0].timestamp < changed_at.timestamp():
            missed.append(topic)
    if missed:
        context.log.warning(
            f"the registry's listing (the change queue's safety net) found {len(missed)} of "
            f"{len(changed)} changed topics no event brought: {', '.join(missed)}"
        )
    elif changed:
        context.log.info(f"the events brought every one of the {len(changed)} changed topics")
    return missed


def failed_partitions(
    context: SensorEvaluationContext, topics: Sequence[str], partitions: ScopePartitions
) -> tuple[set[str], set[str]]:
    """Of ``topics``, those whose partition of a stage's asset is failed (its last planned
    materialization ended in a failed run, whichever launched it), and those a run is
    materializing now, as Dagster's instance records them (what the UI shows red and
    in progress)."""
    failed: set[str] = set()
    busy: set[str] = set()
    for key in STAGE_ASSET_KEYS.values():
        statuses = (
            context.instance.get_status_by_partition(key, partitions.keys(topics), kafka_topics)
            or {}
        )
        for partition, status in statuses.items():
            topic = partitions.topic(partition)
            if status is AssetPartitionStatus.FAILED:
                failed.add(topic)
            elif status is AssetPartitionStatus.IN_PROGRESS:
                busy.add(topic)
    return failed - busy, busy


@dataclass(frozen=True)
class PartitionState:
    """A topic's partition as Dagster's partition status reads it, over the stages' assets."""

    #: The newest planned materialization's storage id among the stages (0: none yet).
    planned: int
    #: Its last planned materialization ended in a failed run (and none is in progress).
    failed: bool
    #: A run is materializing it now.
    busy: bool


def named_partition_states(
    instance: DagsterInstance, topics: Iterable[str], partitions: ScopePartitions = UNSCOPED
) -> dict[str, PartitionState]:
    """Each of ``topics``' :class:`PartitionState` (their partitions in ``partitions``' scope),
    read by name: per stage, its latest planned
    materialization, whether a materialization followed, and that run's status (what
    Dagster's status cache derives, for these partitions only: a few indexed reads a topic,
    where ``get_status_by_partition`` loads every partition's status)."""
    runs: dict[str, DagsterRun | None] = {}
    states = {}
    for topic in topics:
        partition = partitions.key(topic)
        newest, failed, busy = 0, False, False
        for key in STAGE_ASSET_KEYS.values():
            planned = instance.get_latest_planned_materialization_info(key, partition)
            if planned is None:
                continue
            newest = max(newest, planned.storage_id)
            materialized = instance.fetch_materializations(
                AssetRecordsFilter(
                    asset_key=key,
                    asset_partitions=[partition],
                    after_storage_id=planned.storage_id,
                ),
                limit=1,
            ).records
            if materialized:
                continue
            if planned.run_id not in runs:
                runs[planned.run_id] = instance.get_run_by_id(planned.run_id)
            run = runs[planned.run_id]
            if run is None:
                continue  # deleted: neither failed nor in progress, as Dagster says
            if run.status is DagsterRunStatus.FAILURE:
                failed = True
            elif not run.is_finished:
                busy = True
        states[topic] = PartitionState(newest, failed and not busy, busy)
    return states


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
    order: Sequence[str],
    to_sync: Collection[str],
    tokens: Mapping[str, str],
    partitions: ScopePartitions,
) -> list[RunRequest]:
    """``catalog_sync`` runs over the ranges of ``order`` that cover ``to_sync`` (at most
    :data:`MAX_RUNS_PER_TICK`), keyed by each range and the ``tokens`` of what changed; the
    ranges' ends are the topics' partition keys in ``partitions``' scope."""
    if not to_sync:
        return []
    return [
        catalog_sync_request(start, end, tokens, partitions)
        for start, end in changed_ranges(order, to_sync, max_ranges=MAX_RUNS_PER_TICK)
    ]


def catalog_sync_request(
    start: str, end: str, tokens: Mapping[str, str], partitions: ScopePartitions = UNSCOPED
) -> RunRequest:
    """A ``catalog_sync`` run over the partitions of topics ``start`` to ``end`` in
    ``partitions``' scope, keyed by them and the ``tokens`` of what changed."""
    first, last = partitions.keys((start, end))
    return RunRequest(
        run_key=_run_key(first, last, tokens),
        job_name=CATALOG_SYNC_JOB.name,
        tags={
            "dagster/asset_partition_range_start": first,
            "dagster/asset_partition_range_end": last,
            **RETRY_TAGS,
            **partitions.tags,
        },
    )


def platform_graph_staleness(
    context: SensorEvaluationContext, connectors_digest: str, scope: str | None = None
) -> str:
    """What to say when the platform graph of ``scope`` in this code location was drawn from
    other connectors than the ones running now (empty: it was not, or there is no graph)."""
    repository = context.repository_def
    checks = repository.asset_checks_defs_by_key if repository else {}
    for key, checks_def in checks.items():
        metadata = checks_def.get_spec_for_check_key(key).metadata
        if not key.name.startswith(STALENESS_CHECK) or metadata.get("registry_scope", "") != (
            scope or ""
        ):
            continue
        drawn_from = metadata.get("connectors_digest")
        if drawn_from and drawn_from != connectors_digest:
            return (
                "the platform graph in Dagster's asset graph was drawn from other connector "
                f"configurations than the ones running now: {REFRESH_HINT}"
            )
    return ""


def scope_sensors(scopes: Sequence[str | None]) -> list[SensorDefinition]:
    """Each scope's registry, connector and change queue sensors (``[None]``: the deployment's
    one registry's, under their own names), each with its own cursor: a scope whose tick
    fails (its AWS account refuses, its registry is gone) holds up no other."""
    return [
        make(scope)
        for scope in scopes
        for make in (
            registry_schema_sensor_for,
            connector_config_sensor_for,
            change_queue_sensor_for,
        )
    ]


def _with(note: str, reason: str) -> str:
    return f"{reason}; {note}" if note else reason


def _run_key(start: str, end: str, tokens: Mapping[str, str]) -> str:
    digest = hashlib.sha256(json.dumps(tokens, sort_keys=True).encode()).hexdigest()[:16]
    return f"{start}..{end}@{digest}"


def connector_config_sensor_for(scope: str | None) -> SensorDefinition:
    """The connector sensor of ``scope`` (None: the deployment's one cluster)."""

    @scope_sensor(
        "connector_config_sensor",
        scope,
        jobs=[CATALOG_SYNC_JOB, CONNECTOR_TOPOLOGY_JOB],
        minimum_interval_seconds=120,
        description=(
            "Notices changed connector configurations: each tick lists the connectors (MSK "
            "Connect ListConnectors: their currentVersion and creation time; Kafka Connect "
            "REST: their configs) and compares a digest with the cursor. Only when it moved "
            "does it derive the topology and request the lineage of just the topics whose "
            "mapping changed, plus an observation of connector_topology (on the first tick "
            "too)."
        ),
    )
    def connector_config_sensor(
        context: SensorEvaluationContext, lineage_sync: LineageSyncResource
    ) -> SensorResult:
        return connector_config_tick(context, lineage_sync.for_scope(scope), ScopePartitions(scope))

    return connector_config_sensor


def connector_config_tick(
    context: SensorEvaluationContext,
    lineage_sync: LineageSyncResource,
    partitions: ScopePartitions = UNSCOPED,
) -> SensorResult:
    """One tick of :func:`connector_config_sensor` over the connectors of ``lineage_sync``
    (a scope's: ``partitions`` names it)."""
    run = SyncRun(lineage_sync, context.log)
    seen = json.loads(context.cursor) if context.cursor else {}
    digest = run.connectors_digest
    stale = platform_graph_staleness(context, digest, partitions.scope)
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
        return SensorResult(run_requests=[topology_observation(digest, partitions)], cursor=cursor)
    topics = partitions.topics(context.instance)
    changed = set(changed_lineage_topics(seen.get("topics", {}), signatures)) & set(topics)
    run_requests = [topology_observation(digest, partitions)]
    run_requests += catalog_sync_requests(
        topics, changed, {t: signatures.get(t, "gone") for t in changed}, partitions
    )
    context.log.info(
        f"connector configurations changed; lineage of {len(changed)} topics re-derived: "
        f"{', '.join(sorted(changed)) or 'none'}"
    )
    return SensorResult(run_requests=run_requests, cursor=cursor)


connector_config_sensor = connector_config_sensor_for(None)


def topology_observation(connectors_digest: str, partitions: ScopePartitions) -> RunRequest:
    """A run observing connector_topology, once per configuration of the connectors."""
    return RunRequest(
        run_key=f"topology@{connectors_digest[:16]}",
        job_name=CONNECTOR_TOPOLOGY_JOB.name,
        tags=partitions.tags,
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


#: The most ReceiveMessage calls a tick makes (10 messages each): only an empty queue makes
#: one wait (DZLINEAGE_CHANGE_QUEUE_WAIT_SECONDS, at most 20 s), an answer of fewer than 10
#: messages ends the tick, so a tick stays well under Dagster's 60-second limit; a backlog is
#: read by the next ticks, 50 messages each.
MAX_RECEIVES_PER_TICK = 5


def change_queue_sensor_for(scope: str | None) -> SensorDefinition:
    """The change queue sensor of ``scope`` (None: the deployment's one queue)."""

    @scope_sensor(
        "change_queue_sensor",
        scope,
        jobs=[CATALOG_SYNC_JOB, RETIRE_TOPICS_JOB, CONNECTOR_TOPOLOGY_JOB],
        minimum_interval_seconds=30,
        description=(
            "With DZLINEAGE_CHANGE_QUEUE_URL set, drains the SQS queue EventBridge delivers "
            "CloudTrail's registry, MSK Connect and Glue table calls to (long polling, 10 messages "
            "a call, at most five calls a tick) and requests the catalog sync of exactly the topics "
            "named: a changed schema's topic (GetSchema of that schema only), the topics whose "
            "sink writes a changed Glue table; a changed connector observes connector_topology. "
            "Messages are deleted by the next tick, once Dagster recorded the runs; a redelivered "
            "change requests nothing new; an unreadable message is reported and left to the "
            "queue's dead-letter queue. Unset: skips (registry_schema_sensor lists the registry)."
        ),
    )
    def change_queue_sensor(
        context: SensorEvaluationContext,
        lineage_sync: LineageSyncResource,
        change_queue: ChangeQueueResource,
    ) -> SensorResult | SkipReason:
        if scope is not None:
            # The scope's queue is in its account and Region, as its registry is.
            change_queue = change_queue.with_options(
                **lineage_sync.scope(scope).data_side_options()
            )
        return change_queue_tick(
            context,
            lineage_sync.for_scope(scope),
            change_queue,
            datetime.now(timezone.utc),
            ScopePartitions(scope),
        )

    return change_queue_sensor


change_queue_sensor = change_queue_sensor_for(None)


def change_queue_tick(
    context: SensorEvaluationContext,
    lineage_sync: LineageSyncResource,
    change_queue: ChangeQueueResource,
    now: datetime,
    partitions: ScopePartitions = UNSCOPED,
) -> SensorResult | SkipReason:
    """One tick of :func:`change_queue_sensor` at ``now``, over the queue and registry of
    ``lineage_sync`` (a scope's: ``partitions`` names it)."""
    settings = lineage_sync.settings
    url = settings.change_queue_url
    if not url:
        return SkipReason(
            "DZLINEAGE_CHANGE_QUEUE_URL is unset: registry_schema_sensor lists the registry"
        )
    cursor = QueueCursor.from_text(context.cursor)
    # The last tick's runs are recorded (Dagster committed its result with this cursor).
    for failure in change_queue.delete(url, cursor.pending):
        context.log.warning(f"a handled message was not deleted ({failure}); it comes back once")
    read = read_queue(
        change_queue,
        url,
        settings.change_queue_wait_seconds,
        settings.registry_name,
        MAX_RECEIVES_PER_TICK,
    )
    for line in read.unreadable_lines():
        context.log.warning(line)
    plan = ChangePlan(context, lineage_sync, cursor, partitions)
    for change in read.changes:
        if not isinstance(change, SchemaChange):
            plan.add(change)
    plan.add_topics(
        describe_topics(lineage_sync.schema_registry, settings.registry_name, read.schema_changes)
    )
    for ignored in read.ignored + plan.ignored:
        context.log.info(f"event {ignored.event_id} ignored: {ignored.reason}")
    plan.add_table_topics()
    # A failed topic is synced again with the registry sensor's backoff: its listing, now a
    # daily safety net, no longer comes every minute to do it. Dagster is asked about the
    # topics this tick names, those waiting for a retry and those whose run it has not seen
    # end (the cursor's), never every partition's status.
    earlier = RetrySchedule.from_text(context.cursor)
    states = named_partition_states(
        context.instance, sorted({*plan.to_sync, *earlier.topics, *cursor.watch}), partitions
    )
    failed = {t for t, state in states.items() if state.failed and plan.known(t)}
    busy = {t for t, state in states.items() if state.busy}
    backoff = Backoff(settings.sensor_retry_seconds, settings.sensor_retry_max_seconds)
    retries, schedule = earlier.plan(failed, busy | set(plan.to_sync), now.timestamp(), backoff)
    plan.retries = retries
    run_requests = plan.run_requests()
    next_cursor = cursor.after(
        read.handles,
        plan.handled,
        now.timestamp(),
        schedule.to_json(),
        plan.watch(cursor.watch, states, now.timestamp()),
    ).to_json()
    waiting = retry_wait_note(schedule, failed - set(retries), now)
    if not run_requests and not plan.added:
        return SensorResult(
            skip_reason=(
                f"{len(read.changes)} changes, {len(read.ignored)} ignored, "
                f"{len(read.unreadable)} unreadable messages: nothing new to sync{waiting}"
            ),
            cursor=next_cursor,
        )
    context.log.info(plan.summary())
    partition_requests = [partitions.add_request(plan.added)] if plan.added else []
    if plan.removed:
        partition_requests.append(partitions.delete_request(plan.removed))
    return SensorResult(
        run_requests=run_requests,
        dynamic_partitions_requests=partition_requests,
        cursor=next_cursor,
    )


class ChangePlan:
    """The runs a tick's changes ask for, at calls per change that do not depend on the
    registry's size: a schema change costs GetSchema of its topic's schema (value, else one
    named as the topic, else key: one call when the value schema exists); a Glue table change
    the connectors' topology (MSK Connect's calls, whatever the registry's size)."""

    def __init__(
        self,
        context: SensorEvaluationContext,
        lineage_sync: LineageSyncResource,
        cursor: QueueCursor,
        scope_partitions: ScopePartitions = UNSCOPED,
    ) -> None:
        self.context, self.lineage_sync, self.cursor = context, lineage_sync, cursor
        self.scope_partitions = scope_partitions
        self._known: dict[str, bool] = {}
        #: Topic -> token of what changed, for the topics to sync.
        self.to_sync: dict[str, str] = {}
        self.added: list[str] = []
        self.removed: list[str] = []
        self.connector_events: list[str] = []
        self.tables: dict[tuple[str, str], str] = {}
        self.ignored: list[Ignored] = []
        #: Failed topics due for a retry -> the key naming the attempt.
        self.retries: dict[str, str] = {}
        #: Key -> token of every change handled this tick (:meth:`QueueCursor.after`).
        self.handled: dict[str, str] = {}

    @property
    def registry(self) -> str:
        return self.lineage_sync.settings.registry_name

    def known(self, topic: str) -> bool:
        """Whether ``topic`` has its partition, asked of Dagster for this topic alone."""
        if topic not in self._known:
            self._known[topic] = self.context.instance.has_dynamic_partition(
                kafka_topics.name, self.scope_partitions.key(topic)
            )
        return self._known[topic]

    @cached_property
    def partitions(self) -> list[str]:
        """The scope's topics among the partitions, in order: read only when the tick needs the
        whole order (more topics to sync than runs a tick, or a changed Glue table's writers)."""
        return self.scope_partitions.topics(self.context.instance)

    def add(self, change: ConnectorChange | TableChange) -> None:
        """A connector's or a table's change (schemas': :meth:`add_topics`), once per event."""
        key = f"event:{change.event_id}"
        if self.cursor.seen(key, change.action):
            return
        self.handled[key] = change.action
        if isinstance(change, ConnectorChange):
            self.connector_events.append(change.event_id)
        else:
            self.tables[change.database.lower(), change.table.lower()] = change.event_id

    def add_topics(self, changed: ChangedTopics) -> None:
        """The topics schema events named, as the registry holds them now."""
        self.ignored += changed.ignored
        for topic, token in changed.tokens.items():
            if token is None:
                if self.known(topic) and not self.cursor.seen(topic, REMOVED):
                    self.removed.append(topic)
                    self.handled[topic] = REMOVED
            elif not (self.cursor.seen(topic, token) and self.known(topic)):
                # (else a redelivery of a change already requested)
                self.handled[topic] = self.to_sync[topic] = token
                if not self.known(topic):
                    self.added.append(topic)

    def add_table_topics(self) -> None:
        """To sync: the topics whose sink writes a changed table, keyed by the event that
        named it (the topology over every partition: only when a table changed)."""
        if not self.tables:
            return
        run = SyncRun(self.lineage_sync, self.context.log, topic_names=self.partitions)
        for topic in self.partitions:
            for table in run.topology.lineage_for(topic).tables:
                event = self.tables.get((table.database.lower(), table.table.lower()))
                if event is not None:
                    self.to_sync.setdefault(topic, f"table:{event}")

    def run_requests(self) -> list[RunRequest]:
        for topic, token in self.retries.items():
            self.to_sync.setdefault(topic, token)
        if len(self.to_sync) <= MAX_RUNS_PER_TICK:
            # A run a topic: no range to cover, so no need of every partition's key.
            requests = [
                catalog_sync_request(topic, topic, {topic: token}, self.scope_partitions)
                for topic, token in sorted(self.to_sync.items())
            ]
        else:
            order = [t for t in self.partitions if t not in self.removed] + self.added
            requests = catalog_sync_requests(
                order, self.to_sync, self.to_sync, self.scope_partitions
            )
        if self.removed:
            requests.append(
                RunRequest(
                    run_key=_run_key(self.removed[0], self.removed[-1], {"removed": self.removed}),
                    job_name=RETIRE_TOPICS_JOB.name,
                    run_config=retire_run_config(self.scope_partitions.keys(self.removed)),
                    tags=self.scope_partitions.tags,
                )
            )
        if self.connector_events:
            digest = _run_key("", "", {"events": sorted(self.connector_events)})
            requests.append(
                RunRequest(
                    run_key=f"topology-event{digest}",
                    job_name=CONNECTOR_TOPOLOGY_JOB.name,
                    tags=self.scope_partitions.tags,
                )
            )
        return requests

    def watch(
        self,
        watched: Mapping[str, tuple[int, float]],
        states: Mapping[str, PartitionState],
        now: float,
    ) -> dict[str, tuple[int, float]]:
        """The topics whose run's end the next ticks look for: those this tick requests
        (with their newest planned materialization now), and the ``watched`` ones no later
        run has planned and finished yet (a failed one is the retry schedule's from now on)."""
        kept = {
            topic: (planned, at)
            for topic, (planned, at) in watched.items()
            if states[topic].busy or states[topic].planned <= planned
        }
        kept.update({topic: (states[topic].planned, now) for topic in self.to_sync})
        return kept

    def summary(self) -> str:
        tables = (
            f"; tables changed: {', '.join('.'.join(t) for t in self.tables)}"
            if self.tables
            else ""
        )
        connectors = (
            f"; {len(self.connector_events)} connector changes: connector_topology observed"
            if self.connector_events
            else ""
        )
        retried = (
            f"; {len(self.retries)} synced again as their last run failed "
            f"({', '.join(sorted(self.retries))})"
            if self.retries
            else ""
        )
        return (
            f"{len(self.to_sync)} topics to sync ({', '.join(sorted(self.to_sync))}), "
            f"{len(self.added)} new, {len(self.removed)} removed{tables}{connectors}{retried}"
        )
