"""The code location as Dagster loads it: every piece resolves and says what it is."""

from __future__ import annotations

import pytest
from dagster import Definitions

from dzlineage_dagster.assets.topics import STAGE_ASSET_KEYS, kafka_topic_catalog
from dzlineage_dagster.definitions import defs
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sync.runner import Stage

JOB_NAMES = [
    "catalog_checks",
    "catalog_reconcile",
    "catalog_sync",
    "connector_topology_refresh",
    "retire_topics",
]


def test_the_definitions_load_with_every_resource_they_require():
    Definitions.validate_loadable(defs)
    assert isinstance(defs.resources["lineage_sync"], LineageSyncResource)


@pytest.mark.parametrize("job_name", JOB_NAMES)
def test_every_job_resolves(job_name):
    job = defs.resolve_job_def(job_name)
    assert job.name == job_name
    assert job.description


def test_the_jobs_are_exactly_the_named_ones():
    names = {job.name for job in defs.resolve_all_job_defs()}
    assert names - {"__ASSET_JOB"} == set(JOB_NAMES)


def test_every_asset_has_an_owner_kinds_and_a_description():
    specs = defs.resolve_all_asset_specs()
    assert len(specs) == 5  # + connector_topology
    for spec in specs:
        assert spec.owners, spec.key
        assert spec.kinds, spec.key
        assert spec.description and len(spec.description) > 40, spec.key


def test_every_check_targets_an_existing_asset_and_runs_in_the_checks_job():
    asset_keys = set(defs.resolve_all_asset_keys())
    check_keys = set(defs.get_repository_def().asset_checks_defs_by_key)
    assert len(check_keys) == 11  # + the five connector topology checks, the two read-backs
    assert {key.asset_key for key in check_keys} <= asset_keys
    # The schema-change check is per topic partition: the sync's runs report it, the
    # unpartitioned checks job cannot.
    per_topic = {key for key in check_keys if key.name == "schema_change_is_compatible"}
    assert len(per_topic) == 1
    checks_job = defs.resolve_job_def("catalog_checks")
    assert checks_job.asset_layer.asset_graph.asset_check_keys == check_keys - per_topic


def test_every_sensor_and_schedule_targets_an_existing_job():
    repository = defs.get_repository_def()
    assert repository.sensor_defs and repository.schedule_defs
    for sensor in repository.sensor_defs:
        assert {target.job_name for target in sensor.targets} <= set(JOB_NAMES), sensor.name
    for schedule in repository.schedule_defs:
        assert schedule.job_name in JOB_NAMES, schedule.name


def test_each_sync_stage_shows_as_one_asset_of_the_topic_step():
    assert set(STAGE_ASSET_KEYS) == set(Stage)
    assert set(STAGE_ASSET_KEYS.values()) == set(kafka_topic_catalog.keys)
