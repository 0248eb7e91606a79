"""SSM parameter-name rules: the pure rules, and the sandbox answering with them like AWS."""

from __future__ import annotations

import itertools
import string
import uuid

import pytest
from botocore.exceptions import ClientError
from hypothesis import given, settings
from hypothesis import strategies as st

from dzlineage_dagster.sandbox.moto_patches.ssm_rules import (
    MAX_ARN_LENGTH,
    NameUse,
    name_problems,
    parameter_arn,
    parameter_name_problems,
)

SEGMENT_ALPHABET = "abcXYZ019_.-"
#: The 45 characters of ``arn:aws:ssm:us-east-1:123456789012:parameter/``.
ARN_PREFIX_LENGTH = 45

segments = st.text(alphabet=SEGMENT_ALPHABET, min_size=1, max_size=12).filter(
    lambda s: s[:3].lower() not in ("aws", "ssm")
)


def levels(count: int) -> str:
    return "".join(f"/L{i}" for i in range(1, count + 1))


# --- the pure rules ---------------------------------------------------------------------------

VALID_NAMES = [
    "MyParameter1",
    "/MyParameter2",
    "/Dev/Production/East/Project-ABC/MyParameter",
    "/dzlineage/mapping/arn_aws_glue.us-east-1",
    "/__debezium-heartbeat.shop",
    levels(15),
    "/" + "a" * (MAX_ARN_LENGTH - ARN_PREFIX_LENGTH),
    "a" * (MAX_ARN_LENGTH - ARN_PREFIX_LENGTH),
    "/x/awsome",
]

INVALID_NAMES = {
    "/x/arn::COLON::aws": "only a-zA-Z0-9_.-",
    "/a b": "only a-zA-Z0-9_.-",
    " /a": "trim",
    "/db/table@prod": "only a-zA-Z0-9_.-",
    "/caf\u00e9": "only a-zA-Z0-9_.-",
    "MyParameter3/L1": "must start with '/'",
    "/a//b": "level can't be empty",
    "/a/": "level can't be empty",
    "/": "level can't be empty",
    "": "can't be empty",
    levels(16): "16 levels",
    "/" + "a" * (MAX_ARN_LENGTH - ARN_PREFIX_LENGTH + 1): "1012 characters",
    "awsTestParameter": "'aws'",
    "/aws/testparam1": "'aws'",
    "/AWS/x": "'aws'",
    "SSM-testparameter": "'ssm'",
    "/ssm/x": "'ssm'",
    "/Ssm": "'ssm'",
}


@pytest.mark.parametrize("name", VALID_NAMES)
def test_valid_names_have_no_problems(name):
    assert parameter_name_problems(name) == []


@pytest.mark.parametrize(("name", "reason"), INVALID_NAMES.items())
def test_invalid_names_say_why(name, reason):
    problems = parameter_name_problems(name)
    assert any(reason in problem for problem in problems), problems


def test_the_length_limit_counts_the_arn_of_the_region_and_account():
    name = "/" + "a" * 962
    arn = parameter_arn(name, region="ap-southeast-2", account_id="123456789012")

    problems = name_problems(name, region="ap-southeast-2", account_id="123456789012")

    assert len(arn) == 1012
    assert [p.error_code for p in problems] == ["ValidationException"]
    assert name_problems(name) == []  # us-east-1 is 5 characters shorter


def test_the_arn_is_the_same_with_or_without_the_leading_slash():
    assert parameter_arn("/p", region="us-east-2", account_id="111122223333") == (
        "arn:aws:ssm:us-east-2:111122223333:parameter/p"
    )
    assert parameter_arn("p", region="cn-north-1", account_id="1").startswith("arn:aws-cn:")


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("/aws/x", "AccessDeniedException"),
        ("/ssm/x", "ValidationException"),
        ("/x:y", "ValidationException"),
        ("x/y", "ValidationException"),
        (levels(16), "HierarchyLevelLimitExceededException"),
    ],
)
def test_each_rule_names_the_error_aws_answers_with(name, code):
    assert name_problems(name)[0].error_code == code


@pytest.mark.parametrize(
    "reference",
    [
        "/aws/service/global-infrastructure/regions/us-east-1",
        "/app/db-url:3",
        "/app/db-url:prod",
        "arn:aws:ssm:us-east-1:123456789012:parameter/app/db-url",
        "arn:aws:ssm:us-east-1:123456789012:parameter/plain:2",
    ],
)
def test_reads_accept_public_parameters_arns_and_selectors(reference):
    assert name_problems(reference, NameUse.READ) == []


@pytest.mark.parametrize("reference", ["/app/db url", "app/db", levels(16), "/a//b:1"])
def test_reads_still_refuse_malformed_names(reference):
    assert name_problems(reference, NameUse.READ)


@pytest.mark.parametrize("path", ["/", "/a", "/a/", levels(15), "/aws/service"])
def test_valid_paths(path):
    assert name_problems(path, NameUse.PATH) == []


@pytest.mark.parametrize("path", ["a", "", "//", "/a//b", "/a:b", levels(16)])
def test_invalid_paths(path):
    assert name_problems(path, NameUse.PATH)


@given(st.lists(segments, min_size=1, max_size=15), st.booleans())
def test_names_made_of_valid_levels_are_valid(levels_, leading_slash):
    name = "/".join(levels_)
    if leading_slash or len(levels_) > 1:
        name = "/" + name
    assert parameter_name_problems(name) == []


@given(
    st.text(min_size=1, max_size=40),
    st.characters(exclude_characters=string.ascii_letters + string.digits + "_.-/"),
)
def test_any_character_outside_the_alphabet_is_a_problem(text, bad):
    name = f"/x/{text}{bad}"
    assert any("only a-zA-Z0-9_.-" in p for p in parameter_name_problems(name))


# --- the sandbox answers with the rules -------------------------------------------------------


@pytest.fixture(scope="module")
def ssm(sandbox):
    return sandbox.client("ssm")


@pytest.fixture(scope="module")
def prefix() -> str:
    return f"/naming-rules-{uuid.uuid4().hex[:8]}"


def error_code(excinfo: pytest.ExceptionInfo[ClientError]) -> str:
    return excinfo.value.response["Error"]["Code"]


def test_put_parameter_refuses_the_colon_name_and_listing_still_works(ssm, prefix):
    ssm.put_parameter(Name=f"{prefix}/colon/kept", Value="v", Type="String")

    with pytest.raises(ClientError) as excinfo:
        ssm.put_parameter(Name=f"{prefix}/colon/arn::COLON::aws", Value="v", Type="String")
    listed = ssm.get_parameters_by_path(Path=f"{prefix}/colon")["Parameters"]

    assert error_code(excinfo) == "ValidationException"
    assert [p["Name"] for p in listed] == [f"{prefix}/colon/kept"]


@pytest.mark.parametrize(
    ("suffix", "code"),
    [
        ("/a b", "ValidationException"),
        ("/x@y", "ValidationException"),
        ("//double", "ValidationException"),
        ("/trailing/", "ValidationException"),
        (levels(15), "HierarchyLevelLimitExceededException"),  # 16 with the prefix
        ("/" + "a" * 1000, "ValidationException"),
    ],
)
def test_put_parameter_refuses_names_aws_refuses(ssm, prefix, suffix, code):
    with pytest.raises(ClientError) as excinfo:
        ssm.put_parameter(Name=prefix + suffix, Value="v", Type="String")
    assert error_code(excinfo) == code


def test_fifteen_levels_are_accepted(ssm, prefix):
    name = prefix + levels(14)

    ssm.put_parameter(Name=name, Value="deep", Type="String")

    assert ssm.get_parameter(Name=name)["Parameter"]["Value"] == "deep"


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("awsTestParameter", "AccessDeniedException"),
        ("/aws/testparam1", "AccessDeniedException"),
        ("/AwS/x", "AccessDeniedException"),
        ("SSM-testparameter", "ValidationException"),
        ("/ssm/x", "ValidationException"),
        ("not/qualified", "ValidationException"),
    ],
)
def test_put_parameter_refuses_reserved_and_unqualified_names(ssm, name, code):
    with pytest.raises(ClientError) as excinfo:
        ssm.put_parameter(Name=name, Value="v", Type="String")
    assert error_code(excinfo) == code


@pytest.mark.parametrize(
    "call",
    [
        lambda ssm, p: ssm.get_parameter(Name=f"{p}/bad name"),
        lambda ssm, p: ssm.get_parameters(Names=[f"{p}/fine", f"{p}/bad name:1"]),
        lambda ssm, p: ssm.delete_parameter(Name=f"{p}/bad@name"),
        lambda ssm, p: ssm.delete_parameters(Names=[f"{p}//empty"]),
        lambda ssm, p: ssm.get_parameters_by_path(Path=f"{p}/bad path"),
        lambda ssm, p: ssm.get_parameters_by_path(Path="relative/path"),
    ],
    ids=[
        "GetParameter",
        "GetParameters",
        "DeleteParameter",
        "DeleteParameters",
        "GetParametersByPath",
        "GetParametersByPath-relative",
    ],
)
def test_reads_and_deletes_refuse_invalid_names(ssm, prefix, call):
    with pytest.raises(ClientError) as excinfo:
        call(ssm, prefix)
    assert error_code(excinfo) == "ValidationException"


def test_reads_by_version_selector_and_public_parameters_pass(ssm, prefix):
    ssm.put_parameter(Name=f"{prefix}/selected", Value="one", Type="String")

    selected = ssm.get_parameter(Name=f"{prefix}/selected:1")["Parameter"]
    public = ssm.get_parameters_by_path(Path="/aws/service/global-infrastructure/regions")

    assert selected["Value"] == "one"
    assert public["Parameters"]


example_ids = itertools.count()


@settings(max_examples=60)
@given(tail=st.text(alphabet=SEGMENT_ALPHABET + "/: @", min_size=1, max_size=30))
def test_arbitrary_names_round_trip_exactly_when_the_rules_allow_them(ssm, prefix, tail):
    parent = f"{prefix}/arbitrary/{next(example_ids)}"
    name = f"{parent}/{tail}"

    if parameter_name_problems(name):
        with pytest.raises(ClientError) as excinfo:
            ssm.put_parameter(Name=name, Value="v", Type="String")
        assert error_code(excinfo) in (
            "ValidationException",
            "HierarchyLevelLimitExceededException",
        )
        return
    ssm.put_parameter(Name=name, Value=tail, Type="String")
    pages = ssm.get_paginator("get_parameters_by_path").paginate(Path=parent, Recursive=True)
    found = {p["Name"]: p["Value"] for page in pages for p in page["Parameters"]}
    assert found == {name: tail}
