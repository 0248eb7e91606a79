"""The sandbox's own parts: routing, the call log, fault injection, reset."""

import pytest
from botocore.exceptions import ClientError

from dzlineage_dagster.sandbox.server.faults import FaultRule


@pytest.fixture
def control(sandbox):
    sandbox.control.clear_calls()
    yield sandbox.control
    sandbox.control.clear_faults()


def test_every_call_is_logged_with_service_operation_and_status(sandbox, control):
    ssm = sandbox.client("ssm")
    ssm.put_parameter(Name="/server-test/logged", Value="v", Type="String", Overwrite=True)
    with pytest.raises(ClientError):
        ssm.get_parameter(Name="/server-test/missing")
    calls = [(c.service, c.operation, c.status, c.injected) for c in control.calls()]
    assert calls == [
        ("ssm", "PutParameter", 200, False),
        ("ssm", "GetParameter", 400, False),
    ]


def test_injected_throttling_reaches_boto3_as_throttling_and_is_counted(sandbox, control):
    control.set_faults(FaultRule(service="ssm", operation="GetParametersByPath", count=1))
    ssm = sandbox.client("ssm")
    with pytest.raises(ClientError) as raised:
        ssm.get_parameters_by_path(Path="/server-test")
    assert raised.value.response["Error"]["Code"] == "ThrottlingException"
    ssm.get_parameters_by_path(Path="/server-test")  # count=1: the next call goes through
    statuses = [(c.operation, c.injected) for c in control.calls()]
    assert statuses == [("GetParametersByPath", True), ("GetParametersByPath", False)]


def test_botocore_retries_absorb_a_throttle_and_the_log_shows_both_attempts(sandbox, control):
    control.set_faults(FaultRule(service="ssm", operation="GetParametersByPath", count=1))
    ssm = sandbox.client("ssm", retries={"mode": "standard", "total_max_attempts": 3})
    ssm.get_parameters_by_path(Path="/server-test")
    assert [c.injected for c in control.calls()] == [True, False]


def test_rate_rules_are_reproducible_for_a_seed(sandbox, control):
    outcomes = []
    for _ in range(2):
        control.set_faults(FaultRule(service="sts", rate=0.5, seed=7))
        sts = sandbox.client("sts")
        run = []
        for _ in range(12):
            try:
                sts.get_caller_identity()
                run.append(True)
            except ClientError:
                run.append(False)
        outcomes.append(run)
    assert outcomes[0] == outcomes[1]
    assert 0 < outcomes[0].count(False) < 12


def test_invalid_fault_rules_are_rejected_with_a_reason(sandbox):
    import urllib.error

    with pytest.raises(urllib.error.HTTPError) as raised:
        sandbox.control._call("PUT", "faults", {"rules": [{"service": "ssm", "kind": "boom"}]})
    assert raised.value.code == 400
    assert "unknown fault kind" in raised.value.read().decode()


def test_the_client_token_policy_is_changed_by_field_and_refused_when_malformed(sandbox):
    import urllib.error

    default = {"window_seconds": 8 * 3600.0, "other_parameters": "conflict"}
    assert sandbox.control._call("GET", "client-tokens") == default
    try:
        assert sandbox.control.set_client_tokens(other_parameters="replay") == {
            **default, "other_parameters": "replay"
        }  # fmt: skip
        for bad, reason in (
            ({"other_parameters": "ignore"}, "other_parameters must be 'conflict' or 'replay'"),
            ({"window_seconds": -1}, "window_seconds must be a number >= 0, not -1"),
            ({"window_seconds": "soon"}, "window_seconds must be a number >= 0, not 'soon'"),
            ({"seconds": 1}, "unexpected keyword argument 'seconds'"),
        ):
            with pytest.raises(urllib.error.HTTPError) as raised:
                sandbox.control.set_client_tokens(**bad)
            assert raised.value.code == 400
            assert reason in raised.value.read().decode()
        with pytest.raises(urllib.error.HTTPError) as raised:
            sandbox.control._call("PUT", "client-tokens", [1])  # type: ignore[arg-type]
        assert 'expected an object like {\\"other_parameters\\": \\"replay\\"}' in (
            raised.value.read().decode()
        )
        assert sandbox.control._call("GET", "client-tokens")["other_parameters"] == "replay"
        sandbox.control.reset()
        assert sandbox.control._call("GET", "client-tokens") == default
    finally:
        sandbox.control.reset()
