"""The platform's Debezium connectors as the relay's renaming needs them, read from MSK Connect
at most every ``DZLINEAGE_RELAY_DEBEZIUM_TTL_SECONDS`` and only when an event asks (one that
names a topic ``kafka://unknown:unknown``), so a relay that never meets one never reads them.

A read that fails keeps the connectors last read (none at first), logs why, and is tried again
after the same wait: the event is then forwarded with the name Debezium gave it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.connectors.debezium import is_debezium_source, parse_debezium_source
from dzlineage_dagster.core.connectors.transforms import ConnectorConfigError
from dzlineage_dagster.core.identity.kafka import DebeziumTopics

log = logging.getLogger("dzlineage.relay")


class DebeziumConnectors:
    """A callable giving the :class:`DebeziumTopics` of the connectors MSK Connect lists now."""

    def __init__(
        self, msk: Any, ttl_seconds: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.msk = msk
        self.ttl_seconds = ttl_seconds
        self.clock = clock
        self._lock = threading.Lock()
        self._read_at: float | None = None
        self._topics = DebeziumTopics()

    def __call__(self) -> DebeziumTopics:
        with self._lock:
            now = self.clock()
            if self._read_at is None or now - self._read_at >= self.ttl_seconds:
                self._read_at = now
                self._read()
            return self._topics

    def _read(self) -> None:
        try:
            described = self.msk.connectors()
        except (BotoCoreError, ClientError) as error:
            log.warning("cannot read the MSK Connect connectors: %s", error)
            return
        sources = []
        for connector in described:
            name, config = connector["connectorName"], connector.get("connectorConfiguration") or {}
            if not is_debezium_source(config):
                continue
            try:
                sources.append(parse_debezium_source(name, config))
            except ConnectorConfigError as error:
                log.warning("connector %s is left out of the relay's renaming: %s", name, error)
        self._topics = DebeziumTopics(tuple(sources))
