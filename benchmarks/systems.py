"""The three systems compared, behind one small interface: prepare once, then sync per scenario.

- ``baseline``: the reference design (:mod:`benchmarks.baseline`).
- ``sensor+job``: what a Dagster deployment does: a tick of ``registry_schema_sensor``, then the
  runs it requests (``catalog_sync`` over exactly their partition ranges), in-process on an
  ephemeral instance that lives as long as the system.
- ``sync``: ``dzlineage sync``, the headless sync.

Every system reaches the sandbox through boto3's own environment (``AWS_ENDPOINT_URL``...),
which :func:`pointed_at` sets.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from botocore.exceptions import BotoCoreError, ClientError
from dagster import (
    AddDynamicPartitionsRequest,
    DagsterInstance,
    Definitions,
    DeleteDynamicPartitionsRequest,
    RunRequest,
    SensorResult,
    build_sensor_context,
)

from benchmarks.baseline import (
    VALID_DELIMITER,
    ReferenceClients,
    ReferenceConfig,
    ensure_reference_types,
    run_reference_design,
)
from benchmarks.synthetic_platform import SeededPlatform
from dzlineage_dagster.assets.common import kafka_topics
from dzlineage_dagster.definitions import build_resources, defs
from dzlineage_dagster.sandbox.server.control import sandbox_environment
from dzlineage_dagster.sensors import registry_schema_sensor
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.headless import run_headless_sync

#: Runs log warnings only: a thousand topics' debug events on the console would swamp the
#: benchmark's output (they are still stored in the instance, as in a deployment).
QUIET_RUN_CONFIG = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


#: Attempts per AWS call, the first included: the project's default, given to every system
#: (the project reads DZLINEAGE_*, the baseline's plain boto3 reads boto3's own AWS_*).
DEFAULT_MAX_ATTEMPTS = 5


@contextmanager
def pointed_at(
    platform: SeededPlatform,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    client_rate_limits: str = "off",
) -> Iterator[None]:
    """The process environment pointing boto3 and the project at ``platform``, then restored.

    The project's client-side rate limits are off unless asked for: against a sandbox without
    quotas they would only make it wait where the baseline does not (the quota-bound scenario
    turns both on).
    """
    variables = {
        **sandbox_environment(platform.endpoint_url),
        **platform.environment,
        "DZLINEAGE_CLIENT_RATE_LIMITS": client_rate_limits,
        "DZLINEAGE_MAX_ATTEMPTS": str(max_attempts),
        "AWS_RETRY_MODE": "standard",
        "AWS_MAX_ATTEMPTS": str(max_attempts),
    }
    with environment(variables):
        yield


@contextmanager
def environment(variables: dict[str, str]) -> Iterator[None]:
    """``variables`` set in the process environment, then restored as they were."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@dataclass(frozen=True)
class SyncOutcome:
    ok: bool
    detail: str


class SyncSystem(Protocol):
    name: str

    def prepare(self) -> None:
        """One-off setup before the first sync (not part of any scenario's numbers)."""

    def sync(self) -> SyncOutcome:
        """What runs on a schedule or a sensor tick."""

    def recover(self) -> SyncOutcome:
        """What an operator gets after a failed sync: the next tick or run, or a re-run."""


def _error_text(error: Exception) -> str:
    if isinstance(error, ClientError):
        details = error.response.get("Error", {})
        return f"{error.operation_name}: {details.get('Code')}: {details.get('Message')}"
    return f"{type(error).__name__}: {error}"


class BaselineSystem:
    name = "baseline"

    def __init__(self, platform: SeededPlatform, delimiter: str = VALID_DELIMITER) -> None:
        self.config = ReferenceConfig.from_environment(platform.environment, delimiter=delimiter)

    def prepare(self) -> None:
        ensure_reference_types(ReferenceClients.create(), self.config)

    def sync(self) -> SyncOutcome:
        try:
            # Built on each run, as a scheduled function builds them (and the project's runs do).
            run = run_reference_design(ReferenceClients.create(), self.config)
        except (ClientError, BotoCoreError) as error:
            return SyncOutcome(False, f"crashed: {_error_text(error)}")
        return SyncOutcome(
            True, f"{run.created} created, {run.revised} revised, {run.events_posted} events"
        )

    def recover(self) -> SyncOutcome:
        return self.sync()


def code_location(environ: Mapping[str, str]) -> Definitions:
    """The code location as a process started with ``environ`` loads it.

    ``defs`` itself was built when this process imported it, and reads optional settings
    (``DZLINEAGE_MAX_ATTEMPTS``...) only if they were set then.
    """
    return Definitions(
        assets=defs.assets,
        asset_checks=defs.asset_checks,
        jobs=defs.jobs,
        schedules=defs.schedules,
        sensors=defs.sensors,
        resources=build_resources(environ),
    )


@dataclass
class SensorJobSystem:
    name = "sensor+job"
    definitions: Definitions = field(default_factory=lambda: code_location(os.environ))
    instance: DagsterInstance = field(default_factory=DagsterInstance.ephemeral)
    cursor: str | None = None
    failed_requests: list[RunRequest] = field(default_factory=list)

    def prepare(self) -> None:
        pass

    def tick(self) -> SensorResult:
        """One sensor evaluation, its partition requests applied as the daemon would."""
        definitions = self.definitions
        with build_sensor_context(
            instance=self.instance,
            cursor=self.cursor,
            definitions=definitions,
            resources=definitions.resources,
        ) as context:
            result = registry_schema_sensor(context)
        self.cursor = result.cursor
        for request in result.dynamic_partitions_requests or []:
            name, keys = request.partitions_def_name, list(request.partition_keys)
            if isinstance(request, AddDynamicPartitionsRequest):
                self.instance.add_dynamic_partitions(name, keys)
            elif isinstance(request, DeleteDynamicPartitionsRequest):
                for key in keys:
                    self.instance.delete_dynamic_partition(name, key)
        return result

    def execute(self, request: RunRequest) -> bool:
        job = self.definitions.resolve_job_def(request.job_name)
        result = job.execute_in_process(
            instance=self.instance,
            tags=request.tags,
            run_config={**(request.run_config or {}), **QUIET_RUN_CONFIG},
            raise_on_error=False,
        )
        return result.success

    def _run_all(self, requests: list[RunRequest], how: str) -> SyncOutcome:
        self.failed_requests = [r for r in requests if not self.execute(r)]
        failed = len(self.failed_requests)
        partitions = sum(_partition_count(self.instance, r) for r in requests)
        detail = f"{how}: {len(requests)} runs over {partitions} partitions, {failed} failed"
        return SyncOutcome(failed == 0, detail)

    def sync(self) -> SyncOutcome:
        return self._run_all(list(self.tick().run_requests or []), "tick")

    def recover(self) -> SyncOutcome:
        """The next tick; when it requests nothing (its cursor moved on), re-launch what failed."""
        failed_before = self.failed_requests
        requests = list(self.tick().run_requests or [])
        if requests or not failed_before:
            return self._run_all(requests, "tick")
        return self._run_all(failed_before, "tick requested nothing; re-launched the failed runs")


def _partition_count(instance: DagsterInstance, request: RunRequest) -> int:
    start = request.tags.get("dagster/asset_partition_range_start")
    end = request.tags.get("dagster/asset_partition_range_end")
    if start is None:
        return 0
    keys = instance.get_dynamic_partitions(kafka_topics.name)
    return keys.index(end) - keys.index(start) + 1


class HeadlessSystem:
    name = "sync"

    def prepare(self) -> None:
        pass

    def sync(self) -> SyncOutcome:
        out = io.StringIO()
        try:
            code = run_headless_sync(LineageSettings.from_env(), dry_run=False, out=out)
        except (ClientError, BotoCoreError) as error:
            # `dzlineage sync` ends with this traceback and exit status 1.
            return SyncOutcome(False, f"crashed: {_error_text(error)}")
        summary = out.getvalue().strip().splitlines()[-1]
        return SyncOutcome(code == 0, summary)

    def recover(self) -> SyncOutcome:
        return self.sync()


SYSTEM_NAMES = (BaselineSystem.name, SensorJobSystem.name, HeadlessSystem.name)


def make_system(name: str, platform: SeededPlatform) -> SyncSystem:
    if name == BaselineSystem.name:
        return BaselineSystem(platform)
    if name == SensorJobSystem.name:
        return SensorJobSystem()
    if name == HeadlessSystem.name:
        return HeadlessSystem()
    raise ValueError(f"unknown system {name!r}; choose from {SYSTEM_NAMES}")
