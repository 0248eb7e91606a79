"""The one way tests build boto3 clients and read a sandbox's environment file."""

from __future__ import annotations

import shlex
import subprocess
import time
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from dzlineage_dagster.boto3_sessions import new_session
from dzlineage_dagster_tests.waits import HANG_GUARD_SECONDS


@cache
def _session(key: str, secret: str, token: str | None, region: str) -> boto3.session.Session:
    # One session per identity: it caches the service models its clients load.
    return new_session(
        aws_access_key_id=key,
        aws_secret_access_key=secret,
        aws_session_token=token,
        region_name=region,
    )


def sandbox_client(environment: Mapping[str, str], service_name: str, **config: Any):
    """A real boto3 client for the endpoint and identity in ``environment`` (the AWS_* variables
    a sandbox prints), as the project's resources would build it. ``config`` is botocore's
    (``region_name=...`` too); one attempt per call unless it says otherwise."""
    session = _session(
        environment["AWS_ACCESS_KEY_ID"],
        environment["AWS_SECRET_ACCESS_KEY"],
        environment.get("AWS_SESSION_TOKEN"),
        environment["AWS_REGION"],
    )
    return session.client(
        service_name,
        endpoint_url=environment["AWS_ENDPOINT_URL"],
        config=Config(**{"retries": {"mode": "standard", "total_max_attempts": 1}, **config}),
    )


def written_env_file(process: subprocess.Popen, path: Path) -> dict[str, str]:
    """The variables a started `dzlineage sandbox` (``process``) writes to ``path``, once it
    has written them; the process must not exit before."""
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    while not path.exists() and time.monotonic() < deadline:
        assert process.poll() is None, "the sandbox exited early"
        time.sleep(0.2)
    return read_env_file(path)


def read_env_file(path: Path) -> dict[str, str]:
    """The variables in a file of ``export NAME=value`` lines, as a shell sourcing it sees them."""
    environment = {}
    for line in path.read_text().splitlines():
        words = shlex.split(line)
        if words[:1] == ["export"] and len(words) == 2:
            name, value = words[1].split("=", 1)
            environment[name] = value
    return environment
