"""GET /_sandbox/operations: who answers each operation, read from the real routing tables and
checked against what the sandbox actually does with a call."""

from __future__ import annotations

import urllib.error

import pytest
from botocore import xform_name
from botocore.exceptions import ClientError

from dzlineage_dagster.sandbox.moto_patches.gaps import GAP_HANDLERS
from dzlineage_dagster.sandbox.server.operations import PROJECT_SERVICES


@pytest.fixture(scope="module")
def listing(sandbox) -> dict:
    return sandbox.control.operations()


def test_every_project_service_is_listed_with_every_model_operation(sandbox, listing):
    assert set(listing["services"]) == set(PROJECT_SERVICES)
    for service, answers in listing["services"].items():
        model = sandbox.client(service).meta.service_model
        listed = set(answers["operations"]) | set(answers["unanswered"])
        assert listed == set(model.operation_names), service
        assert not set(answers["operations"]) & set(answers["unanswered"]), service


def test_emulated_services_are_answered_by_the_emulator_only(listing):
    for service in ("datazone", "kafkaconnect"):
        answers = set(listing["services"][service]["operations"].values())
        assert answers == {"emulator"}, service
    assert "PostLineageEvent" in listing["services"]["datazone"]["operations"]
    assert "CreateConnector" in listing["services"]["kafkaconnect"]["operations"]


def test_every_patch_in_the_registry_is_listed_as_moto_patched(listing):
    for service, operation in GAP_HANDLERS:
        assert listing["services"][service]["operations"][operation] == "moto-patched"
    assert listing["services"]["glue"]["operations"]["CreateRegistry"] == "moto"
    assert listing["services"]["sts"]["operations"]["GetCallerIdentity"] == "moto"


def test_an_unanswered_emulator_operation_is_really_not_answered(sandbox, listing):
    unanswered = listing["services"]["kafkaconnect"]["unanswered"]
    assert "PauseConnector" in unanswered and "UpdateConnector" not in unanswered
    with pytest.raises(ClientError) as raised:
        sandbox.client("kafkaconnect").pause_connector(
            connectorArn="arn:aws:kafkaconnect:us-east-1:123456789012:connector/c/1"
        )
    assert raised.value.response["Error"]["Code"] == "NotImplemented"


def test_a_listed_moto_operation_is_really_answered(sandbox, listing):
    operations = listing["services"]["glue"]["operations"]
    assert operations["GetDatabases"] == "moto"
    assert "DatabaseList" in getattr(sandbox.client("glue"), xform_name("GetDatabases"))()


def test_another_moto_service_on_request_and_an_unknown_one_refused(sandbox, listing):
    assert "s3" in listing["other_moto_services"]
    s3 = sandbox.control.operations("s3")["services"]["s3"]["operations"]
    assert s3["PutObject"] == "moto"
    with pytest.raises(urllib.error.HTTPError) as refused:
        sandbox.control.operations("no-such-service")
    assert refused.value.code == 404
