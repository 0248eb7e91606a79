"""CloudTrail's "AWS API Call via CloudTrail" events, as EventBridge delivers them to SQS, read
as changes of the platform: a schema of the registry, a connector, a Glue table.

CloudTrail records a call's parameters with each name's first letter in lower case
(``schemaId.registryName``, ``tableInput.name``); the names are read either way, as the API
spells them too. A call that failed (``errorCode``), a schema of another registry and a call of
another service are ignored, each with why; a body that is not such an event is an
:class:`UnreadableMessage` naming what is wrong, and the queue's redrive policy takes it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dzlineage_dagster.core.connectors.topics import topic_for_schema_name

DETAIL_TYPE = "AWS API Call via CloudTrail"
#: The registry a call names with no ``RegistryId`` (Glue: "default-registry").
DEFAULT_REGISTRY = "default-registry"

#: The calls whose success changes a schema of the registry.
SCHEMA_CALLS = (
    "CreateSchema",
    "RegisterSchemaVersion",
    "UpdateSchema",
    "DeleteSchema",
    "DeleteSchemaVersions",
    "PutSchemaVersionMetadata",
    "RemoveSchemaVersionMetadata",
)
TABLE_CALLS = ("CreateTable", "UpdateTable", "DeleteTable")
CONNECTOR_CALLS = ("CreateConnector", "UpdateConnector", "DeleteConnector")

#: Each EventBridge source (CloudTrail's ``eventSource``) and the calls watched there: one rule
#: each (:func:`event_patterns`).
WATCHED_CALLS: dict[tuple[str, str], tuple[str, ...]] = {
    ("aws.glue", "glue.amazonaws.com"): SCHEMA_CALLS + TABLE_CALLS,
    ("aws.kafkaconnect", "kafkaconnect.amazonaws.com"): CONNECTOR_CALLS,
}


def event_patterns() -> dict[str, dict[str, Any]]:
    """The EventBridge event pattern of each watched source, by the rule's short name."""
    return {
        source.removeprefix("aws."): {
            "source": [source],
            "detail-type": [DETAIL_TYPE],
            "detail": {"eventSource": [event_source], "eventName": list(calls)},
        }
        for (source, event_source), calls in WATCHED_CALLS.items()
    }


class UnreadableMessage(ValueError):
    """A queue message that is not an EventBridge CloudTrail event of a watched call."""


@dataclass(frozen=True)
class Change:
    """One successful call that changed something the sync reads."""

    #: CloudTrail's ``eventName``: the call.
    action: str
    event_id: str
    event_time: str


@dataclass(frozen=True)
class SchemaChange(Change):
    registry: str
    #: The schema's name; "" when the call named only a schema version id (the version's
    #: metadata calls may), which then names the schema (:attr:`schema_version_id`).
    schema_name: str
    schema_version_id: str = ""

    @property
    def topic(self) -> str:
        return topic_for_schema_name(self.schema_name).topic

    @property
    def deletes_schema(self) -> bool:
        return self.action == "DeleteSchema"


@dataclass(frozen=True)
class ConnectorChange(Change):
    connector: str
    connector_arn: str


@dataclass(frozen=True)
class TableChange(Change):
    database: str
    table: str


@dataclass(frozen=True)
class Ignored:
    """A readable event that changes nothing the sync reads, and why."""

    event_id: str
    reason: str


def read_message(body: str, registry_name: str) -> Change | Ignored:
    """The change an SQS message body reports, or why it is ignored; raises
    :class:`UnreadableMessage` naming what is wrong with a body that is not an event."""
    try:
        event = json.loads(body)
    except ValueError as error:
        raise UnreadableMessage(f"the body is not JSON ({error})") from None
    if not isinstance(event, dict):
        raise UnreadableMessage(f"the body is JSON {type(event).__name__}, not an event object")
    if event.get("detail-type") != DETAIL_TYPE:
        raise UnreadableMessage(
            f"detail-type {event.get('detail-type')!r} is not {DETAIL_TYPE!r}: not a CloudTrail "
            "API call event (is the rule's pattern the template's?)"
        )
    detail = event.get("detail")
    if not isinstance(detail, dict):
        raise UnreadableMessage("the event has no detail object")
    action = _required(detail, "eventName", "the event's detail")
    event_id = _required(detail, "eventID", "the event's detail")
    event_time = str(detail.get("eventTime") or event.get("time") or "")
    if detail.get("errorCode"):
        return Ignored(event_id, f"{action} failed ({detail['errorCode']}): nothing changed")
    watched = {event_source: calls for (_, event_source), calls in WATCHED_CALLS.items()}
    source = str(detail.get("eventSource"))
    if action not in watched.get(source, ()):
        return Ignored(event_id, f"{source} {action} is not a call the sync watches")
    parameters = detail.get("requestParameters")
    if not isinstance(parameters, dict):
        raise UnreadableMessage(f"{action} event {event_id} has no requestParameters object")
    responses = detail.get("responseElements")
    responses = responses if isinstance(responses, dict) else {}
    where = f"{action} event {event_id}"
    if action in CONNECTOR_CALLS:
        arn = str(_member(parameters, "connectorArn") or _member(responses, "connectorArn") or "")
        name = _member(parameters, "connectorName") or _member(responses, "connectorName")
        name = str(name or connector_name_of(arn, where))
        return ConnectorChange(action, event_id, event_time, name, arn)
    if action in TABLE_CALLS:
        database = _required(parameters, "databaseName", where)
        table_input = _member(parameters, "tableInput")
        named = table_input if isinstance(table_input, dict) else parameters
        return TableChange(action, event_id, event_time, database, _required(named, "name", where))
    registry, schema_name, version_id = schema_named(parameters, where)
    if registry != registry_name and registry:
        return Ignored(
            event_id,
            f"{action} of {schema_name or version_id} in registry {registry}, not {registry_name}",
        )
    return SchemaChange(action, event_id, event_time, registry, schema_name, version_id)


def schema_named(parameters: Mapping[str, Any], where: str) -> tuple[str, str, str]:
    """(registry, schema name, schema version id) a schema call names: ``SchemaId`` (a
    ``SchemaArn``, or ``RegistryName`` and ``SchemaName``), or ``RegistryId`` and
    ``SchemaName`` (CreateSchema), or only a ``SchemaVersionId`` (a version's metadata calls:
    registry and name "" then)."""
    schema_id = _member(parameters, "schemaId")
    if isinstance(schema_id, dict):
        arn = _member(schema_id, "schemaArn")
        if arn:
            return schema_arn_parts(str(arn), where)
        registry = str(_member(schema_id, "registryName") or DEFAULT_REGISTRY)
        return registry, _required(schema_id, "schemaName", where), ""
    name = _member(parameters, "schemaName")
    if name:
        registry_id = _member(parameters, "registryId")
        registry_id = registry_id if isinstance(registry_id, dict) else {}
        arn = _member(registry_id, "registryArn")
        registry = str(arn).rpartition("/")[2] if arn else _member(registry_id, "registryName")
        return str(registry or DEFAULT_REGISTRY), str(name), ""
    version_id = _member(parameters, "schemaVersionId")
    if version_id:
        return "", "", str(version_id)
    raise UnreadableMessage(f"{where} names no schema (no schemaId, schemaName or version id)")


def schema_arn_parts(arn: str, where: str) -> tuple[str, str, str]:
    """(registry, schema, "") of ``arn:<partition>:glue:<region>:<account>:schema/<registry>/<schema>``."""
    resource = arn.split(":", 5)[-1] if arn.count(":") >= 5 else ""
    kind, _, rest = resource.partition("/")
    registry, _, schema = rest.partition("/")
    if kind != "schema" or not registry or not schema:
        raise UnreadableMessage(f"{where} names schema ARN {arn!r}, not schema/<registry>/<name>")
    return registry, schema, ""


def connector_name_of(arn: str, where: str) -> str:
    """The name in ``arn:<partition>:kafkaconnect:<region>:<account>:connector/<name>/<id>``."""
    resource = arn.split(":", 5)[-1] if arn.count(":") >= 5 else ""
    kind, _, rest = resource.partition("/")
    name = rest.partition("/")[0]
    if kind != "connector" or not name:
        raise UnreadableMessage(f"{where} names no connector (connector ARN {arn!r})")
    return name


def _member(parameters: Mapping[str, Any], camel: str) -> Any:
    """A parameter by CloudTrail's name (``schemaId``) or the API's (``SchemaId``)."""
    if camel in parameters:
        return parameters[camel]
    return parameters.get(camel[0].upper() + camel[1:])


def _required(parameters: Mapping[str, Any], camel: str, where: str) -> str:
    value = _member(parameters, camel)
    if not isinstance(value, str) or not value:
        raise UnreadableMessage(f"{where} has no {camel}")
    return value
