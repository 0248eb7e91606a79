"""`dzlineage sync`: the catalog sync in one process, for cron and CI users."""

from __future__ import annotations

import logging
import sys
from typing import TextIO

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.resources import (
    DataZoneResource,
    MskResource,
    ParameterStoreResource,
    SchemaRegistryResource,
)
from dzlineage_dagster.settings import LineageSettings, aws_resource_options
from dzlineage_dagster.sync.custom_types import ensure_custom_types
from dzlineage_dagster.sync.environment import SyncEnvironment, SyncError
from dzlineage_dagster.sync.retire import removed_records, retire_removed_topics
from dzlineage_dagster.sync.runner import describe_error, sync_topics
from dzlineage_dagster.sync.stages import plan_topic_asset, plan_topic_lineage, read_schema


def build_environment(settings: LineageSettings, log: logging.Logger) -> SyncEnvironment:
    aws = aws_resource_options()
    return SyncEnvironment(
        settings=settings,
        registry=SchemaRegistryResource(**aws),
        parameters=ParameterStoreResource(**aws),
        datazone=DataZoneResource(**aws),
        msk=MskResource(**aws),
        log=log,
    )


def _table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = [header, tuple("-" * w for w in widths), *rows]
    return "\n".join(
        "  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=False)) for line in lines
    )


def dry_run_plan(env: SyncEnvironment) -> tuple[list[tuple[str, ...]], int]:
    """Rows of what a sync would do per topic, and how many topics could not be planned."""
    try:
        type_revision: str | None = env.asset_type_revision
    except SyncError:
        type_revision = None  # the first sync creates the types; every asset is then new
    rows, unplannable = [], 0
    for topic in env.registry_topics:
        try:
            snapshot = read_schema(env, topic)
            asset = plan_topic_asset(env, snapshot, type_revision)
            lineage = plan_topic_lineage(env, snapshot)
            if lineage.run_id is None:
                edge = f"no edge: {lineage.mapping.reason}"
            else:
                state = "unchanged" if lineage.already_posted else "post"
                edge = f"{state} -> {lineage.mapping.table} ({lineage.mapping.origin})"
            rows.append((topic, asset.action, f"v{snapshot.version}", edge))
        except Exception as error:
            unplannable += 1
            rows.append((topic, "error", "", describe_error(error)))
    policy = env.settings.deleted_schema_policy
    for record in removed_records(env):
        rows.append((record.topic, policy, "", f"schema {record.schema_arn} left the registry"))
    return rows, unplannable


def run_headless_sync(settings: LineageSettings, *, dry_run: bool, out: TextIO) -> int:
    """Exit code 0 when every topic synced, 1 when any failed or the sync could not start."""
    log = logging.getLogger("dzlineage.sync")
    try:
        env = build_environment(settings, log)
        if dry_run:
            return _print_plan(env, out)
        types = ensure_custom_types(env)
        topics = list(env.registry_topics)
    except (SyncError, ClientError, BotoCoreError) as error:
        # Nothing per topic has happened yet: say why, without a traceback.
        print(f"dzlineage sync: could not start: {describe_error(error)}", file=sys.stderr)
        return 1
    for created in types.created:
        log.info(f"created {created}")
    log.info(f"syncing {len(topics)} topics of registry {settings.registry_name}")
    rows, failed = [], 0
    for outcome in sync_topics(env, topics):
        if outcome.ok:
            asset = outcome.asset.action if outcome.asset else "-"
            lineage = outcome.lineage.summary if outcome.lineage else "-"
            rows.append((outcome.topic, asset, lineage))
        else:
            failed += 1
            rows.append((outcome.topic, "FAILED", f"{outcome.failed_stage.value}: {outcome.error}"))
    for topic, result in retire_removed_topics(env).items():
        failed += result.startswith("failed")
        rows.append((topic, result, "schema left the registry"))
    print(_table(rows, ("topic", "asset", "lineage")), file=out)
    calls = env.api_calls()
    print(f"\n{len(topics)} topics, {failed} failed, {sum(calls.values())} AWS API calls", file=out)
    return 1 if failed else 0


def _print_plan(env: SyncEnvironment, out: TextIO) -> int:
    rows, unplannable = dry_run_plan(env)
    print(_table(rows, ("topic", "asset", "schema", "lineage")), file=out)
    print(f"\ndry run: nothing was written ({len(rows)} rows)", file=out)
    return 1 if unplannable else 0
