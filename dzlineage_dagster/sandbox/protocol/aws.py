"""The AWS wire protocols, driven by botocore's service models (no service-specific logic).

- :func:`resolve_operation_name` names the operation of any request (json, query, rest-json,
  rest-xml), so the server can log and fail calls of moto-served services too.
- :func:`aws_error_response` answers an error in the shape the service's protocol uses, so that
  botocore reads ``Error.Code`` and the HTTP status as given.
- :class:`RestJsonService` is the frame of a rest-json emulator: it routes a request to its
  operation, parses and validates it against the model as AWS does (``ValidationException``
  naming the member), keeps ``clientToken`` idempotency, and serializes the handler's result.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import sys
import threading
import time
import unicodedata
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any, Literal, TypeVar
from xml.sax.saxutils import escape as xml_escape

from botocore.exceptions import UnknownServiceError
from botocore.utils import parse_timestamp
from moto.core.model import OperationModel, Shape
from moto.core.parse import RestJSONParser
from moto.core.request import Request as MotoRequest
from moto.core.routing import get_service_router
from moto.core.serialize import RestJSONSerializer
from moto.core.utils import get_service_model
from werkzeug.exceptions import NotFound
from werkzeug.wrappers import Request, Response

Handler = Callable[[dict[str, Any]], dict[str, Any] | None]
T = TypeVar("T")


class AwsServiceError(Exception):
    """An error answer of an emulated operation.

    ``status`` defaults to the HTTP status the service model gives the error ``code`` (400 when
    the code is not modeled).
    """

    def __init__(self, code: str, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


# --- operation names and error answers, for every protocol ------------------------------------


def resolve_operation_name(service_name: str, request: Request) -> str | None:
    """The botocore operation name of ``request``, or None when it names no operation.

    ``request`` must be one the caller does not read again: the query protocol reads the form.
    """
    matched = _match_operation(service_name, request)
    return matched[0].name if matched else None


def _match_operation(
    service_name: str, request: Request
) -> tuple[OperationModel, dict[str, Any]] | None:
    try:
        router = get_service_router(service_name)  # cached per service by moto
        # moto's router needs its Request flavour (it matches on the undecoded path).
        return router.match(MotoRequest(request.environ))
    except (UnknownServiceError, NotFound, NotImplementedError):
        return None


def json_text_member(body: bytes, member: str) -> str | None:
    """A JSON-protocol request's top-level text ``member`` (``CatalogId``, ``QueueUrl``), read
    only when the body names it; None when absent, not text, or the body is no JSON object."""
    if f'"{member}"'.encode() not in body:
        return None
    try:
        value = json.loads(body).get(member)
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None


def aws_error_response(service_name: str, code: str, message: str, status: int) -> Response:
    """An error answer that botocore parses as ``Error.Code == code`` with HTTP ``status``."""
    request_id = str(uuid.uuid4())
    try:
        protocol = get_service_model(service_name).resolved_protocol
    except UnknownServiceError:
        protocol = "rest-json"
    if protocol in ("query", "rest-xml"):
        return _xml_error(code, message, status, request_id)
    body: dict[str, str] = {"message": message}
    content_type = "application/json"
    if protocol == "json":
        body = {"__type": code, **body}
        version = get_service_model(service_name).metadata.get("jsonVersion", "1.0")
        content_type = f"application/x-amz-json-{version}"
    return Response(
        json.dumps(body),
        status=status,
        content_type=content_type,
        headers={"x-amzn-ErrorType": code, "x-amzn-RequestId": request_id},
    )


def _xml_error(code: str, message: str, status: int, request_id: str) -> Response:
    fault = "Sender" if status < 500 else "Receiver"
    body = (
        "<ErrorResponse><Error>"
        f"<Type>{fault}</Type><Code>{xml_escape(code)}</Code>"
        f"<Message>{xml_escape(message)}</Message>"
        f"</Error><RequestId>{request_id}</RequestId></ErrorResponse>"
    )
    return Response(
        body, status=status, content_type="text/xml", headers={"x-amzn-RequestId": request_id}
    )


# --- Java regular expressions (the models' `pattern`) in Python -------------------------------


class _Untranslatable(Exception):
    pass


_JAVA_POSIX_CLASSES = {
    "Lower": "a-z",
    "Upper": "A-Z",
    "ASCII": r"\x00-\x7f",
    "Alpha": "a-zA-Z",
    "Digit": "0-9",
    "Alnum": "a-zA-Z0-9",
    "Punct": r"\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e",
    "Graph": r"\x21-\x7e",
    "Print": r"\x20-\x7e",
    "Blank": r" \t",
    "Cntrl": r"\x00-\x1f\x7f",
    "XDigit": "0-9a-fA-F",
    "Space": r" \t\n\x0b\f\r",
}
_SET_ESCAPES = frozenset("dDwWsS")
_INLINE_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}
_INLINE_FLAG_GROUP = re.compile(r"\(\?([imsxu]+)\)")


@functools.cache
def _unicode_category_ranges() -> dict[str, list[tuple[int, int]]]:
    """Code point ranges of every two-letter Unicode general category (one pass, cached)."""
    ranges: dict[str, list[tuple[int, int]]] = {}
    start, current = 0, unicodedata.category(chr(0))
    for code_point in range(1, sys.maxunicode + 2):
        category = unicodedata.category(chr(code_point)) if code_point <= sys.maxunicode else ""
        if category != current:
            ranges.setdefault(current, []).append((start, code_point - 1))
            start, current = code_point, category
    return ranges


def _category_class(name: str, negated: bool) -> str:
    """The inside of a Python character class for Java's ``\\p{name}`` (or ``\\P{name}``)."""
    name = name.removeprefix("Is")
    if name in _JAVA_POSIX_CLASSES and not negated:
        return _JAVA_POSIX_CLASSES[name]
    if len(name) > 2:
        raise _Untranslatable(name)
    categories = _unicode_category_ranges()
    matching = sorted(r for cat, rs in categories.items() if cat.startswith(name) for r in rs)
    if not matching:
        raise _Untranslatable(name)
    if negated:
        matching = _complement(matching)
    return "".join(rf"\U{lo:08x}-\U{hi:08x}" for lo, hi in matching)


def _complement(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    result, next_start = [], 0
    for lo, hi in ranges:
        if lo > next_start:
            result.append((next_start, lo - 1))
        next_start = hi + 1
    if next_start <= sys.maxunicode:
        result.append((next_start, sys.maxunicode))
    return result


#: What a translated escape stands for: one character, a shorthand class (\w) or the inside
#: of a class (\p{L}), which needs brackets of its own outside a class.
_LITERAL, _SHORTHAND, _CLASS_BODY = "literal", "shorthand", "class body"


def _read_escape(pattern: str, i: int) -> tuple[str, str, int]:
    """Translate the Java escape at ``pattern[i]`` (a backslash): text, what it is, next index."""
    kind = pattern[i + 1 : i + 2]
    if kind in ("p", "P"):
        if pattern[i + 2 : i + 3] == "{":
            end = pattern.index("}", i)
            name, next_i = pattern[i + 3 : end], end + 1
        else:
            name, next_i = pattern[i + 2], i + 3
        return _category_class(name, negated=kind == "P"), _CLASS_BODY, next_i
    if kind == "u":
        unit = int(pattern[i + 2 : i + 6], 16)
        low = pattern[i + 6 : i + 12]
        # Java writes a code point beyond the BMP as its UTF-16 surrogate pair.
        if 0xD800 <= unit < 0xDC00 and re.fullmatch(r"\\u[dD][c-fC-F][0-9a-fA-F]{2}", low):
            code_point = 0x10000 + ((unit - 0xD800) << 10) + (int(low[2:], 16) - 0xDC00)
            return rf"\U{code_point:08x}", _LITERAL, i + 12
        return rf"\U{unit:08x}", _LITERAL, i + 6
    if kind == "x" and pattern[i + 2 : i + 3] == "{":
        end = pattern.index("}", i)
        return rf"\U{int(pattern[i + 3 : end], 16):08x}", _LITERAL, end + 1
    if kind == "x":
        return pattern[i : i + 4], _LITERAL, i + 4
    if kind == "Q":
        end = pattern.find(r"\E", i)
        end = len(pattern) if end < 0 else end
        return re.escape(pattern[i + 2 : end]), _LITERAL, end + 2
    if kind == "z":
        return r"\Z", _LITERAL, i + 2
    if kind == "Z":
        return r"(?=\n?\Z)", _LITERAL, i + 2
    return pattern[i : i + 2], _SHORTHAND if kind in _SET_ESCAPES else _LITERAL, i + 2


def _translate_java_regex(pattern: str) -> tuple[str, int]:
    """Java regex syntax -> Python ``re`` syntax and flags (raises _Untranslatable)."""
    out: list[str] = []
    flags = re.ASCII  # Java's \w, \d, \s, \b and (?i) are ASCII-only by default
    in_class = after_set = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            text, kind, i = _read_escape(pattern, i)
            out.append(f"[{text}]" if kind == _CLASS_BODY and not in_class else text)
            after_set = kind != _LITERAL
            continue
        if in_class:
            if char == "[" or pattern.startswith("&&", i):
                raise _Untranslatable("nested or intersected character class")
            if char == "]":
                in_class = False
            # Java reads "-" after a class shorthand ([\w-.]) as a literal; Python rejects it.
            elif char in "&|~" or (char == "-" and after_set):
                char = "\\" + char
        elif char == "[":
            in_class = True
            if pattern.startswith("[^", i):
                out.append("[^")
                i, after_set = i + 2, False
                continue
        elif flag_group := _INLINE_FLAG_GROUP.match(pattern, i):
            # Python wants global flags first; Java applies them from where they stand.
            for letter in flag_group.group(1):
                flags |= _INLINE_FLAGS.get(letter, 0)
            i = flag_group.end()
            continue
        elif pattern.startswith("(?<", i) and pattern[i + 3 : i + 4].isalpha():
            char, i = "(?P<", i + 2  # a named group
        out.append(char)
        after_set = False
        i += 1
    return "".join(out), flags


@functools.cache
def java_pattern(pattern: str) -> re.Pattern[str] | None:
    """The model ``pattern`` (Java syntax) compiled for Python, or None if it cannot be."""
    try:
        return re.compile(*_translate_java_regex(pattern))
    except (_Untranslatable, re.error, ValueError):
        return None


# --- validation of a parsed input against its model -------------------------------------------


class _SerializationError(Exception):
    pass


_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "structure": (dict,),
    "map": (dict,),
    "list": (list,),
    "string": (str,),
    "blob": (bytes,),
    "boolean": (bool,),
    "integer": (int,),
    "long": (int,),
    "float": (int, float),
    "double": (int, float),
    "timestamp": (object,),
}


def input_validation_message(service_name: str, operation: str, params: Any) -> str | None:
    """AWS's ``ValidationException`` text for ``params`` of ``operation`` against botocore's
    model (``1 validation error detected: Value at 'Name' failed to satisfy constraint: ...``),
    or None when the input satisfies every constraint the model gives."""
    input_shape = get_service_model(service_name).operation_model(operation).input_shape
    try:
        errors = _validation_errors(input_shape, params) if input_shape is not None else []
    except _SerializationError as error:
        return str(error)
    return _validation_message(errors) if errors else None


def _validation_message(errors: list[str]) -> str:
    count = f"{len(errors)} validation error{'s' if len(errors) > 1 else ''} detected"
    return f"{count}: {'; '.join(errors)}"


def _validation_errors(shape: Shape, value: Any, path: str = "") -> list[str]:
    """AWS-style constraint violations of ``value`` against ``shape`` (recursively).

    Type mismatches raise _SerializationError: AWS rejects them before validating.
    """
    errors: list[str] = []
    _check(shape, value, path, errors)
    return errors


def _check(shape: Shape, value: Any, path: str, errors: list[str]) -> None:
    expected = _PYTHON_TYPES.get(shape.type_name, (object,))
    if not isinstance(value, expected) or (
        isinstance(value, bool) and shape.type_name != "boolean"
    ):
        raise _SerializationError(
            f"Value at '{path}' cannot be read as {shape.type_name}: {type(value).__name__}"
        )

    def fail(constraint: str) -> None:
        errors.append(f"Value at '{path}' failed to satisfy constraint: Member must {constraint}")

    if shape.type_name == "structure":
        _check_structure(shape, value, path, errors)
    elif shape.type_name == "list":
        _check_size(shape, len(value), "length", fail)
        for index, item in enumerate(value, start=1):
            _check(shape.member, item, f"{path}.{index}.member", errors)
    elif shape.type_name == "map":
        _check_size(shape, len(value), "length", fail)
        for key, item in value.items():
            _check(shape.key, key, f"{path}.key", errors)
            _check(shape.value, item, f"{path}.{key}", errors)
    elif shape.type_name == "string":
        _check_string(shape, value, fail)
    elif shape.type_name == "blob":
        _check_size(shape, len(value), "length", fail)
    elif shape.type_name in ("integer", "long", "float", "double"):
        _check_size(shape, value, "value", fail)


def _check_structure(shape: Shape, value: dict[str, Any], path: str, errors: list[str]) -> None:
    prefix = f"{path}." if path else ""
    for name in shape.required_members:
        if value.get(name) is None:
            errors.append(
                f"Value null at '{prefix}{name}' failed to satisfy constraint: "
                "Member must not be null"
            )
    present = [name for name in shape.members if value.get(name) is not None]
    if shape.is_tagged_union and len(present) != 1:
        errors.append(
            f"Value at '{path}' failed to satisfy constraint: "
            f"Member must have exactly one member set, found {len(present)}"
        )
    for name in present:
        _check(shape.members[name], value[name], f"{prefix}{name}", errors)


def _check_size(shape: Shape, size: float, what: str, fail: Callable[[str], None]) -> None:
    minimum, maximum = shape.metadata.get("min"), shape.metadata.get("max")
    if minimum is not None and size < minimum:
        fail(f"have {what} greater than or equal to {minimum}")
    if maximum is not None and size > maximum:
        fail(f"have {what} less than or equal to {maximum}")


def _check_string(shape: Shape, value: str, fail: Callable[[str], None]) -> None:
    _check_size(shape, len(value), "length", fail)
    enum = shape.metadata.get("enum")
    if enum and value not in enum:
        fail(f"satisfy enum value set: [{', '.join(enum)}]")
    pattern = shape.metadata.get("pattern")
    compiled = java_pattern(pattern) if pattern else None
    # botocore's models write patterns to match whole values (with ".*" where the service's
    # pattern is unanchored), so they are matched whole.
    if compiled is not None and not compiled.fullmatch(value):
        fail(f"satisfy regular expression pattern: {pattern}")


def _utc_timestamp(value: str) -> datetime:
    return parse_timestamp(value).astimezone(timezone.utc)


# --- a rest-json emulator frame ---------------------------------------------------------------


class RestJsonService:
    """Routes, parses, validates and answers the rest-json requests of one emulated service.

    ``handlers`` maps operation names to functions from the parsed, validated input dict to the
    output dict (or None for an empty output); they raise :class:`AwsServiceError`. Handlers run
    one at a time, so the emulator's state needs no locking of its own.

    Idempotency tokens (``clientToken``) behave as :attr:`client_tokens` says, by default AWS's
    generic pattern (DataZone's API reference does not publish its own; Directory Service,
    Verified Permissions and DynamoDB do): within 8 hours of a successful call, the same
    operation with the same token and the same parameters is answered again, unchanged and
    without running the handler; with different parameters it is refused with a 409
    ``ConflictException``. After the window the token is forgotten and the call runs anew.
    """

    def __init__(self, service_name: str, handlers: Mapping[str, Handler]) -> None:
        self.service_name = service_name
        self.model = get_service_model(service_name)
        if self.model.resolved_protocol != "rest-json":
            raise ValueError(f"{service_name} does not speak rest-json")
        unknown = set(handlers) - set(self.model.operation_names)
        if unknown:
            raise ValueError(f"{service_name} has no operations {sorted(unknown)}")
        self._handlers = dict(handlers)
        self._lock = threading.Lock()
        self._answered: dict[tuple[str, str], _TokenAnswer] = {}
        self.client_tokens = ClientTokenPolicy()
        shapes = self.model.shape_names
        self.validation_error_code = (
            "ValidationException" if "ValidationException" in shapes else "BadRequestException"
        )

    @property
    def operations(self) -> list[str]:
        """The operations this emulator answers (the others answer ``NotImplemented``)."""
        return sorted(self._handlers)

    def handle(self, request: Request) -> Response:
        matched = _match_operation(self.service_name, request)
        if matched is None:
            return self.error_response(
                AwsServiceError("UnknownOperationException", "Unknown operation", 404)
            )
        operation, uri_params = matched
        handler = self._handlers.get(operation.name)
        if handler is None:
            message = f"The sandbox does not emulate {self.model.service_id}.{operation.name}"
            return self.error_response(AwsServiceError("NotImplemented", message, 501))
        try:
            params = self._parse(operation, uri_params, request)
            return self._answer(operation, handler, params)
        except AwsServiceError as error:
            return self.error_response(error)

    def _parse(
        self, operation: OperationModel, uri_params: dict[str, Any], request: Request
    ) -> dict[str, Any]:
        body = request.get_data()
        request_dict = {
            "body": body,
            "headers": request.headers,
            "method": request.method,
            "url_params": uri_params,
            "url_path": request.path,
            "values": request.args,
        }
        input_shape = operation.input_shape
        if input_shape is None:
            return {}
        try:
            if body and "payload" not in input_shape.serialization:
                json.loads(body)  # moto's parser would take a broken body for a message
            params = RestJSONParser(operation, timestamp_parser=_utc_timestamp).parse(request_dict)
            errors = _validation_errors(input_shape, params)
        except (ValueError, TypeError, AttributeError, _SerializationError) as error:
            raise AwsServiceError("SerializationException", str(error), 400) from error
        if errors:
            raise AwsServiceError(self.validation_error_code, _validation_message(errors))
        return params

    def _answer(
        self, operation: OperationModel, handler: Handler, params: dict[str, Any]
    ) -> Response:
        token_members = [name for name in operation.idempotent_members if params.get(name)]
        key = (operation.name, params[token_members[0]]) if token_members else None
        asked = _canonical({k: v for k, v in params.items() if k not in token_members})
        with self._lock:
            earlier = self._answered.get(key) if key is not None else None
            moment = time.monotonic()
            policy = self.client_tokens
            if earlier is not None and moment - earlier.at <= policy.window_seconds:
                if earlier.asked != asked and policy.other_parameters == "conflict":
                    raise AwsServiceError(
                        "ConflictException",
                        f"The client token {key[1]} was already used for a {operation.name} "
                        "request with different parameters",
                        409,
                    )
                return earlier.response
            response = self._serialize(operation, handler(params) or {})
            if key is not None:
                self._answered[key] = _TokenAnswer(asked, response, moment)
            return response

    def _serialize(self, operation: OperationModel, result: dict[str, Any]) -> Response:
        serialized = RestJSONSerializer(operation).serialize(result)
        status = serialized["status_code"]
        # A 204 carries no body; one sent anyway would be read as the start of the next answer.
        body = b"" if status == 204 else serialized["body"]
        headers = {"x-amzn-RequestId": str(uuid.uuid4()), **serialized["headers"]}
        return Response(body, status=status, headers=headers)

    def page(
        self, items: Sequence[T], params: Mapping[str, Any], default_size: int
    ) -> tuple[list[T], str | None]:
        """The page of ``items`` that the input's ``nextToken`` and ``maxResults`` ask for, and
        the token of the page after it (None on the last page)."""
        start = 0
        if params.get("nextToken"):
            try:
                start = int(base64.urlsafe_b64decode(params["nextToken"]).decode())
            except ValueError:
                start = -1
            if start < 0:
                raise AwsServiceError(self.validation_error_code, "The nextToken is not valid")
        end = start + (params.get("maxResults") or default_size)
        next_token = base64.urlsafe_b64encode(str(end).encode()).decode()
        return list(items[start:end]), next_token if end < len(items) else None

    def error_response(self, error: AwsServiceError) -> Response:
        status = error.status
        if status is None:
            status = 400
            if error.code in self.model.shape_names:
                error_shape = self.model.shape_for(error.code)
                status = error_shape.metadata.get("error", {}).get("httpStatusCode", 400)
        return aws_error_response(self.service_name, error.code, error.message, status)


@dataclass(frozen=True)
class ClientTokenPolicy:
    """How the emulators honour a ``clientToken``: AWS's generic pattern unless a test asks for
    the other answers DataZone might give (it publishes neither)."""

    #: How long a successful call's token is honoured (AWS's generic pattern: 8 hours).
    window_seconds: float = 8 * 3600.0
    #: The answer to a reused token with other parameters: ``conflict`` (409
    #: ``ConflictException``, AWS's generic pattern) or ``replay`` (the first call's answer again,
    #: as a service that compares only the token would give).
    other_parameters: Literal["conflict", "replay"] = "conflict"

    def __post_init__(self) -> None:
        seconds = self.window_seconds
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not seconds >= 0:
            raise ValueError(f"window_seconds must be a number >= 0, not {self.window_seconds!r}")
        if self.other_parameters not in ("conflict", "replay"):
            raise ValueError(
                f"other_parameters must be 'conflict' or 'replay', not {self.other_parameters!r}"
            )

    def changed(self, changes: Mapping[str, Any]) -> ClientTokenPolicy:
        """This policy with some fields changed (unknown names raise TypeError)."""
        return replace(self, **changes)


@dataclass(frozen=True)
class _TokenAnswer:
    """A successful call's answer, kept for the idempotency token it carried."""

    asked: str
    response: Response
    at: float


def _canonical(params: Mapping[str, Any]) -> str:
    """The parameters as one comparable text (bytes and timestamps included)."""
    return json.dumps(params, sort_keys=True, default=repr)


class RestJsonEmulator:
    """The face of an emulator whose wire work is one :class:`RestJsonService` (``_service``):
    what the sandbox server routes requests to and asks for its operation table."""

    _service: RestJsonService

    @property
    def operations(self) -> list[str]:
        return self._service.operations

    def handle(self, request: Request) -> Response:
        return self._service.handle(request)

    @property
    def client_tokens(self) -> ClientTokenPolicy:
        return self._service.client_tokens

    @client_tokens.setter
    def client_tokens(self, policy: ClientTokenPolicy) -> None:
        self._service.client_tokens = policy
