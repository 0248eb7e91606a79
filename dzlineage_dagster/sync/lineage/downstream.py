"""Posting a team's Dagster asset materializations to DataZone as OpenLineage runs.

One run per (Dagster run, asset) (:func:`~dzlineage_dagster.core.lineage.downstream.
materialization_run_id`), one COMPLETE event, as the sync posts its hops (the reasons are in
:mod:`dzlineage_dagster.sync.stages.lineage`): the asset's platform inputs named exactly as the
sync names them, so DataZone joins them to the nodes the sync made (topic -> Iceberg table ->
the team's asset). The event's time is the materialization's, so a re-post of the same run is
the same event under the same client token: DataZone replays it instead of storing it twice,
and a 409 is resolved as the sync resolves it (:class:`~dzlineage_dagster.sync.destinations.
datazone.DataZoneDestination`). The DataZone client paces every post with the account's rate
limits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from dzlineage_dagster.core.lineage.downstream import (
    AssetPath,
    GlueTableRef,
    PlatformRef,
    TopicRef,
    asset_job,
    dagster_dataset,
)
from dzlineage_dagster.core.lineage.openlineage import (
    DatasetSpec,
    build_fitted_run_events,
    glue_table_spec,
)
from dzlineage_dagster.sync.destinations import RunPost
from dzlineage_dagster.sync.destinations.datazone import DataZoneDestination
from dzlineage_dagster.sync.errors import SyncError
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.stages.lineage import EVENT_TYPES, PRODUCER

#: A dataset of a team's lineage: the platform's (by its graph key), or one of the team's
#: opted-in Dagster assets (by its key) that is no Glue table.
DatasetRef = PlatformRef | AssetPath


@dataclass(frozen=True)
class AssetRun:
    """One materialization run of an opted-in asset, to post as one OpenLineage run."""

    key: AssetPath
    run_id: str
    event_time: datetime
    inputs: tuple[DatasetRef, ...]
    output: DatasetRef

    @property
    def label(self) -> str:
        return "/".join(self.key)


@dataclass(frozen=True)
class PostedAssetRun:
    run: AssetRun
    #: The ids DataZone gave the events it accepted (a replayed post gives the stored id).
    event_ids: tuple[str, ...]
    #: Events DataZone held already and refused under a used token (nothing new stored).
    refused: int
    inputs: tuple[str, ...]
    output: str


class DatasetNamer:
    """Names references as the sync names them; the registry's region and account (for Glue
    tables) and the cluster's bootstrap servers (for topics) are read once, when first needed."""

    def __init__(self, run: SyncRun, code_location: str) -> None:
        self.run = run
        self.code_location = code_location

    @cached_property
    def _glue_place(self) -> tuple[str, str]:
        """The Glue tables' region and account, as the sync takes them: the registry's ARN (one
        GetRegistry) and DZLINEAGE_GLUE_CATALOG_ID when the tables live elsewhere."""
        settings = self.run.settings
        arn = self.run.resource.schema_registry.registry_arn(settings.registry_name)
        region, account = arn.split(":")[3:5]
        return region, settings.glue_table_account(account)

    def dataset(self, ref: DatasetRef) -> DatasetSpec:
        if isinstance(ref, GlueTableRef):
            return glue_table_spec(*self._glue_place, ref.database, ref.table)
        if isinstance(ref, TopicRef):
            return DatasetSpec(*self.run.topic_dataset(ref.topic))
        return DatasetSpec(*dagster_dataset(self.code_location, ref))


def post_asset_runs(
    run: SyncRun, code_location: str, asset_runs: Sequence[AssetRun]
) -> list[PostedAssetRun]:
    """PostLineageEvent for each run, in order; a SyncError names the asset that failed."""
    namer = DatasetNamer(run, code_location)
    posted = []
    for asset_run in asset_runs:
        try:
            inputs = [namer.dataset(ref) for ref in asset_run.inputs]
            output = namer.dataset(asset_run.output)
            job_namespace, job_name = asset_job(code_location, asset_run.key)
            fitted = build_fitted_run_events(
                job_namespace=job_namespace,
                job_name=job_name,
                inputs=inputs,
                outputs=[output],
                run_id=asset_run.run_id,
                event_time=asset_run.event_time,
                producer=PRODUCER,
                event_types=EVENT_TYPES,
            )
        except ValueError as error:
            raise SyncError(f"{asset_run.label}: lineage not posted: {error}") from None
        delivered = DataZoneDestination(run).post_run(
            RunPost(
                asset_run.label,
                f"{job_namespace}.{job_name}",
                fitted.events,
                split=fitted.split,
                # A run DataZone failed after accepting it: new tokens (the old ones would
                # replay the failed acceptance).
                retry_of=run.lineage_health.retry_of(asset_run.run_id),
            )
        )
        posted.append(
            PostedAssetRun(
                asset_run,
                delivered.event_ids,
                delivered.refused,
                tuple(f"{d.namespace}/{d.name}" for d in inputs),
                f"{output.namespace}/{output.name}",
            )
        )
    return posted
