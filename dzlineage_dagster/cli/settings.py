"""`dzlineage settings`: every DZLINEAGE_* variable, what it means, and its value here."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping

from pydantic.fields import FieldInfo

from dzlineage_dagster.relay.settings import RelaySettings
from dzlineage_dagster.scopes import SCOPE_SETTINGS, SCOPES_VARIABLE, ScopeConfig, read_scopes
from dzlineage_dagster.settings import (
    AWS_OPTION_VARIABLES,
    AWS_SIDES,
    ENV_PREFIX,
    InvalidSettings,
    LineageSettings,
    env_name,
    environment_problems,
    role_setting,
    side_role_description,
    side_role_variables,
)


def cmd_settings(args: argparse.Namespace) -> int:
    """Every DZLINEAGE_* variable, what it means, and its value here; exit 1 if any is invalid."""
    problems = environment_problems()
    for name, field in LineageSettings.model_fields.items():
        variable = env_name(name)
        current = os.environ.get(variable)
        default = "(required)" if field.is_required() else f"(default: {field.default})"
        print(f"{variable} = {current if current is not None else default}")
        print(f"    {field.description}")
        if variable in problems:
            print(f"    INVALID: {problems[variable]}")
    for field_name, variable in AWS_OPTION_VARIABLES.items():
        print(f"{variable} = {os.environ.get(variable, '(unset)')}")
        print(f"    AWS resources' `{field_name}` option")
        if field_name.startswith("role_"):
            print(
                "    (both sides' default: DZLINEAGE_DATA_/GOVERNANCE_ROLE_* replace it per side)"
            )
        if variable in problems:
            print(f"    INVALID: {problems[variable]}")
    for side in AWS_SIDES:
        for field_name, variable in side_role_variables(side).items():
            print(f"{variable} = {os.environ.get(variable, '(unset)')}")
            print(f"    {side_role_description(side, field_name)}")
            if variable in problems:
                print(f"    INVALID: {problems[variable]}")
    relay_problems = RelaySettings.problems()
    for name, field in RelaySettings.own_fields().items():
        variable = env_name(name)
        current = os.environ.get(variable)
        if current is None:
            shown = "(unset)" if field.default is None else f"(default: {_default(field)})"
        elif (field.json_schema_extra or {}).get("secret"):
            shown = f"(set, {len(current)} characters, not shown)"
        else:
            shown = current
        print(f"{variable} = {shown}")
        print(f"    relay: {field.description}")
        if variable in relay_problems:
            print(f"    INVALID: {relay_problems[variable]}")
    problems.update(relay_problems)
    problems.update(print_scopes(os.environ))
    for line in problems.values():
        print(f"dzlineage settings: invalid setting {line}", file=sys.stderr)
    return 1 if problems else 0


def print_scopes(environ: Mapping[str, str]) -> dict[str, str]:
    """``DZLINEAGE_SCOPES``: its value, then each scope with its data side and every setting a
    scope may set, as the scope sees it (said where the value comes from). Its problems, a line
    each, as every command refuses them."""
    value = environ.get(SCOPES_VARIABLE)
    shown_value = "(unset)" if value is None else value.strip().replace("\n", "\n    | ")
    print(f"{SCOPES_VARIABLE} = {shown_value}")
    print(
        "    The registries this deployment serves, each in its Region and account "
        "(docs/many-registries.md); unset: the settings' one registry."
    )
    try:
        scopes = read_scopes(environ)
    except InvalidSettings as error:
        for line in error.problems:
            print(f"    INVALID: {line}")
        return {f"{SCOPES_VARIABLE}#{n}": line for n, line in enumerate(error.problems)}
    fields = LineageSettings.model_fields
    for scope in scopes:
        region = scope.region_name or f"the deployment's ({environ.get('AWS_REGION', 'unset')})"
        variable = role_setting("data", environ)
        deployments = f"{environ[variable]} ({variable})" if variable else "default credentials"
        role = scope.role_arn or f"the deployment's: {deployments}"
        print(
            f"  scope {scope.name}: Region {region}; data side's role {role}{_external_id(scope, environ)}"
        )
        for name in SCOPE_SETTINGS:
            if name in scope.settings:
                current = f"{scope.settings[name]}  (the scope's)"
            elif env_name(name) in environ:
                current = f"{environ[env_name(name)]}  ({env_name(name)})"
            else:
                current = f"{fields[name].default}  (default)"
            print(f"    {name} = {current}")
    return {}


def _default(field: FieldInfo) -> object:
    return field.default_factory() if field.default_factory is not None else field.default


def add_settings_command(commands: argparse._SubParsersAction) -> None:
    settings = commands.add_parser(
        "settings",
        help=f"list every {ENV_PREFIX}* setting with its meaning and current value",
        description=f"List every {ENV_PREFIX}* environment variable the project reads, then "
        f"the scopes of {SCOPES_VARIABLE} with each one's settings as the scope sees them; "
        "exits 1 if any value is invalid.",
    )
    settings.set_defaults(handler=cmd_settings)


def _external_id(scope: ScopeConfig, environ: Mapping[str, str]) -> str:
    """The external id a scope's role is assumed with, and whose it is: a scope that names
    its own role but no external id takes the deployment's (DZLINEAGE_DATA_ROLE_EXTERNAL_ID),
    which the role's trust policy may not expect."""
    if scope.role_external_id:
        return f", external id {scope.role_external_id} (the scope's)"
    variable = side_role_variables("data")["role_external_id"]
    if scope.role_arn and environ.get(variable):
        return f", external id {environ[variable]} (the deployment's {variable})"
    return ""
