"""Runs someone else posted under the sync's own jobs: found, so the sync posts its edge again.

DataZone shows the latest run of each job (by ``eventTime``), and a hop's job
(:func:`~dzlineage_dagster.core.lineage.openlineage.hop_job`) states the hop's whole truth in its
latest run. A run posted under it by anyone else (a principal with ``datazone:PostLineageEvent``
posting directly, past the relay, which refuses these namespaces) replaces the platform's
edge: a COMPLETE of ``kafka-connect.shop-iceberg-sink/shop.sales.orders`` claiming the topic
feeds another table takes the topic's edge to its Iceberg table out of the graph.

Each sync lists the domain's lineage events newest first (``ListLineageEvents``, ``eventTime``
descending, within ``DZLINEAGE_LINEAGE_FAILURE_LOOKBACK_HOURS``) down to the first run of its
own: the latest run of each of its jobs above that point is the job's latest in DataZone, and
one that is not the run the topic's mapping record says the sync posted is foreign. What lies
below was looked at by the sync that posted it, so a plain sync reads one page while nobody
else posts; a reconcile reads the whole window. The lineage stage posts the topic's hops
again under new run ids dated after the foreign run, and logs a WARNING naming the job and the
run (:func:`~dzlineage_dagster.sync.stages.lineage.post_topic_lineage`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol

from dzlineage_dagster.core.lineage.health import FAILED
from dzlineage_dagster.core.lineage.openlineage import CONNECTOR_JOB_NAMESPACE, HOP_JOB_SEPARATOR
from dzlineage_dagster.core.lineage.state import PostedLineage, hop_run_id
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.lineage.health import LIST_PAGE_SIZE


class JobReadingRun(Protocol):
    """What the look takes of a run (:class:`dzlineage_dagster.sync.run_state.SyncRun`, which
    keeps its answer once a run: named here, not imported, as it imports this)."""

    resource: LineageSyncResource
    mappings: Any

    @property
    def settings(self) -> LineageSettings: ...

    @property
    def registry_topics(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class ForeignRun:
    """A run of one of the sync's jobs that the sync did not post, latest of its job."""

    job: tuple[str, str]
    run_id: str
    event_time: datetime
    created_by: str
    event_id: str

    @property
    def topic(self) -> str:
        return self.job[1].rpartition(HOP_JOB_SEPARATOR)[2]

    def describe(self) -> str:
        return (
            f"run {self.run_id} of job [{self.job[0]}.{self.job[1]}] (event {self.event_id}, "
            f"eventTime {self.event_time.isoformat()}, posted by {self.created_by or 'unknown'})"
        )


def find_foreign_runs(run: JobReadingRun, *, whole_window: bool = False) -> tuple[ForeignRun, ...]:
    """The foreign runs that are their job's latest, newest first (see the module doc);
    ``whole_window``: look through every event of the lookback, not down to the sync's newest."""
    since = datetime.now(timezone.utc) - timedelta(
        hours=run.settings.lineage_failure_lookback_hours
    )
    # Page by page, as the items are looked at: the look stops at the sync's newest run.
    pages = (
        run.resource.datazone.client()
        .get_paginator("list_lineage_events")
        .paginate(
            domainIdentifier=run.settings.domain_id,
            timestampAfter=since,
            sortOrder="DESCENDING",
            PaginationConfig={"PageSize": LIST_PAGE_SIZE},
        )
    )
    items = (item for page in pages for item in page.get("items", []))
    return tuple(_foreign(run, items, whole_window))


def _foreign(
    run: JobReadingRun, items: Iterable[Mapping[str, Any]], whole_window: bool
) -> Iterator[ForeignRun]:
    namespaces = {CONNECTOR_JOB_NAMESPACE, run.settings.job_namespace}
    seen: set[tuple[str, str]] = set()
    for item in items:
        summary = (item.get("eventSummary") or {}).get("openLineageRunEventSummary") or {}
        job = summary.get("job") or {}
        key = (job.get("namespace", ""), job.get("name", ""))
        # A FAILED event built nothing: the job's latest run is an older one.
        if key[0] not in namespaces or key in seen or item.get("processingStatus") == FAILED:
            continue
        seen.add(key)
        own = _posted_by_the_sync(run, key, summary.get("runId", ""))
        if own is None:
            continue  # not a topic the sync keeps (retired, another registry's): not its to judge
        if own:
            if whole_window:
                continue
            return
        yield ForeignRun(
            key,
            summary.get("runId", ""),
            item["eventTime"],
            item.get("createdBy", ""),
            item.get("id", ""),
        )


def _posted_by_the_sync(run: JobReadingRun, job: tuple[str, str], run_id: str) -> bool | None:
    """Whether ``run_id`` is the run the topic's record says the sync posted for ``job``;
    None when the sync keeps no lineage for the job's topic."""
    topic = job[1].rpartition(HOP_JOB_SEPARATOR)[2]
    listed = run.registry_topics.get(topic)
    if listed is None:
        return None
    run.mappings.read([listed.schema_arn])
    record = run.mappings.get(listed.schema_arn)
    try:
        posted = PostedLineage.decode(record.lineage_fingerprint) if record else None
    except ValueError:
        return None  # the lineage stage names an unreadable record itself
    if posted is None:
        return None
    if posted.legacy_runs:
        return run_id in posted.legacy_runs
    # A closed job's closing run has the same base as the hops: either side's id is the sync's.
    return run_id in {hop_run_id(posted.base, side, job) for side in ("source", "sink")}
