"""The MSK Connect emulator, driven by real boto3 clients over HTTP through the sandbox endpoint."""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError

DEBEZIUM_CONFIG = {
    "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
    "topic.prefix": "cdc",
    "table.include.list": "public.orders,public.customers",
}
PLUGIN_ARN = "arn:aws:kafkaconnect:us-east-1:123456789012:custom-plugin/debezium/1"
CONNECTOR_ARN = re.compile(
    r"arn:aws:kafkaconnect:us-east-1:123456789012:connector/(?P<name>[^/]+)/[0-9a-f-]{36}"
)


@pytest.fixture(scope="module")
def kc(sandbox):
    return sandbox.client("kafkaconnect")


def connector_request(name: str, **overrides: Any) -> dict[str, Any]:
    return {
        "connectorName": name,
        "capacity": {"provisionedCapacity": {"mcuCount": 1, "workerCount": 1}},
        "connectorConfiguration": DEBEZIUM_CONFIG,
        "kafkaCluster": {
            "apacheKafkaCluster": {
                "bootstrapServers": "b-1.cdc.kafka.us-east-1.amazonaws.com:9098",
                "vpc": {"subnets": ["subnet-1"], "securityGroups": ["sg-1"]},
            }
        },
        "kafkaClusterClientAuthentication": {"authenticationType": "IAM"},
        "kafkaClusterEncryptionInTransit": {"encryptionType": "TLS"},
        "kafkaConnectVersion": "2.7.1",
        "plugins": [
            {
                "customPlugin": {
                    "customPluginArn": PLUGIN_ARN,
                    "revision": 1,
                }
            }
        ],
        "serviceExecutionRoleArn": "arn:aws:iam::123456789012:role/MskConnect",
        **overrides,
    }


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def test_a_created_connector_is_described_as_running_with_its_configuration(kc):
    name = unique("debezium")
    created = kc.create_connector(**connector_request(name))

    match = CONNECTOR_ARN.fullmatch(created["connectorArn"])
    assert match and match["name"] == name
    assert (created["connectorName"], created["connectorState"]) == (name, "CREATING")
    described = kc.describe_connector(connectorArn=created["connectorArn"])
    assert described["connectorState"] == "RUNNING"
    assert described["connectorConfiguration"] == DEBEZIUM_CONFIG
    assert re.fullmatch(r"[A-Z0-9]{13}", described["currentVersion"])
    assert isinstance(described["creationTime"], datetime)
    assert described["kafkaCluster"]["apacheKafkaCluster"]["vpc"]["subnets"] == ["subnet-1"]
    assert described["plugins"][0]["customPlugin"]["revision"] == 1
    assert described["capacity"] == {"provisionedCapacity": {"mcuCount": 1, "workerCount": 1}}


def test_connector_names_are_unique(kc):
    name = unique("debezium")
    kc.create_connector(**connector_request(name))
    with pytest.raises(ClientError, match=r"\(ConflictException\)") as raised:
        kc.create_connector(**connector_request(name))
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 409


def test_connectors_are_listed_by_name_prefix_page_by_page(kc):
    prefix = unique("list")
    arns = [
        kc.create_connector(**connector_request(f"{prefix}-{i}"))["connectorArn"] for i in range(3)
    ]
    kc.create_connector(**connector_request(unique("other")))

    first = kc.list_connectors(connectorNamePrefix=prefix, maxResults=2)
    second = kc.list_connectors(
        connectorNamePrefix=prefix, maxResults=2, nextToken=first["nextToken"]
    )
    listed = first["connectors"] + second["connectors"]
    assert [c["connectorArn"] for c in listed] == arns
    assert "nextToken" not in second
    assert "connectorConfiguration" not in listed[0]  # ConnectorSummary has none
    assert listed[0]["connectorState"] == "RUNNING"
    paginated = kc.get_paginator("list_connectors").paginate(
        connectorNamePrefix=prefix, PaginationConfig={"PageSize": 1}
    )
    assert [c["connectorName"] for page in paginated for c in page["connectors"]] == [
        f"{prefix}-{i}" for i in range(3)
    ]


def test_a_deleted_connector_is_not_found(kc):
    arn = kc.create_connector(**connector_request(unique("gone")))["connectorArn"]
    version = kc.describe_connector(connectorArn=arn)["currentVersion"]
    with pytest.raises(ClientError, match=r"\(BadRequestException\).*currentVersion"):
        kc.delete_connector(connectorArn=arn, currentVersion="STALEVERSION1")

    deleted = kc.delete_connector(connectorArn=arn, currentVersion=version)

    assert deleted == {**deleted, "connectorArn": arn, "connectorState": "DELETING"}
    for call in (kc.describe_connector, kc.delete_connector):
        with pytest.raises(ClientError, match=r"\(NotFoundException\)") as raised:
            call(connectorArn=arn)
        assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


def test_a_malformed_arn_is_a_bad_request(kc):
    with pytest.raises(ClientError, match=r"\(BadRequestException\)"):
        kc.describe_connector(connectorArn="not-an-arn")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"kafkaConnectVersion": None}, "Value null at 'kafkaConnectVersion'"),
        (
            {"capacity": {"provisionedCapacity": {"mcuCount": 9, "workerCount": 1}}},
            "Value at 'capacity.provisionedCapacity.mcuCount' failed to satisfy constraint: "
            "Member must have value less than or equal to 8",
        ),
        (
            {"kafkaClusterClientAuthentication": {"authenticationType": "SASL"}},
            "Member must satisfy enum value set: [NONE, IAM]",
        ),
        ({"connectorName": ""}, "Member must have length greater than or equal to 1"),
        (
            {"plugins": [{"customPlugin": {"customPluginArn": "arn:x", "revision": 0}}]},
            "Value at 'plugins.1.member.customPlugin.revision'",
        ),
    ],
)
def test_invalid_requests_are_bad_requests_naming_the_member(sandbox, overrides, message):
    request = {
        k: v for k, v in connector_request(unique("bad"), **overrides).items() if v is not None
    }
    # Without client-side validation, so that the emulator's own validation is what answers.
    unchecked = sandbox.client("kafkaconnect", parameter_validation=False)
    with pytest.raises(ClientError, match=r"\(BadRequestException\)") as raised:
        unchecked.create_connector(**request)
    assert message in raised.value.response["Error"]["Message"]
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def test_list_page_size_is_validated(sandbox):
    unchecked = sandbox.client("kafkaconnect", parameter_validation=False)
    with pytest.raises(ClientError, match="Member must have value less than or equal to 100"):
        unchecked.list_connectors(maxResults=101)


def test_update_connector_changes_capacity_or_configuration_and_the_version(kc):
    arn = kc.create_connector(**connector_request(unique("updated")))["connectorArn"]
    first = kc.describe_connector(connectorArn=arn)["currentVersion"]

    autoscaling = {
        "maxWorkerCount": 4,
        "mcuCount": 2,
        "minWorkerCount": 1,
        "scaleInPolicy": {"cpuUtilizationPercentage": 20},
        "scaleOutPolicy": {"cpuUtilizationPercentage": 80},
    }
    answer = kc.update_connector(
        connectorArn=arn, currentVersion=first, capacity={"autoScaling": autoscaling}
    )
    assert answer["connectorArn"] == arn and answer["connectorState"] == "UPDATING"
    assert re.fullmatch(
        r"arn:aws:kafkaconnect:us-east-1:123456789012:connector-operation/updated-[0-9a-f]{12}/"
        r"[0-9a-f-]{36}/[0-9a-f-]{36}",
        answer["connectorOperationArn"],
    )
    described = kc.describe_connector(connectorArn=arn)
    assert described["connectorState"] == "RUNNING"
    assert described["capacity"] == {"autoScaling": autoscaling}
    assert described["connectorConfiguration"] == DEBEZIUM_CONFIG
    second = described["currentVersion"]
    assert second != first

    rerouted = {**DEBEZIUM_CONFIG, "table.include.list": "public.orders"}
    kc.update_connector(connectorArn=arn, currentVersion=second, connectorConfiguration=rerouted)
    described = kc.describe_connector(connectorArn=arn)
    assert described["connectorConfiguration"] == rerouted
    assert described["capacity"] == {"autoScaling": autoscaling}
    listed = [c for c in kc.list_connectors()["connectors"] if c["connectorArn"] == arn]
    assert listed[0]["currentVersion"] == described["currentVersion"] != second


@pytest.mark.parametrize(
    ("update", "message"),
    [
        ({"currentVersion": "STALEVERSION1"}, "currentVersion STALEVERSION1 is not"),
        ({}, "Nothing to update"),
        (
            {
                "connectorConfiguration": DEBEZIUM_CONFIG,
                "capacity": {"provisionedCapacity": {"mcuCount": 1, "workerCount": 2}},
            },
            "(capacity) or its connectorConfiguration, not both",
        ),
    ],
)
def test_an_update_on_a_stale_version_or_of_both_kinds_is_refused(kc, update, message):
    arn = kc.create_connector(**connector_request(unique("refused")))["connectorArn"]
    version = kc.describe_connector(connectorArn=arn)["currentVersion"]
    with pytest.raises(ClientError, match=r"\(BadRequestException\)") as raised:
        kc.update_connector(**{"connectorArn": arn, "currentVersion": version, **update})
    assert message in raised.value.response["Error"]["Message"]
    assert kc.describe_connector(connectorArn=arn)["currentVersion"] == version


def test_an_update_is_validated_against_the_model(sandbox, kc):
    arn = kc.create_connector(**connector_request(unique("invalid")))["connectorArn"]
    version = kc.describe_connector(connectorArn=arn)["currentVersion"]
    unchecked = sandbox.client("kafkaconnect", parameter_validation=False)
    with pytest.raises(ClientError, match=r"capacity\.provisionedCapacity\.mcuCount"):
        unchecked.update_connector(
            connectorArn=arn,
            currentVersion=version,
            capacity={"provisionedCapacity": {"mcuCount": 9, "workerCount": 1}},
        )
    with pytest.raises(ClientError, match=r"\(NotFoundException\)"):
        kc.update_connector(
            connectorArn=arn.rsplit("/", 1)[0] + f"/{uuid.uuid4()}",
            currentVersion=version,
            connectorConfiguration=DEBEZIUM_CONFIG,
        )
