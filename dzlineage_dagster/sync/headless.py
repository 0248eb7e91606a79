"""`dzlineage sync`: the catalog sync in one process, for cron and CI users."""

from __future__ import annotations

import logging
import sys
from typing import TextIO

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.discovery import registry_digest
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.settings import LineageSettings, aws_resource_options
from dzlineage_dagster.sync.custom_types import ensure_custom_types
from dzlineage_dagster.sync.errors import SyncError, describe_error
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.runner import sync_topics
from dzlineage_dagster.sync.stages.asset import plan_topic_asset
from dzlineage_dagster.sync.stages.lineage import plan_topic_lineage
from dzlineage_dagster.sync.stages.retire import removed_records, retire_removed_topics
from dzlineage_dagster.sync.stages.schema import read_schema


def start_run(settings: LineageSettings, log: logging.Logger) -> SyncRun:
    """A run as Dagster starts one, with the resource built from the process environment."""
    return SyncRun(LineageSyncResource.with_settings(settings, aws_resource_options()), log)


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
            if lineage.run_id is None:
                edge = f"no edge: {lineage.mapping.reason}"
            else:
                state = "unchanged" if lineage.already_posted else "post"
                edge = f"{state} -> {lineage.mapping.table} ({lineage.mapping.origin})"
            rows.append((topic, asset.action, f"v{snapshot.version}", edge))
        except Exception as error:
            unplannable += 1
            rows.append((topic, "error", "", describe_error(error)))
    policy = run.settings.deleted_schema_policy
    for record in removed_records(run):
        rows.append((record.topic, policy, "", f"schema {record.schema_arn} left the registry"))
    return rows, unplannable


def run_headless_sync(settings: LineageSettings, *, dry_run: bool, out: TextIO) -> int:
    """Exit code 0 when every topic synced, 1 when any failed or the sync could not start.

    Idle is nearly free: the registry listing (a call per 100 schemas) is hashed with the
    sync's settings into a digest; when it equals the digest the last complete sync recorded
    (one GetParameters), nothing changed and nothing more is called. Otherwise every mapping
    is read once and only the topics whose registry token moved are read and synced; a sync
    with no failure then records the new digest.
    """
    log = logging.getLogger("dzlineage.sync")
    try:
        run = start_run(settings, log)
        if dry_run:
            return _print_plan(run, out)
        types = ensure_custom_types(run)
        topics = list(run.registry_topics)
        registry_arn = run.registry_arn
        digest = registry_digest(run.registry_topics, run.sync_context)
        unchanged = registry_arn is not None and run.mappings.stored_digest(registry_arn) == digest
    except (SyncError, ClientError, BotoCoreError, ValueError) as error:
        # Nothing per topic has happened yet: say why, without a traceback (a ValueError is
        # a setting the first client refused, e.g. DZLINEAGE_CLIENT_RATE_LIMITS).
        print(f"dzlineage sync: could not start: {describe_error(error)}", file=sys.stderr)
        return 1
    for created in types.created:
        log.info(f"created {created}")
    if unchanged:
        calls = run.api_calls()
        print(
            f"registry {settings.registry_name} unchanged since the last complete sync "
            f"(digest {digest[:12]}): nothing to do\n\n{len(topics)} topics, 0 failed, "
            f"{sum(calls.values())} AWS API calls",
            file=out,
        )
        return 0
    log.info(f"syncing {len(topics)} topics of registry {settings.registry_name}")
    rows, failed = [], 0
    # Threads finish topics in any order; the summary lists them in the registry's.
    listing_order = {topic: index for index, topic in enumerate(topics)}
    outcomes = sorted(
        sync_topics(run, topics, trust_registry_tokens=True), key=lambda o: listing_order[o.topic]
    )
    for outcome in outcomes:
        if outcome.ok:
            asset = outcome.asset.action if outcome.asset else "-"
            if outcome.unchanged_by_token:
                lineage = "unchanged (registry token)"
            else:
                lineage = outcome.lineage.summary if outcome.lineage else "-"
            rows.append((outcome.topic, asset, lineage))
        else:
            failed += 1
            rows.append((outcome.topic, "FAILED", f"{outcome.failed_stage.value}: {outcome.error}"))
    for topic, result in retire_removed_topics(run).items():
        failed += result.startswith("failed")
        rows.append((topic, result, "schema left the registry"))
    if not failed and registry_arn is not None:
        try:
            run.mappings.record_digest(registry_arn, digest)
        except (ClientError, BotoCoreError) as error:
            log.warning(
                f"registry digest not recorded (the next sync reads every mapping): "
                f"{describe_error(error)}"
            )
    print(_table(rows, ("topic", "asset", "lineage")), file=out)
    calls = run.api_calls()
    print(f"\n{len(topics)} topics, {failed} failed, {sum(calls.values())} AWS API calls", file=out)
    return 1 if failed else 0


def _print_plan(run: SyncRun, out: TextIO) -> int:
    rows, unplannable = dry_run_plan(run)
    print(_table(rows, ("topic", "asset", "schema", "lineage")), file=out)
    print(f"\ndry run: nothing was written ({len(rows)} rows)", file=out)
    return 1 if unplannable else 0
