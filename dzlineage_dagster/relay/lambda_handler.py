"""The relay as an AWS Lambda function behind a function URL (payload format 2.0).

Handler: ``dzlineage_dagster.relay.lambda_handler.handler``; settings come from the function's
environment variables, as for the server. The trade-off against the server: a Lambda has no
disk that outlives it and no thread that runs between invocations, so there is no spool. Each
event is forwarded while the producer waits; when DataZone throttles or fails the producer gets
503 with ``Retry-After`` and its own transport retries (the OpenLineage HTTP transport retries
5xx). Nothing is lost as long as the producer retries; order across retries is the producer's.
Nor does it hold a streaming run's datasets between events: an execution environment's memory
is not one every event of a run reaches (docs/relay.md, "Streaming runs").
"""

from __future__ import annotations

import base64
import json
from typing import Any

from dzlineage_dagster.relay.build import build_relay
from dzlineage_dagster.relay.service import Relay
from dzlineage_dagster.relay.settings import RelaySettings

_relay: Relay | None = None


def _the_relay() -> Relay:
    """One relay per execution environment: its clients and broker lookup are reused."""
    global _relay
    if _relay is None:
        _relay = build_relay(RelaySettings.from_env(), with_spool=False)
    return _relay


def handler(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """Answer one function-URL request with the relay's response."""
    relay = _the_relay()
    http = event.get("requestContext", {}).get("http", {})
    # Function URLs lower-case header names; look up case-insensitively all the same.
    headers = {name.lower(): value for name, value in (event.get("headers") or {}).items()}
    body = event.get("body") or ""
    try:
        # A lone surrogate passes into bytes that are not UTF-8: the relay answers 400 for it.
        raw = (
            base64.b64decode(body, validate=True)
            if event.get("isBase64Encoded")
            else body.encode("utf-8", "surrogatepass")
        )
    except ValueError as error:  # binascii.Error is one
        relay.count("received")
        answer = relay.refuse(400, f"the body is not valid base64: {error}")
    else:
        answer = relay.route(
            http.get("method", "GET"),
            event.get("rawPath") or http.get("path", "/"),
            lambda name: headers.get(name.lower()),
            raw,
        )
    return {
        "statusCode": answer.status,
        "headers": {"content-type": "application/json", **answer.headers},
        "body": json.dumps(answer.body),
        "isBase64Encoded": False,
    }
