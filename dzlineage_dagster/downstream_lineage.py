"""The sensor a team puts in its own code location to post its assets' lineage to DataZone.

``downstream_lineage_sensor(groups=[...], code_location=...)`` watches the materializations of
the assets of the opted-in asset groups (the event log, from a per-asset cursor of storage ids)
and posts one OpenLineage run per Dagster run and asset: the asset's dependencies on the
platform's keys (``iceberg/<db>/<table>``, ``kafka/<topic>``) and on other opted-in assets as
inputs, the asset as output (:mod:`dzlineage_dagster.core.lineage.downstream` names them), and
a closing run for each asset posted before that the location no longer has (renamed or
removed), as the sync closes a deleted connector's hop. It
lives in the team's code location because only there is the team's asset graph (groups, deps)
known; it reaches DataZone through the same ``lineage_sync`` resource and ``DZLINEAGE_*``
settings as the sync (docs/dagster-graph.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timezone

from dagster import (
    AssetKey,
    AssetRecordsFilter,
    DefaultSensorStatus,
    EventLogRecord,
    SensorDefinition,
    SensorEvaluationContext,
    SkipReason,
    sensor,
)
from dagster._core.definitions.assets.graph.base_asset_graph import BaseAssetNode
from dagster._core.storage.tags import KIND_PREFIX

from dzlineage_dagster.core.lineage.downstream import (
    TABLE_NAME_METADATA,
    DownstreamCursor,
    GlueTableRef,
    asset_glue_table,
    closing_run_id,
    dagster_dataset,
    materialization_run_id,
    platform_ref,
    reopening_run_id,
)
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sync.lineage.downstream import (
    AssetRun,
    DatasetRef,
    PostedAssetRun,
    post_asset_runs,
)
from dzlineage_dagster.sync.run_state import SyncRun

#: Materializations read per asset and tick: bounds a tick's work (the sensor's 60 s limit);
#: the cursor takes the rest on the next tick.
MATERIALIZATIONS_PER_TICK = 100


def downstream_lineage_sensor(
    *,
    groups: Sequence[str],
    code_location: str,
    name: str = "downstream_lineage",
    minimum_interval_seconds: int = 60,
    default_status: DefaultSensorStatus = DefaultSensorStatus.STOPPED,
) -> SensorDefinition:
    """A sensor posting the lineage of the assets in ``groups`` to DataZone.

    ``code_location`` is the location's name (as ``workspace.yaml`` gives it): it names the
    assets' DataZone nodes (``dagster://<code_location>/<key/path>``), so keep it stable. The
    location's Definitions must provide the ``lineage_sync`` resource
    (``dzlineage_dagster.definitions.build_resources()``).
    """
    opted_in = frozenset(groups)
    if not opted_in:
        raise ValueError("downstream_lineage_sensor needs at least one asset group to post")
    # Checked now: a bad name would otherwise fail only when the first materialization posts.
    dagster_dataset(code_location, ("-",))

    @sensor(
        name=name,
        minimum_interval_seconds=minimum_interval_seconds,
        default_status=default_status,
        description=(
            f"Posts the lineage of each materialization of the assets in the groups "
            f"{', '.join(sorted(opted_in))} to DataZone (PostLineageEvent): the platform's "
            "Iceberg tables and topics they depend on -> the asset. One OpenLineage run per "
            "Dagster run and asset; re-posts replay. See docs/dagster-graph.md."
        ),
    )
    def _downstream_lineage(
        context: SensorEvaluationContext, lineage_sync: LineageSyncResource
    ) -> SkipReason:
        nodes = _opted_in_nodes(context, name, opted_in)
        cursor = DownstreamCursor.decode(context.cursor)
        now = datetime.now(timezone.utc)
        asset_runs, reopened, advanced = [], [], cursor
        for node in nodes.values():
            label = node.key.to_user_string()
            records = _new_materializations(context, node.key, cursor.after(label))
            if not records:
                continue
            node_runs = _asset_runs(node, records, nodes)
            latest = max(r.storage_id for r in records)
            if label in cursor.closed:
                # Back under a closed key: its latest run was posted before the closing, which
                # DataZone takes for the job's latest; posted anew now, as a run of its own.
                run_id = reopening_run_id(label, cursor.closed[label], latest)
                node_runs = [replace(node_runs[-1], run_id=run_id, event_time=now)]
                reopened.extend(node_runs)
            asset_runs.extend(node_runs)
            output = node_runs[-1].output
            table = output if isinstance(output, GlueTableRef) else None
            advanced = advanced.advanced(label, latest, table)
        run = SyncRun(lineage_sync, context.log)
        # DataZone may fail an event after accepting it: the runs of the team's assets it
        # failed are posted again (one ListLineageEvents a tick finds them).
        failed = _failed_asset_runs(context, run, nodes, {r.run_id for r in asset_runs})
        asset_runs.extend(failed)
        closings = _closing_runs(context, cursor, now)
        for closing in closings:
            advanced = advanced.closing(closing.label)
        # Closed before, not back since, and its closing failed in DataZone.
        failed_closings = [
            closing
            for closing in _closed_runs(cursor, now)
            if closing.label in advanced.closed and run.lineage_health.must_repost(closing.run_id)
        ]
        asset_runs.extend([*closings, *failed_closings])
        if not asset_runs:
            context.update_cursor(advanced.encode())
            return SkipReason(f"no new materialization of the {len(nodes)} opted-in assets")
        # Raises on the first failure, the cursor unchanged: the next tick posts the same runs
        # (and closings) again with the same run ids and client tokens, which DataZone replays.
        posted = post_asset_runs(run, code_location, asset_runs)
        for done in posted:
            context.log.info(
                f"{done.run.label}: {', '.join(done.inputs) or 'no platform input'} -> "
                f"{done.output} ({_state(done, failed, closings, failed_closings, reopened)}, "
                f"run {done.run.run_id})"
            )
        context.update_cursor(advanced.encode())
        failures = len(failed) + len(failed_closings)
        again = f" ({failures} posted again, their events FAILED in DataZone)" if failures else ""
        closed = (
            f"; closed the lineage of {len(closings)} assets gone from the location "
            f"({', '.join(c.label for c in closings)})"
            if closings
            else ""
        )
        materializations = len(asset_runs) - len(closings) - len(failed_closings)
        # Dagster calls a tick that requests no run "skipped" (its log reads "Sensor ...
        # skipped: <this>"): the reason says that this sensor's work is not a run, and what it did.
        return SkipReason(
            f"no run to launch, the sensor posts itself: it posted the lineage of "
            f"{materializations} materialization runs to DataZone{again}{closed}; "
            f"API calls {dict(sorted(run.api_calls().items()))}"
        )

    return _downstream_lineage


def _opted_in_nodes(
    context: SensorEvaluationContext, sensor_name: str, groups: frozenset[str]
) -> dict[AssetKey, BaseAssetNode]:
    """The location's assets in ``groups``, but not the platform's (whose keys a location that
    depends on them holds as stubs of its default group)."""
    graph = context.repository_def.asset_graph
    nodes = {
        node.key: node
        for node in graph.asset_nodes
        if node.group_name in groups and platform_ref(node.key.path) is None
    }
    missing = groups - {node.group_name for node in nodes.values()}
    if missing:
        known = sorted({node.group_name for node in graph.asset_nodes})
        raise ValueError(
            f"sensor {sensor_name}: no asset of this code location is "
            f"in the group(s) {', '.join(sorted(missing))} (its groups: {', '.join(known)}); "
            "fix the sensor's groups"
        )
    return nodes


def _closing_runs(
    context: SensorEvaluationContext, cursor: DownstreamCursor, now: datetime
) -> list[AssetRun]:
    """A closing run for each asset posted before that the location no longer materializes
    (renamed, removed, moved to another location): its output written from nothing, so its
    job's latest run (what DataZone's views show) leaves its inputs. Assets of groups not opted
    in still count as present: another sensor of the location may post them under the same job.
    """
    present = {
        node.key.to_user_string()
        for node in context.repository_def.asset_graph.asset_nodes
        if node.is_materializable
    }
    return [
        _closing_run(cursor, label, cursor.posted[label], now) for label in cursor.gone(present)
    ]


def _closed_runs(cursor: DownstreamCursor, now: datetime) -> list[AssetRun]:
    """The closing run of each asset the cursor keeps as closed (to post again if it failed)."""
    return [_closing_run(cursor, label, last, now) for label, last in cursor.closed.items()]


def _closing_run(cursor: DownstreamCursor, label: str, last_posted: int, now: datetime) -> AssetRun:
    key = tuple(AssetKey.from_user_string(label).path)
    return AssetRun(
        key,
        closing_run_id(label, last_posted),
        now,
        inputs=(),
        output=cursor.output_of(label) or key,
    )


def _state(
    done: PostedAssetRun,
    failed: list[AssetRun],
    closings: list[AssetRun],
    failed_closings: list[AssetRun],
    reopened: list[AssetRun],
) -> str:
    """What a post was, for the tick's log."""
    state = "already held" if done.refused else "posted"
    if done.run in closings:
        return f"closed: no longer an asset of this code location ({state})"
    if done.run in failed_closings:
        return "closed again: DataZone failed the closing's events after accepting them"
    if done.run in failed:
        return "posted again: DataZone failed its events after accepting them"
    if done.run in reopened:
        return f"back under a key closed before: its latest materialization {state} anew"
    return state


def _new_materializations(
    context: SensorEvaluationContext, key: AssetKey, after: int | None
) -> list[EventLogRecord]:
    """The materializations after the cursor, oldest first; an asset seen for the first time
    starts at its latest one (its current lineage), not its whole history."""
    if after is None:
        latest = context.instance.fetch_materializations(key, limit=1).records
        return list(latest)
    records_filter = AssetRecordsFilter(asset_key=key, after_storage_id=after)
    found = context.instance.fetch_materializations(
        records_filter, limit=MATERIALIZATIONS_PER_TICK, ascending=True
    )
    return list(found.records)


def _failed_asset_runs(
    context: SensorEvaluationContext,
    run: SyncRun,
    nodes: dict[AssetKey, BaseAssetNode],
    posting: set[str],
) -> list[AssetRun]:
    """The opted-in assets' runs whose events DataZone failed after accepting them and no
    later post resolved (:attr:`SyncRun.lineage_health`, within the failure lookback), found
    among each asset's materializations of that window; none of those ``posting`` already."""
    health = run.lineage_health
    if not health.failed_runs or health.since is None:
        return []
    found = []
    for node in nodes.values():
        records_filter = AssetRecordsFilter(
            asset_key=node.key, after_timestamp=health.since.timestamp()
        )
        # The newest first: a failure is likelier among the latest posts.
        newest = context.instance.fetch_materializations(
            records_filter, limit=MATERIALIZATIONS_PER_TICK, ascending=False
        ).records
        records = list(reversed(newest))
        found += [
            asset_run
            for asset_run in _asset_runs(node, records, nodes)
            if health.must_repost(asset_run.run_id) and asset_run.run_id not in posting
        ]
    return found


def _asset_runs(
    node: BaseAssetNode, records: Sequence[EventLogRecord], opted_in: dict[AssetKey, BaseAssetNode]
) -> list[AssetRun]:
    """One run per Dagster run among ``records`` (its partitions are one lineage run), or per
    record for materializations reported without a run; its time is its latest record's."""
    inputs = tuple(
        ref
        for parent in sorted(node.parent_keys, key=lambda k: k.path)
        if (ref := _dataset_ref(parent, opted_in)) is not None
    )
    by_run: dict[str, EventLogRecord] = {}
    for record in records:
        run_id = materialization_run_id(record.run_id, node.key.path, record.storage_id)
        by_run[run_id] = record  # ascending: the last one is the latest
    output = _dataset_ref(node.key, opted_in)
    return [
        AssetRun(
            tuple(node.key.path),
            run_id,
            datetime.fromtimestamp(record.timestamp, timezone.utc),
            inputs,
            output,
        )
        for run_id, record in by_run.items()
    ]


def _dataset_ref(key: AssetKey, opted_in: dict[AssetKey, BaseAssetNode]) -> DatasetRef | None:
    """A dependency's dataset: the platform's by its key, an opted-in asset's (its Glue table,
    or itself), or None for any other asset (not the team's to post)."""
    platform = platform_ref(key.path)
    if platform is not None:
        return platform
    node = opted_in.get(key)
    if node is None:
        return None
    kinds = {tag.removeprefix(KIND_PREFIX) for tag in node.tags if tag.startswith(KIND_PREFIX)}
    table_name = node.metadata.get(TABLE_NAME_METADATA)
    # Dagster may keep the value wrapped (a TextMetadataValue): the plain text is its `value`.
    metadata = (
        {}
        if table_name is None
        else {TABLE_NAME_METADATA: getattr(table_name, "value", table_name)}
    )
    try:
        return asset_glue_table(kinds, metadata) or tuple(key.path)
    except ValueError as error:
        raise ValueError(f"{key.to_user_string()}: {error}") from None
