"""Amazon MSK Connect (``kafkaconnect``), emulated for the sandbox: the connector lifecycle the
project reads its topology from.

:class:`~dzlineage_dagster.sandbox.protocol.aws.RestJsonService` validates each request against
botocore's model (MSK Connect answers ``BadRequestException`` for invalid input); this module
keeps the semantics: connector names are unique (``ConflictException``), ARNs and versions look
like AWS's, a created connector is RUNNING when next described, and unknown ARNs are
``NotFoundException``.

``UpdateConnector`` (botocore's model: "either the connector's worker setting or its connector
configuration, but not both in the same request") takes ``capacity``, ``plugins``,
``workerConfiguration`` or ``useDefaultWorkerConfiguration``, or else ``connectorConfiguration``
alone (the whole configuration, replaced); it needs the connector's ``currentVersion``, as
DeleteConnector does, answers UPDATING and gives the connector a new ``currentVersion``; like a
created connector, the updated one is RUNNING when next described.
"""

from __future__ import annotations

import re
import secrets
import string
import uuid
from datetime import datetime, timezone
from typing import Any

from dzlineage_dagster.sandbox.protocol.aws import (
    AwsServiceError,
    RestJsonEmulator,
    RestJsonService,
)

_CONNECTOR_ARN = re.compile(r"arn:aws[a-z-]*:kafkaconnect:[a-z0-9-]+:\d{12}:connector/[^/]+/.+")
#: The request members that DescribeConnector answers back as they were given.
_DESCRIBED_MEMBERS = (
    "capacity",
    "connectorConfiguration",
    "connectorDescription",
    "connectorName",
    "kafkaCluster",
    "kafkaClusterClientAuthentication",
    "kafkaClusterEncryptionInTransit",
    "kafkaConnectVersion",
    "logDelivery",
    "plugins",
    "serviceExecutionRoleArn",
    "workerConfiguration",
)

#: UpdateConnector's worker settings: one request updates these or the connector configuration.
_WORKER_SETTINGS = ("capacity", "plugins", "workerConfiguration", "useDefaultWorkerConfiguration")


def _new_version() -> str:
    return "".join(secrets.choice(string.ascii_uppercase + string.digits) for _ in range(13))


class KafkaConnectEmulator(RestJsonEmulator):
    """MSK Connect for one region and account, all state in the instance."""

    def __init__(self, *, region: str, account_id: str) -> None:
        self.region = region
        self.account_id = account_id
        #: connector ARN -> what DescribeConnector answers
        self._connectors: dict[str, dict[str, Any]] = {}
        self._service = RestJsonService(
            "kafkaconnect",
            {
                "CreateConnector": self._create_connector,
                "DescribeConnector": self._describe_connector,
                "ListConnectors": self._list_connectors,
                "DeleteConnector": self._delete_connector,
                "UpdateConnector": self._update_connector,
            },
        )

    def _connector(self, arn: str) -> dict[str, Any]:
        if not _CONNECTOR_ARN.fullmatch(arn):
            raise AwsServiceError("BadRequestException", f"{arn} is not a connector ARN")
        if arn not in self._connectors:
            raise AwsServiceError("NotFoundException", f"Connector {arn} does not exist")
        return self._connectors[arn]

    def _create_connector(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params["connectorName"]
        if any(c["connectorName"] == name for c in self._connectors.values()):
            raise AwsServiceError("ConflictException", f"A connector named {name} already exists")
        arn = (
            f"arn:aws:kafkaconnect:{self.region}:{self.account_id}:connector/{name}/{uuid.uuid4()}"
        )
        self._connectors[arn] = {
            **{key: params[key] for key in _DESCRIBED_MEMBERS if key in params},
            "connectorArn": arn,
            "connectorState": "RUNNING",
            "creationTime": datetime.now(timezone.utc),
            "currentVersion": _new_version(),
            "networkType": params.get("networkType") or "IPV4",
        }
        # AWS answers CREATING; the emulated connector is up by the time it is described.
        return {"connectorArn": arn, "connectorName": name, "connectorState": "CREATING"}

    def _describe_connector(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._connector(params["connectorArn"])

    def _list_connectors(self, params: dict[str, Any]) -> dict[str, Any]:
        prefix = params.get("connectorNamePrefix") or ""
        matching = [c for c in self._connectors.values() if c["connectorName"].startswith(prefix)]
        page, next_token = self._service.page(matching, params, default_size=100)
        return {"connectors": page, "nextToken": next_token}

    def _delete_connector(self, params: dict[str, Any]) -> dict[str, Any]:
        connector = self._current(params)
        del self._connectors[connector["connectorArn"]]
        return {"connectorArn": connector["connectorArn"], "connectorState": "DELETING"}

    def _update_connector(self, params: dict[str, Any]) -> dict[str, Any]:
        connector = self._current(params)
        worker = [key for key in _WORKER_SETTINGS if key in params]
        if worker and "connectorConfiguration" in params:
            raise AwsServiceError(
                "BadRequestException",
                "Update either the connector's worker setting "
                f"({', '.join(worker)}) or its connectorConfiguration, not both in one request",
            )
        if not worker and "connectorConfiguration" not in params:
            raise AwsServiceError(
                "BadRequestException",
                "Nothing to update: give connectorConfiguration, or one or more of "
                f"{', '.join(_WORKER_SETTINGS)}",
            )
        changes = {
            key: params[key]
            for key in ("capacity", "plugins", "workerConfiguration", "connectorConfiguration")
            if key in params
        }
        if params.get("useDefaultWorkerConfiguration"):
            connector.pop("workerConfiguration", None)
        connector.update(changes, currentVersion=_new_version())
        operation = uuid.uuid4()
        name, connector_id = connector["connectorArn"].split("/")[1:3]
        return {
            "connectorArn": connector["connectorArn"],
            "connectorState": "UPDATING",
            "connectorOperationArn": (
                f"arn:aws:kafkaconnect:{self.region}:{self.account_id}:"
                f"connector-operation/{name}/{connector_id}/{operation}"
            ),
        }

    def _current(self, params: dict[str, Any]) -> dict[str, Any]:
        """The connector, when ``currentVersion`` (if given) is still its version."""
        connector = self._connector(params["connectorArn"])
        version = params.get("currentVersion")
        if version and version != connector["currentVersion"]:
            raise AwsServiceError(
                "BadRequestException",
                f"currentVersion {version} is not the connector's current version",
            )
        return connector
