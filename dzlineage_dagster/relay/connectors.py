"""The platform's Debezium connectors as the relay's renaming needs them, read from MSK Connect
at most every ``DZLINEAGE_RELAY_DEBEZIUM_TTL_SECONDS`` and only when an event asks (one that
names a topic ``kafka://unknown:unknown``), so a relay that never meets one never reads them.

A read that fails keeps the connectors last read (none at first), logs why, and is tried again
after the same wait: the event is then forwarded with the name Debezium gave it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from dzlineage_dagster.core.connectors.debezium import is_debezium_source, parse_debezium_source
from dzlineage_dagster.core.connectors.transforms import ConnectorConfigError
from dzlineage_dagster.core.identity.kafka import DebeziumTopics
from dzlineage_dagster.relay.platform.refreshed import Refreshed

log = logging.getLogger("dzlineage.relay")


def debezium_connectors(
    msk: Any, ttl_seconds: float, clock: Callable[[], float] = time.monotonic
) -> Callable[[], DebeziumTopics]:
    """A callable giving the :class:`DebeziumTopics` of the connectors MSK Connect lists now."""
    return Refreshed(
        lambda: _debezium_topics(msk.connectors()),
        ttl_seconds,
        what="the MSK Connect connectors",
        meanwhile="Debezium's kafka://unknown:unknown is forwarded as sent",
        initial=DebeziumTopics(),
        clock=clock,
    ).current


def _debezium_topics(described: list[dict[str, Any]]) -> DebeziumTopics:
    sources = []
    for connector in described:
        name, config = connector["connectorName"], connector.get("connectorConfiguration") or {}
        if not is_debezium_source(config):
            continue
        try:
            sources.append(parse_debezium_source(name, config))
        except ConnectorConfigError as error:
            log.warning("connector %s is left out of the relay's renaming: %s", name, error)
    return DebeziumTopics(tuple(sources))
