"""Which lineage runs failed in DataZone after it accepted their events, and are still failed.

PostLineageEvent is asynchronous: DataZone answers with an event id, then processes the event
and may end it FAILED (ListLineageEvents' ``processingStatus``). The project's run ids are
deterministic per content, and a topic's mapping record keeps the run id it posted
(``lineage_fingerprint``), so a failed event would otherwise stay "already posted" forever.

A failure is *resolved* when an event of the same run and type was accepted after it and did
not fail (it succeeded, or DataZone is still processing it): a later sync re-posted it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

FAILED = "FAILED"


@dataclass(frozen=True)
class LineageEventStatus:
    """One item of ListLineageEvents, as far as failures and their re-posts are concerned."""

    event_id: str
    run_id: str
    event_type: str
    processing_status: str
    created_at: datetime

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> LineageEventStatus | None:
        """The item's status; None for an event that is not an OpenLineage RunEvent."""
        summary = (item.get("eventSummary") or {}).get("openLineageRunEventSummary")
        if not summary or not summary.get("runId"):
            return None
        return cls(
            event_id=item["id"],
            run_id=summary["runId"],
            event_type=summary.get("eventType", ""),
            processing_status=item["processingStatus"],
            created_at=item.get("createdAt") or item["eventTime"],
        )


def unresolved_failures(
    failed: Iterable[LineageEventStatus], later: Iterable[LineageEventStatus]
) -> dict[str, tuple[str, ...]]:
    """Run id -> the ids of its failed events that no later event of the run and type resolved.

    ``later`` may hold any events (of any status) accepted since the earliest failure.
    """
    resolved_after: dict[tuple[str, str], datetime] = {}
    for event in later:
        if event.processing_status == FAILED:
            continue
        key = (event.run_id, event.event_type)
        if key not in resolved_after or event.created_at > resolved_after[key]:
            resolved_after[key] = event.created_at
    open_failures: dict[str, list[str]] = {}
    for event in failed:
        resolution = resolved_after.get((event.run_id, event.event_type))
        if resolution is None or resolution <= event.created_at:
            open_failures.setdefault(event.run_id, []).append(event.event_id)
    return {run_id: tuple(sorted(ids)) for run_id, ids in open_failures.items()}
