from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dzlineage_dagster.core.ssm_names import (
    CorruptMappingValue,
    MappingRecord,
    parameter_name,
    schema_arn_from_parameter_name,
    validate_prefix,
)
from dzlineage_dagster.sandbox.moto_patches.ssm_rules import parameter_name_problems

PREFIX = "/dzlineage/test"
REGION = "us-east-1"
ACCOUNT = "123456789012"

GSR_NAME = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_$#.",
    min_size=1,
    max_size=255,
)
REGIONS = st.sampled_from(["us-east-1", "eu-central-1", "ap-southeast-5", "us-gov-west-1"])
ACCOUNTS = st.from_regex(r"\A[0-9]{12}\Z")


@st.composite
def gsr_schema_arns(draw: st.DrawFn) -> str:
    return f"arn:aws:glue:{draw(REGIONS)}:{draw(ACCOUNTS)}:schema/{draw(GSR_NAME)}/{draw(GSR_NAME)}"


ANY_ARN = st.one_of(st.text(min_size=1), gsr_schema_arns())


def gsr_arn(registry: str, schema: str) -> str:
    return f"arn:aws:glue:{REGION}:{ACCOUNT}:schema/{registry}/{schema}"


@settings(max_examples=200, deadline=None)
@given(ANY_ARN)
def test_every_name_is_accepted_by_ssm(schema_arn: str) -> None:
    name = parameter_name(PREFIX, schema_arn)
    assert parameter_name_problems(name) == []


@settings(max_examples=200, deadline=None)
@given(ANY_ARN)
def test_readable_names_decode_to_their_arn_and_hash_names_to_none(schema_arn: str) -> None:
    name = parameter_name(PREFIX, schema_arn)
    decoded = schema_arn_from_parameter_name(PREFIX, name)
    if name.startswith(f"{PREFIX}/s/"):
        assert decoded == schema_arn
    else:
        assert name.startswith(f"{PREFIX}/h/")
        assert decoded is None


@settings(max_examples=200, deadline=None)
@given(ANY_ARN, ANY_ARN)
def test_distinct_arns_get_distinct_names(first: str, second: str) -> None:
    if first != second:
        assert parameter_name(PREFIX, first) != parameter_name(PREFIX, second)


@settings(max_examples=100, deadline=None)
@given(ANY_ARN)
def test_names_are_deterministic_and_one_level_below_the_namespace(schema_arn: str) -> None:
    name = parameter_name(PREFIX, schema_arn)
    assert parameter_name(PREFIX, schema_arn) == name
    assert name.count("/") == PREFIX.count("/") + 2


@pytest.mark.parametrize(
    ("schema_name", "escaped"),
    [
        ("__debezium-heartbeat.cdc", "_5F_5Fdebezium-heartbeat.cdc"),
        ("a__b", "a_5F_5Fb"),
        ("x$y#z", "x_24y_23z"),
    ],
)
def test_hard_schema_names_are_escaped_readably_and_round_trip(
    schema_name: str, escaped: str
) -> None:
    schema_arn = gsr_arn("cdc-registry", schema_name)
    name = parameter_name(PREFIX, schema_arn)
    assert name == (
        f"{PREFIX}/s/arn_3Aaws_3Aglue_3Aus-east-1_3A123456789012_3Aschema_2Fcdc-registry_2F"
        + escaped
    )
    assert schema_arn_from_parameter_name(PREFIX, name) == schema_arn


def test_underscore_sequences_do_not_collide_with_escapes() -> None:
    # '_' escapes to '_5F', so a literal "_5F" in an ARN must stay distinguishable from '_'.
    arns = [gsr_arn("r", name) for name in ("a_b", "a_5Fb", "a__b", "a_5F_5Fb", "a:b")]
    names = [parameter_name(PREFIX, arn) for arn in arns]
    assert len(set(names)) == len(names)
    assert [schema_arn_from_parameter_name(PREFIX, name) for name in names] == arns


def test_names_differing_only_in_case_stay_distinct() -> None:
    upper, lower = gsr_arn("r", "Orders-Value"), gsr_arn("r", "orders-value")
    assert parameter_name(PREFIX, upper) != parameter_name(PREFIX, lower)
    assert schema_arn_from_parameter_name(PREFIX, parameter_name(PREFIX, upper)) == upper


def test_longest_gsr_names_that_fit_stay_readable() -> None:
    schema_arn = gsr_arn("r" * 255, "s" * 255)
    name = parameter_name(PREFIX, schema_arn)
    assert name.startswith(f"{PREFIX}/s/")
    assert parameter_name_problems(name) == []


def test_arn_too_long_to_escape_gets_the_fixed_length_hash_form() -> None:
    schema_arn = gsr_arn("$" * 255, "#" * 255)
    name = parameter_name(PREFIX, schema_arn)
    assert name.startswith(f"{PREFIX}/h/")
    assert len(name) == len(f"{PREFIX}/h/") + 64
    assert parameter_name_problems(name) == []
    assert schema_arn_from_parameter_name(PREFIX, name) is None


def test_lone_surrogates_round_trip() -> None:
    schema_arn = "arn\udc80x"
    name = parameter_name(PREFIX, schema_arn)
    assert schema_arn_from_parameter_name(PREFIX, name) == schema_arn


def test_empty_arn_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        parameter_name(PREFIX, "")


@pytest.mark.parametrize(
    "name",
    [
        "/other/prefix/s/abc",  # another prefix
        f"{PREFIX}/s/",  # nothing encoded
        f"{PREFIX}/s/_3a",  # lower-case hex is not what the encoder writes
        f"{PREFIX}/s/_41",  # 'A' escaped although it never is
        f"{PREFIX}/s/ab_4",  # truncated escape
        f"{PREFIX}/s/a_b",  # '_' not followed by two hex digits
        f"{PREFIX}/s/_FF",  # not UTF-8
        f"{PREFIX}/s/a/b",  # an extra level
        f"{PREFIX}/x/abc",  # unknown sub-namespace
        f"{PREFIX}/h/" + "0" * 64,  # hash form: the ARN is in the value
    ],
)
def test_names_the_encoder_would_not_write_decode_to_none(name: str) -> None:
    assert schema_arn_from_parameter_name(PREFIX, name) is None


@pytest.mark.parametrize("prefix", ["/dzlineage", "/dz/prod_1.x-y", "/" + "/".join("a" * 13)])
def test_valid_prefixes(prefix: str) -> None:
    validate_prefix(prefix)


@pytest.mark.parametrize(
    ("prefix", "reason"),
    [
        ("dzlineage", "must start with '/'"),
        ("/dzlineage/", "invalid levels"),
        ("/dz//lineage", "invalid levels"),
        ("/dz lineage", "invalid levels"),
        ("/dz:lineage", "invalid levels"),
        ("/", "invalid levels"),
        ("/aws/lineage", "reserves"),
        ("/AWSlineage", "reserves"),
        ("/Ssm-lineage", "reserves"),
        ("/" + "/".join("a" * 14), "levels"),
        ("/" + "a" * 900, "too long"),
    ],
)
def test_invalid_prefixes_are_refused_with_the_reason(prefix: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        validate_prefix(prefix)


RECORD = MappingRecord(
    schema_arn=gsr_arn("r", "cdc.public.orders-value"),
    topic="cdc.public.orders",
    asset_id="asset1234",
    asset_revision="3",
    schema_version=7,
    content_fingerprint="f" * 64,
    asset_type_revision="2",
)

RECORDS = st.builds(
    MappingRecord,
    schema_arn=ANY_ARN,
    topic=st.text(max_size=255),
    asset_id=st.text(max_size=36),
    asset_revision=st.text(max_size=64),
    schema_version=st.integers(min_value=1, max_value=100_000),
    content_fingerprint=st.text(max_size=64),
    asset_type_revision=st.text(max_size=64),
    lineage_fingerprint=st.text(max_size=64),
)


@settings(max_examples=200, deadline=None)
@given(RECORDS)
def test_mapping_records_round_trip_through_the_parameter_value(record: MappingRecord) -> None:
    try:
        value = record.to_parameter_value()
    except ValueError as error:
        assert "standard-tier limit" in str(error)
        return
    assert len(value) <= 4096
    assert value.isascii()
    assert MappingRecord.from_parameter_value(value) == record


def test_mapping_value_is_compact_json() -> None:
    value = RECORD.to_parameter_value()
    assert ", " not in value and ": " not in value
    assert '"schema_version":7' in value


def test_mapping_value_over_the_standard_tier_is_refused() -> None:
    record = dataclasses.replace(RECORD, topic="t" * 4000)
    with pytest.raises(ValueError, match="standard-tier limit of 4096"):
        record.to_parameter_value()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("asset1234", "not JSON"),
        ("[1, 2]", "JSON object, not list"),
        ('{"schema_arn": "x"}', "missing keys"),
        (RECORD.to_parameter_value()[:-1] + ',"extra":1}', "unknown keys \\['extra'\\]"),
        (
            RECORD.to_parameter_value().replace('"schema_version":7', '"schema_version":"7"'),
            "'schema_version' must be int, not str",
        ),
        (
            RECORD.to_parameter_value().replace('"schema_version":7', '"schema_version":true'),
            "'schema_version' must be int, not bool",
        ),
        (
            RECORD.to_parameter_value().replace(
                '"lineage_fingerprint":""', '"lineage_fingerprint":null'
            ),
            "'lineage_fingerprint' must be str, not NoneType",
        ),
    ],
)
def test_corrupt_mapping_values_say_what_is_wrong(text: str, reason: str) -> None:
    with pytest.raises(CorruptMappingValue, match=reason):
        MappingRecord.from_parameter_value(text)
