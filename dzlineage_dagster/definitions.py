"""The code location: every asset, check, job, sensor and resource, in one place.

``defs`` is the sync's own machinery; :func:`code_location` (what Dagster and ``dg`` load) adds
the components declared in ``defs/`` (the platform graph), built inside Dagster's load context
so a state-backed component reads and refreshes its state as Dagster expects.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from dagster import Definitions, definitions, load_from_defs_folder

from dzlineage_dagster.assets.connectors import connector_topology
from dzlineage_dagster.assets.custom_types import datazone_custom_types
from dzlineage_dagster.assets.topics import kafka_topic_catalog
from dzlineage_dagster.checks import ALL_CHECKS, schema_change_is_compatible
from dzlineage_dagster.jobs import (
    CATALOG_CHECKS_JOB,
    CATALOG_RECONCILE_JOB,
    CATALOG_SYNC_JOB,
    CONNECTOR_TOPOLOGY_JOB,
    RETIRE_TOPICS_JOB,
    catalog_checks_schedule,
    catalog_reconcile_schedule,
)
from dzlineage_dagster.resources import ChangeQueueResource, LineageSyncResource
from dzlineage_dagster.scopes import read_scopes
from dzlineage_dagster.sensors import catalog_checks_after_first_sync, scope_sensors
from dzlineage_dagster.settings import LineageSettings, aws_side_options


def build_resources(environ: Mapping[str, str] | None = None) -> dict[str, object]:
    """The resources, each setting read from its variable when a run starts."""
    environ = os.environ if environ is None else environ
    side_options = aws_side_options(environ, deferred=True)
    scopes = read_scopes(environ)
    # A scope's required settings stand for the deployment's where its variables are unset;
    # each scope's own replace them in its runs (LineageSyncResource.for_scope).
    required = [name for name, f in LineageSettings.model_fields.items() if f.is_required()]
    fixed = {
        name: scopes[0].settings[name] for name in required if scopes and name in scopes[0].settings
    }
    return {
        "lineage_sync": LineageSyncResource.with_settings(
            LineageSettings.deferred_to_env(environ, fixed), side_options, scopes
        ),
        # The queue is in the data side's account, where CloudTrail records the changes.
        "change_queue": ChangeQueueResource(**side_options.get("data", {})),
    }


RESOURCES = build_resources()

defs = Definitions(
    assets=[datazone_custom_types, connector_topology, kafka_topic_catalog],
    asset_checks=[*ALL_CHECKS, schema_change_is_compatible],
    jobs=[
        CATALOG_SYNC_JOB,
        CATALOG_CHECKS_JOB,
        CONNECTOR_TOPOLOGY_JOB,
        RETIRE_TOPICS_JOB,
        CATALOG_RECONCILE_JOB,
    ],
    schedules=[catalog_checks_schedule, catalog_reconcile_schedule],
    # Each scope's registry, connector and change queue sensors (DZLINEAGE_SCOPES), or the
    # deployment's one registry's under their plain names.
    sensors=[
        *scope_sensors(RESOURCES["lineage_sync"].scope_names),
        catalog_checks_after_first_sync,
    ],
    resources=RESOURCES,
)


@definitions
def code_location() -> Definitions:
    """The sync's definitions and the defs folder's components, as one code location."""
    return Definitions.merge(defs, load_from_defs_folder(path_within_project=Path(__file__).parent))
