"""How fast and how strict the sandbox is: per-call service time and per-account rate quotas.

Both are off by default, so tests stay fast. ``dzlineage sandbox --latency MS|aws`` makes every
call take a service time, and ``--quotas aws`` answers calls over the published per-account
rates with ``ThrottlingException``, as AWS does (status 429 for the REST-JSON DataZone and MSK
Connect APIs, 400 for the JSON-1.1 Glue and SSM APIs).

The ``aws`` latency model (:data:`AWS_SERVICE_TIMES`): service times of the order a client in
the same Region sees. AWS publishes none; these are round figures from the latency a boto3
client in-Region typically observes: reads tens of milliseconds, writes more, DataZone's writes
(which index the asset for search and lineage) the most.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from dzlineage_dagster.core.aws_quotas import AWS_QUOTAS
from dzlineage_dagster.core.rate_limit import TokenBucket

#: Seconds per call of the ``aws`` model, by ``service.Operation``; others by their verb.
AWS_SERVICE_TIMES: Mapping[str, float] = {
    "datazone.CreateAsset": 0.150,
    "datazone.CreateAssetRevision": 0.150,
    "datazone.DeleteAsset": 0.100,
    "datazone.CreateFormType": 0.150,
    "datazone.CreateAssetType": 0.150,
    "datazone.PostLineageEvent": 0.080,
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


@dataclass
class Quotas:
    """Per-account token buckets; ``rates`` empty = no quotas (the default)."""

    rates: dict[str, float] = field(default_factory=dict)
    #: Operation -> the name of the bucket it draws from (SSM's reads share one).
    buckets_of: dict[str, str] = field(default_factory=dict)
    _buckets: dict[str, TokenBucket] = field(default_factory=dict, init=False)

    @classmethod
    def parse(cls, text: str) -> Quotas:
        if text == "off":
            return cls()
        if text != "aws":
            raise ValueError(f"--quotas {text!r}: say 'aws' (DataZone's published rates) or 'off'")
        return cls(
            {name: quota.rate for name, quota in AWS_QUOTAS.items()},
            {name: quota.bucket for name, quota in AWS_QUOTAS.items()},
        )

    def __post_init__(self) -> None:
        for name, rate in self.rates.items():
            bucket = self.buckets_of.setdefault(name, name)
            # AWS lets a second's worth of calls through at once, then holds the rate.
            self._buckets.setdefault(bucket, TokenBucket(rate, capacity=max(1.0, rate)))

    def describe(self) -> str:
        return "aws" if self.rates else "off"

    def admits(self, service: str, operation: str | None, now: float | None = None) -> bool:
        """Whether the call is within its quota (a call with no quota always is)."""
        bucket = self.buckets_of.get(f"{service}.{operation}")
        if bucket is None:
            return True
        return self._buckets[bucket].try_take(time.monotonic() if now is None else now)
