"""What the change queue's sensor remembers between ticks, small whatever the registry's size.

A message is deleted only once Dagster has recorded the runs it asked for: a tick keeps the
receipt handles of what it read (``pending``) in its cursor, which Dagster commits with the
tick's run requests, and the next tick deletes them first. A message whose visibility ran out
meanwhile comes back; ``handled`` (each change's token, by topic or event, for a day) makes it
request nothing new.

Whether a requested run failed is read from Dagster for the topics this cursor names only
(``watch``: requested, outcome not seen yet; ``retry``: failed, waiting for a retry), never for
every partition, so an idle tick reads nothing from Dagster's storage whatever the estate's size.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: How long a handled change is remembered: longer than any visibility timeout (SQS: at most
#: 12 hours), so a message received again is known; a change redelivered later asks for one
#: more run, which finds its topic synced.
HANDLED_SECONDS = 24 * 3600
#: The most handled changes kept (the oldest go first): a cursor of a few hundred kilobytes.
MAX_HANDLED = 5000
#: A handled topic whose schemas left the registry.
REMOVED = "removed"


@dataclass
class QueueCursor:
    #: Receipt handles of the messages the tick read, deleted by the next tick.
    pending: list[str] = field(default_factory=list)
    #: Topic or ``event:<id>`` -> (token of what was requested, when, epoch seconds).
    handled: dict[str, tuple[str, float]] = field(default_factory=dict)
    #: The failed topics' retries (``RetrySchedule.to_json`` of ``catalog.registry_cursor``,
    #: which reads this field), as the registry sensor keeps them.
    retry: dict[str, Any] = field(default_factory=dict)
    #: Topic -> (its newest planned materialization's storage id when its sync was requested,
    #: when, epoch seconds): a topic leaves once a later run planned it and finished (failed:
    #: ``retry`` takes it), or after :data:`HANDLED_SECONDS` (its run never came).
    watch: dict[str, tuple[int, float]] = field(default_factory=dict)

    @classmethod
    def from_text(cls, text: str | None) -> QueueCursor:
        if not text:
            return cls()
        data = json.loads(text)
        return cls(
            list(data.get("pending", [])),
            {key: (token, float(at)) for key, (token, at) in data.get("handled", {}).items()},
            dict(data.get("retry", {})),
            {
                topic: (int(planned), float(at))
                for topic, (planned, at) in data.get("watch", {}).items()
            },
        )

    def to_json(self) -> str:
        return json.dumps(
            {
                "pending": self.pending,
                "handled": {k: list(v) for k, v in self.handled.items()},
                "retry": self.retry,
                "watch": {k: list(v) for k, v in self.watch.items()},
            },
            separators=(",", ":"),
        )

    def seen(self, key: str, token: str) -> bool:
        """Whether ``key``'s change of this ``token`` was handled already (a redelivery)."""
        return self.handled.get(key, ("", 0.0))[0] == token

    def after(
        self,
        pending: list[str],
        handled: Mapping[str, str],
        now: float,
        retry: Mapping[str, Any] | None = None,
        watch: Mapping[str, tuple[int, float]] | None = None,
    ) -> QueueCursor:
        """The next tick's cursor: its ``pending`` handles, ``handled`` remembered at ``now``
        (the changes older than :data:`HANDLED_SECONDS`, and past :data:`MAX_HANDLED` the
        oldest, forgotten), the ``retry`` schedule and the topics to ``watch`` (those watched
        longer than :data:`HANDLED_SECONDS` forgotten)."""
        kept = {k: v for k, v in self.handled.items() if now - v[1] < HANDLED_SECONDS}
        kept.update({key: (token, now) for key, token in handled.items()})
        newest = sorted(kept.items(), key=lambda item: item[1][1])[-MAX_HANDLED:]
        watched = {k: v for k, v in (watch or {}).items() if now - v[1] < HANDLED_SECONDS}
        return QueueCursor(list(pending), dict(newest), dict(retry or {}), watched)
