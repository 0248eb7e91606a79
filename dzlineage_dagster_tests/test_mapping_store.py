"""The schema -> asset mapping store: read once or by name, written once per topic per run."""

from __future__ import annotations

import math

import pytest

from dzlineage_dagster.core.ssm_names import MappingRecord
from dzlineage_dagster.resources import LineageSyncResource, SsmMappingResource
from dzlineage_dagster.sandbox.faults import FaultRule
from dzlineage_dagster.sync.custom_types import ensure_custom_types
from dzlineage_dagster.sync.mapping_store import MappingStore
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.runner import Stage, sync_topic
from dzlineage_dagster_tests.platform import fresh_platform
from dzlineage_dagster_tests.test_catalog_sync import table_topics

PREFIX = "/store-test/mappings"


@pytest.fixture
def platform(sandbox, monkeypatch):
    platform = fresh_platform(sandbox, monkeypatch)
    yield platform
    sandbox.control.clear_faults()


def record(index: int) -> MappingRecord:
    return MappingRecord(
        schema_arn=f"arn:aws:glue:us-east-1:123456789012:schema/store-test/s{index:02d}",
        topic=f"store.test.t{index:02d}",
        asset_id=f"asset{index:02d}",
        asset_revision="1",
        schema_version=1,
        content_fingerprint=f"content{index}",
        asset_type_revision="1",
    )


def ssm_calls(sandbox) -> dict[str, int]:
    return {op: n for (service, op), n in sandbox.control.call_counts().items() if service == "ssm"}


def test_staged_records_are_written_once_on_commit_and_read_back_by_name(sandbox, sandbox_env):
    sandbox.control.reset()
    writer = MappingStore(SsmMappingResource(), PREFIX)
    records = [record(i) for i in range(23)]
    for each in records:
        writer.stage(each)
        # A second stage of the same schema (the lineage stage's) replaces the first.
        writer.stage(each)
        writer.commit(each.schema_arn)
        writer.commit(each.schema_arn)  # nothing staged any more: no call
    assert ssm_calls(sandbox) == {"PutParameter": 23}

    sandbox.control.clear_calls()
    reader = MappingStore(SsmMappingResource(), PREFIX)
    unknown = record(99).schema_arn
    reader.read([r.schema_arn for r in records] + [unknown])
    assert ssm_calls(sandbox) == {"GetParameters": math.ceil(24 / 10)}
    assert [reader.get(r.schema_arn) for r in records] == records
    assert reader.get(unknown) is None
    assert ssm_calls(sandbox) == {"GetParameters": 3}, "get answers from what was read"


def test_the_whole_mapping_is_read_once_and_a_deleted_record_leaves_it(sandbox, sandbox_env):
    sandbox.control.reset()
    writer = MappingStore(SsmMappingResource(), PREFIX)
    for each in (record(1), record(2)):
        writer.stage(each)
        writer.commit(each.schema_arn)
    sandbox.control.clear_calls()

    store = MappingStore(SsmMappingResource(), PREFIX)
    assert store.get(record(3).schema_arn) is None  # not read by name: the listing answers
    assert store.all() == {r.schema_arn: r for r in (record(1), record(2))}
    store.delete(record(1).schema_arn)
    assert store.all() == {record(2).schema_arn: record(2)}
    assert ssm_calls(sandbox) == {"GetParametersByPath": 1, "DeleteParameter": 1}


def test_a_parameter_that_names_another_schema_is_ignored_by_name_too(sandbox, sandbox_env):
    sandbox.control.reset()
    store = MappingStore(SsmMappingResource(), PREFIX)
    SsmMappingResource().put(
        store.parameter_name(record(1).schema_arn), record(2).to_parameter_value()
    )
    store.read([record(1).schema_arn])
    assert store.get(record(1).schema_arn) is None


def test_a_bad_prefix_names_its_setting():
    with pytest.raises(Exception, match="DZLINEAGE_SSM_PREFIX"):
        MappingStore(SsmMappingResource(), "no-leading-slash")


def test_the_first_sync_writes_each_topic_mapping_once(platform):
    assert platform.sync().success
    # The asset stage and the lineage stage both change a new topic's record: one write.
    assert ssm_calls(platform.sandbox)["PutParameter"] == len(table_topics(platform))


def test_a_run_over_one_topic_reads_only_that_topics_mapping(platform):
    assert platform.sync().success
    topic = table_topics(platform)[0]
    platform.register_new_version(topic, "read_by_name")
    platform.control.clear_calls()
    assert platform.sync([topic]).success
    assert ssm_calls(platform.sandbox) == {"GetParameters": 1, "PutParameter": 1}


def test_a_failed_mapping_write_fails_the_stage_whose_change_it_held(platform):
    run = SyncRun(LineageSyncResource.with_settings(platform.settings))
    ensure_custom_types(run)
    topic = table_topics(platform)[0]
    platform.control.set_faults(
        FaultRule(service="ssm", operation="PutParameter", kind="server-error")
    )
    outcome = sync_topic(run, topic)
    assert outcome.failed_stage is Stage.ASSET and "PutParameter" in outcome.error
    assert outcome.completed == {Stage.SCHEMA}
    assert not run.mappings.is_staged(platform.schema_arn(topic))

    platform.control.clear_faults()
    rerun = sync_topic(SyncRun(LineageSyncResource.with_settings(platform.settings)), topic)
    assert rerun.ok and rerun.completed == set(Stage)
    # The rerun's CreateAsset replayed the crashed one's client token: one asset, now mapped.
    assert rerun.asset.action == "created"
    assert rerun.asset.record.asset_id == outcome.asset.record.asset_id
