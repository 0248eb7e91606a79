"""Lineage events DataZone accepted and then failed: find them, so their topics re-post.

One ListLineageEvents(processingStatus=FAILED, timestampAfter=now - lookback) per run, paged;
only when it finds failures, one more listing of the events since the earliest of them tells
which were re-posted since (see :mod:`dzlineage_dagster.core.lineage.health`). The lineage
stage asks :meth:`LineageHealth.must_repost` before it calls an edge "already posted", and
posts a failed run's events again under a new client token (the old one would only replay the
failed acceptance).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol

from dzlineage_dagster.core.lineage.health import (
    FAILED,
    LineageEventStatus,
    unresolved_failures,
)
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.settings import LineageSettings


class EventReadingRun(Protocol):
    """What these reads take of a run (:class:`dzlineage_dagster.sync.run_state.SyncRun`,
    which keeps their answers once a run: named here, not imported, as it imports this)."""

    resource: LineageSyncResource
    log: Any
    started_at: datetime

    @property
    def settings(self) -> LineageSettings: ...


LIST_PAGE_SIZE = 50
CLOCK_SKEW_MARGIN = timedelta(minutes=10)
#: How long a client token is honoured: DataZone publishes no window, AWS's generic
#: idempotency pattern (Directory Service, Verified Permissions, DynamoDB) says 8 hours.
CLIENT_TOKEN_WINDOW = timedelta(hours=8)


@dataclass(frozen=True)
class LineageHealth:
    #: Run id -> the ids of its events that failed after acceptance and were not re-posted.
    failed_runs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: The start of the window the check looked at.
    since: datetime | None = None

    def must_repost(self, run_id: str | None) -> bool:
        return run_id is not None and run_id in self.failed_runs

    def retry_of(self, run_id: str | None) -> str | None:
        """What makes a re-post's client token new: the failed events it replaces."""
        if not self.must_repost(run_id):
            return None
        return ",".join(self.failed_runs[run_id])


def check_lineage_health(run: EventReadingRun) -> LineageHealth:
    """The runs whose lineage events failed after acceptance within the lookback window."""
    since = datetime.now(timezone.utc) - timedelta(
        hours=run.settings.lineage_failure_lookback_hours
    )
    failed = lineage_event_statuses(run, timestampAfter=since, processingStatus=FAILED)
    if not failed:
        return LineageHealth(since=since)
    # A re-post's eventTime is after the failure's acceptance; the margin absorbs clock skew
    # between the producer (eventTime) and DataZone (createdAt).
    earliest = min(event.created_at for event in failed) - CLOCK_SKEW_MARGIN
    later = lineage_event_statuses(run, timestampAfter=earliest)
    failed_runs = unresolved_failures(failed, later)
    if failed_runs:
        events = sum(len(ids) for ids in failed_runs.values())
        run.log.warning(
            f"{events} lineage events of {len(failed_runs)} runs failed after DataZone accepted "
            f"them (since {since:%Y-%m-%d %H:%M} UTC); the sync's topics and the downstream "
            "sensor's assets whose lineage they carry post it again (events of other producers "
            "are theirs to re-send)"
        )
    return LineageHealth(failed_runs, since)


def lineage_events(run: EventReadingRun, **filters: object) -> Iterator[dict[str, Any]]:
    """ListLineageEvents' items with ``filters``, every page of the largest size, as the pages
    arrive (one held at a time)."""
    return run.resource.datazone.paginate_lazily(
        "datazone",
        "list_lineage_events",
        "items",
        page_size=LIST_PAGE_SIZE,
        domainIdentifier=run.settings.domain_id,
        **filters,
    )


def lineage_event_statuses(run: EventReadingRun, **filters: object) -> list[LineageEventStatus]:
    """ListLineageEvents with ``filters``, every page of the largest size, as statuses."""
    statuses = (LineageEventStatus.from_item(item) for item in lineage_events(run, **filters))
    return [status for status in statuses if status is not None]


def events_held_before(run: EventReadingRun) -> Counter[tuple[str, str]]:
    """(run id, event type) -> how many such events DataZone holds and has not failed, of
    those posted within a client token's window before this run started: what a 409 from
    PostLineageEvent is checked against. One paged ListLineageEvents per run, made only when
    a post answers 409."""
    since = run.started_at - CLIENT_TOKEN_WINDOW - CLOCK_SKEW_MARGIN
    return Counter(
        (event.run_id, event.event_type)
        for event in lineage_event_statuses(run, timestampAfter=since)
        if event.processing_status != FAILED
    )
