"""Read back a sync's lineage from DataZone's own nodes (the comparison is in
:mod:`dzlineage_dagster.core.lineage.readback`).

After a sync that posted lineage, :func:`read_back_sync` waits (at most
``DZLINEAGE_LINEAGE_READBACK_WAIT_SECONDS``) until DataZone has processed the events it
accepted, then reads, per posted topic, ``GetLineageNode`` of the topic's node, of each Glue
table's ARN and of the topic asset's node: 2 + its tables calls (3 for a topic with one table),
a few more only to name what was found on a mismatch. Waiting costs one ListLineageEvents page
per 50 events every poll. Every call goes through the resource's clients, so the client rate
limits (pacing) hold.

:func:`last_sync_readback` reads back what the mapping records say the last sync posted,
read-only and without waiting: the Dagster asset check and ``dzlineage doctor`` call it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.lineage.openlineage import dataset_source_identifier
from dzlineage_dagster.core.lineage.readback import (
    Landing,
    NodeRead,
    ProcessingWait,
    ReadbackReport,
    compare,
    glue_table_arn,
)
from dzlineage_dagster.sync.errors import SyncError, describe_error, error_code
from dzlineage_dagster.sync.lineage_health import lineage_event_statuses

if TYPE_CHECKING:
    from dzlineage_dagster.sync.run_state import SyncRun
    from dzlineage_dagster.sync.runner import TopicOutcome
    from dzlineage_dagster.sync.stages.lineage import LineagePlan
    from dzlineage_dagster.sync.stages.schema import SchemaSnapshot

#: Between two ListLineageEvents polls while DataZone processes the sync's events.
POLL_SECONDS = 2.0
#: DataZone's createdAt and the events' eventTime come from two clocks.
CLOCK_SKEW_MARGIN = timedelta(minutes=10)


def landing_of(
    run: SyncRun, snapshot: SchemaSnapshot, plan: LineagePlan, asset_id: str | None
) -> Landing:
    """What one topic's planned lineage should look like in DataZone: its tables by the ARN
    AWS gives them (not by the names the events carry)."""
    tables = tuple(
        dict.fromkeys(
            glue_table_arn(
                snapshot.region,
                run.settings.glue_table_account(snapshot.account_id),
                table.database,
                table.table,
            )
            for table in plan.lineage.tables
        )
    )
    topic_node = dataset_source_identifier(*run.topic_dataset(snapshot.topic))
    return Landing(snapshot.topic, topic_node, tables, asset_id)


def read_back_sync(run: SyncRun, outcomes: Iterable[TopicOutcome]) -> ReadbackReport | None:
    """The read-back of the topics this sync posted lineage for (None: it posted none, or the
    read-back is turned off)."""
    posted = [o for o in outcomes if o.ok and o.lineage is not None and o.lineage.event_ids]
    wait_seconds = run.settings.lineage_readback_wait_seconds
    if not posted or wait_seconds <= 0:
        return None
    try:
        wait = _wait_for_processing(
            run, {i for o in posted for i in o.lineage.event_ids}, wait_seconds
        )
    except (ClientError, BotoCoreError) as error:
        note = f"ListLineageEvents failed: {describe_error(error)}"
        return ReadbackReport(topics=len(posted), notes=(note,), checked=False)
    if not wait.done:
        note = (
            f"{len(wait.pending)} of the sync's lineage events still processing after "
            f"{wait_seconds:g}s (DZLINEAGE_LINEAGE_READBACK_WAIT_SECONDS)"
        )
        return ReadbackReport(topics=len(posted), notes=(note,), checked=False)
    # A topic whose events DataZone FAILED is known not to have landed; the next sync's
    # lineage health check re-posts it, so it is named, not compared.
    failed = [o.topic for o in posted if wait.failed & set(o.lineage.event_ids)]
    landings = [
        landing_of(run, o.schema, o.lineage.plan, o.asset.record.asset_id if o.asset else None)
        for o in posted
        if o.schema is not None and o.topic not in failed
    ]
    report = read_back(run, landings)
    if failed:
        note = (
            f"not compared, their events FAILED in DataZone (the next sync re-posts them): "
            f"{', '.join(failed)}"
        )
        report = replace(report, notes=(*report.notes, note))
    return report


def read_back(run: SyncRun, landings: Sequence[Landing]) -> ReadbackReport:
    """Compare each landing with DataZone's nodes now; each node is read once."""
    reader = _NodeReader(run)
    # Node reads of different topics in parallel, as the sync's topics are (DZLINEAGE_CONCURRENCY,
    # paced by the client's rate limits): one after another, 20,000 topics' 60,000 reads took
    # over an hour. The mismatches keep the landings' order.
    workers = max(1, min(run.settings.concurrency, len(landings)))
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            found = list(pool.map(lambda landing: tuple(compare(landing, reader.read)), landings))
        mismatches = tuple(m for landing_mismatches in found for m in landing_mismatches)
    except (ClientError, BotoCoreError) as error:
        note = f"GetLineageNode failed: {describe_error(error)}"
        return ReadbackReport(
            topics=len(landings), notes=(note,), calls=reader.calls, checked=False
        )
    report = ReadbackReport(
        topics=len(landings),
        tables=sum(len(landing.table_arns) for landing in landings),
        assets=sum(landing.asset_id is not None for landing in landings),
        mismatches=mismatches,
        calls=reader.calls,
    )
    for mismatch in mismatches:
        run.log.error(f"lineage read-back: {mismatch}")
    return report


def last_sync_readback(run: SyncRun, topics: Iterable[str] | None = None) -> ReadbackReport:
    """The read-back of what the last sync posted, read-only: for each mapped topic (of
    ``topics``, default all) whose planned lineage is the one its record says was posted,
    its landing compared with DataZone's nodes now. Topics whose lineage changed since (the
    next sync posts it) are named in a note, not compared."""
    from dzlineage_dagster.sync.stages.lineage import plan_topic_lineage
    from dzlineage_dagster.sync.stages.schema import read_schema

    run.mappings.read_only = True
    wanted = None if topics is None else set(topics)
    landings, changed = [], []
    for record in run.mappings.all().values():
        if wanted is not None and record.topic not in wanted:
            continue
        if record.topic not in run.registry_topics:
            continue
        try:
            snapshot = read_schema(run, record.topic)
            plan = plan_topic_lineage(run, snapshot)
        except (SyncError, ClientError, BotoCoreError) as error:
            changed.append(f"{record.topic} ({describe_error(error)})")
            continue
        if plan.fingerprint is None:
            continue
        if not plan.already_posted:
            changed.append(record.topic)
            continue
        landings.append(landing_of(run, snapshot, plan, record.asset_id))
    report = read_back(run, landings)
    if changed:
        note = f"not compared, their lineage changed since the last sync: {', '.join(changed)}"
        report = replace(report, notes=(*report.notes, note))
    return report


class _NodeReader:
    """GetLineageNode by id or sourceIdentifier, each identifier read once however many threads
    ask for it (the first reads, the others wait for its answer); None: no node."""

    def __init__(self, run: SyncRun) -> None:
        self._client = run.resource.datazone.client()
        self._domain = run.settings.domain_id
        self._known: dict[str, Future[NodeRead | None]] = {}
        self._lock = threading.Lock()
        self.calls = 0

    def read(self, identifier: str) -> NodeRead | None:
        with self._lock:
            answer = self._known.get(identifier)
            reads_it = answer is None
            if answer is None:
                answer = self._known[identifier] = Future()
                self.calls += 1
        if reads_it:
            try:
                answer.set_result(self._get(identifier))
            except BaseException as error:
                answer.set_exception(error)
        return answer.result()

    def _get(self, identifier: str) -> NodeRead | None:
        try:
            response = self._client.get_lineage_node(
                domainIdentifier=self._domain, identifier=identifier
            )
        except ClientError as error:
            if error_code(error) != "ResourceNotFoundException":
                raise
            return None
        return NodeRead.from_response(response)


def _wait_for_processing(run: SyncRun, event_ids: set[str], wait_seconds: float) -> ProcessingWait:
    """Poll ListLineageEvents (the events since the sync started) until DataZone has ended
    the processing of every one of ``event_ids`` or ``wait_seconds`` have passed."""
    wait = ProcessingWait(set(event_ids))
    since: datetime = run.started_at - CLOCK_SKEW_MARGIN
    deadline = time.monotonic() + wait_seconds
    while True:
        statuses = lineage_event_statuses(run, timestampAfter=since)
        wait.update({status.event_id: status.processing_status for status in statuses})
        if wait.done or time.monotonic() + POLL_SECONDS > deadline:
            return wait
        time.sleep(POLL_SECONDS)
