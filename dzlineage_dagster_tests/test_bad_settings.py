"""Bad settings: one line naming the variable and what it may be, never a traceback, on every
path (the settings class, `dzlineage sync`, `dzlineage settings`, a Dagster run); and
`dzlineage sync` refuses a domain, project, registry or cluster that does not exist before it
tries any topic, dry run or not."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from dzlineage_dagster.core.mapping.ssm_names import (
    MAPPING_NAME_LEVELS,
    MAX_HIERARCHY_LEVELS,
    MAX_PARAMETER_ARN_LENGTH,
    PARAMETER_ARN_PREFIX_ALLOWANCE,
    SCOPE_LEVELS,
)
from dzlineage_dagster.settings import (
    InvalidSettings,
    LineageSettings,
    aws_side_options,
    env_name,
    environment_problems,
)

COMMAND = [sys.executable, "-m", "dzlineage_dagster.cli"]
VALID = {
    "DZLINEAGE_DOMAIN_ID": "dzd_abc123",
    "DZLINEAGE_PROJECT_ID": "proj123",
    "DZLINEAGE_REGISTRY_NAME": "shop-cdc",
    "DZLINEAGE_MSK_CLUSTER_ARN": "arn:aws:kafka:eu-west-1:123456789012:cluster/cdc/0b1c-2",
}
#: variable, bad value, what the one line must also say (the allowed values or the rule).
BAD_SETTINGS = [
    ("DZLINEAGE_DELETED_SCHEMA_POLICY", "purge", "'keep' or 'delete'"),
    ("DZLINEAGE_TOPIC_NAMESPACE_STYLE", "brokers", "'bootstrap' or 'cluster'"),
    ("DZLINEAGE_TABLE_NAME_PATTERN", "{schema}_{tabel}", "{prefix}, {database}, {schema}, {table}"),
    ("DZLINEAGE_TABLE_NAME_PATTERN", "{schema", "placeholders allowed"),
    ("DZLINEAGE_ASSET_URL_TEMPLATE", "{portal}/x/{asset_id}", "{portal_url}"),
    ("DZLINEAGE_DOMAIN_ID", "domain-1", "dzd[-_][a-zA-Z0-9_-]{1,36}"),
    ("DZLINEAGE_DOMAIN_ID", "dzd_" + "x" * 37, "dzd[-_][a-zA-Z0-9_-]{1,36}"),
    ("DZLINEAGE_PROJECT_ID", "my project", "[a-zA-Z0-9_-]{1,36}"),
    ("DZLINEAGE_REGISTRY_NAME", "shop/cdc", "[a-zA-Z0-9-_$#.]+"),
    ("DZLINEAGE_MSK_CLUSTER_ARN", "cdc-demo", "arn:aws:kafka:"),
    ("DZLINEAGE_SSM_PREFIX", "dzlineage/x", "must start with '/'"),
    ("DZLINEAGE_GLUE_CATALOG_ID", "lakehouse", "123456789012"),
    # Glue's NameString (botocore's glue model): 1 to 255 characters of one line.
    ("DZLINEAGE_GLUE_DATABASE", "", "AWS allows 1 to 255"),
    ("DZLINEAGE_GLUE_DATABASE", "lake\nhouse", "does not match"),
]
BAD_AWS_OPTIONS = [
    ("DZLINEAGE_MAX_ATTEMPTS", "five", "whole number"),
    ("DZLINEAGE_MAX_ATTEMPTS", "0", "at least 1"),
    ("DZLINEAGE_RETRY_MODE", "fast", "standard, adaptive, legacy"),
    ("DZLINEAGE_ROLE_ARN", "dzlineage", "not an IAM role ARN"),
    ("DZLINEAGE_DATA_ROLE_ARN", "arn:aws:iam::1111:role/x", "not an IAM role ARN"),
    ("DZLINEAGE_GOVERNANCE_ROLE_ARN", "arn:aws:sts::222222222222:role/x", "not an IAM role ARN"),
    ("DZLINEAGE_GOVERNANCE_ROLE_EXTERNAL_ID", "ext", "set only with DZLINEAGE_GOVERNANCE_ROLE_ARN"),
    ("DZLINEAGE_CLIENT_RATE_LIMITS", "aws,datazone.CreateAsset=fast", "'fast' is not a number"),
    ("DZLINEAGE_CLIENT_RATE_LIMITS", "fast", "say 'off', 'aws', or"),
    (
        "DZLINEAGE_CLIENT_RATE_LIMITS",
        "aws,datazone.CreatAsset=50",
        "'datazone.CreatAsset': no such",
    ),
    ("DZLINEAGE_CLIENT_RATE_LIMITS", "aws,ssm.AssumeRole=5", "'ssm.AssumeRole': no such operation"),
    ("DZLINEAGE_ROLE_EXTERNAL_ID", "x", "AWS allows 2 to 1224"),
    ("DZLINEAGE_ROLE_EXTERNAL_ID", "agreed id", "does not match"),
]


@pytest.mark.parametrize(("variable", "value", "allowed"), BAD_SETTINGS)
def test_an_invalid_setting_is_one_line_naming_the_variable_and_what_it_may_be(
    variable, value, allowed
):
    with pytest.raises(InvalidSettings) as raised:
        LineageSettings.from_env({**VALID, variable: value})
    assert raised.value.problems == [str(raised.value)]
    line = raised.value.problems[0]
    assert line.startswith(f"{variable}={value!r}"), line
    assert allowed in line and "\n" not in line


@pytest.mark.parametrize(("variable", "value", "allowed"), BAD_AWS_OPTIONS)
def test_an_invalid_aws_option_is_one_line_naming_the_variable(variable, value, allowed):
    with pytest.raises(InvalidSettings) as raised:
        aws_side_options({variable: value})
    assert raised.value.problems == [
        f"{variable}={value!r}: {raised.value.problems[0].split(': ', 1)[1]}"
    ]
    assert allowed in raised.value.problems[0]


def test_valid_settings_at_the_limits_aws_allows_pass():
    settings = LineageSettings.from_env(
        {
            **VALID,
            "DZLINEAGE_DOMAIN_ID": "dzd-" + "a" * 36,
            "DZLINEAGE_PROJECT_ID": "p" * 36,
            "DZLINEAGE_REGISTRY_NAME": "r$#._-" + "x" * 249,
            "DZLINEAGE_TABLE_NAME_PATTERN": "{prefix}_{database}_{schema}_{table}",
            # Glue's pattern is one line of any characters, those above U+FFFF included, so
            # a `;` is a name Glue takes (the Athena guide says so too; Athena itself wants
            # lower case, letters, digits and `_`).
            "DZLINEAGE_GLUE_DATABASE": "lake;house \U0001d11e" + "x" * 243,
        }
    )
    assert len(settings.registry_name) == len(settings.glue_database) == 255
    with pytest.raises(InvalidSettings, match="AWS allows 1 to 255"):
        LineageSettings.from_env({**VALID, "DZLINEAGE_GLUE_DATABASE": "x" * 256})


def test_an_ssm_prefix_is_held_to_ssm_s_limits_with_the_domain_and_project_below_it():
    # A run's mapping names are <prefix>/<domain>/<project>/<s|h>/<name>: four levels of their
    # own. A prefix that fits alone but not with them used to fail only when a run started.
    room = MAX_HIERARCHY_LEVELS - SCOPE_LEVELS - MAPPING_NAME_LEVELS
    deepest = "/" + "/".join(["level"] * room)
    assert LineageSettings.from_env({**VALID, "DZLINEAGE_SSM_PREFIX": deepest}).ssm_prefix
    with pytest.raises(InvalidSettings) as raised:
        LineageSettings.from_env({**VALID, "DZLINEAGE_SSM_PREFIX": deepest + "/level"})
    (line,) = raised.value.problems
    assert line.startswith("DZLINEAGE_SSM_PREFIX=") and f"use at most {room}" in line

    # The longest prefix whose hash-form names still fit, with this domain and project.
    scope = f"/{VALID['DZLINEAGE_DOMAIN_ID']}/{VALID['DZLINEAGE_PROJECT_ID']}"
    hash_name_tail = len("/h/") + 64
    longest = (
        MAX_PARAMETER_ARN_LENGTH - PARAMETER_ARN_PREFIX_ALLOWANCE - len(scope) - hash_name_tail
    )
    fitting = "/" + "p" * longest
    assert LineageSettings.from_env({**VALID, "DZLINEAGE_SSM_PREFIX": fitting}).ssm_prefix
    with pytest.raises(InvalidSettings) as raised:
        LineageSettings.from_env({**VALID, "DZLINEAGE_SSM_PREFIX": fitting + "p"})
    (line,) = raised.value.problems
    assert line.startswith("DZLINEAGE_SSM_PREFIX=") and "too long" in line


def _cli(*args: str, **variables: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DZLINEAGE_")}
    return subprocess.run(
        [*COMMAND, *args], capture_output=True, text=True, env={**clean, **VALID, **variables},
        timeout=120,
    )  # fmt: skip


def test_sync_and_settings_commands_say_which_variables_are_invalid_without_a_traceback():
    """One validation: `dzlineage sync` refuses exactly what `dzlineage settings` marks
    INVALID, every variable at once, in the same words (the rate limits were accepted by one
    and refused by the other; the sync named only the first wrong setting)."""
    bad = {
        "DZLINEAGE_DELETED_SCHEMA_POLICY": "purge",
        "DZLINEAGE_MAX_ATTEMPTS": "five",
        "DZLINEAGE_CLIENT_RATE_LIMITS": "aws,datazone.CreateAsset=fast",
        "DZLINEAGE_GLUE_DATABASE": "lake" * 2_500,
    }
    sync = _cli("sync", "--dry-run", **bad)
    assert sync.returncode == 1
    assert "Traceback" not in sync.stderr + sync.stdout
    listing = _cli("settings", **bad)
    assert listing.returncode == 1
    assert "Traceback" not in listing.stderr + listing.stdout
    refused = {
        command: sorted(
            line.removeprefix(f"dzlineage {command}: invalid setting ")
            for line in result.stderr.strip().splitlines()
        )
        for command, result in (("sync", sync), ("settings", listing))
    }
    assert (
        refused["sync"]
        == refused["settings"]
        == [
            "DZLINEAGE_CLIENT_RATE_LIMITS='aws,datazone.CreateAsset=fast': "
            "'datazone.CreateAsset=fast': 'fast' is not a number",
            "DZLINEAGE_DELETED_SCHEMA_POLICY='purge': Input should be 'keep' or 'delete'",
            f"DZLINEAGE_GLUE_DATABASE={'lake' * 20!r}... (10,000 characters) is 10,000 "
            "characters; AWS allows 1 to 255 (e.g. lakehouse)",
            "DZLINEAGE_MAX_ATTEMPTS='five': not a whole number of attempts (e.g. 5)",
        ]
    )
    assert "    INVALID: DZLINEAGE_MAX_ATTEMPTS='five'" in listing.stdout


def every_variable() -> list[str]:
    from dzlineage_dagster.settings import AWS_OPTION_VARIABLES, AWS_SIDES, side_role_variables

    return [
        *(env_name(name) for name in LineageSettings.model_fields),
        *AWS_OPTION_VARIABLES.values(),
        *(variable for side in AWS_SIDES for variable in side_role_variables(side).values()),
    ]


@pytest.mark.parametrize("variable", every_variable())
def test_a_refused_value_of_10000_characters_is_echoed_cut_short(variable):
    """An error names the value by its first 80 characters and its length, not whole."""
    value = "v" * 10_000
    problems = environment_problems({**VALID, variable: value})
    for line in problems.values():
        assert len(line) < 600, line
        assert "v" * 81 not in line and "(10,000 characters)" in line, line


def test_settings_lists_each_sides_role_and_refuses_an_external_id_without_its_role():
    listing = _cli("settings", DZLINEAGE_DATA_ROLE_EXTERNAL_ID="agreed-id")
    assert listing.returncode == 1
    for variable in (
        "DZLINEAGE_DATA_ROLE_ARN",
        "DZLINEAGE_DATA_ROLE_EXTERNAL_ID",
        "DZLINEAGE_GOVERNANCE_ROLE_ARN",
        "DZLINEAGE_GOVERNANCE_ROLE_EXTERNAL_ID",
        "DZLINEAGE_GLUE_CATALOG_ID",
    ):
        assert f"\n{variable} = " in listing.stdout, variable
    assert listing.stderr.strip().splitlines() == [
        "dzlineage settings: invalid setting DZLINEAGE_DATA_ROLE_EXTERNAL_ID='agreed-id': set "
        "only with DZLINEAGE_DATA_ROLE_ARN (the data side's role it belongs to)"
    ]


@pytest.mark.parametrize(
    "command", [("trace", "shop.sales.orders"), ("orphans",), ("move-assets", "--to-project", "p2")]
)
def test_the_lineage_and_move_commands_name_an_invalid_role_without_a_traceback(command):
    result = _cli(*command, DZLINEAGE_GOVERNANCE_ROLE_ARN="dzlineage-governance")
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"dzlineage {command[0]}: DZLINEAGE_GOVERNANCE_ROLE_ARN="), line
    assert "not an IAM role ARN" in line


def _failure_text(result) -> str:
    """Every message of the run's failure, its causes included (what the UI shows)."""
    texts = []
    for event in result.all_events:
        if not event.is_failure:
            continue
        error = getattr(event.event_specific_data, "error", None)
        while error is not None:
            texts.append(error.message)
            error = error.cause
    return "\n".join(texts)


@pytest.mark.parametrize(
    ("variable", "value"),
    [("DZLINEAGE_DOMAIN_ID", "domain-1"), ("DZLINEAGE_MSK_CLUSTER_ARN", "cdc-demo")],
)
def test_a_dagster_run_with_an_invalid_setting_fails_naming_the_variable(
    platform, monkeypatch, variable, value
):
    platform.registry_topics()  # read with the good settings
    monkeypatch.setenv(variable, value)
    result = platform.sync()
    assert not result.success
    assert f"{variable}={value!r}" in _failure_text(result)
    assert platform.control.call_counts().get(("datazone", "CreateAsset"), 0) == 0


def test_settings_lists_every_relay_setting_with_its_value_the_key_masked():
    from dzlineage_dagster.relay.settings import RelaySettings

    key = "relay-key-that-must-not-show-0123"
    listing = _cli(
        "settings",
        DZLINEAGE_RELAY_API_KEY=key,
        DZLINEAGE_RELAY_SPOOL_MAX_EVENTS="500",
        DZLINEAGE_RELAY_GLUE_ACCOUNTS="12345",
    )
    assert listing.returncode == 1
    for name in RelaySettings.own_fields():
        assert f"\nDZLINEAGE_{name.upper()} = " in listing.stdout, name
    assert key not in listing.stdout + listing.stderr
    assert f"DZLINEAGE_RELAY_API_KEY = (set, {len(key)} characters, not shown)" in listing.stdout
    assert "DZLINEAGE_RELAY_SPOOL_MAX_EVENTS = 500\n" in listing.stdout
    assert "DZLINEAGE_RELAY_KEYS_TTL_SECONDS = (default: 60.0)\n" in listing.stdout
    assert listing.stderr.strip().splitlines() == [
        "dzlineage settings: invalid setting DZLINEAGE_RELAY_GLUE_ACCOUNTS='12345': '12345' is "
        "not an account id (12 digits)"
    ]
