"""A self-managed Kafka Connect cluster's REST API: the alternative to MSK Connect for reading
the connectors (setting ``DZLINEAGE_KAFKA_CONNECT_URL``).

One call, ``GET /connectors?expand=info&expand=status``, answers every connector with its
configuration (Kafka Connect 2.3+, KIP-465), so reading the topology costs one request
however many connectors run.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

#: Kafka Connect answers fast or not at all; a hung endpoint must not hang a sensor tick.
REQUEST_TIMEOUT_SECONDS = 30


class KafkaConnectRestError(RuntimeError):
    """The endpoint could not be read; the message names the URL and the setting."""


def read_kafka_connect_connectors(base_url: str) -> dict[str, dict[str, str]]:
    """Connector name -> its configuration, from ``GET {base_url}/connectors?expand=info``."""
    url = base_url.rstrip("/") + "/connectors?expand=info&expand=status"
    where = f"Kafka Connect REST endpoint {url} (DZLINEAGE_KAFKA_CONNECT_URL)"
    try:
        with urllib.request.urlopen(url, timeout=REQUEST_TIMEOUT_SECONDS) as response:
            document: Any = json.load(response)
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise KafkaConnectRestError(f"{where} could not be read: {error}") from error
    if not isinstance(document, dict):
        raise KafkaConnectRestError(
            f"{where} answered {type(document).__name__}, not an object of connectors "
            "(a Kafka Connect older than 2.3 ignores ?expand=info)"
        )
    connectors = {}
    for name, entry in document.items():
        config = (entry or {}).get("info", {}).get("config") if isinstance(entry, dict) else None
        if not isinstance(config, dict):
            raise KafkaConnectRestError(f"{where}: connector {name!r} has no info.config")
        connectors[str(name)] = {str(k): str(v) for k, v in config.items()}
    return connectors
