"""Retire the assets of schemas that left the registry."""

from __future__ import annotations

from collections.abc import Collection

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.ssm_names import MappingRecord
from dzlineage_dagster.sync.environment import SyncEnvironment
from dzlineage_dagster.sync.runner import describe_error
from dzlineage_dagster.sync.stages import retire_topic_asset


def removed_records(
    env: SyncEnvironment, topics: Collection[str] | None = None
) -> list[MappingRecord]:
    """Stored mappings whose schema is no longer in the registry (of `topics`, if given)."""
    live_arns = {info.schema_arn for info in env.registry_topics.values()}
    return [
        record
        for record in env.stored_records.values()
        if record.schema_arn not in live_arns and (topics is None or record.topic in topics)
    ]


def retire_removed_topics(
    env: SyncEnvironment, topics: Collection[str] | None = None
) -> dict[str, str]:
    """Topic -> what happened, for stored mappings whose schema left the registry.

    ``topics`` narrows it to those topics (the sensor's deleted partitions); the registry is
    listed again first, so a schema that came back in between is left alone.
    """
    results = {}
    for record in removed_records(env, topics):
        try:
            results[record.topic] = retire_topic_asset(env, record)
        except (ClientError, BotoCoreError) as error:
            results[record.topic] = f"failed: {describe_error(error)}"
            env.log.error(f"topic {record.topic!r} could not be retired: {results[record.topic]}")
    return results
