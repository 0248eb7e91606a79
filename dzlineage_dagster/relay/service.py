"""The relay itself: from a producer's HTTP request to DataZone's PostLineageEvent.

Both front ends use it: the long-running server (:mod:`.server`, with a spool and a drain
worker) and the Lambda function-URL handler (:mod:`.lambda_handler`, without a spool). Each
turns its request into :meth:`Relay.route` and the :class:`RelayResponse` back into its own.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.lineage.health import FAILED, LineageEventStatus
from dzlineage_dagster.core.lineage.relay_access import (
    AccessDenied,
    Producer,
    ReservedNamespaces,
    check_glue_accounts,
    check_job_namespace,
)
from dzlineage_dagster.core.lineage.relay_events import (
    EventTooLarge,
    InvalidEvent,
    NameRules,
    ReceivedEvent,
    ScopedNameRules,
    UnmappedDataset,
    canonicalize,
    client_token,
    compact_json,
    fit_to_size,
    parse_event,
    unmapped_in_scopes,
)
from dzlineage_dagster.relay.keys import KeyStore
from dzlineage_dagster.relay.platform.datasets import PlatformCache, UnmappedReport
from dzlineage_dagster.relay.platform.scopes import ScopedGlue
from dzlineage_dagster.relay.shared_nodes import RunDatasets, SharedNodes
from dzlineage_dagster.relay.spool import Spool, SpooledEvent, SpoolFull
from dzlineage_dagster.sync.destinations.glue import GlueDestination, GlueRefused
from dzlineage_dagster.sync.lineage.conflict import is_conflict, post_after_conflict
from dzlineage_dagster.sync.lineage.health import CLIENT_TOKEN_WINDOW, CLOCK_SKEW_MARGIN

LINEAGE_PATH = "/api/v1/lineage"
MISSING_KEY = "missing or wrong API key (Authorization: Bearer <key>)"
MAX_REASON_CHARS = 1000
log = logging.getLogger("dzlineage.relay")

#: DataZone error codes that a retry can never fix: the event goes to the spool's rejected
#: table (server) or back to the producer as 422 (Lambda). Anything else is worth retrying,
#: a 409 too: it counts as delivered only when DataZone holds the event (:meth:`Relay.post`).
PERMANENT_ERROR_CODES = frozenset({"ValidationException"})
#: An event DataZone holds has this eventTime, give or take DataZone's precision.
EVENT_TIME_TOLERANCE = timedelta(milliseconds=1)


@dataclass(frozen=True)
class RelayResponse:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


class DeliveryFailed(Exception):
    """DataZone did not take the event; ``permanent`` says whether a retry could help."""

    def __init__(self, message: str, permanent: bool) -> None:
        super().__init__(message)
        self.permanent = permanent


class Relay:
    """Checks, renames, trims and forwards OpenLineage events; counts what happened."""

    def __init__(
        self,
        *,
        datazone: Any,
        domain_id: str,
        rules: NameRules | ScopedNameRules,
        keys: KeyStore,
        reserved: ReservedNamespaces,
        max_body_bytes: int,
        glue_accounts: frozenset[str] = frozenset(),
        spool: Spool | None = None,
        max_backoff_seconds: float = 30.0,
        first_backoff_seconds: float = 0.05,
        hold_streaming_runs: bool = False,
        platforms: Mapping[str | None, PlatformCache] | None = None,
        refuse_unmapped_topics: bool = False,
        glue: GlueDestination | ScopedGlue | None = None,
        to_datazone: bool = True,
    ) -> None:
        self.datazone = datazone
        #: DZLINEAGE_LINEAGE_DESTINATIONS: DataZone (``to_datazone``), Glue's lineage (``glue``).
        self.glue = glue
        self.to_datazone = to_datazone
        self.domain_id = domain_id
        self.rules = rules
        self.keys = keys
        self.reserved = reserved
        self.glue_accounts = glue_accounts
        self.max_body_bytes = max_body_bytes
        self.spool = spool
        self.max_backoff_seconds = max_backoff_seconds
        self.first_backoff_seconds = first_backoff_seconds
        #: Schemas set aside on the platform's nodes; with ``hold_streaming_runs`` (the server,
        #: not the Lambda, which keeps no memory between invocations) runs' datasets held.
        self.shared_nodes = SharedNodes(
            rules.kafka_namespaces(), RunDatasets() if hold_streaming_runs else None
        )
        #: The platform's own datasets by scope (None: the settings' one platform), what the
        #: relay measures unmapped datasets against (none: not known, nothing is reported as
        #: unmapped).
        self.platforms = dict(platforms or {})
        self.refuse_unmapped_topics = refuse_unmapped_topics
        self.unmapped = UnmappedReport()
        self.counts: Counter[str] = Counter()
        self.last_error: str | None = None
        #: How long the spool's worker waits before its next delivery attempt (0: not waiting).
        self.backoff_seconds = 0.0
        self._lock = threading.Lock()
        self._wake = threading.Event()

    # --- requests ------------------------------------------------------------------------------

    def route(
        self, method: str, path: str, headers: Callable[[str], str | None], body: bytes
    ) -> RelayResponse:
        """Answer one request; ``headers`` looks a header up by name, case-insensitively.

        Whatever the client sends, the answer is the relay's JSON: a fault of the relay's
        own is a JSON 500, logged and counted, never the server's HTML page."""
        try:
            return self._route(method, path, headers, body)
        except Exception:
            log.exception("the relay failed on a %s %s request", method, path)
            self.count("internal_errors")
            return RelayResponse(500, {"error": "the relay failed on this request; see its log"})

    def _route(
        self, method: str, path: str, headers: Callable[[str], str | None], body: bytes
    ) -> RelayResponse:
        if path == "/healthz" and method == "GET":
            return RelayResponse(200, {"status": "ok"})
        if path == "/status" and method == "GET":
            if self.keys.producer(headers("authorization")) is None:
                return RelayResponse(401, {"error": MISSING_KEY})
            return RelayResponse(200, self.status())
        if path == LINEAGE_PATH:
            if method != "POST":
                return RelayResponse(405, {"error": f"use POST on {LINEAGE_PATH}"})
            return self.receive(body, headers("authorization"), headers("content-encoding"))
        return RelayResponse(404, {"error": f"no such path {path}; events go to {LINEAGE_PATH}"})

    def receive(
        self, body: bytes, authorization: str | None, content_encoding: str | None
    ) -> RelayResponse:
        self.count("received")
        producer = self.keys.producer(authorization)
        if producer is None:
            return self.refuse(401, MISSING_KEY)
        if len(body) > self.max_body_bytes:
            return self.refuse(413, f"the body exceeds {self.max_body_bytes} bytes")
        try:
            body = self._decode(body, content_encoding)
            event = parse_event(body)
        except InvalidEvent as error:
            return self.refuse(400, f"not a valid OpenLineage event: {error}")
        except _BodyTooLarge as error:
            return self.refuse(413, str(error))
        try:
            self.check_access(event, producer)
        except AccessDenied as error:
            return self.refuse(403, str(error))
        if event.kind == "dataset" and self.glue is not None:
            return self._dataset_to_glue(event)
        if event.kind != "run":
            # DataZone's PostLineageEvent takes RunEvents only, and a dataset or job event
            # carries no run to make one of: say so, and count it.
            self.count(f"dropped_{event.kind}_events")
            return RelayResponse(
                200,
                {
                    "status": "dropped",
                    "reason": f"DataZone accepts OpenLineage RunEvents only; this {event.kind} "
                    "event was accepted and not forwarded",
                },
            )
        token = client_token(event)
        try:
            event_json, notes = self.prepare(event, token)
        except EventTooLarge as error:
            return self.refuse(413, str(error))
        except UnmappedTopic as error:
            self.count("refused_unmapped_topic")
            return self.refuse(422, str(error))
        return self._deliver(token, event_json, notes)

    def check_access(self, event: ReceivedEvent, producer: Producer) -> None:
        """Raise :class:`AccessDenied` for an event ``producer`` may not post: a run of a job in
        a reserved namespace or one its key does not list, or a Glue table of an account
        outside the allowed ones."""
        job = event.document.get("job")
        if isinstance(job, dict):  # a dataset event has no job
            try:
                check_job_namespace(job["namespace"], producer, self.reserved)
            except AccessDenied:
                self.count(
                    "refused_reserved_namespace"
                    if self.reserved.owner_of(job["namespace"])
                    else "refused_namespace_not_allowed"
                )
                raise
        try:
            check_glue_accounts(event.document, self.glue_accounts)
        except AccessDenied:
            self.count("refused_glue_account")
            raise

    def _decode(self, body: bytes, content_encoding: str | None) -> bytes:
        encoding = (content_encoding or "identity").strip().lower()
        if encoding == "identity":
            return body
        if encoding not in ("gzip", "x-gzip"):
            raise InvalidEvent(f"Content-Encoding {content_encoding!r} is not supported (gzip is)")
        decoder = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            data = decoder.decompress(body, self.max_body_bytes + 1)
        except zlib.error as error:
            raise InvalidEvent(f"the gzip body cannot be decoded: {error}") from None
        if len(data) > self.max_body_bytes:
            raise _BodyTooLarge(f"the decoded body exceeds {self.max_body_bytes} bytes")
        return data

    def prepare(self, event: ReceivedEvent, token: str | None = None) -> tuple[str, dict[str, Any]]:
        """The JSON to forward (renamed, guarded, trimmed) and what was changed, for the answer.
        A run event (``token``: its client token) is guarded on the platform's nodes; a dataset
        event (to Glue only) is renamed and fitted."""
        event, rewrites = canonicalize(event, self.rules)
        # Checked before a run's held datasets are added: those were checked with their event.
        unmapped = self.check_mapped(event)
        guarded = self.shared_nodes.apply(event, token) if token is not None else None
        if guarded is not None:
            event = guarded.event
            for name, amount in guarded.counts.items():
                self.count(name, amount)
        event, removed = fit_to_size(event)
        if rewrites:
            self.count("renamed_datasets", len(rewrites))
        if removed:
            self.count("trimmed_events")
        notes: dict[str, Any] = {}
        if rewrites:
            notes["renamed"] = rewrites
        if guarded is not None:
            notes.update(guarded.notes)
        if unmapped:
            notes["unmapped"] = [found.identity for found in unmapped]
        if removed:
            notes["trimmedFacets"] = [r["facet"] for r in removed]
        return compact_json(event.document), notes

    def check_mapped(self, event: ReceivedEvent) -> list[UnmappedDataset]:
        """The event's datasets (as renamed) that are none of the platform's nodes, each noted
        once per event in :attr:`unmapped`. With ``refuse_unmapped_topics``, raises
        :class:`UnmappedTopic` with the fix when one names a platform topic under another
        namespace; a dataset foreign to the platform is never refused."""
        known = [platform.current() for platform in self.platforms.values()]
        # A scope's platform not read yet: a dataset of it would look foreign to the others.
        if not known or None in known:
            return []
        document = event.document
        # A dataset event names one dataset and no job or run.
        job = document.get("job") or {}
        datasets = [d for key in ("inputs", "outputs") for d in document.get(key) or []]
        if event.kind == "dataset":
            datasets.append(document["dataset"])
        found: dict[str, UnmappedDataset] = {}
        for dataset in datasets:
            unmapped = unmapped_in_scopes(dataset, job, known)
            if unmapped is not None:
                found.setdefault(unmapped.identity, unmapped)
        example = {
            "job": f"{job['namespace']}.{job['name']}" if job else None,
            "runId": event.run_id,
            "eventType": document.get("eventType"),
            "eventTime": document.get("eventTime"),
        }
        for unmapped in found.values():
            self.unmapped.note(unmapped, example)
        if found:
            self.count("unmapped_datasets", len(found))
        refusable = [u for u in found.values() if u.refusable]
        if self.refuse_unmapped_topics and refusable:
            raise UnmappedTopic(
                "; ".join(f"{u.identity} {u.reason}: {u.fix}" for u in refusable)
                + " (DZLINEAGE_RELAY_REFUSE_UNMAPPED_TOPICS=true refuses such events)"
            )
        return list(found.values())

    def _deliver(self, token: str, event_json: str, notes: dict[str, Any]) -> RelayResponse:
        answer = {"clientToken": token, **notes}
        if self.spool is not None and len(self.spool):
            # Older events are waiting: queue behind them so DataZone sees arrival order.
            return self._enqueue(token, event_json, answer, "events are queued ahead")
        try:
            event_id = self.forward(token, event_json)
        except DeliveryFailed as error:
            if error.permanent:
                self.count("refused_by_datazone")
                return RelayResponse(422, {**answer, "error": f"DataZone refused it: {error}"})
            if self.spool is None:
                self.count("unavailable")
                return RelayResponse(
                    503, {**answer, "error": f"DataZone unavailable: {error}"}, {"Retry-After": "5"}
                )
            return self._enqueue(token, event_json, answer, str(error))
        self.count("forwarded")
        held = {"id": event_id} if event_id is not None else {"heldAlready": True}
        return RelayResponse(200, {**answer, "status": "forwarded", **held})

    def _enqueue(self, token: str, event_json: str, answer: dict, reason: str) -> RelayResponse:
        assert self.spool is not None
        try:
            added = self.spool.add(token, event_json)
        except SpoolFull as error:
            self.count("spool_full")
            self._note_error(str(error))
            return RelayResponse(503, {**answer, "error": str(error)}, {"Retry-After": "30"})
        if added:
            self.count("spooled")
        self.wake()
        return RelayResponse(202, {**answer, "status": "spooled", "reason": reason})

    def refuse(self, status: int, reason: str) -> RelayResponse:
        self.count("rejected")
        self.count(f"rejected_{status}")
        # A reason may quote what the client sent: enough of it to find, never all of it.
        if len(reason) > MAX_REASON_CHARS:
            reason = f"{reason[:MAX_REASON_CHARS]}... ({len(reason)} characters)"
        return RelayResponse(status, {"error": reason})

    # --- the destinations ----------------------------------------------------------------------

    def forward(self, token: str, event_json: str) -> str | None:
        """The renamed event to each destination: DataZone (:meth:`post`, the id it gave), then
        Glue's lineage. A retry after Glue failed posts to DataZone again under the same token
        (a replay) and to Glue the same event (the same run: see sync/destinations/glue.py)."""
        event_id = self.post(token, event_json) if self.to_datazone else None
        if self.glue is not None:
            try:
                self.glue.post_event("the relay", f"event {token[:12]}", event_json)
            except GlueRefused as error:
                self._note_error(str(error))
                permanent = error.code == "InvalidInputException"
                raise DeliveryFailed(str(error), permanent=permanent) from None
            self.count("forwarded_to_glue")
        return event_id

    def _dataset_to_glue(self, event: ReceivedEvent) -> RelayResponse:
        """A dataset event to Glue alone (DataZone takes none), renamed like a run's datasets;
        posted at once, a failure the producer's to retry (the spool carries run events)."""
        try:
            event_json, notes = self.prepare(event)
        except EventTooLarge as error:
            return self.refuse(413, str(error))
        assert self.glue is not None
        try:
            self.glue.post_event("the relay", "a dataset event", event_json)
        except GlueRefused as error:
            self._note_error(str(error))
            if error.code == "InvalidInputException":
                return RelayResponse(422, {**notes, "error": str(error)})
            return RelayResponse(503, {**notes, "error": str(error)}, {"Retry-After": "5"})
        self.count("forwarded_to_glue")
        return RelayResponse(200, {**notes, "status": "forwarded", "to": ["glue"]})

    # --- DataZone ------------------------------------------------------------------------------

    def post(self, token: str, event_json: str) -> str | None:
        """PostLineageEvent; the event's id (None: DataZone held it already), or
        :class:`DeliveryFailed`."""
        try:
            try:
                return self._post_event(token, event_json)
            except ClientError as error:
                if not is_conflict(error):
                    raise
                return self._after_conflict(token, event_json)
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            message = f"{code}: {error.response.get('Error', {}).get('Message', error)}"
            self._note_error(message)
            raise DeliveryFailed(message, permanent=code in PERMANENT_ERROR_CODES) from None
        except BotoCoreError as error:  # unreachable, timed out, ...
            self._note_error(str(error))
            raise DeliveryFailed(str(error), permanent=False) from None

    def _post_event(self, token: str, event_json: str) -> str:
        response = self.datazone.post_lineage_event(
            domainIdentifier=self.domain_id, event=event_json.encode("utf-8"), clientToken=token
        )
        return response.get("id", "")

    def _after_conflict(self, token: str, event_json: str) -> str | None:
        """A 409 counts as delivered only when DataZone holds the event; otherwise it is posted
        again, as the sync does (:mod:`~dzlineage_dagster.sync.lineage.conflict`)."""
        document = json.loads(event_json)
        which = f"event {token[:12]} (run {document['run']['runId']}, {document['eventType']})"
        try:
            event_id = post_after_conflict(
                lambda retry_token: self._post_event(retry_token, event_json),
                token,
                lambda fresh: self._held(document),
            )
        except ClientError as error:
            if is_conflict(error):
                self.count("conflict_not_held")
                log.warning(
                    "PostLineageEvent answered 409 to each of 3 posts of %s and DataZone does "
                    "not hold it: not delivered, tried again later",
                    which,
                )
            raise
        if event_id is None:
            self.count("conflict_already_held")
            log.warning("PostLineageEvent answered 409 for %s: DataZone holds it, delivered", which)
        else:
            self.count("conflict_reposted")
            log.warning(
                "PostLineageEvent answered 409 for %s and DataZone did not hold it: posted "
                "again, accepted as %s",
                which,
                event_id,
            )
        return event_id

    def _held(self, document: dict[str, Any]) -> bool:
        """Whether DataZone holds the event (its run, type and eventTime), not failed.

        ListLineageEvents from a client token's window ago, or from the event's own time when
        that is earlier (AWS does not say which time ``timestampAfter`` filters on)."""
        event_time = datetime.fromisoformat(document["eventTime"])
        if event_time.tzinfo is None:
            event_time = event_time.replace(tzinfo=timezone.utc)
        window_start = datetime.now(timezone.utc) - CLIENT_TOKEN_WINDOW
        since = min(event_time, window_start) - CLOCK_SKEW_MARGIN
        wanted = (document["run"]["runId"], document["eventType"])
        pages = self.datazone.get_paginator("list_lineage_events").paginate(
            domainIdentifier=self.domain_id, timestampAfter=since
        )
        for page in pages:
            for item in page["items"]:
                status = LineageEventStatus.from_item(item)
                if (
                    status is not None
                    and (status.run_id, status.event_type) == wanted
                    and status.processing_status != FAILED
                    and abs(item["eventTime"] - event_time) <= EVENT_TIME_TOLERANCE
                ):
                    return True
        return False

    # --- the spool's worker ---------------------------------------------------------------------

    def drain(self, stop: threading.Event) -> None:
        """Deliver the spool in order until ``stop``; back off (capped) while DataZone fails."""
        assert self.spool is not None
        failures = 0
        while not stop.is_set():
            batch = self.spool.oldest()
            if not batch:
                self._wake.wait(timeout=1.0)
                self._wake.clear()
                continue
            for spooled in batch:
                if stop.is_set():
                    return
                if not self._drain_one(spooled):
                    failures += 1
                    backoff = min(
                        self.max_backoff_seconds, self.first_backoff_seconds * 2 ** (failures - 1)
                    )
                    self._backing_off(backoff)
                    stop.wait(backoff)
                    break
                failures = 0
                self._backing_off(0.0)

    def _backing_off(self, seconds: float) -> None:
        with self._lock:
            self.backoff_seconds = seconds

    def wake(self) -> None:
        """Make the drain worker look at the spool (or at its stop flag) now."""
        self._wake.set()

    def _drain_one(self, spooled: SpooledEvent) -> bool:
        """Whether the event left the spool (delivered or refused for good)."""
        try:
            self.forward(spooled.client_token, spooled.event_json)
        except DeliveryFailed as error:
            if error.permanent:
                self.spool.reject(spooled, str(error))
                self.count("refused_by_datazone")
                log.error("DataZone refused spooled event %s: %s", spooled.client_token, error)
                return True
            self.spool.failed_attempt(spooled, str(error))
            self.count("failed_delivery_attempts")
            return False
        self.spool.delivered(spooled)
        self.count("forwarded")
        self.count("forwarded_from_spool")
        return True

    # --- status ---------------------------------------------------------------------------------

    def count(self, name: str, amount: int = 1) -> None:
        with self._lock:
            self.counts[name] += amount

    def _note_error(self, message: str) -> None:
        with self._lock:
            self.last_error = f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {message}"

    def status(self) -> dict[str, Any]:
        with self._lock:
            counts = dict(self.counts)
            last_error = self.last_error
            backoff_seconds = self.backoff_seconds
        main = ("received", "forwarded", "spooled", "rejected")
        return {
            **{name: counts.pop(name, 0) for name in main},
            "spool_depth": len(self.spool) if self.spool is not None else None,
            "backoff_seconds": backoff_seconds,
            "last_error": last_error or self.keys.last_error,
            "producers": self.keys.producers(),
            "glue_catalog": self._glue_catalog_status(),
            "details": dict(sorted(counts.items())),
            "unmapped": {
                **self.unmapped.status(),
                "platform": self._platform_status(),
            },
        }

    def _glue_catalog_status(self) -> dict[str, Any] | None:
        """The Glue catalog's status; with scopes, each scope's by name."""
        if isinstance(self.rules, ScopedNameRules):
            return {
                name: rules.glue_catalog.status()
                for name, rules in self.rules.scopes.items()
                if rules.glue_catalog is not None
            }
        return self.rules.glue_catalog.status() if self.rules.glue_catalog else None

    def _platform_status(self) -> dict[str, Any] | None:
        """The platform's datasets' status; with scopes, each scope's by name."""
        if list(self.platforms) == [None]:
            return self.platforms[None].status()
        return {name: platform.status() for name, platform in self.platforms.items()} or None


class _BodyTooLarge(ValueError):
    pass


class UnmappedTopic(ValueError):
    """The event names a platform topic under a namespace that is not the cluster's, and the
    relay is set to refuse such events; the message names each dataset and its fix."""
