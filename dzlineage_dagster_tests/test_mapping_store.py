"""The schema -> asset mapping store: read once or by name, written once per topic per run.

The tests named for one layout run it alone; the packed layout's own tests (cap, concurrent
writers, migration) follow the one-per-topic layout's."""

from __future__ import annotations

import base64
import hashlib
import json
import math
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest
from botocore.exceptions import ClientError

from dzlineage_dagster.core.mapping.pack import (
    PACK_MARKER,
    ROOT_BUCKET,
    BucketValue,
    decode_bucket,
)
from dzlineage_dagster.core.mapping.ssm_names import MappingRecord, parameter_name
from dzlineage_dagster.resources import SsmMappingResource
from dzlineage_dagster.sandbox.moto_patches.ssm_rules import SsmLimits
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster.sync.catalog.mapping_store import (
    PACK_FOLDER,
    PACKED,
    PER_TOPIC,
    MappingStore,
)
from dzlineage_dagster.sync.errors import SyncError
from dzlineage_dagster_tests.test_catalog_sync import ssm_calls

PREFIX = "/store-test/mappings"
DOMAIN, PROJECT = "dzd_storetest", "project1"


def scoped_store(
    legacy_owner=None, domain_id: str = DOMAIN, layout: str = PER_TOPIC, tier: str = "Standard"
) -> MappingStore:
    return MappingStore(
        SsmMappingResource(),
        PREFIX,
        domain_id=domain_id,
        project_id=PROJECT,
        legacy_owner=legacy_owner,
        layout=layout,
        tier=tier,
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


# --- The packed layout -----------------------------------------------------------------------


def packed_store(**options) -> MappingStore:
    return scoped_store(layout=PACKED, **options)


def realistic(index: int) -> MappingRecord:
    """A record with the sync's SHA-256 fingerprints (what decides how many fit a bucket)."""
    digest = hashlib.sha256(str(index).encode()).hexdigest()
    return replace(
        record(index),
        schema_arn=f"arn:aws:glue:us-east-1:123456789012:schema/store-test/topic-{index:05d}",
        topic=f"store.test.topic{index:05d}",
        content_fingerprint=digest,
        lineage_fingerprint=digest[::-1] + digest,
        registry_token=digest.upper(),
    )


def write(store: MappingStore, *records: MappingRecord) -> None:
    for each in records:
        store.stage(each)
        store.commit(each.schema_arn)


def standard_parameter_count(sandbox) -> int:
    pages = sandbox.client("ssm").get_paginator("describe_parameters").paginate()
    return sum(len(page["Parameters"]) for page in pages)


@pytest.fixture
def small_cap(sandbox, sandbox_env):
    """An emptied account with FOREIGN parameters of other applications under a cap of CAP."""
    sandbox.control.reset()
    sandbox.control.set_ssm_limits(standard_parameters=CAP)
    ssm = sandbox.client("ssm")
    for index in range(FOREIGN):
        ssm.put_parameter(Name=f"/other-app/p{index}", Value="x", Type="String")
    yield
    sandbox.control.set_ssm_limits(**SsmLimits().__dict__)


CAP, FOREIGN = 60, 30


def test_more_topics_than_the_cap_fit_beside_other_applications_parameters(sandbox, small_cap):
    topics = [realistic(i) for i in range(150)]  # five times the room the cap leaves
    write(packed_store(), *topics)
    assert standard_parameter_count(sandbox) <= CAP
    sandbox.control.clear_calls()
    reader = packed_store()
    assert reader.all() == {each.schema_arn: each for each in topics}
    # The whole mapping in a call per ten buckets, not per ten topics.
    assert ssm_calls(sandbox.control)["GetParametersByPath"] < len(topics) / 10 / 2


def test_the_one_per_topic_layout_fails_at_the_cap_and_says_which_setting_helps(sandbox, small_cap):
    store = scoped_store()
    with pytest.raises(SyncError, match="DZLINEAGE_SSM_MAPPING_LAYOUT=packed"):
        write(store, *[realistic(i) for i in range(CAP)])


def test_when_even_the_packed_mapping_has_no_room_the_error_names_the_tier_setting(
    sandbox, small_cap
):
    ssm = sandbox.client("ssm")
    for index in range(FOREIGN, CAP):
        ssm.put_parameter(Name=f"/other-app/p{index}", Value="x", Type="String")
    with pytest.raises(SyncError, match="DZLINEAGE_SSM_TIER=Advanced") as raised:
        write(packed_store(), realistic(1))
    assert "used up" in str(raised.value)
    assert packed_store(tier="Advanced").all() == {}, "nothing half-written"
    write(packed_store(tier="Advanced"), realistic(1))  # the opt-in: advanced buckets
    assert packed_store(tier="Advanced").all() == {realistic(1).schema_arn: realistic(1)}


def test_a_few_topics_cost_one_read_each_and_a_record_moves_nowhere_on_update(sandbox, sandbox_env):
    sandbox.control.reset()
    topics = [realistic(i) for i in range(60)]
    write(packed_store(), *topics)
    sandbox.control.clear_calls()
    reader = packed_store()
    reader.read([topics[7].schema_arn])
    assert ssm_calls(sandbox.control) == {"GetParameters": 1}
    assert reader.get(topics[7].schema_arn) == topics[7]
    updated = replace(topics[7], asset_revision="2")
    write(reader, updated)
    assert ssm_calls(sandbox.control) == {"GetParameters": 1, "PutParameter": 1}
    assert packed_store().all()[updated.schema_arn] == updated


def test_writers_that_overwrite_each_other_s_bucket_lose_no_record(sandbox, sandbox_env):
    """Two runs (a Dagster run beside a headless sync) read the same bucket, then both write
    it: SSM keeps the last write, and the one that overtook the other repairs it."""
    sandbox.control.reset()
    first, second = packed_store(), packed_store()
    first.all(), second.all()
    write(first, realistic(1))
    write(second, realistic(2))  # from a view without realistic(1): SSM's version says so
    write(first, replace(realistic(1), asset_revision="2"))  # and again the other way round
    expected = {realistic(2).schema_arn: realistic(2)}
    expected[realistic(1).schema_arn] = replace(realistic(1), asset_revision="2")
    assert packed_store().all() == expected


def test_a_deletion_overtaken_by_a_stale_writer_stays_deleted(sandbox, sandbox_env):
    sandbox.control.reset()
    write(packed_store(), realistic(1), realistic(2))
    deleter, stale = packed_store(), packed_store()
    deleter.all(), stale.all()
    deleter.delete(realistic(1).schema_arn)
    write(stale, replace(realistic(2), asset_revision="9"))  # its view still holds 1
    assert packed_store().all() == {
        realistic(2).schema_arn: replace(realistic(2), asset_revision="9")
    }


def test_threads_of_several_runs_writing_at_once_lose_no_record(sandbox, sandbox_env):
    sandbox.control.reset()
    runs = [packed_store() for _ in range(3)]
    for run in runs:
        run.all()
    work = [(runs[i % 3], realistic(i)) for i in range(60)]
    with ThreadPoolExecutor(max_workers=9) as pool:
        list(pool.map(lambda job: write(*job), work))
    assert packed_store().all() == {each.schema_arn: each for _, each in work}


def test_one_per_topic_records_move_into_buckets_without_loss(sandbox, sandbox_env):
    sandbox.control.reset()
    ssm = SsmMappingResource()
    old = [realistic(i) for i in range(30)]
    write(scoped_store(), *old[:25])  # the one-per-topic layout of this scope
    first_layout = [
        replace(each, domain_id="", project_id="", registry_arn="") for each in old[25:]
    ]
    for each in first_layout:
        ssm.put(parameter_name(PREFIX, each.schema_arn), each.to_parameter_value())
    # The run's DataZone check answers the scoped record of an asset of its own.
    owned = {each.asset_id: each for each in old}
    store = packed_store(legacy_owner=lambda found: owned.get(found.asset_id))
    expected = {each.schema_arn: each for each in old}
    assert store.all() == expected
    assert set(store.migrated) == set(expected)
    left = ssm.parameters_under(PREFIX)
    assert all(f"/{PACK_FOLDER}/" in name for name in left), "the old parameters are gone"
    assert packed_store().all() == expected
    # A writer still on the old layout writes after the move: its newer record wins.
    newer = replace(old[3], asset_revision="7")
    write(scoped_store(), newer)
    assert packed_store().all()[newer.schema_arn] == newer


def test_a_dry_run_reads_old_records_as_moved_and_writes_nothing(sandbox, sandbox_env):
    sandbox.control.reset()
    write(scoped_store(), realistic(1))
    sandbox.control.clear_calls()
    store = packed_store()
    store.read_only = True
    assert store.all() == {realistic(1).schema_arn: realistic(1)}
    assert set(ssm_calls(sandbox.control)) == {"GetParametersByPath"}


# --- Reading a chain level by level (the buckets' overflow and migrated flags) ---------------


def read_by_name(records: list[MappingRecord]) -> dict[str, MappingRecord | None]:
    """What a fresh run reading these schemas by name (as the version sweep does) finds."""
    reader = packed_store()
    reader.read([each.schema_arn for each in records])
    return {each.schema_arn: reader.get(each.schema_arn) for each in records}


def root_value(store: MappingStore) -> BucketValue:
    value = SsmMappingResource().parameters_named([f"{store.prefix}/{PACK_FOLDER}/{ROOT_BUCKET}"])
    return decode_bucket(next(iter(value.values())))


def test_a_small_store_is_read_twenty_topics_a_call_once_its_records_were_moved(
    sandbox, sandbox_env
):
    sandbox.control.reset()
    present = [realistic(i) for i in range(8)]  # one bucket's worth: the root holds them all
    absent = [realistic(i) for i in range(100, 112)]
    write(packed_store(), *present)
    # Until a whole read has moved the one-per-topic records, their names are read too: the
    # root and 9 spare names in the first call, the 40 - 5 left in four more.
    sandbox.control.clear_calls()
    expected = {each.schema_arn: each for each in present} | dict.fromkeys(
        each.schema_arn for each in absent
    )
    assert read_by_name(present + absent) == expected
    assert ssm_calls(sandbox.control) == {"GetParameters": 5}
    packed_store().all()  # a whole read: nothing was left to move, the root says so
    assert root_value(packed_store()) == BucketValue(root_value(packed_store()).pack, False, True)
    sandbox.control.clear_calls()
    assert read_by_name(present + absent) == expected
    assert ssm_calls(sandbox.control) == {"GetParameters": 1}  # the root did not overflow


def test_a_store_written_before_the_flags_is_read_below_every_bucket(sandbox, sandbox_env):
    """Its values say nothing of overflow: each reads as overflowed, so no record is missed."""
    sandbox.control.reset()
    topics = [realistic(i) for i in range(150)]  # three levels of buckets
    write(packed_store(), *topics)
    ssm = SsmMappingResource()
    for name, value in ssm.parameters_under(f"{packed_store().prefix}/{PACK_FOLDER}").items():
        document = json.loads(zlib.decompress(base64.b64decode(value.removeprefix(PACK_MARKER))))
        del document["o"], document["m"]
        text = json.dumps(document, separators=(",", ":")).encode()
        ssm.put(name, PACK_MARKER + base64.b64encode(zlib.compress(text, 9)).decode())
    assert read_by_name(topics) == {each.schema_arn: each for each in topics}


def test_runs_racing_on_a_bucket_keep_its_overflow_flag_so_reads_by_name_miss_nothing(
    sandbox, sandbox_env
):
    """A run that read the root before another filled it writes the root from its stale view:
    the merge of the version it overtook keeps the flag (once set, a flag stays), so the
    records the other run put deeper are still read by name."""
    sandbox.control.reset()
    stale, filler = packed_store(), packed_store()
    write(stale, realistic(0))  # the root, not overflowed, as the stale run knows it
    filler.all()
    crowd = [realistic(i) for i in range(1, 40)]
    write(filler, *crowd)  # the root fills: records go deeper, the root is marked
    assert root_value(filler).overflowed
    updated = replace(realistic(0), asset_revision="2")
    write(stale, updated)  # overtakes the filler's versions of the root, then repairs them
    assert root_value(stale).overflowed
    assert read_by_name([updated, *crowd]) == {e.schema_arn: e for e in [updated, *crowd]}


def test_threads_of_racing_runs_leave_every_record_readable_by_name(sandbox, sandbox_env):
    sandbox.control.reset()
    runs = [packed_store() for _ in range(3)]
    work = [(runs[i % 3], realistic(i)) for i in range(80)]
    with ThreadPoolExecutor(max_workers=9) as pool:
        list(pool.map(lambda job: write(*job), work))
    topics = [each for _, each in work]
    assert read_by_name(topics) == {each.schema_arn: each for each in topics}


def test_a_record_moving_down_its_chain_is_never_nowhere_whichever_write_a_crash_stops(
    sandbox, sandbox_env
):
    """An update too large for the full root moves the record to the root's child: its new
    copy is written first, the root's old copy dropped after. A run stopped in between leaves
    a copy readable by name (the root does not say overflowed yet), never no record."""
    sandbox.control.reset()
    topics = [realistic(i) for i in range(18)]  # about the root's worth
    write(packed_store(), *topics)
    packed_store().all()  # marks the root migrated: its next write is a write of this test's
    moved = topics[0]
    assert set(root_value(packed_store()).pack) == {each.schema_arn for each in topics}
    noise = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(30))
    grown = replace(moved, lineage_fingerprint=noise)  # too large for the root beside the rest
    sandbox.control.set_faults(
        FaultRule(service="ssm", operation="PutParameter", kind="invalid", skip=1)
    )
    try:
        with pytest.raises(ClientError):
            write(packed_store(), grown)
    finally:
        sandbox.control.clear_faults()
    assert moved.schema_arn in root_value(packed_store()).pack, "the root was left as it was"
    # The old copy, or the new one if the reader's spare names reached the child: not none.
    assert read_by_name([moved])[moved.schema_arn] in (moved, grown)
    write(packed_store(), grown)  # the next run moves it
    assert root_value(packed_store()).overflowed
    assert moved.schema_arn not in root_value(packed_store()).pack
    assert read_by_name([*topics[1:], grown]) == {e.schema_arn: e for e in [*topics[1:], grown]}


def test_the_root_says_migrated_only_after_a_whole_read_that_could_move_every_old_record(
    sandbox, sandbox_env
):
    sandbox.control.reset()
    write(packed_store(), realistic(1))
    old = replace(realistic(2), domain_id="", project_id="", registry_arn="")
    SsmMappingResource().put(parameter_name(PREFIX, old.schema_arn), old.to_parameter_value())
    # Without the DataZone check a first-layout record may be this scope's: it stays, unmarked.
    assert packed_store().all() == {realistic(1).schema_arn: realistic(1)}
    assert not root_value(packed_store()).migrated
    store = packed_store(legacy_owner=lambda found: realistic(2))
    assert set(store.all()) == {realistic(1).schema_arn, realistic(2).schema_arn}
    assert root_value(packed_store()).migrated
