"""The version sweep: new and deleted schema versions found without trusting ``UpdatedTime``.

The registry sensor and ``dzlineage sync`` notice a changed schema by its ``UpdatedTime`` in
the listing, which AWS does not document to move when a version is registered or deleted. Each
tick (a sensor tick, a headless sync) therefore also checks a rotating slice of the topics
(:func:`~dzlineage_dagster.core.catalog.discovery.version_sweep`): one GetSchema per topic for its
``LatestSchemaVersion``, compared with the version its mapping record says the asset was synced
with (GetParameters, 10 records a call). A topic that differs is synced whatever its token says.
"""

from __future__ import annotations

from dataclasses import dataclass

from dzlineage_dagster.core.catalog.discovery import behind_registry, version_sweep
from dzlineage_dagster.sync.run_state import SyncRun


@dataclass(frozen=True)
class VersionSweep:
    #: Where the next tick's sweep starts after (the last topic checked).
    swept_to: str
    #: Topic -> its latest version, for the topics whose asset shows another one.
    behind: dict[str, int]


def sweep_versions(run: SyncRun, swept_to: str) -> VersionSweep:
    listed = run.registry_topics
    batch = version_sweep(list(listed), swept_to)
    if not batch:
        return VersionSweep(swept_to, {})
    run.mappings.read([listed[topic].schema_arn for topic in batch])
    synced = {}
    for topic in batch:
        record = run.mappings.get(listed[topic].schema_arn)
        if record is not None:
            synced[topic] = record.schema_version
    registry = run.resource.schema_registry
    latest = {}
    for topic in synced:
        try:
            latest[topic] = int(
                registry.get_schema(listed[topic].schema_arn)["LatestSchemaVersion"]
            )
        except registry.client().exceptions.EntityNotFoundException:
            continue  # deleted since the listing: the next listing retires it
    return VersionSweep(
        batch[-1], {topic: latest[topic] for topic in behind_registry(latest, synced)}
    )
