from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dzlineage_dagster.core.mapping.ssm_names import (
    CorruptMappingValue,
    MappingRecord,
    digest_parameter_name,
    is_digest_parameter,
    parameter_name,
    registry_arn_of_schema,
    schema_arn_from_parameter_name,
    scoped_prefix,
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


@settings(max_examples=200)
@given(ANY_ARN)
def test_every_name_is_accepted_by_ssm(schema_arn: str) -> None:
    name = parameter_name(PREFIX, schema_arn)
    assert parameter_name_problems(name) == []


@settings(max_examples=200)
@given(ANY_ARN)
def test_readable_names_decode_to_their_arn_and_hash_names_to_none(schema_arn: str) -> None:
    name = parameter_name(PREFIX, schema_arn)
    decoded = schema_arn_from_parameter_name(PREFIX, name)
    if name.startswith(f"{PREFIX}/s/"):
        assert decoded == schema_arn
    else:
        assert name.startswith(f"{PREFIX}/h/")
        assert decoded is None


@settings(max_examples=200)
@given(ANY_ARN, ANY_ARN)
def test_distinct_arns_get_distinct_names(first: str, second: str) -> None:
    if first != second:
        assert parameter_name(PREFIX, first) != parameter_name(PREFIX, second)


@settings(max_examples=100)
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


@settings(max_examples=200)
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
    at_the_limit = dataclasses.replace(
        RECORD, topic="t" * (4096 - len(RECORD.to_parameter_value()) + len(RECORD.topic))
    )
    assert len(at_the_limit.to_parameter_value()) == 4096
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


def test_exact_prefix_and_empty_arn_errors() -> None:
    for prefix, message in (
        (
            "/dz//x",
            "SSM prefix '/dz//x' has invalid levels ['']: each level between slashes must be "
            "non-empty and use only A-Z a-z 0-9 _ . - (no trailing slash)",
        ),
        (
            "/" + "/".join("a" * 14),
            f"SSM prefix '{'/' + '/'.join('a' * 14)}' has 14 levels; mapping names add 2 and SSM "
            "allows 15, so use at most 13",
        ),
        (
            "/" + "a" * 881,
            f"SSM prefix '{'/' + 'a' * 79}'... (882 characters) is too long: a mapping name "
            "under it would exceed 947 characters",
        ),
    ):
        with pytest.raises(ValueError) as raised:
            validate_prefix(prefix)
        assert str(raised.value) == message
    with pytest.raises(ValueError) as raised:
        parameter_name(PREFIX, "")
    assert str(raised.value) == "a schema ARN can't be empty"


def test_the_longest_prefix_leaves_exactly_room_for_a_hash_name() -> None:
    longest = "/" + "a" * 880
    validate_prefix(longest)
    name = parameter_name(longest, gsr_arn("r", "s" * 200))
    # The name after its leading slash is exactly the 947 characters any account allows.
    assert name.startswith(f"{longest}/h/") and len(name) == 1 + 947
    assert parameter_name_problems(name) == []


REGISTRY_ARN = "arn:aws:glue:us-east-1:123456789012:registry/shop-cdc"
#: sha256 of REGISTRY_ARN's UTF-8 bytes, in hex.
REGISTRY_DIGEST_NAME = "d9b4426123394bd00a69f4691b2e67192518dde0d4c2cb0f03a802db980827b3"


def test_a_registrys_digest_parameter_is_named_by_the_hash_of_its_arn() -> None:
    assert digest_parameter_name(PREFIX, REGISTRY_ARN) == f"{PREFIX}/d/{REGISTRY_DIGEST_NAME}"
    with pytest.raises(ValueError, match="must start with '/'"):
        digest_parameter_name("dz", REGISTRY_ARN)


@pytest.mark.parametrize(
    ("name", "is_digest"),
    [
        (f"{PREFIX}/d/{REGISTRY_DIGEST_NAME}", True),
        (f"{PREFIX}/dzd_1/project-1/d/{REGISTRY_DIGEST_NAME}", True),  # a scoped digest
        (f"{PREFIX}/dzd_1/d/{REGISTRY_DIGEST_NAME}", False),  # one scope level only
        (f"{PREFIX}/a/b/c/d/{REGISTRY_DIGEST_NAME}", False),  # too deep
        (f"{PREFIX}/d/{REGISTRY_DIGEST_NAME.upper()}", False),  # not what sha256 hex writes
        (f"{PREFIX}/d/{REGISTRY_DIGEST_NAME[:-1]}", False),
        (f"{PREFIX}/h/{REGISTRY_DIGEST_NAME}", False),  # a hash-form mapping
        (f"{PREFIX}/s/abc", False),
        (f"/other/d/{REGISTRY_DIGEST_NAME}", False),  # another prefix
        (f"{PREFIX}d/{REGISTRY_DIGEST_NAME}", False),  # the prefix is a whole level
        (f"d/{REGISTRY_DIGEST_NAME}", False),
    ],
)
def test_digest_parameters_are_told_from_mappings(name: str, is_digest: bool) -> None:
    assert is_digest_parameter(PREFIX, name) is is_digest


def test_a_scoped_prefix_adds_the_domain_and_project_levels() -> None:
    assert scoped_prefix(PREFIX, "dzd_1", "project-1") == f"{PREFIX}/dzd_1/project-1"
    assert scoped_prefix(PREFIX, "d" * 64, "p") == f"{PREFIX}/{'d' * 64}/p"
    # 11 levels, 2 of scope and 2 of a mapping name: exactly SSM's 15.
    deepest = "/" + "/".join("a" * 11)
    assert scoped_prefix(deepest, "d", "p") == f"{deepest}/d/p"


def test_a_schema_arn_names_its_registry_and_anything_else_is_refused() -> None:
    assert registry_arn_of_schema(gsr_arn("shop-cdc", "orders")) == (
        f"arn:aws:glue:{REGION}:{ACCOUNT}:registry/shop-cdc"
    )
    with pytest.raises(ValueError) as raised:
        registry_arn_of_schema("arn:aws:glue:us-east-1:1:registry/shop-cdc")
    assert str(raised.value) == (
        "'arn:aws:glue:us-east-1:1:registry/shop-cdc' is not a Glue Schema Registry schema ARN"
    )


@pytest.mark.parametrize(
    ("prefix", "domain_id", "project_id", "message"),
    [
        (
            PREFIX, "dzd 1", "p1",
            "DZLINEAGE_DOMAIN_ID 'dzd 1' is not a DataZone id (1 to 64 of A-Z a-z 0-9 _ -)",
        ),
        (
            PREFIX, "dzd_1", "p/1",
            "DZLINEAGE_PROJECT_ID 'p/1' is not a DataZone id (1 to 64 of A-Z a-z 0-9 _ -)",
        ),
        (
            PREFIX, "dzd_1", "",
            "DZLINEAGE_PROJECT_ID '' is not a DataZone id (1 to 64 of A-Z a-z 0-9 _ -)",
        ),
        (
            PREFIX, "d" * 65, "p1",
            f"DZLINEAGE_DOMAIN_ID '{'d' * 65}' is not a DataZone id (1 to 64 of A-Z a-z 0-9 _ -)",
        ),
        (
            "/" + "/".join("a" * 12), "dzd_1", "p1",
            f"DZLINEAGE_SSM_PREFIX='{'/' + '/'.join('a' * 12)}' has 12 levels; a run adds the "
            "domain's and project's, each mapping name 2 more, and SSM allows 15, so use at most 11",
        ),
        (
            "/" + "a" * 880, "dzd_1", "p1",
            f"DZLINEAGE_SSM_PREFIX='{'/' + 'a' * 79}'... (881 characters) leaves no room for "
            f"domain 'dzd_1' and project 'p1' below it: SSM prefix '{'/' + 'a' * 79}'... (890 "
            "characters) is too long: a mapping name under it would exceed 947 characters",
        ),
    ],
)  # fmt: skip
def test_a_scope_that_cannot_be_a_path_names_its_setting(
    prefix: str, domain_id: str, project_id: str, message: str
) -> None:
    with pytest.raises(ValueError) as raised:
        scoped_prefix(prefix, domain_id, project_id)
    assert str(raised.value) == message


def test_a_first_layout_value_reads_with_empty_scope_and_token() -> None:
    value = RECORD.to_parameter_value()
    for key in ("domain_id", "project_id", "registry_arn", "registry_token"):
        value = value.replace(f'"{key}":"",', "").replace(f',"{key}":""', "")
    assert "domain_id" not in value and "registry_token" not in value
    record = MappingRecord.from_parameter_value(value)
    assert record == RECORD and record.is_legacy


def test_a_value_missing_required_keys_names_each() -> None:
    with pytest.raises(CorruptMappingValue) as raised:
        MappingRecord.from_parameter_value('{"schema_arn": "x"}')
    assert str(raised.value) == (
        "mapping value has missing keys ['asset_id', 'asset_revision', 'asset_type_revision', "
        "'content_fingerprint', 'schema_version', 'topic'] / unknown keys []"
    )
