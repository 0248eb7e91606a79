"""The Glue Data Catalog's lineage graph as a destination: ``glue:PostLineageEvent``.

What its API asks (botocore's ``glue`` model; Glue developer guide, "Publishing data lineage
programmatically"): one OpenLineage run or dataset event a call, as a string of at most
300,000 bytes; no client token; an empty answer, the graph built asynchronously;
``ThrottlingException`` with no published rate; ``AccessDeniedException`` without
``glue:PostLineageEvent``, an action with no resource-level permissions (``"Resource": "*"``).

- **Pace**: every post takes a token of a process-wide bucket at ``DZLINEAGE_GLUE_LINEAGE_TPS``
  (an assumed rate); a throttle that gets past botocore's own retries is retried here, with
  doubling waits from one token's interval, :data:`THROTTLE_RETRIES` times.
- **Idempotency without a token**: the events are the ones DataZone gets, so a run's id is
  deterministic (:func:`~dzlineage_dagster.core.lineage.state.hop_run_id`) and a re-post (the
  only kind: after a failed post or a record write that did not follow, see
  :mod:`dzlineage_dagster.sync.destinations`) carries the same run id, job and datasets. Glue
  keys a run node by its run id, so either way Glue treats an identical event (stores it once,
  or stores it twice), the graph has one run with the same edges.
- **Errors**: AccessDenied and InvalidInput become a SyncError naming the action or the limit.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError
from openlineage.client.event_v2 import DatasetEvent

from dzlineage_dagster.core.aws.quotas import ASSUMED_SOURCE, Quota
from dzlineage_dagster.core.lineage.openlineage import MAX_EVENT_BYTES, event_json
from dzlineage_dagster.resources.base import client_bucket
from dzlineage_dagster.sync.destinations import DeliveredEvents, RunPost
from dzlineage_dagster.sync.errors import SyncError, describe_error, error_code

POST_ACTION = "glue:PostLineageEvent"
OPERATION = "glue.PostLineageEvent"
#: Throttles retried here after botocore's own attempts gave up (the sync's threads share the
#: bucket, so a throttle means another client of the account uses the same quota).
THROTTLE_RETRIES = 4


#: The bucket of DZLINEAGE_GLUE_LINEAGE_TPS: not the client's own for the operation (the quota
#: table's, resources/base.py), which a call reserves too; one bucket reserved twice would halve
#: the pace.
PACE_BUCKET = f"{OPERATION} (DZLINEAGE_GLUE_LINEAGE_TPS)"


class GlueRefused(SyncError):
    """PostLineageEvent did not take the event; ``code`` is Glue's error code (the relay tells
    a refusal no retry fixes, ``InvalidInputException``, from one worth retrying)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def _bucket(tps: float) -> Any:
    """The process's bucket for Glue's posts at ``tps``, shared by every thread."""
    return client_bucket(Quota(tps, PACE_BUCKET, ASSUMED_SOURCE))


class GlueDestination:
    """The account's Glue Data Catalog lineage graph, through ``client`` (a boto3 ``glue``
    client of the side that owns the tables)."""

    name = "glue"
    takes_dataset_events = True
    iam_actions = (POST_ACTION,)
    operations = (OPERATION,)

    def __init__(
        self,
        client: Any,
        tps: float,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.client = client
        self.tps = tps
        self.sleep = sleep

    def post_run(self, post: RunPost) -> DeliveredEvents:
        """PostLineageEvent for each event of the run (a new delivery is DataZone's tokens'
        business: Glue has none, see the module doc)."""
        for event in post.events:
            what = f"[{post.job_label}] run {event.run.runId}"
            self.post_event(post.subject, what, event_json(event))
        return DeliveredEvents()

    def post_dataset(self, subject: str, event: DatasetEvent) -> None:
        """One dataset event (a topic's schema and owners)."""
        dataset = event.dataset
        self.post_event(subject, f"dataset {dataset.namespace}/{dataset.name}", event_json(event))

    def post_event(self, subject: str, what: str, document: str) -> None:
        """One event (run or dataset, as JSON): paced, throttles retried, errors named."""
        size = len(document.encode("utf-8"))
        if size > MAX_EVENT_BYTES:  # a run's events are fitted before; a dataset event is not
            raise GlueRefused(
                f"{subject}: lineage not posted to Glue: {what} is {size:,} bytes, over "
                f"PostLineageEvent's {MAX_EVENT_BYTES:,}",
                "InvalidInputException",
            )
        for attempt in range(THROTTLE_RETRIES + 1):
            wait = _bucket(self.tps).reserve(time.monotonic())
            if wait > 0:
                self.sleep(wait)
            try:
                self.client.post_lineage_event(Event=document)
                return
            except ClientError as error:
                code = error_code(error)
                if code == "ThrottlingException" and attempt < THROTTLE_RETRIES:
                    self.sleep(2**attempt / self.tps)
                    continue
                raise GlueRefused(_refusal(subject, what, code, error, self.tps), code) from None


def _refusal(subject: str, what: str, code: str, error: ClientError, tps: float) -> str:
    described = describe_error(error)
    if code == "AccessDeniedException":
        return (
            f"{subject}: lineage not posted to Glue: {what}: {described}; the data side's "
            f"credentials need {POST_ACTION} (it has no resource-level permissions: "
            '"Resource": "*"; iam/glue-lineage-policy.json allows it)'
        )
    if code == "ThrottlingException":
        return (
            f"{subject}: lineage not posted to Glue: {what}: still throttled after "
            f"{THROTTLE_RETRIES} more tries with backoff ({described}); lower "
            f"DZLINEAGE_GLUE_LINEAGE_TPS (now {tps:g}) or raise the account's quota"
        )
    return f"{subject}: lineage not posted to Glue: {what}: {described}"
