"""The sandbox: one local HTTP endpoint that plays AWS for boto3.

boto3 reaches it through ``AWS_ENDPOINT_URL``; nothing in the project knows it is local. Each
request is routed by the service in its SigV4 credential scope
(``Credential=<key>/<date>/<region>/<service>/aws4_request``):

- ``datazone`` and ``kafkaconnect`` go to the project's emulators (moto has neither), one per
  region and caller account, as moto keeps its services per account;
- ``servicequotas`` is answered by :mod:`~dzlineage_dagster.sandbox.server.service_quotas`
  (moto knows only ``vpc``'s quotas), with the rates the sandbox enforces;
- everything else (``glue``, ``ssm``, ``kafka``, ``sts``) goes to moto, after
  :func:`~dzlineage_dagster.sandbox.moto_patches.gaps.answer_moto_gap` has answered the operations moto
  lacks or gets wrong compared with AWS.

The caller's account is the one moto derives from the access key (see :func:`caller_account`):
a key from STS AssumeRole belongs to the role's account, so one sandbox holds several accounts
and a call made with another account's credentials finds nothing there, as on AWS.

Every call is logged and may be failed by a fault rule first (or, for a deferred fault such as
``fail-after-accept``, succeed and have its work fail later in the emulator). The admin paths under
``/_sandbox/`` (see :mod:`dzlineage_dagster.sandbox.server.control`) read the log, set fault rules and
reset the state.
"""

from __future__ import annotations

import io
import json
import re
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict
from typing import Any, Protocol

from moto.iam.models import get_account_id_from
from moto.moto_api._internal import moto_api_backend
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response

from dzlineage_dagster.sandbox.emulators.datazone import DataZoneEmulator
from dzlineage_dagster.sandbox.emulators.datazone.access.authorization import caller_principal
from dzlineage_dagster.sandbox.emulators.datazone.emulator import DEFERRED_FAULT_ENVIRON_KEY
from dzlineage_dagster.sandbox.emulators.kafkaconnect import KafkaConnectEmulator
from dzlineage_dagster.sandbox.moto_patches import (
    GLUE_SCHEMA_QUOTA,
    apply_moto_patches,
    set_glue_schema_quota,
)
from dzlineage_dagster.sandbox.moto_patches.gaps import answer_moto_gap
from dzlineage_dagster.sandbox.moto_patches.glue_catalog_policy import cross_account_denial
from dzlineage_dagster.sandbox.moto_patches.sqs_queue_account import (
    cross_account_queue_denial,
    queue_of_call,
)
from dzlineage_dagster.sandbox.moto_patches.ssm_rules import SsmLimits
from dzlineage_dagster.sandbox.protocol.aws import (
    ClientTokenPolicy,
    aws_error_response,
    json_text_member,
    resolve_operation_name,
)
from dzlineage_dagster.sandbox.server import operations
from dzlineage_dagster.sandbox.server.ambiguities import Ambiguities
from dzlineage_dagster.sandbox.server.cloudtrail import emit_call_event, watched
from dzlineage_dagster.sandbox.server.control import ADMIN_PREFIX
from dzlineage_dagster.sandbox.server.faults import (
    FAULT_KINDS,
    CallLog,
    FaultPlan,
    FaultRule,
    HeldCall,
)
from dzlineage_dagster.sandbox.server.pacing import Latency, Quotas
from dzlineage_dagster.sandbox.server.service_quotas import answer_service_quotas

#: moto's account when the access key is not one it issued; the emulators use the same.
SANDBOX_ACCOUNT_ID = "123456789012"

#: How AWS answers a call over its rate, by protocol: the REST APIs with 429, JSON 1.1 with 400.
_THROTTLE_STATUS = {"datazone": 429, "kafkaconnect": 429, "kafka": 429}

#: A fault as Glue answers it, where its API reference names another code or status than
#: :data:`FAULT_KINDS` (a JSON 1.1 API: client errors are 400; its server error is
#: InternalServiceException).
_GLUE_FAULTS = {
    "throttle": ("ThrottlingException", 400),
    "server-error": ("InternalServiceException", 500),
    "access-denied": ("AccessDeniedException", 400),
    "invalid": ("InvalidInputException", 400),
    "conflict": ("ConflictException", 400),
}

_ACCOUNT_ID = re.compile(r"\d{12}")
_CREDENTIAL_SCOPE = re.compile(r"Credential=([^/]+)/\d{8}/([^/]+)/([^/]+)/aws4_request")
#: botocore's name of a service whose SigV4 signing name differs.
_BOTOCORE_NAMES = {"servicequotas": "service-quotas"}


class Emulator(Protocol):
    @property
    def operations(self) -> list[str]: ...

    def handle(self, request: Request) -> Response: ...

    client_tokens: ClientTokenPolicy
    ambiguities: Ambiguities


EMULATOR_FACTORIES: dict[str, Callable[..., Emulator]] = {
    "datazone": DataZoneEmulator,
    "kafkaconnect": KafkaConnectEmulator,
}


def credential_scope(authorization: str | None) -> tuple[str, str] | None:
    """``(region, service)`` from a SigV4 Authorization header, or None when unsigned."""
    match = _CREDENTIAL_SCOPE.search(authorization or "")
    return (match.group(2), match.group(3)) if match else None


def glue_catalog_account(service: str, body: bytes) -> str | None:
    """The account of the Glue Data Catalog a glue call names with ``CatalogId``, if any.

    Glue: "If none is provided, the Amazon Web Services account ID is used by default"; another
    account's id reads that account's catalog, which AWS allows when the catalog's resource
    policy grants the caller (:mod:`~dzlineage_dagster.sandbox.moto_patches.glue_catalog_policy`).
    """
    catalog = json_text_member(body, "CatalogId") if service == "glue" else None
    return catalog if catalog and _ACCOUNT_ID.fullmatch(catalog) else None


def _iam_denial(authorization: str | None, account: str, operation: str | None) -> str:
    """IAM's message for a Glue action no policy allows the caller (Glue's lineage actions have
    no resource-level permissions, so it names no resource)."""
    action = f"glue:{operation}"
    return (
        f"User: {caller_principal(authorization, account)} is not authorized to perform: "
        f"{action} because no identity-based policy allows the {action} action"
    )


def caller_account(authorization: str | None) -> str:
    """The account whose credentials signed a request, decided as moto decides it for its own
    services (``get_account_id_from``): the account of the role an AssumeRole issued the access
    key for, else moto's default account (:data:`SANDBOX_ACCOUNT_ID`)."""
    match = _CREDENTIAL_SCOPE.search(authorization or "")
    return get_account_id_from(match.group(1)) if match else SANDBOX_ACCOUNT_ID


class SandboxApp:
    """The WSGI application: routing, the call log, fault injection, quotas and latency."""

    def __init__(
        self,
        latency: Latency | None = None,
        quotas: Quotas | None = None,
        lineage_processing_seconds: float = 0.0,
        listing_processing_seconds: float = 0.0,
        ownership_transfer_seconds: float = 0.0,
        glue_lineage_processing_seconds: float = 0.0,
    ) -> None:
        apply_moto_patches()
        #: How long Glue takes to process a lineage event (AWS: asynchronous).
        self.glue_lineage_processing_seconds = glue_lineage_processing_seconds
        #: How long the DataZone emulator takes to process a lineage event (AWS: asynchronous).
        self.lineage_processing_seconds = lineage_processing_seconds
        #: How long it takes to publish a listing (AWS: CREATING, then ACTIVE).
        self.listing_processing_seconds = listing_processing_seconds
        #: How long an asset's ownership transfer runs (AWS: IN_PROGRESS, then SUCCEEDED).
        self.ownership_transfer_seconds = ownership_transfer_seconds
        self.calls = CallLog()
        self.faults = FaultPlan()
        self.latency = latency or Latency()
        self.quotas = quotas or Quotas()
        self._moto = DomainDispatcherApplication(create_backend_app)
        #: By (service, region, account): each account's DataZone and MSK Connect are its own.
        self._emulators: dict[tuple[str, str, str], Emulator] = {}
        self._emulators_lock = threading.Lock()
        self.client_tokens = ClientTokenPolicy()
        self.ambiguities = Ambiguities()
        self.ssm_limits = SsmLimits()

    def pace(self, latency: Latency, quotas: Quotas) -> None:
        """Change the service time and the quotas from the next call on."""
        self.latency, self.quotas = latency, quotas

    def reset(self) -> None:
        """Forget every resource, call and fault rule (a fresh, empty AWS)."""
        moto_api_backend.reset()
        with self._emulators_lock:
            self._emulators.clear()
        self.client_tokens = ClientTokenPolicy()
        self.ambiguities = Ambiguities()
        self.ssm_limits = SsmLimits()
        set_glue_schema_quota(GLUE_SCHEMA_QUOTA)
        self.calls.clear()
        self.faults.replace([])

    def __call__(self, environ: dict[str, Any], start_response: Callable) -> Iterable[bytes]:
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))

        def fresh_request() -> Request:
            # Each reader gets its own stream: the operation resolver, an emulator and moto
            # all read the body.
            return Request({**environ, "wsgi.input": io.BytesIO(body)})

        request = fresh_request()
        if request.path.startswith(ADMIN_PREFIX):
            return self._admin(request)(environ, start_response)

        scope = credential_scope(request.headers.get("Authorization"))
        if scope is None:
            return aws_error_response(
                "sts", "MissingAuthenticationToken", "Request is missing a SigV4 signature", 403
            )(environ, start_response)
        region, service = scope
        account = caller_account(request.headers.get("Authorization"))
        catalog = glue_catalog_account(service, body)
        queue = queue_of_call(service, body)
        owner = catalog or (queue[0] if queue else None)
        if owner not in (None, account):
            # moto serves a request from the account its x-moto-account-id header names.
            environ = {**environ, "HTTP_X_MOTO_ACCOUNT_ID": owner}
        model_name = _BOTOCORE_NAMES.get(service, service)
        operation = resolve_operation_name(model_name, fresh_request())
        if owner not in (None, account):
            denial = (
                cross_account_denial(region, account, owner, operation or "", body)
                if catalog
                else cross_account_queue_denial(region, account, owner, queue[1], operation or "")
            )
            if denial is not None:
                self.calls.record(service, operation, 400, False, account=account)
                # Glue's code and status, and SQS's (its JSON protocol keeps the query's code).
                code, status = ("AccessDeniedException", 400) if catalog else ("AccessDenied", 403)
                return aws_error_response(model_name, code, denial, status)(environ, start_response)

        if not self.quotas.admits(service, operation):
            status = _THROTTLE_STATUS.get(service, 400)
            self.calls.record(
                service, operation, status, injected=False, throttled=True, account=account
            )
            return aws_error_response(
                model_name,
                "ThrottlingException",
                "Rate exceeded",
                status,
            )(environ, start_response)
        service_time = self.latency.seconds(service, operation)
        if service_time:
            time.sleep(service_time)

        rule = self.faults.draw(service, operation)
        if rule is not None and rule.kind in ("reset", "hold"):
            if rule.kind == "hold":
                self.faults.hold(HeldCall(service, operation, "before"))
            # Status 0: no HTTP answer at all, the connection was dropped.
            self.calls.record(service, operation, 0, True, account=account)
            return _reset_connection(environ)
        served = fresh_request()
        if rule is not None and rule.deferred:
            served.environ[DEFERRED_FAULT_ENVIRON_KEY] = rule.kind
        if rule is not None and rule.kind in FAULT_KINDS:
            code, status = rule.error
            message = f"Injected fault ({rule.kind}) for {service}.{operation}"
            if service == "glue" and rule.kind in _GLUE_FAULTS:
                code, status = _GLUE_FAULTS[rule.kind]
                if rule.kind == "access-denied":
                    message = _iam_denial(request.headers.get("Authorization"), account, operation)
            response = aws_error_response(model_name, code, message, status)
        elif service == "servicequotas":
            response = answer_service_quotas(fresh_request(), self.quotas, region, account)
        elif service in EMULATOR_FACTORIES:
            response = self._emulator(service, region, account).handle(served)
        else:
            response = answer_moto_gap(
                service,
                operation or "",
                served,
                self.ambiguities,
                self.ssm_limits,
                self.glue_lineage_processing_seconds,
            )
        if response is None:
            response = self._moto_response(environ, body)
        if 200 <= response.status_code < 300 and watched(service, operation):
            # CloudTrail records the change, EventBridge routes it (the account's rules).
            emit_call_event(
                service, operation or "", region, account, fresh_request(), body, response
            )
        if rule is not None and rule.kind == "hold-after":
            self.faults.hold(HeldCall(service, operation, "after"))
        self.calls.record(
            service,
            operation,
            response.status_code,
            rule is not None and rule.kind in FAULT_KINDS,
            account=account,
        )
        return response(environ, start_response)

    def _emulator(self, service: str, region: str, account: str) -> Emulator:
        with self._emulators_lock:
            key = (service, region, account)
            if key not in self._emulators:
                factory = EMULATOR_FACTORIES[service]
                options = {}
                if service == "datazone":
                    options["lineage_processing_seconds"] = self.lineage_processing_seconds
                    options["listing_processing_seconds"] = self.listing_processing_seconds
                    options["ownership_transfer_seconds"] = self.ownership_transfer_seconds
                self._emulators[key] = factory(region=region, account_id=account, **options)
                self._emulators[key].client_tokens = self.client_tokens
                self._emulators[key].ambiguities = self.ambiguities
            return self._emulators[key]

    def _moto_response(self, environ: dict[str, Any], body: bytes) -> Response:
        """moto's answer as a whole response, so it can be logged, held or sent alike."""
        return Response.from_app(self._moto, {**environ, "wsgi.input": io.BytesIO(body)})

    def _admin(self, request: Request) -> Response:
        route = (request.method, request.path[len(ADMIN_PREFIX) :].strip("/"))
        if route == ("GET", "health"):
            return _json({"status": "ok"})
        if route == ("GET", "calls"):
            return _json({"calls": [asdict(r) for r in self.calls.records()]})
        if route == ("DELETE", "calls"):
            self.calls.clear()
            return _json({"calls": []})
        if route == ("GET", "faults"):
            return _json({"rules": [r.describe() for r in self.faults.rules()]})
        if route == ("GET", "held"):
            return _json({"held": [asdict(call) for call in self.faults.held()]})
        if route == ("POST", "held/release"):
            self.faults.release()
            return _json({"held": []})
        if route == ("PUT", "faults"):
            try:
                specs = json.loads(request.get_data() or b"{}").get("rules", [])
                rules = [FaultRule(**spec) for spec in specs]
            except (TypeError, ValueError, AttributeError) as error:
                return _json({"error": f"invalid fault rules: {error}"}, status=400)
            self.faults.replace(rules)
            return _json({"rules": [r.describe() for r in rules]})
        if route == ("GET", "quotas"):
            return _json(
                {
                    "quotas": dict(sorted(self.quotas.rates.items())),
                    "buckets": dict(sorted(self.quotas.buckets_of.items())),
                }
            )
        if route == ("GET", "pacing"):
            return _json({"latency": self.latency.describe(), "quotas": self.quotas.describe()})
        if route == ("PUT", "pacing"):
            try:
                spec = json.loads(request.get_data() or b"{}")
                self.pace(
                    Latency.parse(str(spec.get("latency", "0"))),
                    Quotas.parse(str(spec.get("quotas", "off"))),
                )
            except (ValueError, AttributeError) as error:
                return _json({"error": f"invalid pacing: {error}"}, status=400)
            return _json({"latency": self.latency.describe(), "quotas": self.quotas.describe()})
        if route == ("GET", "client-tokens"):
            return _json(asdict(self.client_tokens))
        if route == ("PUT", "client-tokens"):
            return self._set_client_tokens(request)
        if route == ("GET", "ambiguities"):
            return _json(self.ambiguities.describe())
        if route == ("PUT", "ambiguities"):
            return self._set_ambiguities(request)
        if route == ("GET", "ssm-limits"):
            return _json(asdict(self.ssm_limits))
        if route == ("PUT", "ssm-limits"):
            try:
                self.ssm_limits = self.ssm_limits.changed(json.loads(request.get_data() or b"{}"))
            except (TypeError, ValueError, AttributeError) as error:
                return _json({"error": f"invalid SSM limits: {error}"}, status=400)
            return _json(asdict(self.ssm_limits))
        if route == ("PUT", "glue-limits"):
            try:
                set_glue_schema_quota(**json.loads(request.get_data() or b"{}"))
            except (TypeError, ValueError) as error:
                return _json({"error": f"invalid Glue limits: {error}"}, status=400)
            return _json({"status": "set"})
        if route == ("GET", "operations"):
            return self._operations(request.args.get("service"))
        if route == ("POST", "reset"):
            self.reset()
            return _json({"status": "reset"})
        return _json({"error": f"no admin route {route[0]} {request.path}"}, status=404)

    def _set_client_tokens(self, request: Request) -> Response:
        """How the emulators honour a clientToken: tests shorten AWS's 8 hours, or make a reused
        token with other parameters replay instead of conflict."""
        return self._set_policy(
            request,
            "client_tokens",
            "client token policy",
            '{"other_parameters": "replay"}',
            asdict,
        )

    def _set_ambiguities(self, request: Request) -> Response:
        """Which reading of an undocumented AWS behaviour the services answer (see
        :mod:`.ambiguities`)."""
        return self._set_policy(
            request,
            "ambiguities",
            "ambiguity switches",
            '{"type_recreation": "conflict"}',
            lambda policy: policy.describe(),
        )

    def _set_policy(
        self,
        request: Request,
        attribute: str,
        what: str,
        example: str,
        answer: Callable[[Any], dict[str, Any]],
    ) -> Response:
        """Change one sandbox-wide policy by the request's JSON object, here and in every
        emulator made so far (the ones made later take it from here)."""
        try:
            changes = json.loads(request.get_data() or b"{}")
            if not isinstance(changes, dict):
                raise TypeError(f"expected an object like {example}")
            policy = getattr(self, attribute).changed(changes)
        except (TypeError, ValueError) as error:
            return _json({"error": f"invalid {what}: {error}"}, status=400)
        with self._emulators_lock:
            setattr(self, attribute, policy)
            for emulator in self._emulators.values():
                setattr(emulator, attribute, policy)
        return _json(answer(policy))

    def _operations(self, service: str | None) -> Response:
        """Who answers what: the project's services, or the one ``?service=`` names."""
        if service is None:
            services = operations.PROJECT_SERVICES
        elif service in EMULATOR_FACTORIES or service in operations.moto_services():
            services = (service,)
        else:
            return _json({"error": f"the sandbox answers no service {service!r}"}, status=404)
        return _json(
            {
                "services": {
                    name: operations.operations_of(name, _emulator_operations) for name in services
                },
                "other_moto_services": sorted(set(operations.moto_services()) - set(services)),
            }
        )


def _emulator_operations(service: str) -> list[str] | None:
    factory = EMULATOR_FACTORIES.get(service)
    if factory is None:
        return None
    return factory(region="us-east-1", account_id=SANDBOX_ACCOUNT_ID).operations


def _reset_connection(environ: dict[str, Any]) -> Iterable[bytes]:
    """Drop the client's connection with a TCP reset, answering nothing.

    werkzeug's server treats a ConnectionError from the application as a client that went
    away, so raising one after closing the socket ends the request quietly.
    """
    connection: socket.socket | None = environ.get("werkzeug.socket")
    if connection is not None:
        # Linger 0: close() sends RST instead of FIN, as a reset connection does.
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        connection.shutdown(socket.SHUT_RDWR)
    raise ConnectionResetError("sandbox fault: connection reset")


def _json(payload: dict[str, Any], status: int = 200) -> Response:
    return Response(json.dumps(payload), status=status, mimetype="application/json")


class _QuietRequestHandler(WSGIRequestHandler):
    """No line per request on stderr: the call log (``/_sandbox/calls``) has them all."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


class Sandbox:
    """The endpoint served on loopback from a background thread.

    ``with Sandbox() as sandbox: ...`` serves on a free port; ``sandbox.endpoint_url`` is what
    ``AWS_ENDPOINT_URL`` should say.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        lineage_processing_seconds: float = 0.0,
        *,
        latency: Latency | str | None = None,
        quotas: Quotas | str | None = None,
        listing_processing_seconds: float = 0.0,
        ownership_transfer_seconds: float = 0.0,
        glue_lineage_processing_seconds: float = 0.0,
    ) -> None:
        """``latency``: ``"aws"``, milliseconds as text, or a :class:`Latency`; ``quotas``:
        ``"aws"`` or a :class:`Quotas`. Both default to off."""
        self.app = SandboxApp(
            Latency.parse(latency) if isinstance(latency, str) else latency,
            Quotas.parse(quotas) if isinstance(quotas, str) else quotas,
            lineage_processing_seconds,
            listing_processing_seconds,
            ownership_transfer_seconds,
            glue_lineage_processing_seconds,
        )
        self._server: BaseWSGIServer = make_server(
            host, port, self.app, threaded=True, request_handler=_QuietRequestHandler
        )
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="dzlineage-sandbox", daemon=True
        )

    @property
    def endpoint_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> Sandbox:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
