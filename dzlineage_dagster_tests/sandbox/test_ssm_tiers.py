"""The sandbox holds PutParameter to SSM's tiers as AWS does: the per-account cap on standard
parameters, the 4 KB / 8 KB value limits, Intelligent-Tiering and no way back to standard."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from botocore.exceptions import ClientError

from dzlineage_dagster.sandbox.moto_patches.ssm_rules import (
    PARAMETER_LIMIT_MESSAGE,
    STANDARD_VALUE_TOO_LONG_MESSAGE,
    SsmLimits,
)

CAP = 5


@pytest.fixture
def ssm(sandbox) -> Iterator:
    """An empty account whose standard-parameter cap is CAP; AWS's caps again afterwards."""
    sandbox.control.reset()
    sandbox.control.set_ssm_limits(standard_parameters=CAP)
    yield sandbox.client("ssm")
    sandbox.control.set_ssm_limits(**SsmLimits().__dict__)


def put(ssm, name: str, value: str = "v", **extra) -> dict:
    return ssm.put_parameter(Name=name, Value=value, Type="String", Overwrite=True, **extra)


def refused(call) -> ClientError:
    with pytest.raises(ClientError) as raised:
        call()
    return raised.value


def test_aws_caps_are_the_default_and_a_reset_restores_them(sandbox):
    sandbox.control.set_ssm_limits(standard_parameters=3)
    sandbox.control.reset()
    assert sandbox.control.set_ssm_limits() == {
        "standard_parameters": 10_000,
        "advanced_parameters": 100_000,
    }


def test_the_standard_cap_refuses_a_new_parameter_with_aws_s_answer(ssm):
    for index in range(CAP):
        put(ssm, f"/foreign/p{index}")
    error = refused(lambda: put(ssm, "/mine/one-too-many"))
    assert error.response["Error"]["Code"] == "ParameterLimitExceeded"
    assert error.response["Error"]["Message"] == PARAMETER_LIMIT_MESSAGE.format(cap=CAP)
    # At the cap: updating a parameter still works, and the advanced tier is its own count.
    assert put(ssm, "/foreign/p0", "changed")["Version"] == 2
    assert put(ssm, "/mine/advanced", Tier="Advanced")["Tier"] == "Advanced"
    # Intelligent-Tiering creates an advanced parameter once the standard ones are used up.
    assert put(ssm, "/mine/intelligent", Tier="Intelligent-Tiering")["Tier"] == "Advanced"
    ssm.delete_parameter(Name="/foreign/p1")
    assert put(ssm, "/mine/now-there-is-room")["Tier"] == "Standard"


def test_values_are_held_to_the_tier_s_limit(ssm):
    assert put(ssm, "/limits/standard", "s" * 4096)["Tier"] == "Standard"
    error = refused(lambda: put(ssm, "/limits/standard", "s" * 4097))
    assert error.response["Error"]["Code"] == "ValidationException"
    assert error.response["Error"]["Message"] == STANDARD_VALUE_TOO_LONG_MESSAGE
    assert put(ssm, "/limits/advanced", "a" * 8192, Tier="Advanced")["Tier"] == "Advanced"
    error = refused(lambda: put(ssm, "/limits/advanced", "a" * 8193, Tier="Advanced"))
    assert error.response["Error"]["Code"] == "ValidationException"
    assert "8192" in error.response["Error"]["Message"]
    # Intelligent-Tiering: standard while the value fits 4 KB, advanced beyond.
    assert put(ssm, "/limits/smart", "i" * 10, Tier="Intelligent-Tiering")["Tier"] == "Standard"
    assert put(ssm, "/limits/smart", "i" * 5000, Tier="Intelligent-Tiering")["Tier"] == "Advanced"
    stored = ssm.describe_parameters(
        ParameterFilters=[{"Key": "Name", "Values": ["/limits/smart"]}]
    )["Parameters"]
    assert stored[0]["Tier"] == "Advanced"


def test_an_advanced_parameter_never_goes_back_to_standard(ssm):
    put(ssm, "/limits/upgraded", Tier="Advanced")
    error = refused(lambda: put(ssm, "/limits/upgraded", Tier="Standard"))
    assert error.response["Error"]["Code"] == "ValidationException"
    assert put(ssm, "/limits/upgraded", "kept")["Tier"] == "Advanced"  # no Tier: stays


def test_an_unknown_tier_is_refused(ssm):
    error = refused(lambda: put(ssm, "/limits/odd", Tier="Premium"))
    assert error.response["Error"]["Code"] == "ValidationException"
    assert "enum value set: [Standard, Advanced, Intelligent-Tiering]" in str(error)
