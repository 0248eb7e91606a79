import pytest
from dagster import EnvVar

from dzlineage_dagster.settings import (
    InvalidSettings,
    LineageSettings,
    MissingSettings,
    aws_resource_options,
    aws_side_options,
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


def test_definitions_defer_the_identity_settings_and_a_run_names_a_wrong_one():
    """Dagster's EnvVar is a str: checked as text, the variable's name was refused as a value."""
    identity = {
        "DZLINEAGE_TOPIC_NAMESPACE": "kafka://cdc-prod",
        "DZLINEAGE_KAFKA_BROKER_ALIASES": "kafka-prod:9092,kafka-dns-alias",
        "DZLINEAGE_SOURCE_HOST_ALIASES": "10.0.0.5=shop-db.internal",
    }
    settings = LineageSettings.deferred_to_env(identity)
    assert settings.topic_namespace == EnvVar("DZLINEAGE_TOPIC_NAMESPACE")
    assert settings.source_host_aliases == EnvVar("DZLINEAGE_SOURCE_HOST_ALIASES")
    wrong = {**REQUIRED, **identity, "DZLINEAGE_KAFKA_BROKER_ALIASES": "kafka-prod:port"}
    with pytest.raises(InvalidSettings, match=r"DZLINEAGE_KAFKA_BROKER_ALIASES='kafka-prod:port'"):
        LineageSettings.from_env(wrong)


def test_definitions_take_a_choice_set_in_the_environment_when_the_code_location_loads():
    """A Literal setting is no EnvVar (Dagster's EnvVar is not one of its choices): the code
    location failed to load whenever one was set."""
    choices = {
        "DZLINEAGE_SSM_MAPPING_LAYOUT": "per-topic",
        "DZLINEAGE_SSM_TIER": "Advanced",
        "DZLINEAGE_TOPIC_NAMESPACE_STYLE": "cluster",
        "DZLINEAGE_DELETED_SCHEMA_POLICY": "delete",
        "DZLINEAGE_SQLSERVER_SCHEME": "mssql",
    }
    settings = LineageSettings.deferred_to_env(choices)
    assert settings.ssm_mapping_layout == "per-topic" and settings.ssm_tier == "Advanced"
    assert settings.topic_namespace_style == "cluster" and settings.sqlserver_scheme == "mssql"
    assert settings.deleted_schema_policy == "delete"


def _as_variable(default: object) -> str:
    """A default as its variable says it: `true`, a comma list, the text."""
    if isinstance(default, bool):
        return str(default).lower()
    if isinstance(default, list):
        return ",".join(default)
    return str(default)


def test_definitions_load_with_every_setting_set_in_the_environment():
    """Each optional setting set to its default's text: `DZLINEAGE_CONCURRENCY=8` made
    `Definitions` fail to load (Dagster's int EnvVar is a 0 to pydantic's `ge=1`)."""
    environ = {
        env_name(name): "x" for name, f in LineageSettings.model_fields.items() if f.is_required()
    }
    environ |= {
        env_name(name): _as_variable(f.default)
        for name, f in LineageSettings.model_fields.items()
        if not f.is_required() and f.default is not None
    }
    environ["DZLINEAGE_CONCURRENCY"] = "8"
    environ["DZLINEAGE_LINEAGE_READBACK_WAIT_SECONDS"] = "2.5"
    settings = LineageSettings.deferred_to_env(environ)
    assert settings.concurrency == 8 and settings.lineage_readback_wait_seconds == 2.5
    assert settings.domain_id == EnvVar("DZLINEAGE_DOMAIN_ID")
    environ["DZLINEAGE_CONCURRENCY"] = "0"
    with pytest.raises(InvalidSettings, match="DZLINEAGE_CONCURRENCY='0'"):
        LineageSettings.deferred_to_env(environ)


def test_aws_options_only_for_variables_that_are_set():
    assert aws_resource_options({}) == {}
    role = "arn:aws:iam::123456789012:role/r"
    options = aws_resource_options({"DZLINEAGE_MAX_ATTEMPTS": "9", "DZLINEAGE_ROLE_ARN": role})
    assert options == {"max_attempts": 9, "role_arn": role}
    deferred = aws_resource_options({"DZLINEAGE_MAX_ATTEMPTS": "9"}, deferred=True)
    assert deferred["max_attempts"] == EnvVar.int("DZLINEAGE_MAX_ATTEMPTS")


DATA_ROLE = "arn:aws:iam::111111111111:role/dzlineage-data"
SHARED_ROLE = "arn:aws:iam::123456789012:role/dzlineage"


def test_each_side_takes_its_own_role_with_its_own_external_id_or_the_shared_pair():
    environ = {
        "DZLINEAGE_ROLE_ARN": SHARED_ROLE,
        "DZLINEAGE_ROLE_EXTERNAL_ID": "shared-ext",
        "DZLINEAGE_DATA_ROLE_ARN": DATA_ROLE,
        "DZLINEAGE_MAX_ATTEMPTS": "4",
    }
    sides = aws_side_options(environ)
    # The shared external id belongs to the shared role: never sent with the data side's own.
    assert sides["data"] == {"side": "data", "max_attempts": 4, "role_arn": DATA_ROLE}
    assert sides["governance"] == {
        "side": "governance",
        "max_attempts": 4,
        "role_arn": SHARED_ROLE,
        "role_external_id": "shared-ext",
    }
    own_pair = aws_side_options({**environ, "DZLINEAGE_DATA_ROLE_EXTERNAL_ID": "data-ext"})
    assert own_pair["data"]["role_external_id"] == "data-ext"


def test_a_side_without_any_role_uses_the_default_credentials_as_before():
    assert aws_side_options({}) == {"data": {"side": "data"}, "governance": {"side": "governance"}}


def test_definitions_defer_each_sides_role_to_the_variable_it_comes_from():
    sides = aws_side_options(
        {"DZLINEAGE_ROLE_ARN": SHARED_ROLE, "DZLINEAGE_GOVERNANCE_ROLE_ARN": DATA_ROLE},
        deferred=True,
    )
    assert sides["data"]["role_arn"] == EnvVar("DZLINEAGE_ROLE_ARN")
    assert sides["governance"]["role_arn"] == EnvVar("DZLINEAGE_GOVERNANCE_ROLE_ARN")


def test_the_glue_catalog_id_names_the_account_of_the_lineages_glue_tables():
    settings = LineageSettings.from_env(REQUIRED)
    assert settings.glue_table_account("111111111111") == "111111111111"
    other = LineageSettings.from_env({**REQUIRED, "DZLINEAGE_GLUE_CATALOG_ID": "333333333333"})
    assert other.glue_table_account("111111111111") == "333333333333"


def test_the_debezium_version_is_major_dot_minor_and_defaults_to_the_modelled_one():
    assert LineageSettings.from_env(REQUIRED).debezium_version_tuple == (3, 6)
    older = LineageSettings.from_env({**REQUIRED, "DZLINEAGE_DEBEZIUM_VERSION": "2.7"})
    assert older.debezium_version_tuple == (2, 7)
    with pytest.raises(
        ValueError, match=r"DZLINEAGE_DEBEZIUM_VERSION=.*give the version as `3\.6`"
    ):
        LineageSettings.from_env({**REQUIRED, "DZLINEAGE_DEBEZIUM_VERSION": "3.6.1.Final"})


def test_lineage_destinations_are_a_checked_comma_list():
    """`datazone,glue` in any order and case is both, in posting order; an unknown or empty
    list is refused naming the variable and the names it takes; unset is DataZone alone."""
    required = {
        env_name(name): value
        for name, value in {
            "domain_id": "dzd_abc",
            "project_id": "p1",
            "registry_name": "cdc",
            "msk_cluster_arn": "arn:aws:kafka:eu-west-1:123456789012:cluster/cdc/abc-1",
        }.items()
    }
    assert LineageSettings.from_env(required).lineage_destinations == ["datazone"]
    both = {**required, "DZLINEAGE_LINEAGE_DESTINATIONS": " Glue,datazone,glue"}
    assert LineageSettings.from_env(both).lineage_destinations == ["datazone", "glue"]
    for wrong, problem in (("glue,marquez", "'marquez' is no lineage destination"), (",", "no")):
        with pytest.raises(InvalidSettings, match="DZLINEAGE_LINEAGE_DESTINATIONS=") as raised:
            LineageSettings.from_env({**required, "DZLINEAGE_LINEAGE_DESTINATIONS": wrong})
        assert problem in str(raised.value) and "datazone, glue" in str(raised.value)
