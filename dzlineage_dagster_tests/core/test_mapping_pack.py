"""The packed mapping layout: encoding, merge, placement and the parameter estimate."""

from __future__ import annotations

import base64
import itertools
import json
import math
import zlib
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dzlineage_dagster.core.mapping.pack import (
    GROWTH_ROOM,
    MAX_DEPTH,
    PACK_MARKER,
    ROOT_BUCKET,
    TOMBSTONE_LIFETIME_MS,
    BucketChange,
    BucketValue,
    PackEntry,
    PackFull,
    bucket_chain,
    decode_bucket,
    decode_pack,
    encode_pack,
    fits,
    is_bucket_id,
    merge_packs,
    parameters_needed,
    place,
    records_of,
    without_expired_tombstones,
)
from dzlineage_dagster.core.mapping.ssm_names import (
    MAX_PARAMETER_VALUE_LENGTH,
    CorruptMappingValue,
    MappingRecord,
)
from dzlineage_dagster.sandbox.moto_patches.ssm_rules import parameter_name_problems

TEXT = st.text(max_size=40)
STAMPS = st.integers(min_value=0, max_value=2**53)


@st.composite
def records(draw: st.DrawFn, schema_arn: str | None = None) -> MappingRecord:
    return MappingRecord(
        schema_arn=schema_arn if schema_arn is not None else draw(st.text(min_size=1)),
        topic=draw(TEXT),
        asset_id=draw(TEXT),
        asset_revision=draw(TEXT),
        schema_version=draw(st.integers(min_value=-(2**63), max_value=2**63)),
        content_fingerprint=draw(TEXT),
        asset_type_revision=draw(TEXT),
        lineage_fingerprint=draw(TEXT),
        registry_token=draw(TEXT),
        domain_id=draw(TEXT),
        project_id=draw(TEXT),
        registry_arn=draw(TEXT),
        published_revision=draw(TEXT),
    )


@st.composite
def entries(draw: st.DrawFn, schema_arn: str) -> PackEntry:
    record = draw(st.one_of(st.none(), records(schema_arn)))
    return PackEntry(draw(STAMPS), record)


@st.composite
def packs(draw: st.DrawFn, arns: st.SearchStrategy[str] | None = None) -> dict[str, PackEntry]:
    keys = draw(
        st.lists(arns if arns is not None else st.text(min_size=1), max_size=6, unique=True)
    )
    return {arn: draw(entries(arn)) for arn in keys}


#: A few ARNs, so that packs drawn with them overlap.
SHARED_ARNS = st.sampled_from([f"arn:aws:glue:us-east-1:1:schema/r/s{i}" for i in range(4)])


def realistic_record(index: int) -> MappingRecord:
    # SHA-256 hex fingerprints, as the sync writes them (they dominate a record's packed size).
    def hexdigest(salt: str) -> str:
        return f"{hash((index, salt)) & (2**256 - 1):064x}"

    return MappingRecord(
        schema_arn=f"arn:aws:glue:us-east-1:123456789012:schema/cdc/db.inventory.t{index}-value",
        topic=f"db.inventory.t{index}",
        asset_id=f"a{index:013d}",
        asset_revision="2",
        schema_version=3,
        content_fingerprint=hexdigest("content"),
        asset_type_revision="4",
        lineage_fingerprint=hexdigest("lineage") + hexdigest("base"),
        registry_token=hexdigest("token"),
        domain_id="dzd_abcdef123456",
        project_id="prj123456789",
        registry_arn="arn:aws:glue:us-east-1:123456789012:registry/cdc",
    )


@settings(max_examples=200)
@given(packs())
def test_a_pack_round_trips_whatever_its_schema_arns_and_fields(pack):
    text = encode_pack(pack)
    assert text.isascii() and "{{" not in text  # AWS refuses {{ }} in a value
    assert decode_pack(text) == pack


@given(packs(), st.booleans(), st.booleans())
def test_a_buckets_flags_round_trip_with_its_pack(pack, overflowed, migrated):
    text = encode_pack(pack, overflowed=overflowed, migrated=migrated)
    assert decode_bucket(text) == BucketValue(pack, overflowed, migrated)
    assert fits(pack, len(text), overflowed=overflowed, migrated=migrated)


def packed_document(document: dict) -> str:
    return PACK_MARKER + base64.b64encode(zlib.compress(json.dumps(document).encode())).decode()


def test_a_value_written_before_the_flags_reads_as_overflowed_and_not_migrated():
    """Its children may hold records (nothing said otherwise when it was written)."""
    record = realistic_record(1)
    document = json.loads(
        zlib.decompress(base64.b64decode(encode_pack({}).removeprefix(PACK_MARKER)))
    )
    document.update(r=[[5, *(getattr(record, name) for name in document["f"])]])
    del document["o"], document["m"]
    value = decode_bucket(packed_document(document))
    assert value == BucketValue({record.schema_arn: PackEntry(5, record)}, True, False)


@pytest.mark.parametrize("flags", [{"o": 2, "m": 0}, {"o": 0, "m": "yes"}, {"o": None, "m": 1}])
def test_a_flag_other_than_0_or_1_is_refused(flags):
    with pytest.raises(CorruptMappingValue, match="flags"):
        decode_bucket(packed_document({"f": [], "r": [], "t": [], **flags}))


@given(packs(SHARED_ARNS), packs(SHARED_ARNS), packs(SHARED_ARNS))
def test_merging_is_order_free_so_any_writer_may_merge_any_versions(a, b, c):
    assert merge_packs(a, b) == merge_packs(b, a)
    assert merge_packs(merge_packs(a, b), c) == merge_packs(a, merge_packs(b, c))
    assert merge_packs(a, a) == a
    merged = merge_packs(a, b)
    for arn, entry in merged.items():
        assert entry.stamp == max(p[arn].stamp for p in (a, b) if arn in p)


def test_a_tombstone_beats_the_record_it_deletes_and_a_newer_record_beats_it():
    record = realistic_record(1)
    live, deleted, again = PackEntry(5, record), PackEntry(6, None), PackEntry(7, record)
    arn = record.schema_arn
    assert records_of(merge_packs({arn: live}, {arn: deleted})) == {}
    assert records_of(merge_packs({arn: again}, {arn: deleted})) == {arn: record}
    assert merge_packs({arn: PackEntry(5, None)}, {arn: live})[arn].record is None  # tie


def test_expired_tombstones_go_and_live_records_stay():
    record = realistic_record(1)
    pack = {"gone": PackEntry(0, None), "recent": PackEntry(10, None), "x": PackEntry(0, record)}
    assert set(without_expired_tombstones(pack, TOMBSTONE_LIFETIME_MS + 5)) == {"recent", "x"}


@given(st.text(min_size=1))
def test_a_chain_runs_from_the_root_down_in_valid_ssm_names(schema_arn):
    chain = bucket_chain(schema_arn)
    assert len(chain) == MAX_DEPTH + 1 <= 10  # one GetParameters call reads a whole chain
    assert chain[0] == ROOT_BUCKET
    for parent, child in itertools.pairwise(chain):
        assert child.startswith(parent) and len(child) == len(parent) + 1
    assert all(is_bucket_id(bucket) for bucket in chain)
    assert not parameter_name_problems(f"/dzlineage/dzd_1/prj_1/p/{chain[-1]}")


@pytest.mark.parametrize(
    "text", ["", "{}", "dzm1:not base64!", "dzm1:" + "QUFB", "dzm1:eJzLSM3JyQ"]
)
def test_a_value_that_is_not_a_pack_is_refused_with_a_reason(text):
    with pytest.raises(CorruptMappingValue):
        decode_pack(text)


@pytest.mark.parametrize(
    "document",
    [
        {"f": ["schema_arn"], "r": [["not a stamp", "arn"]], "t": []},
        {"f": ["schema_arn", "topic"], "r": [[1, "arn"]], "t": []},  # a value short
        {"f": ["schema_arn", "mood"], "r": [[1, "arn", "happy"]], "t": []},
        {"f": [], "r": [], "t": [[3, 1]]},  # a tombstone's ARN must be text
        {"f": [], "r": []},
    ],
)
def test_a_pack_with_a_malformed_entry_is_refused(document):
    text = PACK_MARKER + base64.b64encode(zlib.compress(json.dumps(document).encode())).decode()
    with pytest.raises(CorruptMappingValue):
        decode_pack(text)


#: A small value limit: a handful of records a bucket, so levels fill and spill.
SMALL_LIMIT = 1200


def placed(order: list[int]) -> tuple[dict[str, dict[str, PackEntry]], set[str]]:
    """The buckets, and those marked overflowed, after placing the records of ``order`` one
    after another as the store does (an index seen again: an update)."""
    buckets: dict[str, dict[str, PackEntry]] = {}
    overflowed: set[str] = set()
    for stamp, index in enumerate(order):
        record = realistic_record(index)
        chain = bucket_chain(record.schema_arn)
        changes = place(
            [buckets.get(b, {}) for b in chain],
            record.schema_arn,
            PackEntry(stamp, record),
            SMALL_LIMIT,
            overflowed=[b in overflowed for b in chain],
        )
        for depth, change in changes.items():
            buckets[chain[depth]] = change.applied_to(buckets.get(chain[depth], {}))
            if change.overflowed:
                overflowed.add(chain[depth])
    return buckets, overflowed


INDEXES = st.lists(st.integers(min_value=0, max_value=400), min_size=1, max_size=60, unique=True)


@settings(max_examples=50)
@given(INDEXES)
def test_placing_records_keeps_every_bucket_within_the_value_limit(indexes):
    """Whatever the records, each bucket stays under the limit and a record is found newest in
    its chain; a record moved by an update leaves no copy behind."""
    buckets, overflowed = placed(indexes * 2)  # each record twice: the second is an update
    assert all(fits(pack, SMALL_LIMIT, overflowed=b in overflowed) for b, pack in buckets.items())
    for index in indexes:
        arn = realistic_record(index).schema_arn
        holders = [b for b in bucket_chain(arn) if arn in buckets.get(b, {})]
        assert len(holders) == 1
        assert buckets[holders[0]][arn].record == realistic_record(index)


def reachable(
    buckets: dict[str, dict[str, PackEntry]], overflowed: set[str], schema_arn: str
) -> list[str]:
    """The buckets of the chain a reader walking it level by level reads: down to the first
    that did not overflow (or is absent)."""
    read = []
    for bucket in bucket_chain(schema_arn):
        if bucket not in buckets:
            break
        read.append(bucket)
        if bucket not in overflowed:
            break
    return read


@settings(max_examples=50)
@given(INDEXES, st.randoms(use_true_random=False))
def test_a_reader_walking_a_chain_only_below_overflowed_buckets_finds_every_record(indexes, rng):
    """Records placed and updated in any order: each is found in the buckets a reader reads
    (a bucket above a record is marked overflowed by the write that put it there), and a
    bucket that never had to pass a record down is not marked (its children are not read)."""
    buckets, overflowed = placed(indexes + rng.sample(indexes, len(indexes)))
    for index in indexes:
        arn = realistic_record(index).schema_arn
        assert [b for b in reachable(buckets, overflowed, arn) if arn in buckets[b]]
    holding = {bucket for bucket, pack in buckets.items() if pack}
    parents = {bucket[:-1] for bucket in holding if bucket != ROOT_BUCKET}
    assert overflowed == parents, "marked exactly the buckets with records below them"


def test_placing_in_the_root_marks_nothing_and_placing_deeper_marks_each_bucket_above():
    record = realistic_record(1)
    arn, entry = record.schema_arn, PackEntry(1, record)
    assert place([{}] * 8, arn, entry, MAX_PARAMETER_VALUE_LENGTH) == {
        0: BucketChange({arn: entry})
    }
    full = {r.schema_arn: PackEntry(1, r) for r in map(realistic_record, range(2, 6))}
    limit = len(encode_pack(full, overflowed=True))  # the root and its child are full
    changes = place([full, full] + [{}] * 6, arn, entry, limit, overflowed=[True])
    assert changes == {
        1: BucketChange({}, overflowed=True),  # the root was marked already
        2: BucketChange({arn: entry}),
    }


def test_a_record_too_large_for_any_bucket_is_refused_by_name():
    big = realistic_record(1)
    big = replace(big, lineage_fingerprint="".join(map(str, range(3000))))
    with pytest.raises(PackFull, match=big.schema_arn):
        place([{}] * (MAX_DEPTH + 1), big.schema_arn, PackEntry(1, big), MAX_PARAMETER_VALUE_LENGTH)


def test_a_tombstone_replaces_every_copy_and_needs_no_bucket_where_there_is_none():
    record = realistic_record(1)
    arn = record.schema_arn
    chain = [{}, {arn: PackEntry(1, record)}, {}, {arn: PackEntry(2, record)}] + [{}] * 4
    changes = place(chain, arn, PackEntry(3, None), MAX_PARAMETER_VALUE_LENGTH)
    assert set(changes) == {1, 3}
    assert place([{}] * 8, arn, PackEntry(3, None), MAX_PARAMETER_VALUE_LENGTH) == {}


def test_the_estimate_is_one_parameter_for_a_few_topics_and_a_fraction_for_many():
    assert parameters_needed(0) == 0
    assert parameters_needed(1) == 1
    per_bucket = (MAX_PARAMETER_VALUE_LENGTH - GROWTH_ROOM) // 290
    assert parameters_needed(per_bucket) == 1
    assert parameters_needed(per_bucket + 1) > 1
    needed = parameters_needed(20_000)
    assert math.ceil(20_000 / per_bucket) <= needed < 20_000 / 5
    assert parameters_needed(20_000, "Advanced") < needed
    assert needed + 2_000 < 10_000, "20,000 topics beside 2,000 foreign parameters fit the cap"


def test_the_estimate_holds_for_real_records():
    """The typical size the estimate assumes is not smaller than real records pack to."""
    records = [realistic_record(i) for i in range(14)]
    pack = {r.schema_arn: PackEntry(1_733_300_000_000 + i, r) for i, r in enumerate(records)}
    assert len(encode_pack(pack)) / len(records) <= 290


def test_records_read_from_a_pack_share_their_scope_strings_and_hold_no_instance_dict():
    """A whole read holds every record of the store: the scope and asset type revision most
    records repeat are one string each, and a record has no per-instance dict."""
    pack = {r.schema_arn: PackEntry(1, r) for r in map(realistic_record, range(3))}
    first, second, third = (e.record for e in decode_bucket(encode_pack(pack)).pack.values())
    for field_name in ("domain_id", "project_id", "registry_arn", "asset_type_revision"):
        assert getattr(first, field_name) is getattr(second, field_name)
        assert getattr(second, field_name) is getattr(third, field_name)
    assert not hasattr(first, "__dict__")
