"""``DZLINEAGE_SCOPES``: the registries one deployment serves, each in its Region and account.

A scope is a registry and what goes with it: its Region, the role that reaches its account, its
MSK cluster, its connectors, its Glue database and its change queue. The DataZone side (domain,
project, mapping store, job namespace, pace) is the deployment's and is shared: every scope's
topics become assets of one catalog. The value is a YAML document, or the path of a file that
holds one (a value ending in ``.yaml``, ``.yml`` or ``.json``)::

    scopes:
      - name: orders_eu
        region: eu-west-1
        role_arn: arn:aws:iam::111111111111:role/dzlineage-data
        registry_name: orders-cdc
        msk_cluster_arn: arn:aws:kafka:eu-west-1:111111111111:cluster/orders/...
        change_queue_url: https://sqs.eu-west-1.amazonaws.com/111111111111/dzlineage-changes
      - name: billing_us
        region: us-east-1
        registry_name: billing-cdc
        msk_cluster_arn: arn:aws:kafka:us-east-1:222222222222:cluster/billing/...

A scope's other keys are settings of :data:`SCOPE_SETTINGS`, named as their ``DZLINEAGE_*``
variable without the prefix, in lower case; what a scope does not set is the variable's value
(or its default). Every scope names its registry; a scope names its cluster unless
``DZLINEAGE_MSK_CLUSTER_ARN`` is set for all.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from dagster import Config

from dzlineage_dagster.core.scopes import check_scope_name
from dzlineage_dagster.core.text import shown
from dzlineage_dagster.settings import (
    InvalidSettings,
    LineageSettings,
    _aws_option_value,
    env_name,
    environment_problems,
    side_role_variables,
)

SCOPES_VARIABLE = "DZLINEAGE_SCOPES"
#: The settings a scope may set: where its platform is and how its names read. The catalog's
#: (domain, project, mapping store, publishing, job namespace) and the pace's are shared.
SCOPE_SETTINGS = (
    "registry_name",
    "msk_cluster_arn",
    "glue_database",
    "glue_catalog_id",
    "table_name_pattern",
    "topic_namespace",
    "topic_namespace_style",
    "kafka_broker_aliases",
    "source_host_aliases",
    "kafka_connect_url",
    "lineage_overrides",
    "sqlserver_scheme",
    "debezium_version",
    "deleted_schema_policy",
    "retire_when_registry_empty",
    "change_queue_url",
    "change_queue_wait_seconds",
    "registry_listing_seconds",
)
#: A scope's AWS options: its data side's Region and role (the governance side is shared).
SCOPE_AWS_KEYS = {
    "region": "region_name",
    "role_arn": "role_arn",
    "role_external_id": "role_external_id",
}
#: What each scope must say for itself, unless the deployment's variable says it for all.
REQUIRED_PER_SCOPE = ("registry_name",)


class ScopeConfig(Config):
    """One registry the deployment serves: its name, its settings and its data side's access."""

    name: str
    settings: dict[str, str] = {}
    region_name: str | None = None
    role_arn: str | None = None
    role_external_id: str | None = None

    def data_side_options(self) -> dict[str, str]:
        """The options this scope gives the data side's AWS resources (only those it sets)."""
        return {
            field: value
            for field in SCOPE_AWS_KEYS.values()
            if (value := getattr(self, field)) is not None
        }

    def side_options(self, sides: Mapping[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Each side's AWS options (:func:`~dzlineage_dagster.settings.aws_side_options`) as
        this scope sees them: its Region and role on the data side (``AWS_REGION`` reaches
        boto3 from the process, not from :meth:`environ`, so the Region is set here)."""
        return {**sides, "data": {**sides.get("data", {}), **self.data_side_options()}}

    def environ(self, environ: Mapping[str, str]) -> dict[str, str]:
        """``environ`` as this scope sees it: its settings and its data side's access as the
        variables the project reads, so every reader of variables serves the scope too."""
        scoped = dict(environ)
        scoped.update({env_name(field): value for field, value in self.settings.items()})
        if self.region_name:
            scoped["AWS_REGION"] = scoped["AWS_DEFAULT_REGION"] = self.region_name
        role_variables = side_role_variables("data")
        for field in ("role_arn", "role_external_id"):
            if getattr(self, field):
                scoped[role_variables[field]] = getattr(self, field)
        return scoped


def scopes_document(value: str) -> tuple[Any, str]:
    """The parsed document of ``DZLINEAGE_SCOPES`` and where it came from (for messages)."""
    if value.strip().endswith((".yaml", ".yml", ".json")):
        path = Path(value.strip()).expanduser()
        try:
            text, source = path.read_text(encoding="utf-8"), f"{SCOPES_VARIABLE} file {path}"
        except OSError as error:
            raise InvalidSettings(
                [f"{SCOPES_VARIABLE}={shown(value)}: cannot read it ({error.strerror})"]
            ) from None
    else:
        text, source = value, SCOPES_VARIABLE
    try:
        return yaml.safe_load(text), source
    except yaml.YAMLError as error:
        raise InvalidSettings([f"{source}: not YAML ({error})"]) from None


def read_scopes(environ: Mapping[str, str] | None = None) -> list[ScopeConfig]:
    """The scopes ``DZLINEAGE_SCOPES`` lists (none when it is unset), each checked as the run
    would check it; :class:`InvalidSettings` has a line per problem naming the scope."""
    environ = os.environ if environ is None else environ
    if not environ.get(SCOPES_VARIABLE, "").strip():
        return []
    document, source = scopes_document(environ[SCOPES_VARIABLE])
    entries = document.get("scopes") if isinstance(document, dict) else None
    if not isinstance(entries, list) or not entries:
        raise InvalidSettings(
            [
                f"{source}: expected `scopes:` with a list of scopes (each with a `name`)"
                + _document_found(document)
            ]
        )
    scopes, problems, names = [], [], set()
    for position, entry in enumerate(entries, start=1):
        try:
            scope = _scope(entry, position)
        except ValueError as error:
            problems.append(f"{source}: {error}")
            continue
        if scope.name in names:
            problems.append(f"{source}: scope {scope.name!r} is listed twice")
        names.add(scope.name)
        problems += [
            f"{source}: scope {scope.name!r}: {problem}"
            for problem in scope_problems(scope, environ)
        ]
        scopes.append(scope)
    problems += [f"{source}: {problem}" for problem in shared_queue_problems(scopes, environ)]
    if problems:
        raise InvalidSettings(problems)
    return scopes


def shared_queue_problems(scopes: list[ScopeConfig], environ: Mapping[str, str]) -> list[str]:
    """A change queue two scopes would drain: each scope deletes the events of other
    registries its queue receives, so they would take each other's changes (and a scope that
    names no queue takes ``DZLINEAGE_CHANGE_QUEUE_URL``'s, which is another scope's or in
    another account)."""
    variable = env_name("change_queue_url")
    drained: dict[str, str] = {}
    problems = []
    for scope in scopes:
        url = scope.settings.get("change_queue_url", environ.get(variable, "")).strip()
        if not url:
            continue
        whose = "its change_queue_url" if "change_queue_url" in scope.settings else variable
        if url in drained:
            problems.append(
                f"scope {scope.name!r}: {whose}={shown(url)} is also the queue of scope "
                f"{drained[url]!r}; a queue serves one scope (each deletes the other "
                "registries' events it receives): give this scope its own change_queue_url, or "
                "change_queue_url: '' for none (its registry sensor then lists its registry)"
            )
        else:
            drained[url] = scope.name
    return problems


def _document_found(document: Any) -> str:
    """What the document holds instead of a list of scopes, and the likely fix."""
    if isinstance(document, list):
        return "; it is a list: put it under `scopes:`"
    if isinstance(document, str):
        return (
            f"; it is the text {shown(document)} (a file's path must end in .yaml, .yml or .json)"
        )
    if isinstance(document, dict) and "scopes" in document:
        return f"; its `scopes:` is {shown(str(document['scopes']))}"
    return ""


def _scope(entry: Any, position: int) -> ScopeConfig:
    if not isinstance(entry, dict):
        raise ValueError(f"scope {position} is not a mapping of settings")
    name = check_scope_name(entry.get("name"))
    keys = ("name", *SCOPE_AWS_KEYS, *SCOPE_SETTINGS)
    unknown = sorted(set(entry) - set(keys), key=str)
    if unknown:
        # A misspelt key is named with the key it resembles, before the whole list.
        meant = [
            f"{shown(key)} (did you mean {close[0]}?)"
            if (close := difflib.get_close_matches(str(key), keys, n=1))
            else shown(key)
            for key in unknown
        ]
        raise ValueError(
            f"scope {name!r}: {', '.join(meant)} cannot be set per scope; a scope "
            f"sets {', '.join(keys[1:])}"
        )
    values = {key: _text(value) for key, value in entry.items() if key != "name"}
    return ScopeConfig(
        name=name,
        settings={key: value for key, value in values.items() if key in SCOPE_SETTINGS},
        **{SCOPE_AWS_KEYS[key]: value for key, value in values.items() if key in SCOPE_AWS_KEYS},
    )


def _text(value: Any) -> str:
    # The variables' own form: YAML's `true` is the variable's `true`.
    return str(value).lower() if isinstance(value, bool) else str(value)


def scope_problems(scope: ScopeConfig, environ: Mapping[str, str]) -> list[str]:
    """What the run would refuse in ``scope``: a setting it must name, a value its variable
    would refuse, a role that is no role ARN."""
    problems = [
        f"set {field} (every scope names its own {field.replace('_', ' ')})"
        for field in REQUIRED_PER_SCOPE
        if field not in scope.settings
    ]
    if "msk_cluster_arn" not in scope.settings and not environ.get(env_name("msk_cluster_arn")):
        problems.append(
            "set msk_cluster_arn (DZLINEAGE_MSK_CLUSTER_ARN is not set for every scope)"
        )
    for field in ("role_arn", "role_external_id"):
        value = getattr(scope, field)
        if value is not None:
            try:
                _aws_option_value(field, value)
            except ValueError as error:
                problems.append(f"{field}={shown(value)}: {error}")
    scoped = scope.environ(environ)
    own = {env_name(field) for field in scope.settings}
    # Only the scope's own values (the deployment's are checked as they always are), said as
    # the scope's keys, not as the variables the scope stands in for.
    problems += [
        in_scope_terms(scope, problem)
        for variable, problem in environment_problems(scoped).items()
        if variable in own
    ]
    return problems


def scoped_settings(base: LineageSettings, scope: ScopeConfig) -> LineageSettings:
    """``base`` (the deployment's resolved settings) with ``scope``'s own."""
    values = {field: getattr(base, field) for field in type(base).model_fields}
    return LineageSettings(**{**values, **scope.settings})


def in_scope_terms(scope: ScopeConfig | None, text: str) -> str:
    """``text`` (said where the scope is named) in the scope's terms: advice to set a variable
    a scope may set is advice to set the scope's key, and a value the scope sets is named by
    its key (``registry_name='x'``, as written in ``DZLINEAGE_SCOPES``), not by the variable
    it stands in for: its role too (``role_arn=...``, ``role_external_id``)."""
    if scope is None:
        return text
    variables = {env_name(field): field for field in SCOPE_SETTINGS}
    role_variables = side_role_variables("data")
    variables[role_variables["role_arn"]] = "role_arn"
    for variable, key in variables.items():
        text = text.replace(f"set {variable}", f"set the scope's {key}")
    for field in scope.settings:
        text = text.replace(env_name(field), field)
    if scope.role_arn:
        # The data side's role is the scope's, whichever variable the label fell back to.
        text = re.sub(
            r"the data side's role (?:DZLINEAGE_\w+|role_arn)=", "the scope's role_arn=", text
        )
        text = text.replace(role_variables["role_arn"], "role_arn")
    if scope.role_external_id:
        text = re.sub(
            r"(the scope's role_arn=\S+ cannot be assumed; its trust policy must trust this "
            r"identity with )DZLINEAGE_\w+",
            r"\1role_external_id",
            text,
        )
        text = text.replace(role_variables["role_external_id"], "role_external_id")
    return text
