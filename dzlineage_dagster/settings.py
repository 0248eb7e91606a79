"""The project's settings: every one read from a ``DZLINEAGE_*`` environment variable.

The same names serve the Dagster UI, the sensors, ``dzlineage sync`` and Dagster+, against the
sandbox or a real AWS account. :class:`LineageSettings` is a Dagster resource so the values
show in the UI; AWS access (region, endpoint, credentials) stays with boto3's own variables
(``AWS_REGION``, ``AWS_ENDPOINT_URL``, ``AWS_PROFILE``, ...).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from dagster import ConfigurableResource, EnvVar
from pydantic import Field

ENV_PREFIX = "DZLINEAGE_"
#: A topic's calls take ~0.5 s at AWS's latency and the busiest quota serves 10 topics a second
#: (two lineage posts each at 20 TPS): ~5 topics in flight keep it busy; 16 leaves room for
#: slower calls and retries.
DEFAULT_CONCURRENCY = 16


class MissingSettings(ValueError):
    """Required ``DZLINEAGE_*`` variables are not set."""


def env_name(field_name: str) -> str:
    return f"{ENV_PREFIX}{field_name.upper()}"


class LineageSettings(ConfigurableResource):
    """Where the CDC platform and the DataZone catalog are, and how the project names things."""

    domain_id: str = Field(description="DataZone domain id (`dzd_...`) that owns the catalog.")
    project_id: str = Field(description="DataZone project that owns the types and topic assets.")
    registry_name: str = Field(description="Glue Schema Registry that Debezium registers into.")
    msk_cluster_arn: str = Field(description="ARN of the MSK cluster that carries the topics.")
    glue_database: str = Field(
        default="lakehouse",
        description=(
            "Glue database of the Iceberg tables, used by the naming-convention fallback "
            "when no connector configuration maps a topic."
        ),
    )
    table_name_pattern: str = Field(
        default="{schema}_{table}",
        description=(
            "Naming-convention fallback: Iceberg table name for a table topic, from the topic's "
            "`{prefix}`, `{database}`, `{schema}` and `{table}` parts."
        ),
    )
    ssm_prefix: str = Field(
        default="/dzlineage/schema-assets",
        description="SSM Parameter Store path under which the schema -> asset mapping lives.",
    )
    topic_namespace_style: Literal["bootstrap", "cluster"] = Field(
        default="bootstrap",
        description=(
            "OpenLineage namespace of topics: `bootstrap` = `kafka://<first broker host:port>` "
            "(as Debezium and the OpenLineage spec name them), `cluster` = "
            "`kafka://<cluster name>` (as AWS's Data Solutions Framework does)."
        ),
    )
    deleted_schema_policy: Literal["keep", "delete"] = Field(
        default="keep",
        description=(
            "What happens to the DataZone asset of a schema deleted from the registry: `keep` "
            "it and mark it deprecated in its description, or `delete` it. The SSM mapping is "
            "removed either way."
        ),
    )
    asset_url_template: str = Field(
        default="{portal_url}/projects/{project_id}/data/inventory/{asset_id}",
        description=(
            "Link to an asset's page in the DataZone portal, shown in the Dagster UI; may use "
            "`{portal_url}` (the domain's, from GetDomain), `{domain_id}`, `{project_id}` and "
            "`{asset_id}`. Adjust it if your portal (DataZone or SageMaker Unified Studio) "
            "lays out asset pages differently."
        ),
    )
    job_namespace: str = Field(
        default="dzlineage", description="OpenLineage namespace of the jobs the events describe."
    )
    concurrency: int = Field(
        default=DEFAULT_CONCURRENCY,
        ge=1,
        le=64,
        description=(
            "Topics a run syncs at once (threads). The default keeps DataZone's 20 TPS write "
            "quotas busy while each topic waits on its calls' latency; the client-side rate "
            "limits, not this, keep the calls within the quotas."
        ),
    )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LineageSettings:
        """Plain values from the environment, for code that runs outside Dagster (the CLI).

        Raises :class:`MissingSettings` naming every required variable that is not set.
        """
        environ = os.environ if environ is None else environ
        values = {
            name: environ[env_name(name)] for name in cls.model_fields if env_name(name) in environ
        }
        missing = [
            env_name(n) for n, f in cls.model_fields.items() if f.is_required() and n not in values
        ]
        if missing:
            raise MissingSettings(
                "set these environment variables (`dzlineage sandbox` prints them for the "
                f"local sandbox): {', '.join(missing)}"
            )
        return cls(**values)

    @classmethod
    def deferred_to_env(cls, environ: Mapping[str, str] | None = None) -> LineageSettings:
        """Settings for `Definitions`: each set or required variable becomes an `EnvVar`.

        Dagster resolves an `EnvVar` when a run starts, so the code location loads with nothing
        set (``dagster definitions validate`` in CI) and the UI shows which variable a value
        comes from; unset optional settings take their defaults.
        """
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {
            name: (EnvVar.int if field.annotation is int else EnvVar)(env_name(name))
            for name, field in cls.model_fields.items()
            if field.is_required() or env_name(name) in environ
        }
        return cls(**values)


#: Options of every AWS resource, by field, and the variable each comes from. Credentials are
#: not among them on purpose: boto3 reads them (and AWS_REGION, AWS_ENDPOINT_URL, AWS_PROFILE)
#: from its own variables, so no secret is ever copied into run configuration or the UI.
AWS_OPTION_VARIABLES: dict[str, str] = {
    "role_arn": "DZLINEAGE_ROLE_ARN",
    "role_external_id": "DZLINEAGE_ROLE_EXTERNAL_ID",
    "retry_mode": "DZLINEAGE_RETRY_MODE",
    "max_attempts": "DZLINEAGE_MAX_ATTEMPTS",
    "rate_limits": "DZLINEAGE_CLIENT_RATE_LIMITS",
}


def aws_resource_options(
    environ: Mapping[str, str] | None = None, *, deferred: bool = False
) -> dict[str, Any]:
    """Keyword arguments for an :class:`~dzlineage_dagster.resources.AwsClientResource`.

    Only variables that are set contribute; ``deferred`` makes them `EnvVar`s (for
    `Definitions`), otherwise plain values (for the CLI).
    """
    environ = os.environ if environ is None else environ
    options: dict[str, Any] = {}
    for field, variable in AWS_OPTION_VARIABLES.items():
        if variable not in environ:
            continue
        if field == "max_attempts":
            options[field] = EnvVar.int(variable) if deferred else int(environ[variable])
        else:
            options[field] = EnvVar(variable) if deferred else environ[variable]
    return options
