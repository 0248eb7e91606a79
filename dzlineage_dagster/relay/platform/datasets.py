"""What the relay forwards under names that are none of the platform's nodes, and the platform's
nodes it measures them against.

:class:`PlatformCache` reads the platform's own dataset identities
(:func:`~dzlineage_dagster.sync.lineage.platform_graph.platform_datasets`: the registry's topics,
the Glue tables, the captured source tables, read as a sync reads them) at most once per TTL;
:class:`UnmappedReport` counts each unmapped dataset identity, keeps a few examples of the events
that named it, logs it once, and shows all of it in ``/status``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dzlineage_dagster.core.lineage.relay_events import PlatformDatasets, UnmappedDataset
from dzlineage_dagster.relay.platform.refreshed import Refreshed

log = logging.getLogger("dzlineage.relay")

#: Identities ``/status`` lists at most (the relay's memory stays bounded whatever producers
#: send); past it, further identities are counted together, not listed or logged one by one.
MAX_IDENTITIES = 200
#: Examples kept per identity: the first events that named it.
MAX_EXAMPLES = 3


class PlatformCache(Refreshed[PlatformDatasets | None]):
    """The platform's identities (:class:`Refreshed`: read again once ``ttl_seconds`` have
    passed, a failed read keeps the last good answer, None before the first)."""

    def __init__(
        self,
        read: Callable[[], PlatformDatasets],
        ttl_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(
            read,
            ttl_seconds,
            what="the platform's datasets",
            meanwhile="unmapped datasets are not reported",
            initial=None,
            clock=clock,
        )

    def status(self) -> dict[str, Any]:
        with self._lock:
            known = self._value
            return {
                "datasets": len(known.identities) if known else None,
                "reads": self.reads,
                "ttl_seconds": self.ttl_seconds,
                "error": self.error,
            }


@dataclass
class _Seen:
    reason: str
    fix: str | None
    count: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)


class UnmappedReport:
    """Per unmapped dataset identity: how many events named it, why, the fix (where there is
    one) and the first few events; one log line when an identity is first seen."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[str, _Seen] = {}
        self.events = 0
        #: Times a dataset beyond the first :data:`MAX_IDENTITIES` identities was named.
        self.unlisted = 0

    def note(self, found: UnmappedDataset, example: dict[str, Any]) -> None:
        with self._lock:
            self.events += 1
            seen = self._seen.get(found.identity)
            if seen is None:
                if len(self._seen) >= MAX_IDENTITIES:
                    if not self.unlisted:
                        log.warning(
                            "more than %d unmapped datasets: further ones are counted in "
                            "/status, not listed or logged",
                            MAX_IDENTITIES,
                        )
                    self.unlisted += 1
                    return
                seen = self._seen[found.identity] = _Seen(found.reason, found.fix)
                fix = f"; fix: {found.fix}" if found.fix else ""
                log.warning(
                    "unmapped dataset %s (job %s): %s%s",
                    found.identity,
                    example.get("job"),
                    found.reason,
                    fix,
                )
            seen.count += 1
            if len(seen.examples) < MAX_EXAMPLES:
                seen.examples.append(example)

    def status(self) -> dict[str, Any]:
        with self._lock:
            return {
                "identities": len(self._seen),
                "events": self.events,
                "unlisted_events": self.unlisted,
                "datasets": [
                    {
                        "dataset": identity,
                        "count": seen.count,
                        "reason": seen.reason,
                        **({"fix": seen.fix} if seen.fix else {}),
                        "examples": list(seen.examples),
                    }
                    for identity, seen in sorted(
                        self._seen.items(), key=lambda item: (-item[1].count, item[0])
                    )
                ],
            }
