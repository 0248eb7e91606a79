"""The schema -> asset mapping store: read once or by name, written once per topic per run."""

from __future__ import annotations

import math

import pytest

from dzlineage_dagster.core.ssm_names import MappingRecord
from dzlineage_dagster.resources import SsmMappingResource
from dzlineage_dagster.sync.mapping_store import MappingStore
from dzlineage_dagster_tests.test_catalog_sync import ssm_calls

PREFIX = "/store-test/mappings"


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
    assert ssm_calls(sandbox.control) == {"PutParameter": 23}

    sandbox.control.clear_calls()
    reader = MappingStore(SsmMappingResource(), PREFIX)
    unknown = record(99).schema_arn
    reader.read([r.schema_arn for r in records] + [unknown])
    assert ssm_calls(sandbox.control) == {"GetParameters": math.ceil(24 / 10)}
    assert [reader.get(r.schema_arn) for r in records] == records
    assert reader.get(unknown) is None
    assert ssm_calls(sandbox.control) == {"GetParameters": 3}, "get answers from what was read"


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
    assert ssm_calls(sandbox.control) == {"GetParametersByPath": 1, "DeleteParameter": 1}


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
