"""Read back a sync's lineage from each destination's own nodes: DataZone's, and the Glue
Data Catalog's where ``DZLINEAGE_LINEAGE_DESTINATIONS`` names glue (the comparison is in
:mod:`dzlineage_dagster.core.lineage.readback`).

After a sync that posted lineage, :func:`read_back_sync` waits (at most
``DZLINEAGE_LINEAGE_READBACK_WAIT_SECONDS``) until DataZone has processed the events it
accepted, then reads, per posted topic, ``GetLineageNode`` of the topic's node, of each Glue
table's ARN and of the topic asset's node: 2 + its tables calls (3 for a topic with one table),
a few more only to name what was found on a mismatch. Waiting costs, every poll, one
GetLineageEvent per event still processing while at most 10 are, else a ListLineageEvents
page per 50 events of the domain since the sync started. Every call goes through the
resource's clients, so the client rate limits (pacing) hold.

Glue's PostLineageEvent answers nothing (no event id) and Glue has no processing status to
read: the Glue read-back reads GetLineageNode by each table's ARN and the topic's identity
(1 + its tables calls a topic), and reads them all again every few seconds while some do not
match yet, at most ``DZLINEAGE_GLUE_LINEAGE_READBACK_WAIT_SECONDS``; what still does not match
then is a mismatch.

:func:`last_sync_readback` reads back what the mapping records say the last sync posted,
read-only and without waiting, from one graph: the Dagster asset checks (one per destination)
and ``dzlineage doctor`` call it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.lineage.openlineage import dataset_source_identifier
from dzlineage_dagster.core.lineage.readback import (
    Landing,
    Mismatch,
    NodeReader,
    ProcessingWait,
    ReadbackReport,
    compare,
    glue_table_arn,
)
from dzlineage_dagster.sync.errors import SyncError, describe_error, error_code
from dzlineage_dagster.sync.lineage.health import lineage_event_statuses
from dzlineage_dagster.sync.lineage.nodes import LineageReader, lineage_reader

if TYPE_CHECKING:
    from dzlineage_dagster.sync.run_state import SyncRun
    from dzlineage_dagster.sync.runner import TopicOutcome
    from dzlineage_dagster.sync.stages.lineage import LineagePlan
    from dzlineage_dagster.sync.stages.schema import SchemaSnapshot

#: Between two ListLineageEvents polls while DataZone processes the sync's events.
POLL_SECONDS = 2.0
#: DataZone's createdAt and the events' eventTime come from two clocks.
CLOCK_SKEW_MARGIN = timedelta(minutes=10)
#: Pending events read one by one at most (a sync of a few changed topics: a bounded cost
#: however many events the domain's producers posted since); more are listed, where one page
#: of 50 answers for many of them.
READ_ONE_BY_ONE_UP_TO = 10


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


def read_back_sync(run: SyncRun, outcomes: Iterable[TopicOutcome]) -> list[ReadbackReport]:
    """The read-back of the topics this sync posted lineage for, one report per destination
    (none for a destination it posted nothing to, or whose read-back is turned off)."""
    outcomes = list(outcomes)
    destinations = run.settings.lineage_destinations
    reports = []
    if "datazone" in destinations:
        reports.append(_read_back_datazone(run, outcomes))
    if "glue" in destinations:
        reports.append(_read_back_glue(run, outcomes))
    return [report for report in reports if report is not None]


def _read_back_glue(run: SyncRun, outcomes: list[TopicOutcome]) -> ReadbackReport | None:
    posted = [
        o
        for o in outcomes
        if o.ok and o.lineage is not None and dict(o.lineage.destinations).get("glue")
    ]
    wait_seconds = run.settings.glue_lineage_readback_wait_seconds
    if not posted or wait_seconds <= 0:
        return None
    landings = [
        landing_of(run, o.schema, o.lineage.plan, None) for o in posted if o.schema is not None
    ]
    return read_back(run, landings, "glue", wait_seconds=wait_seconds)


def _read_back_datazone(run: SyncRun, outcomes: list[TopicOutcome]) -> ReadbackReport | None:
    posted = [o for o in outcomes if o.ok and o.lineage is not None and o.lineage.event_ids]
    wait_seconds = run.settings.lineage_readback_wait_seconds
    if not posted or wait_seconds <= 0:
        return None
    try:
        wait = _wait_for_processing(
            run, {i for o in posted for i in o.lineage.event_ids}, wait_seconds
        )
    except (ClientError, BotoCoreError) as error:
        note = f"reading the events' processing status failed: {describe_error(error)}"
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


def read_back(
    run: SyncRun, landings: Sequence[Landing], graph: str = "datazone", wait_seconds: float = 0
) -> ReadbackReport:
    """Compare each landing with ``graph``'s nodes now; each node is read once. With
    ``wait_seconds`` (Glue, which has no processing status to wait on), the landings that do
    not match are read again every :data:`POLL_SECONDS` until they do or the time is over."""
    if graph == "glue":
        # Glue's graph has no assets: a landing there is the topic and its tables.
        landings = [replace(landing, asset_id=None) for landing in landings]
    deadline = time.monotonic() + wait_seconds
    calls, pending = 0, list(landings)
    while True:
        # DataZone's current view (no eventTimestamp): the nodes were made moments ago, by
        # DataZone's clock. A new reader each round: what it read before may have changed.
        nodes = lineage_reader(run, graph, current=True, forms=False)
        try:
            found = _compare_all(run, nodes, pending)
        except (ClientError, BotoCoreError) as error:
            note = _unreadable(error, graph)
            calls += nodes.calls
            return ReadbackReport(
                topics=len(landings), notes=(note,), calls=calls, checked=False, graph=graph
            )
        calls += nodes.calls
        pending = [
            landing for landing, mismatches in zip(pending, found, strict=True) if mismatches
        ]
        if not pending or time.monotonic() + POLL_SECONDS > deadline:
            break
        time.sleep(POLL_SECONDS)
    mismatches = tuple(m for landing_mismatches in found for m in landing_mismatches)
    report = ReadbackReport(
        topics=len(landings),
        tables=sum(len(landing.table_arns) for landing in landings),
        assets=sum(landing.asset_id is not None for landing in landings),
        mismatches=mismatches,
        calls=calls,
        graph=graph,
    )
    for mismatch in mismatches:
        run.log.error(f"lineage read-back ({graph}): {mismatch}")
    return report


# Who reads each graph, and the policy that allows it: an operator denied the read learns what
# to allow where, as doctor's rows say it.
_READ_PERMISSION = {
    "datazone": ("datazone:GetLineageNode", "governance", "iam/governance-account-policy.json"),
    "glue": ("glue:GetLineageNode", "data", "iam/glue-lineage-policy.json"),
}


def _unreadable(error: ClientError | BotoCoreError, graph: str) -> str:
    """Why the read-back could not read ``graph``: the failed call once (a ClientError's
    description names its operation already), and on AccessDenied the permission to allow."""
    if not isinstance(error, ClientError):
        return f"GetLineageNode failed: {describe_error(error)}"
    note = describe_error(error)
    if error_code(error) == "AccessDeniedException":
        action, side, policy = _READ_PERMISSION[graph]
        note += f"; allow {action} to the {side} side's credentials (as {policy} does)"
    return note


def _compare_all(
    run: SyncRun, nodes: LineageReader, landings: Sequence[Landing]
) -> list[tuple[Mismatch, ...]]:
    """Each landing's mismatches, in the landings' order."""
    read: NodeReader = nodes.node
    # Node reads of different topics in parallel, as the sync's topics are (DZLINEAGE_CONCURRENCY,
    # paced by the client's rate limits): one after another, 20,000 topics' 60,000 reads took
    # over an hour.
    workers = max(1, min(run.settings.concurrency, len(landings)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda landing: tuple(compare(landing, read)), landings))


def last_sync_readback(
    run: SyncRun,
    topics: Iterable[str] | None = None,
    graph: str = "datazone",
    wait_seconds: float = 0,
) -> ReadbackReport:
    """The read-back of what the last sync posted, read-only: for each mapped topic (of
    ``topics``, default all) whose planned lineage is the one its record says was posted,
    its landing compared with ``graph``'s nodes now (or, with ``wait_seconds``, as soon as
    they match within that time: :func:`read_back`). Topics whose lineage changed since (the
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
    report = read_back(run, landings, graph, wait_seconds)
    if changed:
        note = f"not compared, their lineage changed since the last sync: {', '.join(changed)}"
        report = replace(report, notes=(*report.notes, note))
    return report


def _wait_for_processing(run: SyncRun, event_ids: set[str], wait_seconds: float) -> ProcessingWait:
    """Poll the events' processing status until DataZone has ended the processing of every
    one of ``event_ids`` or ``wait_seconds`` have passed."""
    wait = ProcessingWait(set(event_ids))
    deadline = time.monotonic() + wait_seconds
    while True:
        wait.update(_processing_statuses(run, wait.pending))
        if wait.done or time.monotonic() + POLL_SECONDS > deadline:
            return wait
        time.sleep(POLL_SECONDS)


def _processing_statuses(run: SyncRun, pending: set[str]) -> dict[str, str]:
    """Event id -> processingStatus of the ``pending`` events. A few are read one by one
    (GetLineageEvent: as many calls as events, however busy the domain); more are listed
    (ListLineageEvents of the whole domain since the sync started: a page per 50 events of
    every producer, including a first sync's own 2 per topic moments before)."""
    if len(pending) > READ_ONE_BY_ONE_UP_TO:
        since: datetime = run.started_at - CLOCK_SKEW_MARGIN
        statuses = lineage_event_statuses(run, timestampAfter=since)
        return {status.event_id: status.processing_status for status in statuses}
    datazone = run.resource.datazone.client()
    domain_id = run.settings.domain_id
    return {
        event_id: datazone.get_lineage_event(domainIdentifier=domain_id, identifier=event_id)[
            "processingStatus"
        ]
        for event_id in sorted(pending)
    }
