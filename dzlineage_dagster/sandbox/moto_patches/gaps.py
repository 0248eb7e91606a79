"""The calls moto 5.2.5 lacks or answers unlike AWS, answered from moto's own backend state.

The server asks :func:`answer_moto_gap` before it hands a glue, ssm, kafka or sts call to moto:
a Response answers the call, None lets moto answer it. Nothing here keeps state of its own, so
moto's reset empties it too. What is covered, and why:

- glue ``ListSchemas``, ``ListSchemaVersions``: not implemented by moto (it answers 500).
- glue ``GetSchema``: moto omits ``CreatedTime`` and ``UpdatedTime``. Whether AWS moves
  ``UpdatedTime`` when a version is registered or deleted is not documented: the sandbox's
  ``schema_updated_time`` switch (:mod:`dzlineage_dagster.sandbox.server.ambiguities`) decides,
  from the versions and the last deletion (``moves``) or the creation alone (``frozen``).
  ``LatestSchemaVersion`` is the newest version not deleted.
- glue ``GetSchemaVersion``: moto's ``CreatedTime`` is ``str(datetime)``, AWS's ISO 8601 with
  milliseconds (``2021-11-07T16:42:28.617Z``); ``LatestVersion`` skips deleted versions.
- glue ``DeleteSchemaVersions``: not implemented by moto (500). As the API reference says: a
  version or a range ``5-8``; the first version, and a range holding the checkpoint version,
  are refused with nothing deleted; a version that does not exist is reported in
  ``SchemaVersionErrors`` while the others are deleted.
- glue ``CreateSchema``, ``RegisterSchemaVersion``: moto only checks that an AVRO definition is
  JSON; GSR parses it as Avro. ``RegisterSchemaVersion``: moto accepts any version as
  AVAILABLE; GSR checks it against the schema's ``Compatibility``, and one that fails is still
  numbered, with ``Status`` FAILURE (:mod:`.avro_compatibility`).
- kafka ``GetBootstrapBrokers``: not implemented by moto; ``DescribeCluster(V2)`` of an unknown
  ARN crash moto (500) where AWS answers ``NotFoundException``.
- glue Data Catalog databases and tables (``CreateDatabase``, ``GetTable``, ...): moto checks
  none of the model's constraints, so it keeps and finds a 256-character table name that AWS
  refuses with a ``ValidationException`` (``NameString`` is 1 to 255 characters); the input is
  checked against botocore's model first, as AWS does.
- glue ``PostLineageEvent``, ``GetLineageNode``: not implemented by moto; the Glue Data
  Catalog's lineage graph of :mod:`dzlineage_dagster.sandbox.emulators.glue_lineage`, its input
  checked against botocore's model (``InvalidInputException``, the error the model lists).
  ``CreateTable`` also records the lineage AWS records for every created table.
- sts ``AssumeRole``: moto ignores the role's trust policy; see :mod:`.trust`.
- ssm ``DescribeParameters``: moto ignores ``MaxResults`` and reads every parameter for each
  page; ``GetServiceSetting``: not implemented by moto. Both in :mod:`.ssm_account`.
- ssm names: moto accepts names AWS refuses (``/x/arn::COLON::aws``, ``a/b``, ``/a//b``) and
  then crashes in GetParametersByPath; the rules are in :mod:`.ssm_rules`.
- ssm ``PutParameter`` tiers: moto has no cap on the number of parameters, no value limit and
  keeps ``Intelligent-Tiering`` as a tier; AWS's rules (:func:`.ssm_rules.put_tier`) with the
  caps of :class:`.ssm_rules.SsmLimits` (``/_sandbox/ssm-limits``).
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import unquote

import fastavro
from moto.core.exceptions import JsonRESTError
from moto.core.responses import BaseResponse
from moto.core.utils import utcnow
from moto.glue.exceptions import GSRInvalidInputException, InvalidSchemaDefinitionException
from moto.glue.glue_schema_registry_constants import AVAILABLE_STATUS, DELETING_STATUS
from moto.glue.glue_schema_registry_utils import (
    get_schema_version_if_definition_exists,
    validate_registry_id,
    validate_schema_id,
)
from moto.glue.models import FakeSchema, FakeSchemaVersion, GlueBackend, glue_backends
from moto.kafka.models import FakeKafkaCluster, KafkaBackend, kafka_backends
from moto.ssm.models import SimpleSystemManagerBackend, ssm_backends
from werkzeug.wrappers import Request, Response

from dzlineage_dagster.sandbox.emulators.datazone.access.authorization import caller_principal
from dzlineage_dagster.sandbox.emulators.datazone.emulator import DEFERRED_FAULT_ENVIRON_KEY
from dzlineage_dagster.sandbox.emulators.glue_lineage.events import INVALID_INPUT
from dzlineage_dagster.sandbox.emulators.glue_lineage.handlers import (
    get_lineage_node,
    lineage_changed,
    post_lineage_event,
    record_table_lineage,
)
from dzlineage_dagster.sandbox.moto_patches.avro_compatibility import incompatibility
from dzlineage_dagster.sandbox.moto_patches.ssm_account import (
    answer_service_setting,
    describe_parameters,
)
from dzlineage_dagster.sandbox.moto_patches.ssm_rules import (
    ADVANCED_TIER,
    NameUse,
    SsmLimits,
    name_problems,
    put_tier,
)
from dzlineage_dagster.sandbox.moto_patches.trust import refuse_untrusted_assume_role
from dzlineage_dagster.sandbox.protocol.aws import (
    AwsServiceError,
    aws_error_response,
    input_validation_message,
)
from dzlineage_dagster.sandbox.server.ambiguities import Ambiguities

AWS_JSON = "application/x-amz-json-1.1"
REST_JSON = "application/json"

#: A version that failed the schema's compatibility check (botocore's SchemaVersionStatus).
FAILURE_STATUS = "FAILURE"

#: ListSchemas and ListSchemaVersions: "defaulted to 25 per page", at most 100.
DEFAULT_PAGE_SIZE = 25
MAX_PAGE_SIZE = 100

#: MSK lists at most three brokers in a bootstrap string, whatever the cluster's size.
MAX_BOOTSTRAP_BROKERS = 3
#: MSK's listener ports: plaintext, TLS, SASL/IAM.
PLAINTEXT_PORT, TLS_PORT, SASL_IAM_PORT = 9092, 9094, 9098


@dataclass(frozen=True)
class Call:
    """One request, with the account and region moto itself would serve it from."""

    request: Request
    account_id: str
    region: str
    ambiguities: Ambiguities
    ssm_limits: SsmLimits = field(default_factory=SsmLimits)
    #: How long Glue takes to process a lineage event (``--glue-lineage-processing-seconds``).
    glue_lineage_seconds: float = 0.0

    @classmethod
    def of(
        cls,
        request: Request,
        ambiguities: Ambiguities | None = None,
        ssm_limits: SsmLimits | None = None,
        glue_lineage_seconds: float = 0.0,
    ) -> Call:
        # moto's own resolution (env, x-moto-account-id header, access key -> account; URL,
        # User-Agent, credential scope -> region), so every answer reads moto's backend.
        probe = BaseResponse()
        probe.headers = request.headers
        probe.querystring = {}
        return cls(
            request,
            probe.get_current_account(),
            probe.get_region_from_url(request, request.url),
            ambiguities or Ambiguities(),
            ssm_limits or SsmLimits(),
            glue_lineage_seconds,
        )

    @property
    def params(self) -> dict[str, Any]:
        return json.loads(self.request.get_data() or b"{}")

    @property
    def glue(self) -> GlueBackend:
        return glue_backends[self.account_id][self.region]

    @property
    def kafka(self) -> KafkaBackend:
        return kafka_backends[self.account_id][self.region]

    @property
    def ssm(self) -> SimpleSystemManagerBackend:
        return ssm_backends[self.account_id][self.region]


Handler = Callable[[Call], Response | None]


def answer_moto_gap(
    service: str,
    operation: str,
    request: Request,
    ambiguities: Ambiguities | None = None,
    ssm_limits: SsmLimits | None = None,
    glue_lineage_seconds: float = 0.0,
) -> Response | None:
    """AWS's answer to a call moto lacks or gets wrong, or None to let moto answer."""
    handler = GAP_HANDLERS.get((service, operation))
    if handler is None:
        return None
    try:
        return handler(Call.of(request, ambiguities, ssm_limits, glue_lineage_seconds))
    except JsonRESTError as error:  # moto's own validation, reused for the same answers
        return aws_error_response(service, error.error_type, error.message, error.code)
    except AwsServiceError as error:
        return aws_error_response(service, error.code, error.message, error.status or 400)


# --- Glue Schema Registry -------------------------------------------------------------------


def _list_schemas(call: Call) -> Response:
    params = call.params
    registries = call.glue.registries
    if params.get("RegistryId"):
        names = [validate_registry_id(params["RegistryId"], registries)]
    else:
        names = list(registries)
    schemas = [
        schema
        for name in names
        if name in registries
        for schema in registries[name].schemas.values()
        if schema.schema_status != DELETING_STATUS
    ]
    # Only the page's items are built: building all of them for every page made listing a
    # 10,000-schema registry quadratic (100 pages x 10,000 items, over a minute).
    page = _page(schemas, params)
    moves = call.ambiguities.updated_time_moves
    page["Schemas"] = [_schema_list_item(schema, moves) for schema in page["Schemas"]]
    return _json(page)


def _list_schema_versions(call: Call) -> Response:
    params = call.params
    schema = _schema(call.glue, params.get("SchemaId") or {})
    versions = [
        {
            "SchemaArn": version.schema_arn,
            "SchemaVersionId": version.schema_version_id,
            "VersionNumber": version.version_number,
            "Status": version.schema_version_status,
            "CreatedTime": _aws_time(version.created_time),
        }
        for version in _live_versions(schema)
    ]
    return _json(_page(versions, params))


def _get_schema(call: Call) -> Response:
    schema = _schema(call.glue, call.params.get("SchemaId") or {})
    return _json(
        {
            **_schema_list_item(schema, call.ambiguities.updated_time_moves),
            "RegistryArn": schema.registry_arn,
            "DataFormat": schema.data_format,
            "Compatibility": schema.compatibility,
            "SchemaCheckpoint": schema.schema_checkpoint,
            "LatestSchemaVersion": _live_versions(schema)[-1].version_number,
            "NextSchemaVersion": schema.next_schema_version,
        }
    )


def _get_schema_version(call: Call) -> Response:
    params = call.params
    number = params.get("SchemaVersionNumber")
    if number and number.get("LatestVersion") and params.get("SchemaId"):
        # moto counts registrations, so its latest can be a deleted version.
        latest = _live_versions(_schema(call.glue, params["SchemaId"]))[-1]
        number = {"VersionNumber": latest.version_number}
    answer = call.glue.get_schema_version(
        params.get("SchemaId"), params.get("SchemaVersionId"), number
    )
    version = _version_by_id(call.glue, answer["SchemaVersionId"])
    return _json({**answer, "CreatedTime": _aws_time(version.created_time)})


#: When a schema last lost versions (moto's own object carries it, so moto's reset drops it).
_DELETED_AT = "dzlineage_versions_deleted_at"


def _delete_schema_versions(call: Call) -> Response:
    params = call.params
    schema = _schema(call.glue, params.get("SchemaId") or {})
    first, _, last = params["Versions"].partition("-")
    numbers = range(int(first), int(last or first) + 1)
    if not numbers:
        raise GSRInvalidInputException(f"Versions {params['Versions']}: an empty range")
    if 1 in numbers:
        raise GSRInvalidInputException(
            "The first schema version can only be deleted by DeleteSchema"
        )
    if schema.schema_checkpoint in numbers:
        raise GSRInvalidInputException(
            f"Versions {params['Versions']} hold the checkpoint version "
            f"{schema.schema_checkpoint}: remove it with DeleteSchemaCheckpoint first"
        )
    live = {version.version_number: version for version in _live_versions(schema)}
    errors = []
    for number in numbers:
        if number in live:
            live[number].schema_version_status = DELETING_STATUS
        else:
            errors.append(
                {
                    "VersionNumber": number,
                    "ErrorDetails": {
                        "ErrorCode": "EntityNotFoundException",
                        "ErrorMessage": f"Schema version {number} is not found",
                    },
                }
            )
    if len(errors) < len(numbers):
        setattr(schema, _DELETED_AT, utcnow())
    return _json({"SchemaVersionErrors": errors})


def _check_created_schema_definition(call: Call) -> None:
    params = call.params
    if params.get("DataFormat") == "AVRO" and "SchemaDefinition" in params:
        _parse_avro(params["SchemaDefinition"])


def _register_schema_version(call: Call) -> Response | None:
    """An AVRO definition parsed, then checked against the schema's compatibility: one that
    fails it is numbered all the same, with Status FAILURE (AWS's answer). A definition the
    schema already has (whatever its status) is moto's to answer: the existing version."""
    params = call.params
    schema = _schema(call.glue, params.get("SchemaId") or {})
    definition = params.get("SchemaDefinition")
    if schema.data_format != "AVRO" or definition is None:
        return None
    _parse_avro(definition)
    versions = schema.schema_versions.values()
    if get_schema_version_if_definition_exists(versions, "AVRO", definition):
        return None
    usable = [
        v.schema_definition
        for v in _live_versions(schema)
        if v.schema_version_status == AVAILABLE_STATUS
    ]
    if incompatibility(schema.compatibility, definition, usable) is None:
        return None
    answer = call.glue.register_schema_version(params["SchemaId"], definition)
    _version_by_id(call.glue, answer["SchemaVersionId"]).schema_version_status = FAILURE_STATUS
    return _json({**answer, "Status": FAILURE_STATUS})


def _glue_input_checked(operation: str) -> Handler:
    def check(call: Call) -> Response | None:
        message = input_validation_message("glue", operation, call.params)
        return aws_error_response("glue", "ValidationException", message, 400) if message else None

    return check


def _caller(call: Call) -> str:
    """The IAM user or role that signed the call (what Glue's own job nodes name)."""
    return caller_principal(call.request.headers.get("Authorization"), call.account_id)


def _create_table(call: Call) -> Response:
    """moto makes the table; then Glue's lineage records it, as AWS does for every table."""
    refused = _glue_input_checked("CreateTable")(call)
    if refused is not None:
        return refused
    params = call.params
    table_input = params["TableInput"]
    call.glue.create_table(
        params["DatabaseName"],
        table_input["Name"],
        table_input,
        params.get("OpenTableFormatInput"),
    )
    if "TargetTable" not in table_input:  # a resource link: "Considerations", no lineage
        _record_table_lineage(call, table_input)
    return _json({})


def _update_table(call: Call) -> Response:
    """moto updates the table; Glue's lineage records it again if its location or columns
    changed."""
    refused = _glue_input_checked("UpdateTable")(call)
    if refused is not None:
        return refused
    params = call.params
    table_input = params["TableInput"]
    before = call.glue.get_table(params["DatabaseName"], table_input["Name"]).as_dict()
    call.glue.update_table(params["DatabaseName"], table_input["Name"], table_input)
    if lineage_changed(before, table_input) and "TargetTable" not in table_input:
        _record_table_lineage(call, table_input)
    return _json({})


def _record_table_lineage(call: Call, table_input: dict[str, Any]) -> None:
    record_table_lineage(
        call.glue,
        call.region,
        call.account_id,
        call.params["DatabaseName"],
        table_input,
        _caller(call),
        processing_seconds=call.glue_lineage_seconds,
    )


def _lineage_input_refused(call: Call, operation: str) -> Response | None:
    message = input_validation_message("glue", operation, call.params)
    return aws_error_response("glue", INVALID_INPUT, message, 400) if message else None


def _post_lineage_event(call: Call) -> Response:
    refused = _lineage_input_refused(call, "PostLineageEvent")
    if refused is not None:
        return refused
    post_lineage_event(
        call.glue,
        call.params["Event"],
        _caller(call),
        processing_seconds=call.glue_lineage_seconds,
        repost_adds_event=call.ambiguities.glue_repost_adds_event,
        fails=call.request.environ.get(DEFERRED_FAULT_ENVIRON_KEY) == "fail-after-accept",
    )
    return _json({})


def _get_lineage_node(call: Call) -> Response:
    refused = _lineage_input_refused(call, "GetLineageNode")
    if refused is not None:
        return refused
    return _json(get_lineage_node(call.glue, call.params["Identifier"]))


#: The Data Catalog operations on databases and tables that the project or the demo seeder call.
GLUE_CATALOG_OPERATIONS = (
    "CreateDatabase",
    "GetDatabase",
    "DeleteDatabase",
    "CreateTable",
    "GetTable",
    "GetTables",
    "UpdateTable",
    "DeleteTable",
)


def _schema(backend: GlueBackend, schema_id: dict[str, str]) -> FakeSchema:
    registry_name, schema_name, _ = validate_schema_id(schema_id, backend.registries)
    return backend.registries[registry_name].schemas[schema_name]


def _live_versions(schema: FakeSchema) -> list[FakeSchemaVersion]:
    versions = [
        v for v in schema.schema_versions.values() if v.schema_version_status != DELETING_STATUS
    ]
    return sorted(versions, key=lambda v: v.version_number)


def _version_by_id(backend: GlueBackend, version_id: str) -> FakeSchemaVersion:
    return next(
        schema.schema_versions[version_id]
        for registry in backend.registries.values()
        for schema in registry.schemas.values()
        if version_id in schema.schema_versions
    )


def _schema_list_item(schema: FakeSchema, updated_time_moves: bool) -> dict[str, Any]:
    item = {
        "RegistryName": schema.registry_name,
        "SchemaName": schema.schema_name,
        "SchemaArn": schema.schema_arn,
        "Description": schema.description,
        "SchemaStatus": schema.schema_status,
        "CreatedTime": _aws_time(schema.created_time),
        "UpdatedTime": _aws_time(
            _updated_time(schema) if updated_time_moves else schema.created_time
        ),
    }
    return {key: value for key, value in item.items() if value is not None}


def _updated_time(schema: FakeSchema) -> datetime:
    """When the schema last changed: its creation, its newest version or its last deletion of
    versions, whichever is latest."""
    return max(
        [
            schema.created_time,
            *(v.created_time for v in schema.schema_versions.values()),
            getattr(schema, _DELETED_AT, schema.created_time),
        ]
    )


def _parse_avro(definition: str) -> None:
    try:
        fastavro.parse_schema(json.loads(definition))
    except (ValueError, TypeError, KeyError, fastavro.schema.SchemaParseException) as error:
        raise InvalidSchemaDefinitionException("AVRO", error) from error


def _page(items: list[Any], params: dict[str, Any]) -> dict[str, Any]:
    """One page of ``items`` under the ``Schemas`` key both list operations use."""
    size = params.get("MaxResults") or DEFAULT_PAGE_SIZE
    if not 1 <= size <= MAX_PAGE_SIZE:
        raise GSRInvalidInputException(
            f"1 validation error detected: Value '{size}' at 'maxResults' failed to satisfy "
            f"constraint: Member must have value less than or equal to {MAX_PAGE_SIZE}"
        )
    token = params.get("NextToken") or "0"
    if not token.isdigit():
        raise GSRInvalidInputException(f"Invalid NextToken: {token}")
    start = int(token)
    page: dict[str, Any] = {"Schemas": items[start : start + size]}
    if start + size < len(items):
        page["NextToken"] = str(start + size)
    return page


def _aws_time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


# --- MSK -------------------------------------------------------------------------------------


def _get_bootstrap_brokers(call: Call) -> Response:
    arn = _cluster_arn(call.request)
    cluster = call.kafka.clusters.get(arn)
    if cluster is None:
        return _cluster_not_found(arn)
    if cluster.cluster_type == "SERVERLESS":
        return _json({"bootstrapBrokerStringSaslIam": _serverless_bootstrap(cluster)}, REST_JSON)
    return _json(
        {
            "bootstrapBrokerString": _broker_string(cluster, PLAINTEXT_PORT),
            "bootstrapBrokerStringTls": _broker_string(cluster, TLS_PORT),
            "bootstrapBrokerStringSaslIam": _broker_string(cluster, SASL_IAM_PORT),
        },
        REST_JSON,
    )


def _answer_unknown_cluster(call: Call) -> Response | None:
    arn = _cluster_arn(call.request)
    return None if arn in call.kafka.clusters else _cluster_not_found(arn)


def _cluster_arn(request: Request) -> str:
    return unquote(request.path.split("/clusters/", 1)[1]).removesuffix("/bootstrap-brokers")


def _cluster_not_found(arn: str) -> Response:
    return aws_error_response("kafka", "NotFoundException", f"Cluster {arn} was not found.", 404)


def _broker_string(cluster: FakeKafkaCluster, port: int) -> str:
    return ",".join(f"{host}:{port}" for host in _broker_hosts(cluster))


def _broker_hosts(cluster: FakeKafkaCluster) -> Iterator[str]:
    # AWS's shape: b-1.democluster1.abc123.c2.kafka.us-east-1.amazonaws.com (name lowercased,
    # only letters and digits kept, then a short id of the cluster).
    label = re.sub(r"[^a-z0-9]", "", cluster.cluster_name.lower())[:40] or "cluster"
    domain = f"{label}.{cluster.cluster_id[:6]}.c2.kafka.{cluster.region_name}.amazonaws.com"
    count = min(cluster.number_of_broker_nodes or 1, MAX_BOOTSTRAP_BROKERS)
    for broker in range(1, count + 1):
        yield f"b-{broker}.{domain}"


def _serverless_bootstrap(cluster: FakeKafkaCluster) -> str:
    host = f"boot-{cluster.cluster_id[:8]}.c2.kafka-serverless.{cluster.region_name}.amazonaws.com"
    return f"{host}:{SASL_IAM_PORT}"


# --- SSM -------------------------------------------------------------------------------------


def _ssm_names_checked(field: str, use: NameUse) -> Handler:
    """A handler that refuses the call when a name in ``field`` breaks an SSM naming rule."""

    def check(call: Call) -> Response | None:
        value = call.params.get(field)
        names = value if isinstance(value, list) else [value]
        for name in names:
            if not isinstance(name, str):
                continue
            problems = name_problems(name, use, region=call.region, account_id=call.account_id)
            if problems:
                first = problems[0]
                return aws_error_response("ssm", first.error_code, first.aws_message, 400)
        return None

    return check


#: PutParameter counts the account's parameters and then creates one: AWS does both at once.
_PUT_PARAMETER_LOCK = threading.Lock()


def _put_parameter(call: Call) -> Response | None:
    """PutParameter under AWS's tier rules, stored in moto's backend in the tier they give."""
    refused = _ssm_names_checked("Name", NameUse.WRITE)(call)
    if refused is not None:
        return refused
    params = call.params
    name, value = params.get("Name"), params.get("Value")
    if not isinstance(name, str) or not isinstance(value, str):
        return None  # moto's own validation answers
    backend = call.ssm
    with _PUT_PARAMETER_LOCK:
        versions = backend._parameters.get(name) or []
        existing = versions[-1].tier if versions else None
        standard = advanced = 0
        if existing is None or params.get("Tier") not in (None, existing):
            for held_name, held in list(backend._parameters.items()):
                # moto loads AWS's public parameters (/aws/service/...) into the account on
                # first read; on AWS they are not the account's and count against nothing.
                if held and not held_name.startswith("/aws/"):
                    advanced += held[-1].tier == ADVANCED_TIER
                    standard += held[-1].tier != ADVANCED_TIER
        answer = put_tier(
            value,
            params.get("Tier"),
            existing,
            standard_count=standard,
            advanced_count=advanced,
            limits=call.ssm_limits,
        )
        if answer.problem is not None:
            problem = answer.problem
            return aws_error_response("ssm", problem.error_code, problem.aws_message, 400)
        parameter = backend.put_parameter(
            name,
            params.get("Description"),
            value,
            params.get("Type"),
            params.get("AllowedPattern"),
            params.get("KeyId"),
            params.get("Overwrite", False),
            params.get("Tags"),
            params.get("DataType", "text"),
            tier=answer.tier,
            policies=params.get("Policies"),
        )
    return _json({"Version": parameter.version, "Tier": parameter.tier})


#: (service, operation) -> the handler that answers it before (or instead of) moto.
GAP_HANDLERS: dict[tuple[str, str], Handler] = {
    ("glue", "ListSchemas"): _list_schemas,
    ("glue", "ListSchemaVersions"): _list_schema_versions,
    ("glue", "GetSchema"): _get_schema,
    ("glue", "GetSchemaVersion"): _get_schema_version,
    ("glue", "DeleteSchemaVersions"): _delete_schema_versions,
    ("glue", "CreateSchema"): _check_created_schema_definition,
    ("glue", "RegisterSchemaVersion"): _register_schema_version,
    **{
        ("glue", operation): _glue_input_checked(operation) for operation in GLUE_CATALOG_OPERATIONS
    },
    ("glue", "CreateTable"): _create_table,
    ("glue", "UpdateTable"): _update_table,
    ("glue", "PostLineageEvent"): _post_lineage_event,
    ("glue", "GetLineageNode"): _get_lineage_node,
    ("kafka", "GetBootstrapBrokers"): _get_bootstrap_brokers,
    ("kafka", "DescribeCluster"): _answer_unknown_cluster,
    ("kafka", "DescribeClusterV2"): _answer_unknown_cluster,
    ("ssm", "PutParameter"): _put_parameter,
    ("ssm", "DeleteParameter"): _ssm_names_checked("Name", NameUse.WRITE),
    ("ssm", "DeleteParameters"): _ssm_names_checked("Names", NameUse.WRITE),
    ("ssm", "GetParameter"): _ssm_names_checked("Name", NameUse.READ),
    ("ssm", "GetParameters"): _ssm_names_checked("Names", NameUse.READ),
    ("ssm", "GetParametersByPath"): _ssm_names_checked("Path", NameUse.PATH),
    ("sts", "AssumeRole"): refuse_untrusted_assume_role,
    ("ssm", "DescribeParameters"): lambda call: describe_parameters(
        call.request, call.account_id, call.region
    ),
    ("ssm", "GetServiceSetting"): lambda call: answer_service_setting(call.request),
}


def _json(payload: dict[str, Any], content_type: str = AWS_JSON) -> Response:
    return Response(
        json.dumps(payload),
        status=200,
        content_type=content_type,
        headers={"x-amzn-RequestId": str(uuid.uuid4())},
    )
