import pytest
from dagster import EnvVar

from dzlineage_dagster.settings import (
    LineageSettings,
    MissingSettings,
    aws_resource_options,
    env_name,
)

REQUIRED = {
    "DZLINEAGE_DOMAIN_ID": "dzd_abc",
    "DZLINEAGE_PROJECT_ID": "proj",
    "DZLINEAGE_REGISTRY_NAME": "reg",
    "DZLINEAGE_MSK_CLUSTER_ARN": "arn:aws:kafka:us-east-1:123456789012:cluster/c/1",
}


def test_every_setting_is_read_from_its_dzlineage_variable():
    settings = LineageSettings.from_env({**REQUIRED, "DZLINEAGE_DELETED_SCHEMA_POLICY": "delete"})
    assert settings.domain_id == "dzd_abc"
    assert settings.deleted_schema_policy == "delete"
    assert settings.ssm_prefix == "/dzlineage/schema-assets"
    assert all(env_name(name).startswith("DZLINEAGE_") for name in LineageSettings.model_fields)


def test_missing_required_settings_are_all_named():
    with pytest.raises(MissingSettings) as raised:
        LineageSettings.from_env({"DZLINEAGE_DOMAIN_ID": "dzd_abc"})
    for name in ("DZLINEAGE_PROJECT_ID", "DZLINEAGE_REGISTRY_NAME", "DZLINEAGE_MSK_CLUSTER_ARN"):
        assert name in str(raised.value)


def test_definitions_defer_set_and_required_settings_to_env_vars():
    settings = LineageSettings.deferred_to_env({"DZLINEAGE_SSM_PREFIX": "/x"})
    assert settings.domain_id == EnvVar("DZLINEAGE_DOMAIN_ID")
    assert settings.ssm_prefix == EnvVar("DZLINEAGE_SSM_PREFIX")
    assert settings.glue_database == "lakehouse"


def test_aws_options_only_for_variables_that_are_set():
    assert aws_resource_options({}) == {}
    options = aws_resource_options({"DZLINEAGE_MAX_ATTEMPTS": "9", "DZLINEAGE_ROLE_ARN": "r"})
    assert options == {"max_attempts": 9, "role_arn": "r"}
    deferred = aws_resource_options({"DZLINEAGE_MAX_ATTEMPTS": "9"}, deferred=True)
    assert deferred["max_attempts"] == EnvVar.int("DZLINEAGE_MAX_ATTEMPTS")


def test_the_debezium_version_is_major_dot_minor_and_defaults_to_the_modelled_one():
    assert LineageSettings.from_env(REQUIRED).debezium_version_tuple == (3, 6)
    older = LineageSettings.from_env({**REQUIRED, "DZLINEAGE_DEBEZIUM_VERSION": "2.7"})
    assert older.debezium_version_tuple == (2, 7)
    with pytest.raises(
        ValueError, match=r"DZLINEAGE_DEBEZIUM_VERSION=.*give the version as `3\.6`"
    ):
        LineageSettings.from_env({**REQUIRED, "DZLINEAGE_DEBEZIUM_VERSION": "3.6.1.Final"})
