"""How an AWS error is worded: "retry budget exhausted" only when retrying could have helped."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster.sync.errors import describe_error
from dzlineage_dagster_tests.clients import sandbox_client


def failed_call(client, call, **params) -> ClientError:
    with pytest.raises(ClientError) as raised:
        getattr(client, call)(**params)
    return raised.value


def test_an_error_no_retry_could_fix_does_not_blame_the_retry_budget(sandbox):
    """A relay (one attempt a call) naming a registry that does not exist read "retry budget
    exhausted: all 1 attempts failed": botocore marks the last attempt on any error."""
    glue = sandbox_client(sandbox.environment(), "glue")
    error = failed_call(glue, "get_registry", RegistryId={"RegistryName": "no-such-registry"})
    assert error.response["ResponseMetadata"].get("MaxAttemptsReached")  # what misled it
    described = describe_error(error)
    assert "EntityNotFoundException" in described
    assert "retry budget" not in described


def test_a_throttle_that_outlasts_every_attempt_still_says_so(sandbox):
    glue = sandbox_client(sandbox.environment(), "glue", retries={"total_max_attempts": 2})
    sandbox.control.set_faults(FaultRule("glue", "GetRegistry", "throttle", count=2))
    try:
        error = failed_call(glue, "get_registry", RegistryId={"RegistryName": "any"})
    finally:
        sandbox.control.clear_faults()
    assert "retry budget exhausted: all 2 attempts failed" in describe_error(error)
