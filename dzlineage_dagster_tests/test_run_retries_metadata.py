"""A `catalog_sync` run's AWS calls and botocore's retries, by operation, in its Dagster metadata:
the figures the `dzlineage sync` summary prints, on a small platform with faults on demand."""

from __future__ import annotations

from pathlib import Path

import pytest
from dagster import DagsterInstance, Definitions

from dzlineage_dagster.definitions import build_resources, defs
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster_tests.crash_platform import seed_small, write_small_platform
from dzlineage_dagster_tests.platform import DemoPlatform


@pytest.fixture(scope="module")
def small_spec(tmp_path_factory) -> Path:
    return write_small_platform(tmp_path_factory.mktemp("retries"))


@pytest.fixture
def small_platform(sandbox, small_spec, monkeypatch) -> DemoPlatform:
    environment = seed_small(sandbox, small_spec, monkeypatch)
    yield DemoPlatform(sandbox, environment, DagsterInstance.ephemeral())
    sandbox.control.clear_faults()


def _run_cost(result) -> dict[str, object]:
    """The step's observation of what the run cost AWS: metadata name -> plain value."""
    [observation] = result.asset_observations_for_node("kafka_topic_catalog")
    assert observation.asset_key.path == ["registry_schema"], observation.asset_key
    return {name: value.value for name, value in observation.metadata.items()}


def test_a_run_reports_the_attempts_botocore_retried_by_operation_and_none_when_calm(
    small_platform,
):
    small_platform.control.set_faults(FaultRule("datazone", "CreateAsset", "throttle", count=1))
    result = small_platform.sync()
    assert result.success
    cost = _run_cost(result)
    assert cost["api_retries"] == {"datazone.CreateAsset": 1}, cost
    assert cost["api_retry_total"] == 1
    assert cost["api_calls"]["datazone.CreateAsset"] == 1  # one call, two attempts
    assert cost["api_call_total"] == sum(cost["api_calls"].values())
    # The same count as the sandbox answered with a throttle.
    throttled = [c for c in small_platform.control.calls() if c.injected]
    assert [(c.operation, c.status) for c in throttled] == [("CreateAsset", 429)]

    small_platform.control.clear_faults()
    calm = _run_cost(small_platform.sync())
    assert calm["api_retries"] == {} and calm["api_retry_total"] == 0, calm
    assert calm["api_call_total"] > 0


def test_a_run_that_gave_up_names_the_operation_in_its_failure_with_the_retries(
    small_platform, monkeypatch
):
    monkeypatch.setenv("DZLINEAGE_MAX_ATTEMPTS", "2")  # one retry: the test stays fast
    one_retry = Definitions(assets=defs.assets, jobs=defs.jobs, resources=build_resources())
    small_platform.control.set_faults(FaultRule("datazone", "PostLineageEvent", "unavailable"))
    result = small_platform.sync(definitions=one_retry)
    assert not result.success
    [failure] = result.get_step_failure_events()
    data = failure.step_failure_data.user_failure_data
    assert "PostLineageEvent failed: ServiceUnavailableException" in data.description
    assert "retry budget exhausted: all 2 attempts failed" in data.description
    metadata = {name: value.value for name, value in data.metadata.items()}
    assert "shop.inventory.customers" in metadata["failed_topics"]
    # The first hop was given up on; the topic stopped there.
    assert metadata["api_retries"] == {"datazone.PostLineageEvent": 1}, metadata
    assert metadata["api_retry_total"] == 1
    assert _run_cost(result)["api_retries"] == metadata["api_retries"]
