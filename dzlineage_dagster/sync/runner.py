"""Run the stages over many topics: one failing topic never stops the others.

A topic's mapping record is written once, when its stages are done (or one of them failed):
the asset stage and the lineage stage each only stage their change in the run's mapping store.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.sync.errors import TOPIC_ERRORS, describe_error
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.stages.asset import AssetOutcome, sync_topic_asset
from dzlineage_dagster.sync.stages.lineage import LineageOutcome, post_topic_lineage
from dzlineage_dagster.sync.stages.schema import SchemaSnapshot, read_schema


class Stage(str, Enum):
    """The per-topic stages, in the order they run."""

    SCHEMA = "schema"
    ASSET = "asset"
    LINEAGE = "lineage"


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
    #: The stages whose work is done and recorded (the mapping written when they changed it).
    completed: frozenset[Stage] = field(default_factory=frozenset)
    failed_stage: Stage | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def sync_topics(
    run: SyncRun, topics: Sequence[str], stages: Collection[Stage] = ALL_STAGES
) -> Iterator[TopicOutcome]:
    """Yield each topic's outcome as soon as it is known; failures are outcomes, not raises."""
    if topics:
        _read_mappings_of(run, topics)
    started = last_report = time.monotonic()
    failures = 0
    for index, topic in enumerate(topics, start=1):
        outcome = sync_topic(run, topic, stages)
        if not outcome.ok:
            failures += 1
            run.log.error(
                f"topic {topic!r} failed in {outcome.failed_stage.value}: {outcome.error}"
            )
        yield outcome
        now = time.monotonic()
        if index % PROGRESS_EVERY_TOPICS == 0 or now - last_report >= PROGRESS_EVERY_SECONDS:
            last_report = now
            run.log.info(
                f"synced {index}/{len(topics)} topics ({failures} failed) in {now - started:.1f}s"
            )


def sync_topic(run: SyncRun, topic: str, stages: Collection[Stage] = ALL_STAGES) -> TopicOutcome:
    """The topic's stages, then one write of its mapping record if a stage changed it."""
    outcome = TopicOutcome(topic)
    completed: list[Stage] = []
    #: The first stage whose change waits in the mapping store: it is not done until written.
    first_unwritten: Stage | None = None
    stage = Stage.SCHEMA
    try:
        outcome.schema = read_schema(run, topic)
        completed.append(stage)
        for stage in (Stage.ASSET, Stage.LINEAGE):
            if stage not in stages:
                continue
            if stage is Stage.ASSET:
                outcome.asset = sync_topic_asset(run, outcome.schema)
            else:
                outcome.lineage = post_topic_lineage(run, outcome.schema)
            completed.append(stage)
            if first_unwritten is None and run.mappings.is_staged(outcome.schema.schema_arn):
                first_unwritten = stage
    except TOPIC_ERRORS as error:
        outcome.failed_stage, outcome.error = stage, describe_error(error)
    if outcome.schema is not None:
        try:
            # Also after a failed lineage stage: the asset the asset stage made is kept.
            run.mappings.commit(outcome.schema.schema_arn)
        except (ClientError, BotoCoreError) as error:
            if first_unwritten is not None:
                completed = completed[: completed.index(first_unwritten)]
            if outcome.ok:
                outcome.failed_stage, outcome.error = first_unwritten, describe_error(error)
    outcome.completed = frozenset(completed)
    return outcome


def _read_mappings_of(run: SyncRun, topics: Sequence[str]) -> None:
    """Read only these topics' mappings when the run covers at most half the registry.

    The whole mapping costs a call per 10 parameters, some per registry topic (only table
    topics have one); by name it costs a call per 10 of the run's topics. A run over a few
    topics (the sensor's usual run) so reads a few parameters instead of all of them, and a
    run over most topics lists them all, as the retirement after it needs anyway.
    """
    listed = run.registry_topics
    arns = [listed[topic].schema_arn for topic in topics if topic in listed]
    if len(arns) * 2 <= len(listed):
        run.mappings.read(arns)
