"""Fault injection and the call log of the sandbox endpoint.

Tests and benchmarks need two things from the local AWS stand-in that AWS itself cannot give:
faults on demand (throttling, server errors, a crash between two calls, work that fails after
AWS accepted it) and an exact count of every API call a run made. Both live here, independent of HTTP, so the server only asks "does a
rule fire for this call?" and "record this call".
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

#: What a rule answers with, by name; the status and code are what AWS uses for them.
FAULT_KINDS: dict[str, tuple[str, int]] = {
    "throttle": ("ThrottlingException", 429),
    "server-error": ("InternalServerException", 500),
    "unavailable": ("ServiceUnavailableException", 503),
    "access-denied": ("AccessDeniedException", 403),
    # A refusal no retry can fix, for code that must tell it from a transient failure.
    "invalid": ("ValidationException", 400),
    # A 409 that stored nothing (PostLineageEvent's undocumented conflict, read the other way).
    "conflict": ("ConflictException", 409),
}
#: Rules that do something other than answer an error:
#: ``reset`` closes the connection without an answer (a dropped connection, a load balancer
#: reset); ``hold`` keeps the request before the backend sees it and ``hold-after`` keeps the
#: answer after the backend processed it, each until the test releases it, so a test can kill
#: the calling process at exactly that call. A released ``hold`` drops the request (the
#: connection is reset: AWS never saw it); a released ``hold-after`` sends the answer.
CONNECTION_KINDS = ("reset", "hold", "hold-after")
#: Faults whose call succeeds and whose failure comes later, by name: the calls they apply to.
#: ``fail-after-accept``: PostLineageEvent answers with the event's id as usual, and DataZone's
#: asynchronous processing then ends FAILED (no nodes; ListLineageEvents shows it FAILED);
#: UpdateAssetOwner starts the transfer as usual, and it ends FAILED (the source keeps the asset);
#: Glue's PostLineageEvent answers as usual and its processing fails (no nodes: Glue has no
#: API that reports an event's status).
DEFERRED_FAULT_KINDS: dict[str, dict[str, tuple[str, ...]]] = {
    "fail-after-accept": {
        "datazone": ("PostLineageEvent", "UpdateAssetOwner"),
        "glue": ("PostLineageEvent",),
    },
}


@dataclass
class FaultRule:
    """Make matching calls fail.

    A call matches when its service equals ``service`` and its operation equals ``operation``
    (``"*"`` matches any). ``kind`` is one of :data:`FAULT_KINDS` (the call fails with that
    error) or :data:`DEFERRED_FAULT_KINDS` (the call succeeds and its work fails later; such a
    rule must name its service and one of its operations). A matching call fails with probability ``rate`` (drawn from a random
    generator seeded by ``seed``, so a test run is reproducible), and at most ``count`` times in
    all when ``count`` is set; ``skip`` first lets that many matching calls through untouched.
    """

    service: str
    operation: str = "*"
    kind: str = "throttle"
    rate: float = 1.0
    count: int | None = None
    skip: int = 0
    seed: int = 0
    fired: int = field(default=0, compare=False)
    seen: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        known = [*FAULT_KINDS, *CONNECTION_KINDS, *DEFERRED_FAULT_KINDS]
        if self.kind not in known:
            raise ValueError(f"unknown fault kind {self.kind!r}; choose one of {sorted(known)}")
        if self.deferred:
            applies_to = DEFERRED_FAULT_KINDS[self.kind]
            if self.operation not in applies_to.get(self.service, ()):
                calls = "; ".join(
                    f"{service} {', '.join(operations)}"
                    for service, operations in applies_to.items()
                )
                raise ValueError(
                    f"fault kind {self.kind!r} applies to {calls} only, not "
                    f"{self.service!r} {self.operation!r}"
                )
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"fault rate must be within [0, 1], got {self.rate}")
        self._random = random.Random(self.seed)

    def matches(self, service: str, operation: str | None) -> bool:
        return self.service in ("*", service) and self.operation in ("*", operation)

    def fires(self) -> bool:
        """Count one matching call and tell whether it fails."""
        self.seen += 1
        if self.seen <= self.skip:
            return False
        if self.count is not None and self.fired >= self.count:
            return False
        if self._random.random() >= self.rate:
            return False
        self.fired += 1
        return True

    @property
    def deferred(self) -> bool:
        """Whether the call succeeds and the fault strikes after it (see DEFERRED_FAULT_KINDS)."""
        return self.kind in DEFERRED_FAULT_KINDS

    @property
    def error(self) -> tuple[str, int]:
        return FAULT_KINDS[self.kind]

    def describe(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CallRecord:
    seq: int
    service: str
    operation: str | None
    status: int
    injected: bool
    #: Refused by the sandbox's quotas (``--quotas aws``), not by a fault rule.
    throttled: bool = False
    #: The account whose credentials signed the call (the caller's, not the resource's).
    account: str = ""


class CallLog:
    """Every call the endpoint answered, in order (thread-safe: the server is threaded)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[CallRecord] = []

    def record(
        self,
        service: str,
        operation: str | None,
        status: int,
        injected: bool,
        throttled: bool = False,
        account: str = "",
    ) -> None:
        with self._lock:
            self._records.append(
                CallRecord(
                    len(self._records) + 1, service, operation, status, injected, throttled, account
                )
            )

    def records(self) -> list[CallRecord]:
        with self._lock:
            return list(self._records)

    def clear(self) -> None:
        with self._lock:
            self._records.clear()


@dataclass(frozen=True)
class HeldCall:
    service: str
    operation: str | None
    #: "before": the backend has not seen it; "after": the backend processed it.
    stage: str


class FaultPlan:
    """The rules in force; the first rule that matches a call decides for it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[FaultRule] = []
        self._held_changed = threading.Condition()
        self._held: list[HeldCall] = []
        self._release_generation = 0

    def replace(self, rules: list[FaultRule]) -> None:
        """New rules; calls held by the old ones are released."""
        with self._lock:
            self._rules = list(rules)
        self.release()

    def hold(self, call: HeldCall, timeout: float = 300.0) -> None:
        """Block the calling server thread until :meth:`release` (or ``timeout`` seconds)."""
        with self._held_changed:
            generation = self._release_generation
            self._held.append(call)
            self._held_changed.notify_all()
            self._held_changed.wait_for(
                lambda: self._release_generation != generation, timeout=timeout
            )
            if call in self._held:
                self._held.remove(call)

    def held(self) -> list[HeldCall]:
        with self._held_changed:
            return list(self._held)

    def release(self) -> None:
        with self._held_changed:
            self._release_generation += 1
            self._held.clear()
            self._held_changed.notify_all()

    def rules(self) -> list[FaultRule]:
        with self._lock:
            return list(self._rules)

    def draw(self, service: str, operation: str | None) -> FaultRule | None:
        with self._lock:
            for rule in self._rules:
                if rule.matches(service, operation):
                    return rule if rule.fires() else None
        return None


def count_calls(records: list[CallRecord]) -> Counter[tuple[str, str | None]]:
    """Calls per (service, operation), the unit benchmarks and tests compare."""
    return Counter((r.service, r.operation) for r in records)
