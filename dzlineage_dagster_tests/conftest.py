"""Shared fixtures: one sandbox endpoint for the whole test session, reached over real HTTP."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass

import pytest
from hypothesis import HealthCheck, settings

from dzlineage_dagster.sandbox.protocol.aws import ClientTokenPolicy
from dzlineage_dagster.sandbox.server.ambiguities import CHOICES, Ambiguities
from dzlineage_dagster.sandbox.server.app import Sandbox
from dzlineage_dagster.sandbox.server.control import SandboxControl, sandbox_environment
from dzlineage_dagster_tests.clients import sandbox_client

# Hypothesis's 200 ms deadline per example (and its too-slow health check) fail a test because
# the machine is busy, not because the code is wrong; Hypothesis drops them by itself only where
# a CI variable is set. Every test, on every machine, runs with neither: the suite has no
# wall-clock limit. HYPOTHESIS_PROFILE names another registered profile to try one.
settings.register_profile(
    "dzlineage", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dzlineage"))


@dataclass
class RunningSandbox:
    endpoint_url: str
    control: SandboxControl

    def client(self, service_name: str, **config: object):
        """A real boto3 client for the sandbox, as the project's resources would build it."""
        return sandbox_client(self.environment(), service_name, **config)

    def environment(self) -> dict[str, str]:
        # The shared sandbox enforces no quota, so the clients need not pace themselves to AWS's
        # (a demo sync spent two of its three seconds waiting for tokens). The tests of pacing
        # and of syncs under quotas set DZLINEAGE_CLIENT_RATE_LIMITS themselves.
        return {**sandbox_environment(self.endpoint_url), "DZLINEAGE_CLIENT_RATE_LIMITS": "off"}


@pytest.fixture(scope="session")
def sandbox() -> Iterator[RunningSandbox]:
    """The shared endpoint. State persists across tests: use unique names per test."""
    with Sandbox() as server:
        yield RunningSandbox(server.endpoint_url, SandboxControl(server.endpoint_url))


@pytest.fixture
def sandbox_env(sandbox: RunningSandbox, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Point every boto3 client built in the test (and its code) at the shared sandbox."""
    env = sandbox.environment()
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


@pytest.fixture
def platform(sandbox: RunningSandbox, monkeypatch: pytest.MonkeyPatch):
    """The demo CDC platform freshly seeded into the emptied sandbox, its environment set; fault
    rules and a client-token policy a test sets are undone after it, so the tests after it on the
    shared sandbox (the emulators' own ones reset nothing) see AWS's behaviour."""
    from dzlineage_dagster_tests.platform import fresh_platform  # imports dagster: only when used

    platform = fresh_platform(sandbox, monkeypatch)
    yield platform
    sandbox.control.clear_faults()
    sandbox.control.set_client_tokens(**asdict(ClientTokenPolicy()))
    sandbox.control.set_ambiguities(**Ambiguities().describe())


@pytest.fixture(params=CHOICES["glue_node_naming"])
def glue_node_naming(request: pytest.FixtureRequest, platform) -> str:
    """Run the test under each reading of where DataZone files a dataset named by
    OpenLineage's Glue naming (the ``glue_node_naming`` switch); after ``platform``, whose
    seeding resets the switches, and undone by its teardown."""
    platform.control.set_ambiguities(glue_node_naming=request.param)
    return request.param


@pytest.fixture(params=CHOICES["run_event_merge"])
def run_event_merge(request: pytest.FixtureRequest, platform) -> str:
    """Run the test under each reading of what a run made of several events shows (the
    ``run_event_merge`` switch: all their datasets, or its latest event's); after ``platform``,
    undone by its teardown. For suites of producers' events, which must hold under both."""
    platform.control.set_ambiguities(run_event_merge=request.param)
    return request.param
