"""The relay's Lambda adapter, called with function-URL events (payload format 2.0)."""

from __future__ import annotations

import base64
import gzip
import json

import pytest
from openlineage.client.event_v2 import OutputDataset

from benchmarks.relay_process import API_KEY
from dzlineage_dagster.relay import lambda_handler
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster_tests.relay.conftest import events_per_run
from dzlineage_dagster_tests.relay.events import run_event, to_json


@pytest.fixture
def handler(module_platform, monkeypatch):
    for name, value in module_platform.environment.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("DZLINEAGE_RELAY_API_KEY", API_KEY)
    monkeypatch.setattr(lambda_handler, "_relay", None)  # a fresh execution environment
    return lambda_handler.handler


def function_url_event(method: str, path: str, body: bytes = b"", **headers: str) -> dict:
    """What a Lambda function URL hands the function: lower-cased headers, binary in base64."""
    binary = headers.get("content-encoding") == "gzip"
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {"host": "abc123.lambda-url.us-east-1.on.aws", **headers},
        "requestContext": {
            "accountId": "anonymous",
            "apiId": "abc123",
            "domainName": "abc123.lambda-url.us-east-1.on.aws",
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "10.0.0.1",
            },
            "requestId": "3f1d2c1e-0000-4000-8000-000000000000",
            "timeEpoch": 1780000000000,
        },
        "body": base64.b64encode(body).decode() if binary else body.decode(),
        "isBase64Encoded": binary,
    }


def post(handler, body: bytes, **headers: str) -> tuple[int, dict, dict]:
    answer = handler(
        function_url_event(
            "POST", "/api/v1/lineage", body, authorization=f"Bearer {API_KEY}", **headers
        ),
        None,
    )
    return answer["statusCode"], json.loads(answer["body"]), answer["headers"]


def test_a_function_url_event_is_forwarded_to_datazone(module_platform, handler):
    plain = run_event(outputs=[OutputDataset("s3://lake", "from_lambda")])
    zipped = run_event(outputs=[OutputDataset("s3://lake", "from_lambda_gzip")])
    assert post(handler, to_json(plain).encode())[1]["status"] == "forwarded"
    status, answer, _ = post(
        handler, gzip.compress(to_json(zipped).encode()), **{"content-encoding": "gzip"}
    )
    assert (status, answer["status"]) == (200, "forwarded")
    delivered = events_per_run(module_platform)
    assert (
        delivered[(plain.run.runId, "COMPLETE")] == delivered[(zipped.run.runId, "COMPLETE")] == 1
    )
    node = module_platform.client("datazone").get_lineage_node(
        domainIdentifier=module_platform.settings.domain_id, identifier="s3://lake/from_lambda_gzip"
    )
    assert node["upstreamNodes"]
    health = handler(function_url_event("GET", "/healthz"), None)
    assert health["statusCode"] == 200


def test_without_a_spool_a_datazone_failure_is_503_for_the_producer_to_retry(
    module_platform, handler
):
    event = run_event(outputs=[OutputDataset("s3://lake", "retry_from_lambda")])
    module_platform.control.set_faults(FaultRule(service="datazone", kind="throttle"))
    try:
        status, answer, headers = post(handler, to_json(event).encode())
    finally:
        module_platform.control.clear_faults()
    assert status == 503 and "ThrottlingException" in answer["error"]
    assert headers["Retry-After"]
    assert events_per_run(module_platform)[(event.run.runId, "COMPLETE")] == 0
    # The producer's retry, once DataZone is back, posts it once.
    assert post(handler, to_json(event).encode())[1]["status"] == "forwarded"
    assert events_per_run(module_platform)[(event.run.runId, "COMPLETE")] == 1


def test_the_lambda_checks_the_key_like_the_server(handler):
    answer = handler(
        function_url_event("POST", "/api/v1/lineage", b"{}", authorization="Bearer wrong"), None
    )
    assert answer["statusCode"] == 401
