"""Run the stages over many topics: one failing topic never stops the others.

A topic's mapping record is written once, when its stages are done (or one of them failed):
the asset stage and the lineage stage each only stage their change in the run's mapping store.
The asset stage ends with the asset's publication to the catalog (`sync/stages/publish.py`), so
the Dagster job and `dzlineage sync` both publish what they create or revise.

Topics run on a pool of threads (the ``concurrency`` setting), so a first sync of thousands of
topics is bound by DataZone's quotas rather than by one call's latency after another; the
clients' rate limits keep the threads within the quotas. Outcomes and log lines reach the
caller on its own thread: Dagster's log and the materializations an asset yields stay on the
thread that runs the step.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from enum import Enum

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.sync.errors import TOPIC_ERRORS, SyncError, describe_error
from dzlineage_dagster.sync.run_state import MainThreadLog, SyncRun
from dzlineage_dagster.sync.stages.asset import AssetOutcome, sync_topic_asset
from dzlineage_dagster.sync.stages.lineage import LineageOutcome, post_topic_lineage
from dzlineage_dagster.sync.stages.publish import Publication, publish_topic_asset
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
    #: The asset's publication to the catalog this run made (None: nothing to publish).
    publication: Publication | None = None
    lineage: LineageOutcome | None = None
    #: The stages whose work is done and recorded (the mapping written when they changed it).
    completed: frozenset[Stage] = field(default_factory=frozenset)
    failed_stage: Stage | None = None
    error: str | None = None
    #: Known unchanged from the registry token in its mapping record: no call was made.
    unchanged_by_token: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def catalog_summary(self) -> str:
        """What this run did to the asset's catalog listing: ``published r3``, or nothing."""
        return self.publication.summary if self.publication else ""


def sync_topics(
    run: SyncRun,
    topics: Sequence[str],
    stages: Collection[Stage] = ALL_STAGES,
    *,
    concurrency: int | None = None,
    trust_registry_tokens: bool = False,
    stale: Collection[str] = (),
) -> Iterator[TopicOutcome]:
    """Yield each topic's outcome as soon as it is known; failures are outcomes, not raises.

    ``stale`` topics are synced even when their registry token is trusted and unchanged (the
    version sweep found them behind the registry while their ``UpdatedTime`` stood still).

    ``concurrency`` (default: the run's setting) topics are in flight at once; outcomes come in
    the order the topics finish.
    """
    if not topics:
        return
    _read_mappings_of(run, topics)
    workers = max(1, min(concurrency or run.settings.concurrency, len(topics)))
    started = last_report = time.monotonic()
    failures = done = 0
    log = MainThreadLog(run.log)
    run.log = log
    pool = ThreadPoolExecutor(workers, thread_name_prefix="dzlineage-sync")
    try:
        remaining = iter(topics)
        in_flight: set[Future[TopicOutcome]] = set()

        def top_up() -> None:
            # A bounded window, not N futures: an abandoned run stops within a window's topics.
            while len(in_flight) < workers * 2:
                topic = next(remaining, None)
                if topic is None:
                    return
                trusted = trust_registry_tokens and topic not in stale
                in_flight.add(
                    pool.submit(sync_topic, run, topic, stages, trust_registry_tokens=trusted)
                )

        top_up()
        while in_flight:
            finished, in_flight = wait(
                in_flight, timeout=PROGRESS_EVERY_SECONDS, return_when=FIRST_COMPLETED
            )
            top_up()
            log.flush()
            for future in finished:
                outcome = future.result()
                done += 1
                if not outcome.ok:
                    failures += 1
                    run.log.error(
                        f"topic {outcome.topic!r} failed in {outcome.failed_stage.value}: "
                        f"{outcome.error}"
                    )
                yield outcome
                now = time.monotonic()
                if done % PROGRESS_EVERY_TOPICS == 0 or now - last_report >= PROGRESS_EVERY_SECONDS:
                    last_report = now
                    run.log.info(
                        f"synced {done}/{len(topics)} topics ({failures} failed) in "
                        f"{now - started:.1f}s"
                    )
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        log.flush()
        run.log = log.target


def sync_topic(
    run: SyncRun,
    topic: str,
    stages: Collection[Stage] = ALL_STAGES,
    *,
    trust_registry_tokens: bool = False,
) -> TopicOutcome:
    """The topic's stages, then one write of its mapping record if a stage changed it.

    With ``trust_registry_tokens``, a topic whose mapping record carries the token of its
    current listing (same schema ARN, ``UpdatedTime`` and settings as when the record was
    written by a complete sync) is unchanged without a single call.
    """
    full_sync = set(stages) == ALL_STAGES
    if trust_registry_tokens and full_sync:
        unchanged = _unchanged_by_token(run, topic)
        if unchanged is not None:
            return unchanged
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
                published = publish_topic_asset(run, outcome.asset) if outcome.asset else None
                if published is not None:
                    outcome.asset, outcome.publication = published
            else:
                outcome.lineage = post_topic_lineage(run, outcome.schema)
            completed.append(stage)
            if first_unwritten is None and run.mappings.is_staged(outcome.schema.schema_arn):
                first_unwritten = stage
    except TOPIC_ERRORS as error:
        outcome.failed_stage, outcome.error = stage, describe_error(error)
    if outcome.schema is not None:
        if outcome.ok and full_sync:
            _stage_registry_token(run, outcome.schema.schema_arn, topic)
        try:
            # Also after a failed lineage stage: the asset the asset stage made is kept.
            run.mappings.commit(outcome.schema.schema_arn)
        except (ClientError, BotoCoreError, SyncError) as error:  # SyncError: SSM has no room
            if first_unwritten is None:
                # Only the token was new: the next run reads the schema again, nothing is lost.
                run.log.warning(f"{topic}: registry token not recorded: {describe_error(error)}")
            else:
                completed = completed[: completed.index(first_unwritten)]
                if outcome.ok:
                    outcome.failed_stage, outcome.error = first_unwritten, describe_error(error)
    outcome.completed = frozenset(completed)
    return outcome


def _unchanged_by_token(run: SyncRun, topic: str) -> TopicOutcome | None:
    listed = run.registry_topics.get(topic)
    stored = run.mappings.get(listed.schema_arn) if listed else None
    if stored is None or not stored.registry_token:
        return None
    if stored.registry_token != run.topic_token(topic):
        return None
    return TopicOutcome(
        topic,
        asset=AssetOutcome("unchanged", stored, run.asset_url(stored.asset_id)),
        completed=ALL_STAGES,
        unchanged_by_token=True,
    )


def _stage_registry_token(run: SyncRun, schema_arn: str, topic: str) -> None:
    """Record the listing's token with the topic's record (only table topics have one)."""
    current = run.mappings.get(schema_arn)
    token = run.topic_token(topic)
    if current is not None and current.registry_token != token:
        run.mappings.stage(replace(current, registry_token=token))


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
    else:
        # Here, before the threads start: one read for all of them, its warnings on this thread.
        run.mappings.all()
