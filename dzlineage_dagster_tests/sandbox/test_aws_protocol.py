"""The protocol layer, judged by botocore itself: the requests a real client sends are named as
the client named them, the error answers are read back with the code and status given, and the
models' Java patterns mean in Python what they mean in Java.

Validation, idempotency and serialization of RestJsonService are exercised over HTTP through the
emulators (test_datazone_emulator, test_kafkaconnect_emulator)."""

from __future__ import annotations

import gzip
import json
import string
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import botocore
import pytest
from botocore import xform_name
from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.exceptions import ClientError
from hypothesis import given
from hypothesis import strategies as st
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request, Response

from dzlineage_dagster.sandbox.protocol.aws import (
    aws_error_response,
    java_pattern,
    resolve_operation_name,
)
from dzlineage_dagster.sandbox.server.control import sandbox_environment
from dzlineage_dagster_tests.clients import sandbox_client

GLUE_TABLE_ARN = "arn:aws:glue:us-east-1:123456789012:table/db/orders"
CONNECTOR_ARN = "arn:aws:kafkaconnect:us-east-1:123456789012:connector/c/0b3c-1"


#: Nothing listens there: every request is answered by the test before it is sent.
_NOWHERE = sandbox_environment("http://127.0.0.1:9")


def _offline_client(service: str, answer: Callable[[AWSPreparedRequest], Any]):
    """A real botocore client whose requests go to ``answer`` instead of the network."""
    client = sandbox_client(_NOWHERE, service)
    client.meta.events.register("before-send", lambda request, **_: answer(request))
    return client


class _Sent(Exception):
    def __init__(self, request: AWSPreparedRequest) -> None:
        self.request = request


def _raise_sent(request: AWSPreparedRequest) -> None:
    raise _Sent(request)


def sent_request(service: str, operation: str, params: dict[str, Any]) -> Request:
    """The request botocore sends for ``operation``, as the sandbox's WSGI side receives it."""
    client = _offline_client(service, _raise_sent)
    with pytest.raises(_Sent) as sent:
        getattr(client, xform_name(operation))(**params)
    prepared = sent.value.request
    url = urlsplit(prepared.url)
    environ = EnvironBuilder(
        method=prepared.method,
        base_url=f"{url.scheme}://{url.netloc}",
        path=url.path,
        query_string=url.query,
        headers={
            name: value.decode() if isinstance(value, bytes) else value
            for name, value in prepared.headers.items()
        },
        data=prepared.body or b"",
    ).get_environ()
    return Request(environ)


@pytest.mark.parametrize(
    ("service", "operation", "params"),
    [
        ("glue", "ListSchemas", {}),
        ("glue", "GetSchemaVersion", {"SchemaId": {"SchemaName": "s"}, "SchemaVersionNumber": {}}),
        ("ssm", "PutParameter", {"Name": "/a/b", "Value": "v"}),
        ("ssm", "GetParametersByPath", {"Path": "/a"}),
        ("sts", "GetCallerIdentity", {}),
        (
            "sts",
            "AssumeRole",
            {"RoleArn": "arn:aws:iam::123456789012:role/r", "RoleSessionName": "session"},
        ),
        ("kafka", "GetBootstrapBrokers", {"ClusterArn": "arn:aws:kafka:us-east-1:1:cluster/c/u"}),
        ("kafka", "ListClustersV2", {}),
        ("kafkaconnect", "DescribeConnector", {"connectorArn": CONNECTOR_ARN}),
        ("kafkaconnect", "ListConnectors", {"maxResults": 5}),
        (
            "datazone",
            "CreateAsset",
            {
                "domainIdentifier": "dzd_x",
                "name": "n",
                "typeIdentifier": "t",
                "owningProjectIdentifier": "p",
            },
        ),
        ("datazone", "GetLineageNode", {"domainIdentifier": "dzd_x", "identifier": GLUE_TABLE_ARN}),
        ("datazone", "ListLineageNodeHistory", {"domainIdentifier": "dzd_x", "identifier": "n1"}),
        ("datazone", "PostLineageEvent", {"domainIdentifier": "dzd_x", "event": b"{}"}),
        ("datazone", "DeleteAsset", {"domainIdentifier": "dzd_x", "identifier": "a1"}),
    ],
)
def test_operation_name_of_a_real_client_request(service, operation, params):
    assert resolve_operation_name(service, sent_request(service, operation, params)) == operation


def test_requests_that_name_no_operation_resolve_to_none():
    stray = Request(EnvironBuilder(method="GET", path="/no/such/route").get_environ())
    assert resolve_operation_name("datazone", stray) is None
    assert resolve_operation_name("glue", stray) is None
    assert resolve_operation_name("no-such-service", stray) is None


class _Body:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, *_: Any, **__: Any):
        yield self._body


def parsed_error(service: str, operation: str, params: dict[str, Any], response: Response):
    """The ClientError a real client raises when ``response`` answers its call."""

    def answer(request: AWSPreparedRequest) -> AWSResponse:
        headers = dict(response.headers)
        return AWSResponse(request.url, response.status_code, headers, _Body(response.get_data()))

    client = _offline_client(service, answer)
    with pytest.raises(ClientError) as raised:
        getattr(client, xform_name(operation))(**params)
    return raised.value.response


@pytest.mark.parametrize(
    ("service", "operation", "params", "code", "status"),
    [
        ("glue", "ListSchemas", {}, "ThrottlingException", 400),
        ("ssm", "GetParameter", {"Name": "/a"}, "InternalServerError", 500),
        ("sts", "GetCallerIdentity", {}, "Throttling", 400),
        ("sts", "GetCallerIdentity", {}, "InternalFailure", 500),
        ("kafka", "ListClustersV2", {}, "TooManyRequestsException", 429),
        ("datazone", "GetDomain", {"identifier": "dzd_x"}, "ThrottlingException", 429),
        ("kafkaconnect", "ListConnectors", {}, "ServiceUnavailableException", 503),
    ],
)
def test_error_answers_read_back_with_their_code_and_status(
    service, operation, params, code, status
):
    message = f"Rate exceeded for {operation} <&>"
    response = aws_error_response(service, code, message, status)

    error = parsed_error(service, operation, params, response)

    assert error["Error"]["Code"] == code
    assert error["Error"]["Message"] == message
    assert error["ResponseMetadata"]["HTTPStatusCode"] == status
    assert error["ResponseMetadata"]["RequestId"]


def test_json_error_answers_carry_the_type_in_body_and_header():
    response = aws_error_response("glue", "EntityNotFoundException", "gone", 400)
    assert json.loads(response.get_data())["__type"] == "EntityNotFoundException"
    assert response.headers["x-amzn-ErrorType"] == "EntityNotFoundException"
    assert response.content_type.startswith("application/x-amz-json-1.1")


def _model_patterns(service: str) -> set[str]:
    models = Path(botocore.__file__).parent / "data" / service
    (model_file,) = models.glob("*/service-2.json.gz")
    shapes = json.loads(gzip.decompress(model_file.read_bytes()))["shapes"]
    return {shape["pattern"] for shape in shapes.values() if "pattern" in shape}


@pytest.mark.parametrize("service", ["datazone", "kafkaconnect", "glue", "ssm", "kafka"])
def test_every_pattern_of_the_emulated_and_mapped_services_translates(service):
    untranslated = [p for p in _model_patterns(service) if java_pattern(p) is None]
    assert untranslated == []


@pytest.mark.parametrize(
    ("pattern", "accepted", "rejected"),
    [
        # botocore keeps DataZone's alternation of anchored branches; both branches count.
        (r"(?![0-9_])\w+$|^_\w*[a-zA-Z0-9]\w*", ["Topic1", "_a1"], ["1a", "__", "é", "a b"]),
        (r"dzd[-_][a-zA-Z0-9_-]{1,36}", ["dzd_abc", "dzd-a"], ["xdzd_abc", "dzd_", "dzd_a b"]),
        # Java reads "-" after a class shorthand as a literal.
        (r"[\w-_.]+", ["a-b_c.d"], ["a b", "a/b"]),
        # \p{...} categories and POSIX classes.
        (r"[\p{L}\p{N}_-]+", ["Zürich_1", "東京-2"], ["a b", "a!"]),
        (r"\p{Alnum}+", ["abc123"], ["é", "a_b"]),
        (r"[^\p{C}]*", ["plain text é"], ["tab\there", "\x00"]),
        # Supplementary characters written as UTF-16 surrogate pairs.
        (r"[\u0020-\uD7FF\uE000-\uFFFD\uD800\uDC00-\uDBFF\uDFFF]*", ["ok 😀"], ["\x01"]),
        (r"\Asnap-[0-9a-f]{8}\z", ["snap-0123abcd"], ["snap-0123abcd\n"]),
        (r"^(?i)(true|false)$", ["TRUE", "false"], ["yes"]),
        (r"[a-z\x{41}]+", ["aAb"], ["B"]),
    ],
)
def test_java_patterns_mean_what_they_mean_in_java(pattern, accepted, rejected):
    compiled = java_pattern(pattern)
    assert compiled is not None
    assert [s for s in accepted if not compiled.fullmatch(s)] == []
    assert [s for s in rejected if compiled.fullmatch(s)] == []


@given(st.text())
def test_class_shorthand_then_dash_is_the_ascii_word_set_plus_dash(text):
    allowed = set(string.ascii_letters + string.digits + "_-")
    assert bool(java_pattern(r"[\w-]*").fullmatch(text)) == all(c in allowed for c in text)


@given(st.text())
def test_unicode_letter_category_matches_unicodedata(text):
    expected = bool(text) and all(unicodedata.category(c).startswith("L") for c in text)
    assert bool(java_pattern(r"\p{L}+").fullmatch(text)) == expected


def test_patterns_python_cannot_express_are_left_unchecked():
    assert java_pattern(r"[\p{Print}&&[^|:/]]+") is None
    assert java_pattern(r"\p{InGreek}+") is None
