"""How fast and how strict the sandbox is: per-call service time and per-account rate quotas.

Both are off by default, so tests stay fast. ``dzlineage sandbox --latency MS|aws`` makes every
call take a service time, and ``--quotas aws`` answers calls over the product's per-account
pacing table with ``ThrottlingException``, as AWS does (status 429 for the REST-JSON DataZone and MSK
Connect APIs, 400 for the JSON-1.1 Glue and SSM APIs). ``--quotas`` also takes figures of its
own (``datazone.CreateAsset=10,...`` or a JSON file), independent of the product's table: the
sandbox then throttles at them and its Service Quotas API reports them
(:mod:`.service_quotas`), so a benchmark or ``dzlineage doctor`` can meet an account whose
quotas are not the ones the code paces at.

The ``aws`` latency model (:data:`AWS_SERVICE_TIMES`): service times of the order a client in
the same Region sees. AWS publishes none; these are round figures from the latency a boto3
client in-Region typically observes: reads tens of milliseconds, writes more, DataZone's writes
(which index the asset for search and lineage) the most.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dzlineage_dagster.core.aws.quotas import AWS_QUOTAS, checked_rate, parse_rates
from dzlineage_dagster.core.aws.rate_limit import TokenBucket

#: Seconds per call of the ``aws`` model, by ``service.Operation``; others by their verb.
AWS_SERVICE_TIMES: Mapping[str, float] = {
    "datazone.CreateAsset": 0.150,
    "datazone.CreateAssetRevision": 0.150,
    "datazone.DeleteAsset": 0.100,
    "datazone.CreateFormType": 0.150,
    "datazone.CreateAssetType": 0.150,
    "datazone.PostLineageEvent": 0.080,
    "glue.PostLineageEvent": 0.080,
    "datazone.Search": 0.080,
    "ssm.PutParameter": 0.040,
    "ssm.DeleteParameter": 0.040,
}
#: The ``aws`` model for operations not listed above.
AWS_READ_TIME = 0.030
AWS_WRITE_TIME = 0.060
_READ_VERBS = ("Get", "List", "Describe", "Search", "Batch")


def aws_service_time(service: str, operation: str | None) -> float:
    name = f"{service}.{operation}"
    if name in AWS_SERVICE_TIMES:
        return AWS_SERVICE_TIMES[name]
    return AWS_READ_TIME if (operation or "").startswith(_READ_VERBS) else AWS_WRITE_TIME


@dataclass(frozen=True)
class Latency:
    """A fixed service time in seconds, or the ``aws`` model (``fixed`` None)."""

    fixed: float | None = 0.0

    @classmethod
    def parse(cls, text: str) -> Latency:
        """``aws`` or milliseconds (``--latency 25``); ValueError names what is wrong."""
        if text == "aws":
            return cls(None)
        try:
            milliseconds = float(text)
        except ValueError:
            raise ValueError(f"--latency {text!r}: say 'aws' or milliseconds (e.g. 25)") from None
        if milliseconds < 0:
            raise ValueError(f"--latency {text!r}: milliseconds can't be negative")
        return cls(milliseconds / 1000)

    def seconds(self, service: str, operation: str | None) -> float:
        return aws_service_time(service, operation) if self.fixed is None else self.fixed

    def describe(self) -> str | float:
        return "aws" if self.fixed is None else self.fixed * 1000


def _rates_file(path: str) -> dict[str, float]:
    """The ``{"service.Operation": TPS}`` object of a JSON file; ValueError names the problem."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"--quotas {path}: {error}") from None
    if not isinstance(document, dict) or not all("." in str(name) for name in document):
        raise ValueError(
            f'--quotas {path}: the file must hold an object like {{"datazone.CreateAsset": 20}}'
        )
    return {str(name): checked_rate(f"{path}: {name}", rate) for name, rate in document.items()}


@dataclass
class Quotas:
    """Per-account token buckets; ``rates`` empty = no quotas (the default)."""

    rates: dict[str, float] = field(default_factory=dict)
    #: Operation -> the name of the bucket it draws from (SSM's reads share one).
    buckets_of: dict[str, str] = field(default_factory=dict)
    _buckets: dict[str, TokenBucket] = field(default_factory=dict, init=False)

    @classmethod
    def parse(cls, text: str) -> Quotas:
        """``off``; ``aws`` (the product's pacing table, :data:`AWS_QUOTAS`); or figures of the
        caller's own, independent of that table, so a benchmark can disagree with the code:
        ``datazone.CreateAsset=20,ssm.GetParameters=40`` or a JSON file of the same
        (``{"datazone.CreateAsset": 20, ...}``). Each operation of one's own figures has a bucket
        of its own, unless joined by ``+`` (:meth:`shared`). ValueError names what is wrong."""
        if text == "off":
            return cls()
        if text == "aws":
            return cls(
                {name: quota.rate for name, quota in AWS_QUOTAS.items()},
                {name: quota.bucket for name, quota in AWS_QUOTAS.items()},
            )
        if text.endswith(".json"):
            return cls.shared(_rates_file(text))
        try:
            return cls.shared(parse_rates([part for part in text.split(",") if part.strip()]))
        except ValueError as error:
            raise ValueError(
                f"--quotas {text!r}: {error}; say 'off', 'aws', "
                "'<service.Operation>=<TPS>,...' or a JSON file of them"
            ) from None

    @classmethod
    def shared(cls, figures: dict[str, float]) -> Quotas:
        """One's own figures, where ``ssm.GetParameter+ssm.GetParameters=40`` names operations
        that draw from one bucket (as SSM's reads share one published throughput)."""
        rates, buckets_of = {}, {}
        for names, rate in figures.items():
            for name in names.split("+"):
                if "." not in name:
                    raise ValueError(f"{names!r}: {name!r} is not <service.Operation>")
                rates[name.strip()], buckets_of[name.strip()] = rate, names
        return cls(rates, buckets_of)

    def __post_init__(self) -> None:
        for name, rate in self.rates.items():
            bucket = self.buckets_of.setdefault(name, name)
            # AWS lets a second's worth of calls through at once, then holds the rate.
            self._buckets.setdefault(bucket, TokenBucket(rate, capacity=max(1.0, rate)))

    def describe(self) -> str:
        if not self.rates:
            return "off"
        if self.rates == {name: quota.rate for name, quota in AWS_QUOTAS.items()}:
            return "aws"
        return ",".join(f"{name}={rate:g}" for name, rate in sorted(self.rates.items()))

    def admits(self, service: str, operation: str | None, now: float | None = None) -> bool:
        """Whether the call is within its quota (a call with no quota always is)."""
        bucket = self.buckets_of.get(f"{service}.{operation}")
        if bucket is None:
            return True
        return self._buckets[bucket].try_take(time.monotonic() if now is None else now)
