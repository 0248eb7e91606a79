"""The measured scenarios: each system on its own freshly seeded platform.

Per number of topics and system: a fresh sandbox state, the synthetic platform seeded, the
system prepared, then (1) the first sync, (2) an idle rerun with nothing changed, (3) a rerun
after one schema got a new version. Each cell holds the calls of exactly that sync (the
sandbox's log is cleared before it and read right after it), its wall time, and what DataZone
holds afterwards. The fault scenarios throttle DataZone calls and give each system up to three
runs to converge; the delimiter probe runs the reference with its own SSM naming.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from benchmarks.baseline import LITERAL_DELIMITER, ReferenceConfig, parameter_name
from benchmarks.measure import CallMetrics, CatalogCheck, check_catalog, peak_resident_mb
from benchmarks.sandbox_process import SandboxProcess
from benchmarks.synthetic_platform import (
    SeededPlatform,
    boto3_client,
    register_new_version,
    seed_synthetic_platform,
)
from benchmarks.systems import (
    DEFAULT_MAX_ATTEMPTS,
    BaselineSystem,
    SyncOutcome,
    SyncSystem,
    make_system,
    pointed_at,
)
from dzlineage_dagster.sandbox.server.control import SandboxControl
from dzlineage_dagster.sandbox.server.faults import FaultRule

FIRST_SYNC, IDLE_RERUN, NEW_VERSION = "first sync", "idle rerun", "one new version"
SCENARIOS = (FIRST_SYNC, IDLE_RERUN, NEW_VERSION)
MAX_FAULT_RUNS = 3


class Endpoint(Protocol):
    """A running sandbox: the in-process one of the tests or a :class:`SandboxProcess`."""

    endpoint_url: str

    @property
    def control(self) -> SandboxControl: ...


@dataclass(frozen=True)
class Measurement:
    outcome: SyncOutcome
    seconds: float
    calls: CallMetrics
    #: The benchmark process's highest resident memory during the run (MB).
    peak_mb: float

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.outcome.ok,
            "detail": self.outcome.detail,
            "seconds": round(self.seconds, 3),
            "peak_mb": round(self.peak_mb, 1),
            "calls": {**asdict(self.calls), "writes": self.calls.writes},
        }


def measure(control: SandboxControl, action: Callable[[], SyncOutcome]) -> Measurement:
    """Run ``action``, timing it and reading exactly the calls it made from the sandbox log."""
    control.clear_calls()
    started = time.perf_counter()
    with peak_resident_mb() as peak:
        outcome = action()
    seconds = time.perf_counter() - started
    return Measurement(outcome, seconds, CallMetrics.from_records(control.calls()), peak[0])


@dataclass(frozen=True)
class Cell:
    """One system in one scenario at one size."""

    topics: int
    scenario: str
    system: str
    repeat: int
    measurement: Measurement
    catalog: CatalogCheck

    def to_json(self) -> dict[str, Any]:
        return {
            "topics": self.topics,
            "scenario": self.scenario,
            "system": self.system,
            "repeat": self.repeat,
            **self.measurement.to_json(),
            "catalog": self.catalog.to_json(),
        }


@dataclass
class FreshPlatform:
    """A reset sandbox seeded with ``topics`` topics, and how long seeding took."""

    platform: SeededPlatform
    seed_seconds: float


def warm_up(endpoint: Endpoint) -> None:
    """Make each service's first call once, before any measurement.

    A new sandbox process imports and builds each moto backend on its first call (SSM loads
    AWS's public parameters: seconds); that one-off cost belongs to no system.
    """
    platform = fresh_platform(endpoint, topics=1).platform
    ssm = boto3_client(endpoint.endpoint_url, "ssm")
    ssm.get_parameters_by_path(Path="/warm-up", Recursive=True)
    datazone = boto3_client(endpoint.endpoint_url, "datazone")
    datazone.get_domain(identifier=platform.environment["DZLINEAGE_DOMAIN_ID"])
    endpoint.control.reset()


def fresh_platform(endpoint: Endpoint, topics: int) -> FreshPlatform:
    endpoint.control.reset()
    started = time.perf_counter()
    platform = seed_synthetic_platform(endpoint.endpoint_url, topics)
    return FreshPlatform(platform, time.perf_counter() - started)


def changed_topic(platform: SeededPlatform) -> str:
    """The topic whose schema gets a new version: one in the middle of the partition order."""
    topics = sorted(platform.topics)
    return topics[len(topics) // 2]


@dataclass(frozen=True)
class SystemRun:
    """The scenarios of one system on its own platform, and how long seeding that took."""

    cells: list[Cell]
    seed_seconds: float


def bench_system(endpoint: Endpoint, system_name: str, topics: int, repeat: int = 1) -> SystemRun:
    """The three scenarios, in order, for one system on its own fresh platform."""
    fresh = fresh_platform(endpoint, topics)
    platform = fresh.platform
    cells = []
    with pointed_at(platform):
        system = make_system(system_name, platform)
        system.prepare()
        for scenario in SCENARIOS:
            if scenario == NEW_VERSION:
                register_new_version(platform, changed_topic(platform))
            measurement = measure(endpoint.control, system.sync)
            catalog = check_catalog(platform)
            cells.append(Cell(topics, scenario, system.name, repeat, measurement, catalog))
    return SystemRun(cells, fresh.seed_seconds)


# --- faults -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FaultPlan:
    """Which DataZone calls are throttled, how often, and botocore's attempts per call."""

    rate: float
    operation: str = "*"
    attempts_per_call: int = DEFAULT_MAX_ATTEMPTS
    #: Added to the run number to seed each run's draws (tests pick draws that hit what they test).
    seed: int = 0

    def rule(self, run: int) -> FaultRule:
        """The rule for the ``run``-th run: each run draws its own sequence."""
        return FaultRule(
            service="datazone",
            operation=self.operation,
            kind="throttle",
            rate=self.rate,
            seed=self.seed + run,
        )

    def describe(self) -> str:
        calls = "every DataZone call" if self.operation == "*" else f"DataZone {self.operation}"
        retries = (
            f"{self.attempts_per_call} attempts per call"
            if self.attempts_per_call > 1
            else "no retries (1 attempt per call)"
        )
        return f"{self.rate:.0%} ThrottlingException on {calls}, {retries}"


@dataclass(frozen=True)
class FaultRun:
    measurement: Measurement
    catalog: CatalogCheck

    @property
    def converged(self) -> bool:
        return self.measurement.outcome.ok and self.catalog.ok

    def to_json(self) -> dict[str, Any]:
        return {**self.measurement.to_json(), "catalog": self.catalog.to_json()}


@dataclass
class FaultResult:
    system: str
    topics: int
    plan: FaultPlan
    runs: list[FaultRun] = field(default_factory=list)

    @property
    def converged(self) -> bool:
        return bool(self.runs) and self.runs[-1].converged

    def to_json(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "topics": self.topics,
            "plan": asdict(self.plan),
            "converged": self.converged,
            "runs": [run.to_json() for run in self.runs],
        }


def bench_faults(endpoint: Endpoint, system_name: str, topics: int, plan: FaultPlan) -> FaultResult:
    """The first sync under ``plan``, then the system's recovery (tick, run or re-run) until
    DataZone holds one current asset per schema and every edge, at most three runs in all."""
    platform = fresh_platform(endpoint, topics).platform
    control = endpoint.control
    result = FaultResult(system_name, topics, plan)
    with pointed_at(platform, plan.attempts_per_call):
        system: SyncSystem = make_system(system_name, platform)
        system.prepare()
        for run in range(1, MAX_FAULT_RUNS + 1):
            control.set_faults(plan.rule(run))
            try:
                measurement = measure(control, system.sync if run == 1 else system.recover)
            finally:
                control.clear_faults()
            result.runs.append(FaultRun(measurement, check_catalog(platform)))
            if result.runs[-1].converged:
                break
    return result


def faults_in_own_sandbox(system_name: str, topics: int, plan: FaultPlan) -> FaultResult:
    """:func:`bench_faults` in a process of its own (its own sandbox and environment), so that
    fault runs, which mostly sleep in botocore's backoff, can overlap."""
    warnings.filterwarnings("ignore")
    with SandboxProcess() as endpoint:
        warm_up(endpoint)
        return bench_faults(endpoint, system_name, topics, plan)


# --- the reference's own delimiter ------------------------------------------------------------


@dataclass(frozen=True)
class DelimiterProbe:
    """Two runs of the reference with its literal delimiter, and what they left behind."""

    delimiter: str
    parameter_name: str
    runs: list[Measurement]
    catalog: CatalogCheck

    def to_json(self) -> dict[str, Any]:
        return {
            "delimiter": self.delimiter,
            "parameter_name": self.parameter_name,
            "runs": [run.to_json() for run in self.runs],
            "catalog": self.catalog.to_json(),
        }


def probe_literal_delimiter(endpoint: Endpoint, topics: int = 3) -> DelimiterProbe:
    platform = fresh_platform(endpoint, topics).platform
    with pointed_at(platform):
        system = BaselineSystem(platform, delimiter=LITERAL_DELIMITER)
        system.prepare()
        runs = [measure(endpoint.control, system.sync) for _ in range(2)]
    config = ReferenceConfig.from_environment(platform.environment, delimiter=LITERAL_DELIMITER)
    first_arn = platform.topics[min(platform.topics)].schema_arn
    return DelimiterProbe(
        LITERAL_DELIMITER, parameter_name(config, first_arn), runs, check_catalog(platform)
    )


def print_per_size(
    measure: Callable[[Any, int], list[str]], argv: list[str], default_sizes: list[int]
) -> int:
    """``measure(endpoint, N)``'s lines for each size ``argv`` names (else ``default_sizes``),
    against one fresh sandbox process, warmed up first."""
    warnings.filterwarnings("ignore")
    sizes = [int(a) for a in argv] or default_sizes
    with SandboxProcess() as endpoint:
        warm_up(endpoint)
        for topics in sizes:
            print(*measure(endpoint, topics), sep="\n", flush=True)
    return 0
