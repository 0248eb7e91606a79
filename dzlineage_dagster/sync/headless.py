"""`dzlineage sync`: the catalog sync in one process, for cron and CI users."""

from __future__ import annotations

import logging
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.catalog.discovery import SweepState
from dzlineage_dagster.core.catalog.registry_cursor import FailedTopics, RegistryCursor
from dzlineage_dagster.core.connectors.report import refused_connectors
from dzlineage_dagster.core.mapping.ssm_names import MAX_PARAMETER_VALUE_LENGTH
from dzlineage_dagster.core.topic_states import FAILED, NOT_CATALOGED, RETIREMENT
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.settings import LineageSettings, aws_side_options
from dzlineage_dagster.sync.catalog.custom_types import ensure_custom_types, plan_custom_types
from dzlineage_dagster.sync.catalog.reconcile import ReconcileReport, apply_repairs, inspect_catalog
from dzlineage_dagster.sync.catalog.version_sweep import VersionSweep, sweep_versions_by_clock
from dzlineage_dagster.sync.checks.authorization import check_authorization
from dzlineage_dagster.sync.checks.preflight import check_ownership, check_platform
from dzlineage_dagster.sync.errors import SyncError, describe_error
from dzlineage_dagster.sync.lineage.readback import SyncReadback
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.runner import TopicOutcome, sync_topics
from dzlineage_dagster.sync.stages.asset import plan_topic_asset
from dzlineage_dagster.sync.stages.lineage import plan_topic_lineage, recorded_lineage
from dzlineage_dagster.sync.stages.publish import planned_publication
from dzlineage_dagster.sync.stages.retire import (
    removed_records,
    retire_removed_topics,
    retirement_hold,
)
from dzlineage_dagster.sync.stages.schema import read_schema


def start_run(
    settings: LineageSettings,
    log: logging.Logger,
    aws_options: dict[str, dict[str, Any]] | None = None,
) -> SyncRun:
    """A run as Dagster starts one, with the resource built from the process environment
    (``aws_options``: each side's, as :func:`~dzlineage_dagster.settings.aws_side_options`)."""
    options = aws_side_options() if aws_options is None else aws_options
    return SyncRun(LineageSyncResource.with_settings(settings, options), log)


def _table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = [header, tuple("-" * w for w in widths), *rows]
    return "\n".join(
        "  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=False)) for line in lines
    )


def dry_run_plan(run: SyncRun) -> tuple[list[tuple[str, ...]], int]:
    """Rows of what a sync would do per topic, and how many topics could not be planned."""
    try:
        type_revision: str | None = run.asset_type_revision
    except SyncError:
        type_revision = None  # the first sync creates the types; every asset is then new
    rows, unplannable = [], 0
    for topic in run.registry_topics:
        try:
            snapshot = read_schema(run, topic)
            asset = plan_topic_asset(run, snapshot, type_revision)
            lineage = plan_topic_lineage(run, snapshot)
            catalog = planned_publication(run, asset)
            rows.append((topic, asset.action, catalog, f"v{snapshot.version}", lineage.planned))
        except Exception as error:
            unplannable += 1
            rows.append((topic, FAILED.planned, "", "", describe_error(error)))
    if retirement_hold(run) is None:
        retirement = RETIREMENT[run.settings.deleted_schema_policy].planned
        for record in removed_records(run):
            left = f"schema {record.schema_arn} left the registry"
            rows.append((record.topic, retirement, "unpublish if listed", "", left))
    return rows, unplannable


class StopRequest:
    """Set by SIGINT or SIGTERM: the sync finishes the topic at hand, then stops."""

    def __init__(self) -> None:
        self.signal_name: str | None = None

    def __bool__(self) -> bool:
        return self.signal_name is not None


#: Exit status of a sync stopped by a signal: 128 + the signal's number, as shells report it.
def _stopped_status(signal_name: str) -> int:
    return 128 + signal.Signals[signal_name].value


@contextmanager
def stop_on_signals() -> Iterator[StopRequest]:
    """SIGINT (Ctrl-C) and SIGTERM (cron, CI, Kubernetes) ask the sync to stop between topics.

    A topic's DataZone writes and its mapping write belong together; stopping between topics
    leaves every finished topic recorded and the summary still printed. A second signal stops
    at once (a rerun converges either way).
    """
    request = StopRequest()

    def handle(number: int, _frame: Any) -> None:
        if request:
            raise KeyboardInterrupt
        request.signal_name = signal.Signals(number).name
        logging.getLogger("dzlineage.sync").warning(
            f"{request.signal_name}: stopping after the topic at hand (again to stop now)"
        )

    if threading.current_thread() is not threading.main_thread():
        # Python lets only the main thread handle signals; an embedding caller keeps its own.
        yield request
        return
    previous = {s: signal.signal(s, handle) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield request
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def run_headless_sync(
    settings: LineageSettings,
    *,
    dry_run: bool,
    out: TextIO,
    aws_options: dict[str, dict[str, Any]] | None = None,
    reconcile: bool = False,
) -> int:
    """Exit code 0 when every topic synced, 1 when any failed or the sync could not start,
    128 + the signal's number when SIGINT or SIGTERM stopped it.

    Idle is nearly free, and a change costs what it changes: the registry listing (a call per
    100 schemas) is folded, with the sync's settings, the connectors' signature and the code
    version, into the registry cursor (:mod:`~dzlineage_dagster.core.catalog.registry_cursor`) and
    compared with the one the last complete sync of this domain and project recorded (one
    GetParameters, with the version sweep's state). Only the topics of the cursor's changed
    buckets, and those the version sweep finds behind their latest version (a slice of the
    topics a run, sized by what the registry showed of ``UpdatedTime``; see
    :mod:`~dzlineage_dagster.sync.catalog.version_sweep`), are considered: their mapping records read
    by name, and those whose registry token moved synced. The whole mapping is read only when
    there is no cursor, the context changed, or a schema may have left the registry (then
    retirement needs it). A sync with no failure then records the new cursor; the topics a sync
    failed are recorded beside it
    (:class:`~dzlineage_dagster.core.catalog.registry_cursor.FailedTopics`), and the next sync
    syncs them whatever the registry shows. A hand-edited mapping parameter is not noticed
    (nothing reads it): ``reconcile`` reads everything and repairs it.

    ``reconcile`` first compares DataZone with the registry and the mapping and repairs what
    differs (with ``dry_run``: lists the repairs and writes nothing); it never takes the idle
    shortcut nor trusts the registry tokens.
    """
    log = logging.getLogger("dzlineage.sync")
    report: ReconcileReport | None = None
    with stop_on_signals() as stop:
        try:
            run = start_run(settings, log, aws_options)
            run.reconciling = reconcile
            check_platform(run)
            if dry_run:
                run.mappings.read_only = True
                check_ownership(run, list(run.registry_topics))
                check_authorization(run, plan_custom_types(run).policies)
                return _print_plan(run, out, inspect_catalog(run) if reconcile else None)
            types = ensure_custom_types(run)
            topics = list(run.registry_topics)
            registry_arn = run.registry_arn
            listing = RegistryCursor.of(run.registry_topics, run.sync_context)
            last = run.mappings.last_sync(registry_arn)
            # Lineage that DataZone failed after accepting it is re-posted by the next run, so a
            # failure found here is a change the registry cursor cannot see; so is a foreign run
            # on one of the sync's jobs, and a failure of the last sync too many to list. Both
            # are DataZone's to say: not read where lineage goes to Glue alone.
            datazone_lineage = "datazone" in run.settings.lineage_destinations
            trust_tokens = (
                not reconcile
                and not (datazone_lineage and run.lineage_health.failed_runs)
                and not (datazone_lineage and run.foreign_runs)
                and not last.failed.overflowed
            )
            # A reconcile reads every topic anyway; otherwise the sweep catches a version that
            # the listing's UpdatedTime (so the cursor) does not show.
            stored = last.cursor if trust_tokens else None
            sweep = sweep_versions_by_clock(run, last.sweep.updated_time) if trust_tokens else None
            behind = sweep.behind if sweep else {}
            # What the last sync failed is synced again whatever the registry shows.
            retry = sorted(last.failed.topics & run.registry_topics.keys()) if trust_tokens else []
            changed = stored.changed_topics(listing, topics) if stored else None
            to_sync = topics if changed is None else sorted({*changed, *behind, *retry})
            # Without a cursor, or when a schema it knew may have left, every mapping is read
            # to find what to retire.
            retiring = (
                stored is None or changed is None or not stored.nothing_removed(run.registry_topics)
            )
            unchanged = trust_tokens and not to_sync and not retiring
            if not unchanged:
                # An idle sync's cursor vouches for a complete sync under this project.
                check_ownership(run, topics)
                check_authorization(run, (), asset_writes=True)
            if reconcile:
                report = inspect_catalog(run)
                apply_repairs(run, report)
        except (SyncError, ClientError, BotoCoreError, ValueError) as error:
            # Nothing per topic has happened yet: say why, without a traceback (a ValueError is
            # a setting the first client refused, e.g. DZLINEAGE_CLIENT_RATE_LIMITS).
            print(f"dzlineage sync: could not start: {describe_error(error)}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("dzlineage sync: stopped before any topic was synced", file=sys.stderr)
            return _stopped_status(stop.signal_name or "SIGINT")
        for created in types.created:
            log.info(f"created {created}")
        for topic, version in behind.items():
            log.info(
                f"{topic}: the registry's latest version is {version}, not the one its asset "
                "shows, though its UpdatedTime did not move: synced"
            )
        if retry:
            log.info(f"synced again, as the last sync failed them: {', '.join(retry)}")
        if unchanged:
            _record_sweep(run, registry_arn, sweep, last.sweep, log)
            _record_failed(run, registry_arn, [], last.failed, log)
            calls = run.api_calls()
            not_topics = f"\n\n{_not_topics_note(run)}" if run.not_topics else ""
            print(
                f"registry {settings.registry_name} unchanged since the last complete sync: "
                f"nothing to do{not_topics}\n\n{len(topics)} topics, 0 failed, "
                f"{sum(calls.values())} AWS API calls",
                file=out,
            )
            return 0
        if len(to_sync) < len(topics):
            log.info(
                f"{len(to_sync)} of {len(topics)} topics of registry {settings.registry_name} "
                "may have changed since the last complete sync (the registry cursor's changed "
                "buckets, the version sweep's finds and the last sync's failures): syncing those"
            )
        else:
            log.info(f"syncing {len(topics)} topics of registry {settings.registry_name}")
        # The summary keeps each topic's row and name, not its outcome (snapshot, plan,
        # events): what a first sync holds does not grow with the topics' outcomes.
        rows: list[tuple[str, ...]] = []
        failed_topics: list[str] = []
        reposted: list[str] = []
        over_foreign: list[str] = []
        failed = done = 0
        # DataZone's read-back reads each topic back as soon as DataZone has processed its
        # events, while the later topics post theirs.
        readback = SyncReadback(run)
        try:
            for outcome in sync_topics(
                run, to_sync, trust_registry_tokens=trust_tokens, stale={*behind, *retry}
            ):
                done += 1
                readback.add(outcome)
                if outcome.lineage is not None and outcome.lineage.reposted_failed_events:
                    reposted.append(outcome.topic)
                if outcome.lineage is not None and outcome.lineage.reposted_over_foreign:
                    over_foreign.append(outcome.topic)
                if outcome.ok:
                    rows.append(
                        (
                            outcome.topic,
                            _asset_column(outcome),
                            outcome.catalog_summary,
                            _lineage_column(run, outcome),
                        )
                    )
                else:
                    failed += 1
                    failed_topics.append(outcome.topic)
                    # A failed outcome always names its stage (runner.sync_topic sets both).
                    rows.append(
                        (
                            outcome.topic,
                            FAILED.done,
                            outcome.catalog_summary,
                            f"{outcome.failed_stage.value}: {outcome.error}",
                        )
                    )
                if report is not None and outcome.topic in report.topics:
                    report.results[outcome.topic] = rows[-1][1]
                if stop:
                    break
            # Threads finish topics in any order; the summary lists them in the registry's.
            listing_order = {topic: index for index, topic in enumerate(topics)}
            rows.sort(key=lambda row: listing_order.get(row[0], len(topics)))
            if not stop and retiring:
                for topic, result in retire_removed_topics(run).items():
                    failed += result.startswith("failed")
                    rows.append((topic, result, "", "schema left the registry"))
            if not stop:
                _record_failed(run, registry_arn, failed_topics, last.failed, log)
            if not stop and not failed:
                _record_cursor(run, registry_arn, listing, log)
                # Like the cursor, only after a complete sync.
                _record_sweep(run, registry_arn, sweep, last.sweep, log)
        except KeyboardInterrupt:
            stop.signal_name = stop.signal_name or "SIGINT"
        except BaseException:
            readback.abandon()
            raise
        # Before the summary: what it logs comes before the table on a terminal, not in the
        # middle of it.
        if stop:
            readback.abandon()
        readbacks = [] if stop else readback.finish()
        if rows:
            print(_table(rows, ("topic", "asset", "catalog", "lineage")), file=out)
        if reposted:
            print(
                f"\nlineage re-posted for {len(reposted)} topics whose events DataZone had failed "
                f"after accepting them: {', '.join(reposted)}",
                file=out,
            )
        if over_foreign:
            print(
                f"\nlineage re-posted for {len(over_foreign)} topics whose job's latest run in "
                f"DataZone was not the sync's (see the WARNINGs): {', '.join(over_foreign)}",
                file=out,
            )
        _print_scope_notes(run, out, report, retiring=retiring)
        for readback in readbacks:
            print(f"\n{readback.summary}", file=out)
            for mismatch in readback.mismatches:
                print(f"ERROR {mismatch}", file=out)
        calls, retries = run.api_calls(), run.api_retries()
        summary = f"{len(topics)} topics, {failed} failed, {sum(calls.values())} AWS API calls"
        if retries:
            retried = ", ".join(f"{operation} {n}" for operation, n in retries.items())
            summary += f", {sum(retries.values())} retried ({retried})"
        if stop:
            summary += (
                f"; stopped by {stop.signal_name} after {done} of {len(topics)} topics "
                "(a rerun syncs the rest)"
            )
        print(f"\n{summary}", file=out)
        out.flush()
        if stop:
            return _stopped_status(stop.signal_name)
        return 1 if failed or any(readback.mismatches for readback in readbacks) else 0


def _asset_column(outcome: TopicOutcome) -> str:
    """A synced topic's asset: what the sync did to it, or why it has none."""
    if outcome.asset is not None:
        return outcome.asset.action
    return NOT_CATALOGED.done  # every stage ran: only a topic that is no table's has none


def _lineage_column(run: SyncRun, outcome: TopicOutcome) -> str:
    if outcome.unchanged_by_token:
        return recorded_lineage(run, outcome.topic, outcome.asset.record)
    return outcome.lineage.summary


def _record_cursor(
    run: SyncRun, registry_arn: str, cursor: RegistryCursor, log: logging.Logger
) -> None:
    try:
        run.mappings.record_cursor(registry_arn, cursor)
    except (ClientError, BotoCoreError) as error:
        log.warning(
            f"registry cursor not recorded (the next sync reads the topics changed since the "
            f"last one recorded, or every mapping): {describe_error(error)}"
        )


def _record_failed(
    run: SyncRun,
    registry_arn: str,
    failed_topics: list[str],
    recorded: FailedTopics,
    log: logging.Logger,
) -> None:
    """Keep the topics this sync failed for the next one, dropping the record when none did (a
    write only when the failed topics differ from the last sync's)."""
    failed = FailedTopics.of(failed_topics, MAX_PARAMETER_VALUE_LENGTH)
    if failed == recorded:
        return
    try:
        run.mappings.record_failed(registry_arn, failed)
    except (ClientError, BotoCoreError) as error:
        log.warning(
            "the failed topics were not recorded (the next sync retries those the registry "
            f"shows changed; `dzlineage sync --reconcile` retries every one): "
            f"{describe_error(error)}"
        )


def _record_sweep(
    run: SyncRun,
    registry_arn: str,
    sweep: VersionSweep | None,
    recorded: SweepState,
    log: logging.Logger,
) -> None:
    """Keep what the sweep learnt of the registry's ``UpdatedTime``: a write only when it
    learnt something new (its position is the clock's, see ``sweep_versions_by_clock``)."""
    if sweep is None or sweep.updated_time is recorded.updated_time:
        return  # a reconcile reads every topic; nothing new was learnt
    try:
        run.mappings.record_sweep(registry_arn, SweepState(updated_time=sweep.updated_time))
    except (ClientError, BotoCoreError) as error:
        log.warning(
            f"what the version sweep learnt of the registry's UpdatedTime was not recorded "
            f"(the next sync sizes its slice as before): {describe_error(error)}"
        )


def _print_scope_notes(
    run: SyncRun, out: TextIO, report: ReconcileReport | None, *, retiring: bool = True
) -> None:
    """What an operator must know beyond the per-topic rows: repairs, migration, a hold
    (``retiring``: whether this sync looked for schemas that left the registry)."""
    if report is not None:
        print(_reconcile_summary(report), file=out)
    if run.mappings.migrated:
        print(
            f"\nmoved {len(run.mappings.migrated)} mappings of the first SSM layout to "
            f"{run.mappings.prefix}",
            file=out,
        )
    if run.not_topics:
        print(f"\n{_not_topics_note(run)}", file=out)
    hold = retirement_hold(run) if retiring else None
    if hold is not None:
        print(f"\n{hold}", file=out)
    try:
        refused = refused_connectors(run.topology)
    except SyncError:
        refused = []  # the per-topic rows already say why the connectors could not be read
    if refused:
        print(
            f"\n{len(refused)} connectors fail: the platform refuses their configuration "
            "(no lineage from them):",
            file=out,
        )
        for line in refused:
            print(f"  {line}", file=out)


def _not_topics_note(run: SyncRun) -> str:
    """The registry's schemas that name no topic, a line each: reported every run, never a
    failure (only deleting the schema changes them)."""
    lines = "".join(f"\n  {topic}: {why}" for topic, why in run.not_topics.items())
    return (
        f"{len(run.not_topics)} registry schemas are not a topic (not cataloged, not a "
        f"failure; deleting the schema is the fix):{lines}"
    )


def _reconcile_summary(report: ReconcileReport) -> str:
    by_id = (
        f", {report.assets_read_by_id} mapped assets Search did not list read by id"
        if report.assets_read_by_id
        else ""
    )
    cost = (
        f"{report.assets_seen} topic assets read in {report.search_pages} Search pages{by_id}, "
        f"lineage in {report.lineage_pages} ListLineageEvents pages"
    )
    if not report.repairs:
        return f"\nreconcile: nothing to repair ({cost})"
    table = _table(report.rows(), ("topic", "repair", "detail"))
    return f"\nreconcile: {len(report.repairs)} repairs ({cost})\n{table}"


def _print_plan(run: SyncRun, out: TextIO, report: ReconcileReport | None) -> int:
    rows, unplannable = dry_run_plan(run)
    print(_table(rows, ("topic", "asset", "catalog", "schema", "lineage")), file=out)
    _print_scope_notes(run, out, report)
    print(f"\ndry run: nothing was written ({len(rows)} rows)", file=out)
    return 1 if unplannable else 0
