"""DataZone as a lineage destination: PostLineageEvent with a client token per event.

Each event of a run gets a token derived from the run id and event type
(:func:`~dzlineage_dagster.core.lineage.openlineage.lineage_client_token`), so a retry or a
rerun of the same logical run replays instead of posting twice; a 409 is resolved by
:func:`resolve_post_conflict`. IAM: ``datazone:PostLineageEvent`` on the domain (and
``datazone:ListLineageEvents`` when a 409 is checked); its rate is assumed at 20 TPS
(:mod:`~dzlineage_dagster.core.aws.quotas`), paced by the client.
"""

from __future__ import annotations

from botocore.exceptions import ClientError
from openlineage.client.event_v2 import RunEvent

from dzlineage_dagster.core.lineage.openlineage import event_json, lineage_client_token
from dzlineage_dagster.sync.destinations import DeliveredEvents, RunPost
from dzlineage_dagster.sync.errors import SyncError, describe_error
from dzlineage_dagster.sync.lineage.conflict import is_conflict, post_after_conflict
from dzlineage_dagster.sync.lineage.health import events_held_before
from dzlineage_dagster.sync.run_state import SyncRun


class DataZoneDestination:
    """The run's DataZone domain (``DZLINEAGE_DOMAIN_ID``), through the governance side."""

    name = "datazone"
    #: PostLineageEvent takes RunEvents only.
    takes_dataset_events = False
    iam_actions = ("datazone:PostLineageEvent", "datazone:ListLineageEvents")
    operations = ("datazone.PostLineageEvent",)

    def __init__(self, run: SyncRun) -> None:
        self.run = run

    def post_run(self, post: RunPost) -> DeliveredEvents:
        """PostLineageEvent for each event of one run, each with a client token derived from
        the run id and event type (the parts of a split run each their own token; a new
        delivery of the same run, new tokens), a 409 resolved by :func:`resolve_post_conflict`."""
        run, events, split = self.run, post.events, post.split
        datazone = run.resource.datazone.client()
        event_ids: list[str] = []
        refused = 0
        for part, event in enumerate(events, start=1):
            # The parts of a split run share its id (and maybe its state): each its own token.
            label = f" part {part} of {len(events)}" if split else ""
            request = {
                "domainIdentifier": run.settings.domain_id,
                "event": event_json(event).encode(),
                "clientToken": lineage_client_token(
                    str(event.run.runId),
                    f"{event.eventType.value}{label}{post.delivery}",
                    post.retry_of,
                ),
            }
            try:
                event_ids.append(datazone.post_lineage_event(**request)["id"])
            except ClientError as error:
                if not is_conflict(error):
                    raise
                # The how-many-th event of its type in the run: a split run's parts share both.
                nth = [e.eventType for e in events[:part]].count(event.eventType)
                reposted = resolve_post_conflict(
                    run, post.subject, post.job_label, event, nth, request
                )
                if reposted is None:
                    refused += 1
                else:
                    event_ids.append(reposted)
        return DeliveredEvents(tuple(event_ids), refused)


def resolve_post_conflict(
    run: SyncRun, subject: str, job_label: str, event: RunEvent, nth: int, request: dict
) -> str | None:
    """After a 409 from PostLineageEvent: None when DataZone holds the event already, the
    accepted event's id when a post of it, made again, was accepted; SyncError when neither
    (:func:`~dzlineage_dagster.sync.lineage.conflict.post_after_conflict` decides, as for the
    relay).

    Whether DataZone holds it is read from its lineage events: the listing made once per run at
    the first 409, then a new one when a re-post is refused too. The event is held when
    DataZone has at least ``nth`` events of its run and type (a split run's parts share both).
    """
    key = (str(event.run.runId), event.eventType.value)
    datazone = run.resource.datazone.client()

    def held(fresh: bool) -> bool:
        return (events_held_before(run) if fresh else run.lineage_events_held)[key] >= nth

    def post(token: str) -> str:
        return datazone.post_lineage_event(**{**request, "clientToken": token})["id"]

    try:
        return post_after_conflict(post, request["clientToken"], held)
    except ClientError as error:
        if not is_conflict(error):
            raise
        refusal = describe_error(error)
    raise SyncError(
        f"{subject}: lineage not posted: PostLineageEvent for [{job_label}] answered 409 "
        f"ConflictException to every post and DataZone holds no such event of run "
        f"{event.run.runId} ({refusal}); the next sync posts it again"
    )
