"""The registry sensor: new, changed and deleted schemas become partitions and runs."""

import hashlib
import json
from datetime import datetime, timezone

from dagster import (
    DefaultSensorStatus,
    RunRequest,
    SensorEvaluationContext,
    SensorResult,
    sensor,
)

from dzlineage_dagster.assets.common import kafka_topics
from dzlineage_dagster.core.discovery import SensorCursor, changed_topics
from dzlineage_dagster.core.partition_ranges import changed_ranges
from dzlineage_dagster.jobs import CATALOG_SYNC_JOB, RETIRE_TOPICS_JOB, retire_run_config
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sync.run_state import SyncRun

#: The cursor moves on once a run is requested, so a topic that failed transiently (throttling
#: past botocore's retries) is retried by the run retry, where the instance enables run retries
#: (`run_retries: enabled: true` in dagster.yaml; the demo's instance does). The retry skips
#: every topic that already succeeded as unchanged.
RETRY_TAGS = {"dagster/max_retries": "2", "dagster/retry_strategy": "FROM_FAILURE"}
#: Changed topics scattered through the partition order are batched into at most this many runs.
MAX_RUNS_PER_TICK = 4


@sensor(
    name="registry_schema_sensor",
    jobs=[CATALOG_SYNC_JOB, RETIRE_TOPICS_JOB],
    minimum_interval_seconds=60,
    default_status=DefaultSensorStatus.RUNNING,
    description=(
        "Lists the Glue Schema Registry each tick (its only AWS calls), keeps one `kafka_topics` "
        "partition per topic, and requests the catalog sync only for topics whose schema "
        "changed since the cursor, batched into a few runs over partition ranges. Deleted "
        "schemas lose their partition and their asset is retired per DZLINEAGE_DELETED_SCHEMA_POLICY."
    ),
)
def registry_schema_sensor(
    context: SensorEvaluationContext, lineage_sync: LineageSyncResource
) -> SensorResult:
    current = SyncRun(lineage_sync, context.log).registry_topics
    changed = changed_topics(current, context.cursor)

    existing = context.instance.get_dynamic_partitions(kafka_topics.name)
    existing_set = set(existing)
    added = [topic for topic in current if topic not in existing_set]
    removed = [topic for topic in existing if topic not in current]
    order = [topic for topic in existing if topic in current] + added
    to_sync = set(changed) | set(added)

    run_requests = [
        RunRequest(
            run_key=_run_key(start, end, {t: current[t].change_token for t in to_sync}),
            job_name=CATALOG_SYNC_JOB.name,
            tags={
                "dagster/asset_partition_range_start": start,
                "dagster/asset_partition_range_end": end,
                **RETRY_TAGS,
            },
        )
        for start, end in (
            changed_ranges(order, to_sync, max_ranges=MAX_RUNS_PER_TICK) if to_sync else []
        )
    ]
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
    cursor = SensorCursor.after(current, datetime.now(timezone.utc)).to_json()
    if not run_requests and not partition_requests:
        return SensorResult(
            skip_reason=f"no schema changed among {len(current)} topics", cursor=cursor
        )
    context.log.info(
        f"{len(added)} new, {len(set(changed) - set(added))} changed, {len(removed)} removed "
        f"topics; "
        f"{len(run_requests)} runs requested"
    )
    return SensorResult(
        run_requests=run_requests, dynamic_partitions_requests=partition_requests, cursor=cursor
    )


def _run_key(start: str, end: str, tokens: dict[str, str]) -> str:
    digest = hashlib.sha256(json.dumps(tokens, sort_keys=True).encode()).hexdigest()[:16]
    return f"{start}..{end}@{digest}"
