"""Shared fixtures: one sandbox endpoint for the whole test session, reached over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import boto3
import pytest
from botocore.config import Config

from dzlineage_dagster.sandbox.server.app import Sandbox
from dzlineage_dagster.sandbox.server.control import (
    SANDBOX_CREDENTIALS,
    SANDBOX_REGION,
    SandboxControl,
    sandbox_environment,
)


@dataclass
class RunningSandbox:
    endpoint_url: str
    control: SandboxControl

    def client(self, service_name: str, **config: object):
        """A real boto3 client for the sandbox, as the project's resources would build it."""
        return boto3.session.Session(
            aws_access_key_id=SANDBOX_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            aws_session_token=SANDBOX_CREDENTIALS["AWS_SESSION_TOKEN"],
            region_name=SANDBOX_REGION,
        ).client(
            service_name,
            endpoint_url=self.endpoint_url,
            config=Config(**{"retries": {"mode": "standard", "total_max_attempts": 1}, **config}),
        )

    def environment(self) -> dict[str, str]:
        return sandbox_environment(self.endpoint_url)


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
