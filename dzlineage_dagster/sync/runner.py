"""Run the stages over many topics: one failing topic never stops the others."""

from __future__ import annotations

import time
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.sync.environment import SyncEnvironment, SyncError
from dzlineage_dagster.sync.stages import (
    AssetOutcome,
    LineageOutcome,
    SchemaSnapshot,
    post_topic_lineage,
    read_schema,
    sync_topic_asset,
)


class Stage(str, Enum):
    SCHEMA = "registry_schema"
    ASSET = "datazone_topic_asset"
    LINEAGE = "topic_lineage"


ALL_STAGES = frozenset(Stage)
#: How often, at least, a long sync reports its progress.
PROGRESS_EVERY_SECONDS = 10.0
PROGRESS_EVERY_TOPICS = 100


@dataclass
class TopicOutcome:
    topic: str
    schema: SchemaSnapshot | None = None
    asset: AssetOutcome | None = None
    lineage: LineageOutcome | None = None
    failed_stage: Stage | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def describe_error(error: Exception) -> str:
    if isinstance(error, ClientError):
        details = error.response.get("Error", {})
        operation = getattr(error, "operation_name", "call")
        return f"{operation} failed: {details.get('Code')}: {details.get('Message')}"
    return str(error) or type(error).__name__


def sync_topics(
    env: SyncEnvironment, topics: Sequence[str], stages: Collection[Stage] = ALL_STAGES
) -> Iterator[TopicOutcome]:
    """Yield each topic's outcome as soon as it is known; failures are outcomes, not raises."""
    started = last_report = time.monotonic()
    failures = 0
    for index, topic in enumerate(topics, start=1):
        outcome = TopicOutcome(topic)
        stage = Stage.SCHEMA
        try:
            outcome.schema = read_schema(env, topic)
            if Stage.ASSET in stages:
                stage = Stage.ASSET
                outcome.asset = sync_topic_asset(env, outcome.schema)
            if Stage.LINEAGE in stages:
                stage = Stage.LINEAGE
                outcome.lineage = post_topic_lineage(env, outcome.schema)
        except (SyncError, ClientError, BotoCoreError, ValueError) as error:
            outcome.failed_stage, outcome.error = stage, describe_error(error)
            failures += 1
            env.log.error(f"topic {topic!r} failed in {stage.value}: {outcome.error}")
        yield outcome
        now = time.monotonic()
        if index % PROGRESS_EVERY_TOPICS == 0 or now - last_report >= PROGRESS_EVERY_SECONDS:
            last_report = now
            env.log.info(
                f"synced {index}/{len(topics)} topics ({failures} failed) in {now - started:.1f}s"
            )
