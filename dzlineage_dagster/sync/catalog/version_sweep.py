"""The version sweep: new and deleted schema versions found without trusting ``UpdatedTime``.

The registry sensor and ``dzlineage sync`` notice a changed schema by its ``UpdatedTime`` in
the listing, which AWS does not document to move when a version is registered or deleted. Each
tick (a sensor tick, a headless sync) therefore also checks a rotating slice of the topics
(:func:`~dzlineage_dagster.core.catalog.discovery.version_sweep`): one GetSchema per topic for its
``LatestSchemaVersion``, compared with the version its mapping record says the asset was synced
with (GetParameters, 10 records a call). A topic that differs is synced whatever its token says.

The sensor keeps the slice's position in its Dagster cursor (the next slice follows the last
topic checked). ``dzlineage sync`` keeps none: its slice is the one of the run's minute
(:func:`~dzlineage_dagster.core.catalog.discovery.clock_sweep`), so an idle sync writes nothing;
only what the sweep learns of ``UpdatedTime`` is stored, once, when it learns it.

The slice's size follows what the registry has shown (:class:`UpdatedTimeBehaviour`): a
sixtieth of the topics where ``UpdatedTime`` is known not to move, a few topics where it is
known to move, a constant twenty until the registry shows either. The sweep learns it itself:
the first schema of a slice with two or more versions (one GetSchemaVersion for its latest
version's ``CreatedTime``, against GetSchema's ``UpdatedTime``), and every topic it finds behind
a new version, tells which.
"""

from __future__ import annotations

from dataclasses import dataclass

from dzlineage_dagster.core.catalog.discovery import (
    SweepState,
    UpdatedTimeBehaviour,
    behind_registry,
    clock_sweep,
    updated_time_evidence,
    version_sweep,
)
from dzlineage_dagster.sync.run_state import SyncRun

#: GetSchemaVersion calls a tick may make to learn what ``UpdatedTime`` does.
PROBES_PER_TICK = 2


@dataclass(frozen=True)
class VersionSweep:
    #: Where the sensor's next sweep starts after (the last topic checked; the clock's sweep
    #: keeps no position: "").
    swept_to: str
    #: Topic -> its latest version, for the topics whose asset shows another one.
    behind: dict[str, int]
    #: What the registry has shown its ``UpdatedTime`` does, this tick included.
    updated_time: UpdatedTimeBehaviour = UpdatedTimeBehaviour.UNKNOWN


def sweep_versions(run: SyncRun, state: SweepState) -> VersionSweep:
    """The sensor's sweep: the slice after the topic where its cursor says the last one
    stopped."""
    batch = version_sweep(list(run.registry_topics), state.swept_to, state.updated_time)
    return _check(run, batch, state.updated_time, batch[-1] if batch else state.swept_to)


def sweep_versions_by_clock(run: SyncRun, behaviour: UpdatedTimeBehaviour) -> VersionSweep:
    """``dzlineage sync``'s sweep: the slice of the run's minute
    (:func:`~dzlineage_dagster.core.catalog.discovery.clock_sweep`), so that a sync keeps no
    position and an idle one writes nothing."""
    slot = int(run.started_at.timestamp() // 60)
    batch = clock_sweep(list(run.registry_topics), slot, behaviour)
    return _check(run, batch, behaviour, position="")


def _check(
    run: SyncRun, batch: list[str], behaviour: UpdatedTimeBehaviour, position: str
) -> VersionSweep:
    """The topics of ``batch`` whose asset shows another version than the registry's latest,
    and what the probes of this batch show of ``UpdatedTime``."""
    if not batch:
        return VersionSweep(position, {}, behaviour)
    listed = run.registry_topics
    run.mappings.read([listed[topic].schema_arn for topic in batch])
    synced = {}
    for topic in batch:
        record = run.mappings.get(listed[topic].schema_arn)
        if record is not None:
            synced[topic] = record.schema_version
    registry = run.resource.schema_registry
    latest, described = {}, {}
    for topic in synced:
        try:
            described[topic] = registry.get_schema(listed[topic].schema_arn)
        except registry.client().exceptions.EntityNotFoundException:
            continue  # deleted since the listing: the next listing retires it
        latest[topic] = int(described[topic]["LatestSchemaVersion"])
    # A higher number may be a version the registry refused (Status FAILURE, still numbered):
    # the latest one a producer can use is what the asset would show (one GetSchemaVersion,
    # which the UpdatedTime probe below reuses).
    usable = {}
    for topic in [t for t in latest if latest[t] > synced[t]]:
        try:
            usable[topic] = registry.get_schema_version(listed[topic].schema_arn)
        except registry.client().exceptions.EntityNotFoundException:
            continue
        latest[topic] = int(usable[topic]["VersionNumber"])
    behind = {topic: latest[topic] for topic in behind_registry(latest, synced)}
    # A new version the sweep found is the best evidence; while nothing is known, any schema
    # with two versions. Known frozen: nothing to learn (the sweep is at its widest).
    probes = [t for t in behind if behind[t] > synced[t]]
    if behaviour is UpdatedTimeBehaviour.UNKNOWN:
        probes += [t for t in described if t not in behind and latest[t] >= 2]
    if behaviour is UpdatedTimeBehaviour.FROZEN:
        probes = []
    for topic in probes[:PROBES_PER_TICK]:
        try:
            version = usable.get(topic) or registry.get_schema_version(listed[topic].schema_arn)
        except registry.client().exceptions.EntityNotFoundException:
            continue
        shown = updated_time_evidence(
            described[topic].get("UpdatedTime"), latest[topic], version.get("CreatedTime")
        )
        if shown not in (UpdatedTimeBehaviour.UNKNOWN, behaviour):
            run.log.info(
                f"version sweep: {topic} shows that this registry's UpdatedTime "
                f"{'does not move' if shown is UpdatedTimeBehaviour.FROZEN else 'moves'} when "
                "a version is registered; the sweep's slice is sized for that from now on"
            )
            behaviour = shown
    return VersionSweep(position, behind, behaviour)
