"""The resources build real boto3 clients that reach the sandbox through AWS_ENDPOINT_URL."""

from dzlineage_dagster.resources import SsmMappingResource


def test_clients_find_the_endpoint_from_the_environment_and_page_through(sandbox, sandbox_env):
    sandbox.control.clear_calls()
    parameters = SsmMappingResource()
    for index in range(23):
        parameters.put(f"/resource-test/paging/p{index:02d}", f"v{index}")
    found = parameters.parameters_under("/resource-test/paging")
    assert found == {f"/resource-test/paging/p{i:02d}": f"v{i}" for i in range(23)}
    # SSM returns at most 10 per page: 3 pages, and the resource counted exactly what it sent.
    assert sandbox.control.call_counts()[("ssm", "GetParametersByPath")] == 3
    assert parameters.api_calls == {"ssm.PutParameter": 23, "ssm.GetParametersByPath": 3}


def test_a_role_to_assume_is_assumed_through_sts_before_the_call(sandbox, sandbox_env):
    sandbox.control.clear_calls()
    parameters = SsmMappingResource(
        role_arn="arn:aws:iam::123456789012:role/governance", role_external_id="ext-1"
    )
    parameters.put("/resource-test/assumed", "yes")
    operations = [(c.service, c.operation) for c in sandbox.control.calls()]
    assert operations == [("sts", "AssumeRole"), ("ssm", "PutParameter")]
    # Deleting twice is fine: a rerun after a crash must not fail on an already-deleted name.
    parameters.delete("/resource-test/assumed")
    parameters.delete("/resource-test/assumed")


def test_retry_mode_and_attempts_reach_botocore(sandbox_env):
    parameters = SsmMappingResource(retry_mode="adaptive", max_attempts=7)
    retries = parameters.client().meta.config.retries
    assert retries == {"mode": "adaptive", "total_max_attempts": 7}


def test_a_resources_credentials_label_names_the_variable_its_role_comes_from(monkeypatch):
    for variable in ("DZLINEAGE_ROLE_ARN", "DZLINEAGE_GOVERNANCE_ROLE_ARN"):
        monkeypatch.delenv(variable, raising=False)
    assert SsmMappingResource(side="governance").credentials_label() == (
        "the governance side's credentials: the default AWS credentials "
        "(DZLINEAGE_GOVERNANCE_ROLE_ARN or DZLINEAGE_ROLE_ARN unset)"
    )
    shared = "arn:aws:iam::123456789012:role/dzlineage"
    monkeypatch.setenv("DZLINEAGE_ROLE_ARN", shared)
    assert SsmMappingResource(side="governance", role_arn=shared).credentials_label() == (
        f"the governance side's role DZLINEAGE_ROLE_ARN={shared}"
    )
