"""Read back a sync's lineage from each destination's own nodes: DataZone's, and the Glue
Data Catalog's where ``DZLINEAGE_LINEAGE_DESTINATIONS`` names glue (the comparison is in
:mod:`dzlineage_dagster.core.lineage.readback`).

While a sync posts lineage, :class:`DataZoneReadback` reads each posted topic back as soon as
DataZone has processed its events, beside the posts of the later topics (GetLineageNode and
PostLineageEvent are quotas of their own, so a first sync takes the time of the busier one,
not of both one after the other): ``GetLineageNode`` of the topic's node, of each Glue table's
ARN and of the topic asset's node, 2 + its tables calls (3 for a topic with one table), a few
more only to name what was found on a mismatch. Each topic's nodes are read by a reader of its
own, released once the topic is compared, so the read-back holds no node past its topic
(:func:`check_landing`). The processing status is read when the node readers are about to run
out of topics (:func:`~dzlineage_dagster.core.lineage.readback.time_to_poll`): one
GetLineageEvent per event still processing, or a ListLineageEvents page per 50 events of the
domain since the longest-waiting topic posted, whichever takes fewer calls
(:func:`~dzlineage_dagster.core.lineage.readback.statuses_one_by_one`), so a read costs at
most a call per event still processing. After the sync it waits
(at most ``DZLINEAGE_LINEAGE_READBACK_WAIT_SECONDS``) for the events still processing. Every
call goes through the resource's clients, so the client rate limits (pacing) hold.

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

import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.lineage.openlineage import dataset_source_identifier
from dzlineage_dagster.core.lineage.readback import (
    Landing,
    Mismatch,
    ReadbackReport,
    TopicsProcessing,
    compare,
    glue_table_arn,
    statuses_one_by_one,
    time_to_poll,
)
from dzlineage_dagster.sync.errors import SyncError, describe_error, error_code
from dzlineage_dagster.sync.lineage.health import LIST_PAGE_SIZE, lineage_events
from dzlineage_dagster.sync.lineage.nodes import lineage_reader

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


class SyncReadback:
    """The read-back of a sync, destination by destination, fed each topic's outcome as the
    sync yields it: :meth:`add`, then :meth:`finish` (or :meth:`abandon` a stopped sync).
    DataZone's reads each topic back as the sync goes (:class:`DataZoneReadback`); Glue's,
    when the sync is done, the landings kept of the topics posted to Glue. No outcome is
    kept: a sync holds a topic's snapshot, plan and events only while it is in flight."""

    def __init__(self, run: SyncRun) -> None:
        self.run = run
        self.datazone = DataZoneReadback.start(run)
        glue = "glue" in run.settings.lineage_destinations
        self._glue = glue and run.settings.glue_lineage_readback_wait_seconds > 0
        self._glue_landings: list[Landing] = []

    def add(self, outcome: TopicOutcome) -> None:
        if self.datazone is not None:
            self.datazone.add(outcome)
        lineage = outcome.lineage
        if (
            self._glue
            and outcome.ok
            and lineage is not None
            and outcome.schema is not None
            and dict(lineage.destinations).get("glue")
        ):
            self._glue_landings.append(landing_of(self.run, outcome.schema, lineage.plan, None))

    def finish(self) -> list[ReadbackReport]:
        """One report per destination (none for a destination the sync posted nothing to, or
        whose read-back is turned off)."""
        reports = [self.datazone.finish()] if self.datazone is not None else []
        if self._glue_landings:
            wait_seconds = self.run.settings.glue_lineage_readback_wait_seconds
            reports.append(
                read_back(self.run, self._glue_landings, "glue", wait_seconds=wait_seconds)
            )
        return [report for report in reports if report is not None]

    def abandon(self) -> None:
        if self.datazone is not None:
            self.datazone.abandon()


class DataZoneReadback:
    """The DataZone read-back of a sync's topics, as the sync goes: :meth:`add` each topic's
    outcome as it comes, :meth:`finish` once the sync is done (or :meth:`abandon` a stopped
    one). A thread reads the processing status of the posted events; the topics whose events
    DataZone has processed are compared on ``DZLINEAGE_CONCURRENCY`` threads."""

    def __init__(self, run: SyncRun) -> None:
        self.run = run
        self._readers = max(1, run.settings.concurrency)
        self._pool = ThreadPoolExecutor(self._readers, thread_name_prefix="dzlineage-readback")
        self._changed = threading.Condition()
        self._processing = TopicsProcessing()
        #: The waiting topics' landings, each with its place among the posted topics (the
        #: report lists mismatches in the sync's order).
        self._landings: dict[str, tuple[int, Landing]] = {}
        self._posted = self._unpolled = self._reading = self._calls = 0
        #: What the compared topics add to the report: no landing is kept past its comparison.
        self._compared = self._tables = self._assets = 0
        self._mismatches: list[tuple[int, tuple[Mismatch, ...]]] = []
        self._failed: list[tuple[int, str]] = []
        #: (when, how many events) of the topics posted since the window a listing of the
        #: domain's events would read: what it would cost at least.
        self._posts: deque[tuple[datetime, int]] = deque()
        #: Why the read-back could not finish (a failed status or node read).
        self._broken: str | None = None
        self._deadline: float | None = None
        self._stopped = False
        self._poller = threading.Thread(
            target=self._poll, name="dzlineage-readback-status", daemon=True
        )
        self._poller.start()

    @classmethod
    def start(cls, run: SyncRun) -> DataZoneReadback | None:
        """The read-back of a sync that posts to DataZone, unless turned off
        (``DZLINEAGE_LINEAGE_READBACK_WAIT_SECONDS`` 0)."""
        settings = run.settings
        if "datazone" not in settings.lineage_destinations:
            return None
        return cls(run) if settings.lineage_readback_wait_seconds > 0 else None

    def add(self, outcome: TopicOutcome) -> None:
        """A topic's outcome: read back once DataZone has processed the events it posted."""
        lineage = outcome.lineage
        if not outcome.ok or lineage is None or not lineage.event_ids or outcome.schema is None:
            return
        asset_id = outcome.asset.record.asset_id if outcome.asset else None
        landing = landing_of(self.run, outcome.schema, lineage.plan, asset_id)
        with self._changed:
            self._landings[outcome.topic] = (self._posted, landing)
            self._posted += 1
            now = datetime.now(timezone.utc)
            self._processing.add(outcome.topic, lineage.event_ids, now)
            self._posts.append((now, len(lineage.event_ids)))
            self._unpolled += 1
            self._changed.notify_all()

    def finish(self) -> ReadbackReport | None:
        """Once the sync is done: wait (at most ``DZLINEAGE_LINEAGE_READBACK_WAIT_SECONDS``)
        for the events still processing, read the rest back, and report (None: the sync
        posted nothing to DataZone)."""
        wait_seconds = self.run.settings.lineage_readback_wait_seconds
        with self._changed:
            self._deadline = time.monotonic() + wait_seconds
            self._changed.notify_all()
        self._poller.join()
        self._pool.shutdown(wait=True)
        return self._report(wait_seconds)

    def abandon(self) -> None:
        """A stopped sync: no more status reads, the topics being read finish, no report."""
        with self._changed:
            self._stopped = True
            self._changed.notify_all()
        self._poller.join()
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _poll(self) -> None:
        try:
            self._poll_until_done()
        except Exception as error:
            # A bug, not AWS: the report says the read-back stopped, not that events wait.
            self._stop_broken(f"the read-back stopped: {describe_error(error)}")
            raise

    def _stop_broken(self, why: str) -> None:
        with self._changed:
            self._broken = self._broken or why
            self._changed.notify_all()

    def _poll_until_done(self) -> None:
        last_poll = float("-inf")
        polled_since_sync_done = False
        while True:
            with self._changed:
                while True:
                    if self._stopped or self._broken:
                        return
                    now, sync_done = time.monotonic(), self._deadline is not None
                    waiting = len(self._processing)
                    if sync_done and not waiting:
                        return
                    if sync_done and polled_since_sync_done and now + POLL_SECONDS > self._deadline:
                        return
                    if time_to_poll(
                        unpolled=self._unpolled,
                        waiting=waiting,
                        reading=self._reading,
                        readers=self._readers,
                        since_poll=now - last_poll,
                        poll_seconds=POLL_SECONDS,
                        sync_done=sync_done,
                    ):
                        break
                    self._changed.wait(POLL_SECONDS / 4)
                pending = self._processing.pending
                since = self._processing.earliest - CLOCK_SKEW_MARGIN
                while self._posts and self._posts[0][0] < since:
                    self._posts.popleft()
                listed = sum(events for _, events in self._posts)
                one_by_one = statuses_one_by_one(len(pending), listed, LIST_PAGE_SIZE)
                self._unpolled = 0
                polled_since_sync_done = sync_done
            try:
                statuses = _processing_statuses(self.run, pending, since, one_by_one)
            except (ClientError, BotoCoreError) as error:
                self._stop_broken(
                    f"reading the events' processing status failed: {describe_error(error)}"
                )
                return
            last_poll = time.monotonic()
            with self._changed:
                if self._stopped:
                    return
                failed_before = len(self._processing.failed)
                for topic in self._processing.update(statuses):
                    self._reading += 1
                    self._pool.submit(self._check, *self._landings.pop(topic))
                for topic in self._processing.failed[failed_before:]:
                    self._failed.append((self._landings.pop(topic)[0], topic))

    def _check(self, place: int, landing: Landing) -> None:
        try:
            checked = check_landing(self.run, landing)
        except Exception as error:
            with self._changed:
                self._reading -= 1
            self._stop_broken(f"the read-back stopped: {describe_error(error)}")
            raise
        with self._changed:
            self._reading -= 1
            self._calls += checked.calls
            if checked.unreadable is not None:
                self._broken = self._broken or checked.unreadable
            else:
                self._compared += 1
                self._tables += len(landing.table_arns)
                self._assets += landing.asset_id is not None
                if checked.mismatches:
                    self._mismatches.append((place, checked.mismatches))
            self._changed.notify_all()

    def _report(self, wait_seconds: float) -> ReadbackReport | None:
        posted = self._posted
        if not posted:
            return None
        if self._broken is not None:
            return ReadbackReport(
                topics=posted, notes=(self._broken,), calls=self._calls, checked=False
            )
        if self._processing:
            note = (
                f"{len(self._processing.pending)} of the sync's lineage events still processing "
                f"after {wait_seconds:g}s (DZLINEAGE_LINEAGE_READBACK_WAIT_SECONDS)"
            )
            return ReadbackReport(topics=posted, notes=(note,), checked=False)
        report = _logged(
            self.run,
            ReadbackReport(
                topics=self._compared,
                tables=self._tables,
                assets=self._assets,
                mismatches=tuple(m for _, found in sorted(self._mismatches) for m in found),
                calls=self._calls,
            ),
        )
        failed = [topic for _, topic in sorted(self._failed)]
        if failed:
            # A topic whose events DataZone FAILED is known not to have landed; the next
            # sync's lineage health check re-posts it, so it is named, not compared.
            note = (
                f"not compared, their events FAILED in DataZone (the next sync re-posts them): "
                f"{', '.join(failed)}"
            )
            report = replace(report, notes=(*report.notes, note))
        return report


def read_back(
    run: SyncRun, landings: Sequence[Landing], graph: str = "datazone", wait_seconds: float = 0
) -> ReadbackReport:
    """Compare each landing with ``graph``'s nodes now (:func:`check_landing`). With
    ``wait_seconds`` (Glue, which has no processing status to wait on), the landings that do
    not match are read again every :data:`POLL_SECONDS` until they do or the time is over."""
    if graph == "glue":
        # Glue's graph has no assets: a landing there is the topic and its tables.
        landings = [replace(landing, asset_id=None) for landing in landings]
    deadline = time.monotonic() + wait_seconds
    calls, pending = 0, list(landings)
    while True:
        checked = _check_all(run, pending, graph)
        calls += sum(each.calls for each in checked)
        unreadable = next((each.unreadable for each in checked if each.unreadable), None)
        if unreadable is not None:
            return ReadbackReport(
                topics=len(landings), notes=(unreadable,), calls=calls, checked=False, graph=graph
            )
        found = [each.mismatches for each in checked]
        pending = [
            landing for landing, mismatches in zip(pending, found, strict=True) if mismatches
        ]
        if not pending or time.monotonic() + POLL_SECONDS > deadline:
            break
        time.sleep(POLL_SECONDS)
    return _report_of(run, landings, found, calls, graph)


def _report_of(
    run: SyncRun,
    landings: Sequence[Landing],
    found: Sequence[tuple[Mismatch, ...]],
    calls: int,
    graph: str = "datazone",
) -> ReadbackReport:
    """The report of ``landings`` compared (:func:`_logged`)."""
    return _logged(
        run,
        ReadbackReport(
            topics=len(landings),
            tables=sum(len(landing.table_arns) for landing in landings),
            assets=sum(landing.asset_id is not None for landing in landings),
            mismatches=tuple(m for landing_mismatches in found for m in landing_mismatches),
            calls=calls,
            graph=graph,
        ),
    )


def _logged(run: SyncRun, report: ReadbackReport) -> ReadbackReport:
    """``report``, its mismatches logged as errors."""
    for mismatch in report.mismatches:
        run.log.error(f"lineage read-back ({report.graph}): {mismatch}")
    return report


@dataclass(frozen=True)
class CheckedLanding:
    """One landing compared: its mismatches and the GetLineageNode calls it took, or why its
    nodes could not be read."""

    mismatches: tuple[Mismatch, ...] = ()
    calls: int = 0
    unreadable: str | None = None


def check_landing(run: SyncRun, landing: Landing, graph: str = "datazone") -> CheckedLanding:
    """``landing`` compared with ``graph``'s nodes now, each read once, by a reader of its own:
    what it read is released with it (a whole estate's read-back holds no node past its
    topic's comparison: at 1,000 topics a reader for all of them held 16 MB), and a node two
    topics share (a table both sink into) is read for each, after that topic's events were
    processed."""
    # DataZone's current view (no eventTimestamp): the nodes were made moments ago, by
    # DataZone's clock.
    nodes = lineage_reader(run, graph, current=True, forms=False)
    try:
        return CheckedLanding(tuple(compare(landing, nodes.node)), nodes.calls)
    except (ClientError, BotoCoreError) as error:
        return CheckedLanding(calls=nodes.calls, unreadable=_unreadable(error, graph))


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


def _check_all(run: SyncRun, landings: Sequence[Landing], graph: str) -> list[CheckedLanding]:
    """Each landing checked, in the landings' order."""
    # Node reads of different topics in parallel, as the sync's topics are (DZLINEAGE_CONCURRENCY,
    # paced by the client's rate limits): one after another, 20,000 topics' 60,000 reads took
    # over an hour.
    workers = max(1, min(run.settings.concurrency, len(landings)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda landing: check_landing(run, landing, graph), landings))


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
        # Another scope's record of a topic of the same name is that scope's to read back.
        if record.topic not in run.registry_topics or not run.in_registry(record):
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


def _processing_statuses(
    run: SyncRun, pending: set[str], since: datetime, one_by_one: bool
) -> dict[str, str]:
    """Event id -> processingStatus of the ``pending`` events, posted after ``since``: read
    ``one_by_one`` (GetLineageEvent: as many calls as events, however busy the domain), or
    listed (ListLineageEvents of the whole domain since then: a page per 50 events of every
    producer, including the sync's own 2 per topic, one page held at a time)."""
    if not one_by_one:
        items = lineage_events(run, timestampAfter=since)
        return {item["id"]: item["processingStatus"] for item in items if item["id"] in pending}
    datazone = run.resource.datazone.client()
    domain_id = run.settings.domain_id
    return {
        event_id: datazone.get_lineage_event(domainIdentifier=domain_id, identifier=event_id)[
            "processingStatus"
        ]
        for event_id in sorted(pending)
    }
