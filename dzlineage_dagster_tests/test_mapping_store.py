"""The schema -> asset mapping store: read once or by name, written once per topic per run."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from dzlineage_dagster.core.ssm_names import MappingRecord, parameter_name
from dzlineage_dagster.resources import SsmMappingResource
from dzlineage_dagster.sync.mapping_store import MappingStore
from dzlineage_dagster_tests.test_catalog_sync import ssm_calls

PREFIX = "/store-test/mappings"
DOMAIN, PROJECT = "dzd_storetest", "project1"


def scoped_store(legacy_owner=None, domain_id: str = DOMAIN) -> MappingStore:
    return MappingStore(
        SsmMappingResource(),
        PREFIX,
        domain_id=domain_id,
        project_id=PROJECT,
        legacy_owner=legacy_owner,
    )


def record(index: int) -> MappingRecord:
    return MappingRecord(
        schema_arn=f"arn:aws:glue:us-east-1:123456789012:schema/store-test/s{index:02d}",
        topic=f"store.test.t{index:02d}",
        asset_id=f"asset{index:02d}",
        asset_revision="1",
        schema_version=1,
        content_fingerprint=f"content{index}",
        asset_type_revision="1",
        domain_id=DOMAIN,
        project_id=PROJECT,
        registry_arn="arn:aws:glue:us-east-1:123456789012:registry/store-test",
    )


def test_staged_records_are_written_once_on_commit_and_read_back_by_name(sandbox, sandbox_env):
    sandbox.control.reset()
    writer = scoped_store()
    records = [record(i) for i in range(23)]
    for each in records:
        writer.stage(each)
        # A second stage of the same schema (the lineage stage's) replaces the first.
        writer.stage(each)
        writer.commit(each.schema_arn)
        writer.commit(each.schema_arn)  # nothing staged any more: no call
    assert ssm_calls(sandbox.control) == {"PutParameter": 23}

    sandbox.control.clear_calls()
    reader = scoped_store()
    unknown = record(99).schema_arn
    reader.read([r.schema_arn for r in records] + [unknown])
    # Each schema's first-layout name rides along, for the migration.
    assert ssm_calls(sandbox.control) == {"GetParameters": math.ceil(2 * 24 / 10)}
    assert [reader.get(r.schema_arn) for r in records] == records
    assert reader.get(unknown) is None
    assert ssm_calls(sandbox.control) == {"GetParameters": 5}, "get answers from what was read"


def test_the_whole_mapping_is_read_once_and_a_deleted_record_leaves_it(sandbox, sandbox_env):
    sandbox.control.reset()
    writer = scoped_store()
    for each in (record(1), record(2)):
        writer.stage(each)
        writer.commit(each.schema_arn)
    sandbox.control.clear_calls()

    store = scoped_store()
    assert store.get(record(3).schema_arn) is None  # not read by name: the listing answers
    assert store.all() == {r.schema_arn: r for r in (record(1), record(2))}
    store.delete(record(1).schema_arn)
    assert store.all() == {record(2).schema_arn: record(2)}
    # One page of the scope, one of each (empty) first-layout folder.
    assert ssm_calls(sandbox.control) == {"GetParametersByPath": 3, "DeleteParameter": 1}


def test_a_parameter_that_names_another_schema_is_ignored_by_name_too(sandbox, sandbox_env):
    sandbox.control.reset()
    store = scoped_store()
    SsmMappingResource().put(
        store.parameter_name(record(1).schema_arn), record(2).to_parameter_value()
    )
    store.read([record(1).schema_arn])
    assert store.get(record(1).schema_arn) is None


def test_a_bad_prefix_names_its_setting():
    with pytest.raises(Exception, match="DZLINEAGE_SSM_PREFIX"):
        MappingStore(SsmMappingResource(), "no-leading-slash", domain_id=DOMAIN, project_id=PROJECT)


def test_a_bad_domain_id_names_its_setting():
    with pytest.raises(Exception, match="DZLINEAGE_DOMAIN_ID"):
        scoped_store(domain_id="dzd/../x")


def test_another_domain_reads_none_of_this_domains_records(sandbox, sandbox_env):
    sandbox.control.reset()
    writer = scoped_store()
    writer.stage(record(1))
    writer.commit(record(1).schema_arn)
    assert scoped_store(domain_id="dzd_other").all() == {}
    assert scoped_store().all() == {record(1).schema_arn: record(1)}


def test_first_layout_records_move_to_the_scope_only_when_their_asset_is_this_scopes(
    sandbox, sandbox_env
):
    sandbox.control.reset()
    ssm = SsmMappingResource()
    legacy = [replace(record(i), domain_id="", project_id="", registry_arn="") for i in (1, 2)]
    for each in legacy:
        ssm.put(parameter_name(PREFIX, each.schema_arn), each.to_parameter_value())
    assert all(each.is_legacy for each in legacy)
    # Only asset01 is this scope's (the run checks that in DataZone).
    mine = {record(1).asset_id}

    def owner(found):
        return record(1) if found.asset_id in mine else None

    store = scoped_store(legacy_owner=owner)
    assert store.all() == {record(1).schema_arn: record(1)}
    assert store.migrated == {record(1).schema_arn: parameter_name(PREFIX, record(1).schema_arn)}
    left = ssm.parameters_under(PREFIX)
    assert set(left) == {
        store.parameter_name(record(1).schema_arn),
        parameter_name(PREFIX, record(2).schema_arn),  # another domain's: left alone
    }
    assert MappingRecord.from_parameter_value(
        left[store.parameter_name(record(1).schema_arn)]
    ) == record(1)
