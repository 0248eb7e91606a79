"""The project's settings: every one read from a ``DZLINEAGE_*`` environment variable.

The same names serve the Dagster UI, the sensors, ``dzlineage sync`` and Dagster+, against the
sandbox or a real AWS account. :class:`LineageSettings` is a Dagster resource so the values
show in the UI; AWS access (region, endpoint, credentials) stays with boto3's own variables
(``AWS_REGION``, ``AWS_ENDPOINT_URL``, ``AWS_PROFILE``, ...).
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from dagster import ConfigurableResource, EnvVar
from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator

from dzlineage_dagster.core.aws.quotas import SETTING_SOURCE, parse_rate_limits
from dzlineage_dagster.core.identity.kafka import check_pinned_namespace, parse_broker_aliases
from dzlineage_dagster.core.identity.sources import SourceHosts
from dzlineage_dagster.core.mapping.ssm_names import SCOPE_ID, scoped_prefix, validate_prefix
from dzlineage_dagster.core.text import shown

ENV_PREFIX = "DZLINEAGE_"
#: A topic's calls take ~0.5 s at AWS's latency and the busiest quota serves 10 topics a second
#: (two lineage posts each at 20 TPS): ~5 topics in flight keep it busy; 16 leaves room for
#: slower calls and retries.
DEFAULT_CONCURRENCY = 16
# The settings Definitions defer to the run as an EnvVar (see `deferred_to_env`).
_TEXT = (str, str | None)


#: The dataset identity settings, parsed by :mod:`dzlineage_dagster.core.identity` (the relay
#: reads them too).
IDENTITY_SETTINGS = {
    "topic_namespace": check_pinned_namespace,
    "kafka_broker_aliases": parse_broker_aliases,
    "source_host_aliases": SourceHosts.parse,
}


def checked_identity_setting(field_name: str, value: Any) -> Any:
    """``value`` of an identity setting, if its parser takes it (an EnvVar waits for the run)."""
    if isinstance(value, str) and not isinstance(value, EnvVar):
        IDENTITY_SETTINGS[field_name](value)
    return value


class MissingSettings(ValueError):
    """Required ``DZLINEAGE_*`` variables are not set."""


class InvalidSettings(ValueError):
    """``DZLINEAGE_*`` variables hold values the project cannot use: one line per variable."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def env_name(field_name: str) -> str:
    return f"{ENV_PREFIX}{field_name.upper()}"


@dataclass(frozen=True)
class AwsString:
    """What AWS's own model allows an input string: the API rejects anything else."""

    pattern: re.Pattern[str]
    min_length: int
    max_length: int | None


#: A UTF-16 surrogate pair as Java writes a code point above U+FFFF (``\uD800\uDC00``):
#: botocore's patterns are Java's (Glue's names allow U+10000-U+10FFFF so).
_SURROGATE_PAIR = re.compile(r"\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})", re.IGNORECASE)


def _python_pattern(java: str) -> str:
    def code_point(pair: re.Match[str]) -> str:
        high, low = int(pair[1], 16), int(pair[2], 16)
        return f"\\U{0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00):08x}"

    return _SURROGATE_PAIR.sub(code_point, java)


@cache
def _aws_string(service: str, operation: str, *member_path: str) -> AwsString:
    """The pattern and lengths botocore's model gives an input member."""
    import botocore.session

    shape = botocore.session.get_session().get_service_model(service)
    shape = shape.operation_model(operation).input_shape
    for member in member_path:
        shape = shape.members[member]
    metadata = shape.metadata
    return AwsString(
        # Java's \\w and \\d are ASCII-only.
        re.compile(_python_pattern(metadata["pattern"]), re.ASCII),
        metadata.get("min", 0),
        metadata.get("max"),
    )


def _check_pattern(field: str, value: str, pattern: re.Pattern[str], example: str) -> str:
    if isinstance(value, EnvVar):
        return value  # checked when Dagster resolves the variable at run start
    if not pattern.fullmatch(value):
        raise ValueError(
            f"{env_name(field)}={shown(value)} does not match {pattern.pattern} (e.g. {example})"
        )
    return value


def _aws_string_problem(value: str, allowed: AwsString) -> str | None:
    """What AWS's model refuses in ``value`` (its length, then its pattern), or None."""
    if len(value) < allowed.min_length or (allowed.max_length or len(value)) < len(value):
        limit = f"{allowed.min_length} to {allowed.max_length or 'any number of'}"
        return f"is {len(value):,} characters; AWS allows {limit}"
    if not allowed.pattern.fullmatch(value):
        return f"does not match {allowed.pattern.pattern}"
    return None


def _check_aws_string(field: str, value: str, allowed: AwsString, example: str) -> str:
    if isinstance(value, EnvVar):
        return value  # checked when Dagster resolves the variable at run start
    problem = _aws_string_problem(value, allowed)
    if problem:
        raise ValueError(f"{env_name(field)}={shown(value)} {problem} (e.g. {example})")
    return value


def _check_placeholders(field: str, template: str, allowed: tuple[str, ...]) -> str:
    if isinstance(template, EnvVar):
        return template  # checked when Dagster resolves the variable at run start
    choices = ", ".join(f"{{{name}}}" for name in allowed)
    try:
        used = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    except ValueError as error:
        raise ValueError(
            f"{env_name(field)}={shown(template)} is not a valid template ({error}); "
            f"placeholders allowed: {choices}"
        ) from None
    unknown = sorted({name for name in used if name not in allowed})
    if unknown:
        raise ValueError(
            f"{env_name(field)}={shown(template)} uses unknown placeholder(s) "
            f"{', '.join(f'{{{n}}}' for n in unknown)}; allowed: {choices}"
        )
    return template


def _each_valid_alone(prefix: str, domain_id: str, project_id: str) -> bool:
    try:
        validate_prefix(prefix)
    except ValueError:
        return False
    return all(SCOPE_ID.fullmatch(value) for value in (domain_id, project_id))


#: The placeholders each template setting may use.
TABLE_NAME_PLACEHOLDERS = ("prefix", "database", "schema", "table")
ASSET_URL_PLACEHOLDERS = ("portal_url", "domain_id", "project_id", "asset_id")
#: ``arn:<partition>:kafka:<region>:<account>:cluster/<name>/<uuid>``: what DescribeClusterV2
#: takes. botocore's model gives no pattern, so this checks AWS's documented ARN format up to
#: the resource type; whether the cluster exists is the run's first check (sync/checks/preflight.py).
_MSK_CLUSTER_ARN = re.compile(r"arn:aws[a-z-]*:kafka:[a-z0-9-]+:\d{12}:cluster/.+")
#: The settings AWS's own models constrain: the API input member that takes each (botocore's
#: model gives its pattern and lengths), and an example.
AWS_MODELED_SETTINGS: dict[str, tuple[tuple[str, ...], str]] = {
    "domain_id": (("datazone", "GetDomain", "identifier"), "dzd_abc123"),
    "project_id": (("datazone", "GetProject", "identifier"), "5m3ak1pr0j"),
    "registry_name": (("glue", "GetRegistry", "RegistryId", "RegistryName"), "cdc-registry"),
    "glue_database": (("glue", "GetDatabase", "Name"), "lakehouse"),
}
#: Where lineage can go (:mod:`~dzlineage_dagster.sync.destinations`), in the order posted.
LINEAGE_DESTINATIONS = ("datazone", "glue")
DEFAULT_LINEAGE_DESTINATIONS = ("datazone",)
#: Glue publishes no rate for PostLineageEvent (docs/lineage.md): assumed, the figure the
#: quota table assumes for it (core/aws/quotas.py: DataZone's PostLineageEvent's).
DEFAULT_GLUE_LINEAGE_TPS = 20.0


def parse_lineage_destinations(value: Any) -> list[str]:
    """``datazone,glue`` (or a list of names) as the destinations in posting order; ValueError
    names DZLINEAGE_LINEAGE_DESTINATIONS and the allowed names."""
    parts = value.split(",") if isinstance(value, str) else value
    if not isinstance(parts, (list, tuple)):
        raise ValueError(f"DZLINEAGE_LINEAGE_DESTINATIONS={shown(value)}: not a comma list")
    names = [str(part).strip().lower() for part in parts if str(part).strip()]
    unknown = [name for name in names if name not in LINEAGE_DESTINATIONS]
    if unknown or not names:
        problem = (
            f"{', '.join(shown(name) for name in unknown)} is no lineage destination"
            if unknown
            else "names no destination"
        )
        raise ValueError(
            f"DZLINEAGE_LINEAGE_DESTINATIONS={shown(value)}: {problem}; say one or more of "
            f"{', '.join(LINEAGE_DESTINATIONS)}, comma-separated (e.g. datazone,glue)"
        )
    return [name for name in LINEAGE_DESTINATIONS if name in names]


#: A Glue Data Catalog id is the id of the AWS account that owns it (GetTable's `CatalogId`).
_GLUE_CATALOG_ID = re.compile(r"\d{12}")


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
    glue_catalog_id: str | None = Field(
        default=None,
        description=(
            "Account id (12 digits) of the Glue Data Catalog that holds the Iceberg tables, "
            "where it is not the account the data side's credentials reach: passed as "
            "`CatalogId` to GetTable/GetTables and used as the account of the Glue table ARNs "
            "the lineage names (unset: the account of the registry's schema ARNs)."
        ),
    )
    ssm_prefix: str = Field(
        default="/dzlineage/schema-assets",
        description="SSM Parameter Store path under which the schema -> asset mapping lives.",
    )
    ssm_mapping_layout: Literal["packed", "per-topic"] = Field(
        default="packed",
        description=(
            "How the mapping uses SSM parameters: `packed` (the default: many topics a "
            "parameter, about 3,100 for 20,000 topics; it moves one-per-topic records into its "
            "buckets on first sight, without loss) or `per-topic` (one parameter a topic, the "
            "earlier layout: SSM's standard tier caps an account and Region at 10,000 "
            "parameters shared with every other application there, so it fails somewhere below "
            "10,000 topics on a real account). See docs/mapping-store.md."
        ),
    )
    ssm_tier: Literal["Standard", "Advanced"] = Field(
        default="Standard",
        description=(
            "SSM tier of the mapping's parameters: `Standard` (free, 4 KB values, 10,000 per "
            "account and Region shared with everything else there) or `Advanced` (8 KB values, "
            "100,000, charged per parameter), for an account whose standard parameters are used up."
        ),
    )
    topic_namespace_style: Literal["bootstrap", "cluster"] = Field(
        default="bootstrap",
        description=(
            "OpenLineage namespace of topics: `bootstrap` = `kafka://<broker host:port>`, the "
            "sorted-first broker of the cluster's IAM, else TLS, else SASL/SCRAM, else "
            "plaintext listener (as the OpenLineage spec names topics), `cluster` = "
            "`kafka://<cluster name>` (as AWS's Data Solutions Framework does). Every broker of "
            "every listener maps to it; a connector's bootstrap property never moves it."
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
    retire_when_registry_empty: bool = Field(
        default=False,
        description=(
            "Confirms retiring assets when the registry lists no schemas at all (`true`/"
            "`false`). An empty registry looks exactly like a misconfigured or wiped one, so "
            "by default its assets are not retired and the sync says so in one line."
        ),
    )
    publish_to_catalog: bool = Field(
        default=True,
        description=(
            "Publish each topic asset to the DataZone catalog (`true`/`false`): on creation and "
            "again after every revision the sync makes, so other projects find and subscribe to "
            "the topic at its current revision. Retiring a topic unpublishes its asset either "
            "way. `false` publishes nothing and leaves existing listings alone."
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
    kafka_connect_url: str | None = Field(
        default=None,
        description=(
            "Base URL of a self-managed Kafka Connect REST API (e.g. `http://connect:8083`): "
            "when set, the connectors are read from its `GET /connectors?expand=info` instead "
            "of MSK Connect's ListConnectors/DescribeConnector."
        ),
    )
    lineage_overrides: str | None = Field(
        default=None,
        description=(
            "Path of a YAML file of lineage overrides (topic -> tables and/or source tables; "
            "see `core/connectors/topology.py`). An override wins over the connectors and the naming "
            "convention."
        ),
    )
    sqlserver_scheme: Literal["sqlserver", "mssql"] = Field(
        default="sqlserver",
        description=(
            "Namespace scheme of SQL Server source tables: `sqlserver://` as Debezium's own "
            "OpenLineage writes it (the nodes join with Debezium's), or `mssql://` as the "
            "OpenLineage naming spec says."
        ),
    )
    debezium_version: str = Field(
        default="3.6",
        description=(
            "The Debezium version (`major.minor`) the connectors run, where topic naming "
            "differs by version: `topic.heartbeat.name` names the heartbeat topic from 3.6 on "
            "and is ignored before. See docs/connector-naming.md."
        ),
    )
    lineage_readback_wait_seconds: float = Field(
        default=60.0,
        ge=0,
        description=(
            "The sync reads back that each Glue table's node has its topic upstream and each "
            "topic asset is linked to its node as soon as DataZone has processed the topic's "
            "events (ListLineageEvents SUCCESS or FAILED), while later topics post; once the "
            "sync is done, how long to wait for the events still processing "
            "(docs/lineage-nodes.md). 0 turns the read-back off."
        ),
    )
    lineage_failure_lookback_hours: int = Field(
        default=168,
        ge=1,
        description=(
            "How far back each sync looks for lineage events that DataZone accepted and then "
            "failed to process (their topics' lineage is posted again). At least the time "
            "between two syncs."
        ),
    )
    sensor_retry_seconds: int = Field(
        default=300,
        ge=1,
        description=(
            "How long after `registry_schema_sensor` first sees a topic's run failed it syncs "
            "the topic again; each retry that fails again doubles the wait (docs/lineage.md)."
        ),
    )
    sensor_retry_max_seconds: int = Field(
        default=4 * 3600,
        ge=1,
        description=(
            "The longest wait between two retries of a failed topic by "
            "`registry_schema_sensor`: a topic that stays broken costs a run this often."
        ),
    )
    topic_namespace: str | None = Field(
        default=None,
        description=(
            "A `kafka://...` namespace every topic of the cluster is named by, pinned: it wins "
            "over DZLINEAGE_TOPIC_NAMESPACE_STYLE and never moves, even when the cluster's "
            "listeners or brokers change (docs/lineage-nodes.md)."
        ),
    )
    kafka_broker_aliases: str | None = Field(
        default=None,
        description=(
            "Comma list of `host[:port]` that name the cluster too (a DNS alias such as "
            "`kafka-cluster-prod:9092`; without a port, the host on any port): a topic a "
            "producer names by one is the cluster's topic, in the sync and the relay."
        ),
    )
    source_host_aliases: str | None = Field(
        default=None,
        description=(
            "Comma list of `alias=host`: a source database named by `alias` (an RDS endpoint "
            "alias, an IP) is named by `host`, in the first hop the sync posts and in the relay "
            "(`postgres://10.0.0.5:5432` -> `postgres://<host>:5432`)."
        ),
    )
    change_queue_url: str | None = Field(
        default=None,
        description=(
            "URL of the SQS queue EventBridge delivers CloudTrail's registry, MSK Connect and "
            "Glue table calls to (deploy/change-events.yaml creates it): set, "
            "`change_queue_sensor` syncs the topics each event names, at calls per change that "
            "do not grow with the registry, and `registry_schema_sensor` lists the registry "
            "only every DZLINEAGE_REGISTRY_LISTING_SECONDS as a safety net; unset, the registry "
            "is listed every minute (docs/change-events.md)."
        ),
    )
    change_queue_wait_seconds: int = Field(
        default=10,
        ge=0,
        le=20,
        description=(
            "How long one ReceiveMessage of `change_queue_sensor` waits for a message (SQS long "
            "polling, at most 20): an idle tick makes one call and waits this long."
        ),
    )
    registry_listing_seconds: int = Field(
        default=86400,
        ge=60,
        description=(
            "With DZLINEAGE_CHANGE_QUEUE_URL set, how often `registry_schema_sensor` still "
            "lists the whole registry, as a safety net that reports what the events missed "
            "(a day by default)."
        ),
    )
    lineage_destinations: list[str] = Field(
        default=list(DEFAULT_LINEAGE_DESTINATIONS),
        description=(
            "Where the sync (and the relay) post the topics' lineage, comma-separated: "
            "`datazone` (DataZone's PostLineageEvent, the default), `glue` (the Glue Data "
            "Catalog's lineage graph, glue:PostLineageEvent), or `datazone,glue` for both. "
            "See docs/lineage.md, Lineage destinations."
        ),
    )
    glue_lineage_tps: float = Field(
        default=DEFAULT_GLUE_LINEAGE_TPS,
        gt=0,
        description=(
            "Calls a second to the Glue Data Catalog's PostLineageEvent, process-wide (AWS "
            "publishes no rate for it: the default is assumed); a ThrottlingException is "
            "retried with backoff. Used where `glue` is among DZLINEAGE_LINEAGE_DESTINATIONS; "
            "above the client's own limit for glue.PostLineageEvent (DZLINEAGE_CLIENT_RATE_LIMITS) "
            "that limit paces too."
        ),
    )
    glue_lineage_readback_wait_seconds: float = Field(
        default=60.0,
        ge=0,
        description=(
            "After a sync that posted lineage to the Glue Data Catalog, how long at most to "
            "read back GetLineageNode by each table's ARN (and the topic's identity) until each "
            "has its topic upstream: Glue processes events asynchronously and has no status to "
            "wait on, so the read-back reads again every 2 seconds (docs/glue-lineage.md). 0 "
            "turns the Glue read-back off."
        ),
    )

    @field_validator(*AWS_MODELED_SETTINGS, mode="before")
    @classmethod
    def _as_aws_allows(cls, value: str, info: ValidationInfo) -> str:
        member, example = AWS_MODELED_SETTINGS[info.field_name]
        return _check_aws_string(info.field_name, value, _aws_string(*member), example)

    @field_validator("lineage_destinations", mode="before")
    @classmethod
    def _known_lineage_destinations(cls, value: Any) -> list[str]:
        return parse_lineage_destinations(value)

    @field_validator("msk_cluster_arn", mode="before")
    @classmethod
    def _msk_cluster_arn_shape(cls, value: str) -> str:
        return _check_pattern(
            "msk_cluster_arn",
            value,
            _MSK_CLUSTER_ARN,
            "arn:aws:kafka:eu-west-1:123456789012:cluster/cdc/<uuid>-1",
        )

    @field_validator(*IDENTITY_SETTINGS, mode="before")
    @classmethod
    def _identity_setting_parses(cls, value: str | None, info: ValidationInfo) -> str | None:
        return checked_identity_setting(info.field_name, value)

    @field_validator("glue_catalog_id", mode="before")
    @classmethod
    def _glue_catalog_id_is_an_account(cls, value: str | None) -> str | None:
        if value is None:
            return value
        return _check_pattern("glue_catalog_id", value, _GLUE_CATALOG_ID, "123456789012")

    def glue_table_account(self, registry_account: str) -> str:
        """The account of the Glue table ARNs the lineage names: the catalog's, where set."""
        return self.glue_catalog_id or registry_account

    @field_validator("table_name_pattern", mode="before")
    @classmethod
    def _table_name_placeholders(cls, value: str) -> str:
        return _check_placeholders("table_name_pattern", value, TABLE_NAME_PLACEHOLDERS)

    @field_validator("debezium_version", mode="before")
    @classmethod
    def _debezium_version_shape(cls, value: str) -> str:
        if isinstance(value, EnvVar):
            return value
        if not isinstance(value, str) or not re.fullmatch(r"\d+\.\d+", value.strip()):
            raise ValueError(f"{shown(value)} is not major.minor: give the version as `3.6`")
        return value.strip()

    @field_validator("asset_url_template", mode="before")
    @classmethod
    def _asset_url_placeholders(cls, value: str) -> str:
        return _check_placeholders("asset_url_template", value, ASSET_URL_PLACEHOLDERS)

    @field_validator("ssm_prefix", mode="before")
    @classmethod
    def _ssm_prefix_usable(cls, value: str) -> str:
        if isinstance(value, EnvVar):
            return value  # checked when Dagster resolves the variable at run start
        try:
            validate_prefix(value)
        except ValueError as error:
            raise ValueError(f"DZLINEAGE_SSM_PREFIX={shown(value)}: {error}") from None
        return value

    @model_validator(mode="before")
    @classmethod
    def _ssm_prefix_has_room_for_the_scope(cls, data: Any) -> Any:
        # The run adds the domain and project below the prefix: a prefix that fits alone may
        # not fit with them, and the run would only find out when it starts. Checked on the
        # raw values, where a deferred one is still an EnvVar; a value its own field refuses
        # is left to that field's message.
        if not isinstance(data, dict):
            return data
        prefix = data.get("ssm_prefix", cls.model_fields["ssm_prefix"].default)
        values = (prefix, data.get("domain_id"), data.get("project_id"))
        if all(type(value) is str for value in values) and _each_valid_alone(*values):
            scoped_prefix(*values)  # its ValueError names DZLINEAGE_SSM_PREFIX
        return data

    @property
    def debezium_version_tuple(self) -> tuple[int, int]:
        major, minor = self.debezium_version.split(".")
        return int(major), int(minor)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LineageSettings:
        """Plain values from the environment, for code that runs outside Dagster (the CLI).

        Raises :class:`MissingSettings` naming every required variable that is not set, and
        :class:`InvalidSettings` naming every variable whose value AWS or the project rejects,
        the AWS options' (``DZLINEAGE_CLIENT_RATE_LIMITS``, the roles) too: the one check
        :func:`environment_problems` makes, which `dzlineage settings` lists.
        """
        environ = os.environ if environ is None else environ
        values = _setting_values(environ)
        missing = [
            env_name(n) for n, f in cls.model_fields.items() if f.is_required() and n not in values
        ]
        if missing:
            raise MissingSettings(
                "set these environment variables (`dzlineage sandbox` prints them for the "
                f"local sandbox): {', '.join(missing)}"
            )
        problems = environment_problems(environ)
        if problems:
            raise InvalidSettings(list(problems.values()))
        return cls(**values)

    @classmethod
    def deferred_to_env(
        cls, environ: Mapping[str, str] | None = None, fixed: Mapping[str, str] | None = None
    ) -> LineageSettings:
        """Settings for `Definitions`: each set or required variable becomes an `EnvVar`.

        Dagster resolves an `EnvVar` when a run starts, so the code location loads with nothing
        set (``dagster definitions validate`` in CI) and the UI shows which variable a value
        comes from; unset optional settings take their defaults. ``fixed`` values (a scope's,
        read from ``DZLINEAGE_SCOPES`` at load) stand for unset variables.
        """
        environ = os.environ if environ is None else environ
        fixed = {
            name: value for name, value in (fixed or {}).items() if env_name(name) not in environ
        }
        values: dict[str, Any] = {
            # Only text waits for the run as an EnvVar. Dagster's EnvVar has no boolean or float
            # form, is no member of a Literal's choices, and its int form is a 0 to pydantic's
            # bounds (`concurrency` >= 1 failed the load): those values are read when the code
            # location loads, where pydantic checks them and names a wrong one.
            name: (EnvVar(env_name(name)) if field.annotation in _TEXT else environ[env_name(name)])
            for name, field in cls.model_fields.items()
            if (field.is_required() or env_name(name) in environ) and name not in fixed
        }
        try:
            return cls(**values, **fixed)
        except ValidationError as error:
            raise InvalidSettings(setting_problems(error)) from None


def setting_problems(error: ValidationError) -> list[str]:
    """One line per invalid value, naming its variable, from pydantic's errors."""
    problems = []
    for detail in error.errors():
        message = detail["msg"].removeprefix("Value error, ")
        if not message.startswith(ENV_PREFIX):
            # pydantic's own checks (a Literal's choices) name the allowed values, not the
            # variable.
            field = str(detail["loc"][0]) if detail["loc"] else "?"
            message = f"{env_name(field)}={shown(detail.get('input'))}: {message}"
        problems.append(message)
    return problems


def _setting_values(environ: Mapping[str, str]) -> dict[str, str]:
    """The set ``DZLINEAGE_*`` variables of :class:`LineageSettings`, by field."""
    return {
        name: environ[env_name(name)]
        for name in LineageSettings.model_fields
        if env_name(name) in environ
    }


def environment_problems(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Variable -> what is wrong with its value, for every set ``DZLINEAGE_*`` variable: the
    one validation of the settings, shared by `dzlineage settings` (which lists it) and
    :meth:`LineageSettings.from_env` (every command, `dzlineage sync` among them).

    Each value alone first (so a required one unset does not hide the others' problems), then,
    when each is valid and the required ones are set, the settings together (the SSM prefix
    has room for the domain's and project's levels), then each side's AWS options."""
    environ = os.environ if environ is None else environ
    values = _setting_values(environ)
    problems: dict[str, str] = {}
    for name, value in values.items():
        try:
            LineageSettings.__pydantic_validator__.validate_assignment(
                LineageSettings.model_construct(), name, value
            )
        except ValidationError as error:
            problems[env_name(name)] = " ".join(setting_problems(error))
    required = [n for n, f in LineageSettings.model_fields.items() if f.is_required()]
    if not problems and all(name in values for name in required):
        try:
            LineageSettings(**values)
        except ValidationError as error:
            for line in setting_problems(error):
                problems[_variable_of(line)] = line
    try:
        aws_side_options(environ)
    except InvalidSettings as error:
        for line in error.problems:
            problems[_variable_of(line)] = line
    return problems


def _variable_of(problem: str) -> str:
    """The variable a problem's line starts with (``DZLINEAGE_X='...': ...``)."""
    return re.split(r"[=:\s]", problem, maxsplit=1)[0]


#: Options of every AWS resource, by field, and the variable each comes from. Credentials are
#: not among them on purpose: boto3 reads them (and AWS_REGION, AWS_ENDPOINT_URL, AWS_PROFILE)
#: from its own variables, so no secret is ever copied into run configuration or the UI. The
#: role here is both sides' default (see :data:`AWS_SIDES`): a side's own role replaces it.
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
    problems: list[str] = []
    for field, variable in AWS_OPTION_VARIABLES.items():
        if variable not in environ:
            continue
        if deferred:
            options[field] = EnvVar.int(variable) if field == "max_attempts" else EnvVar(variable)
            continue
        try:
            options[field] = _aws_option_value(field, environ[variable])
        except ValueError as error:
            problems.append(f"{variable}={shown(environ[variable])}: {error}")
    if problems:
        raise InvalidSettings(problems)
    return options


#: The two sides of a deployment, each reached with its own credentials, and the services
#: each side's calls go to. The data usually lives in one account and the DataZone domain in
#: another; the SSM mapping belongs with the domain whose asset ids it holds.
AWS_SIDES: dict[str, str] = {
    "data": "the Glue Schema Registry, the Glue Data Catalog, MSK and MSK Connect",
    "governance": "DataZone and the SSM mapping parameters",
}


def side_role_variables(side: str) -> dict[str, str]:
    """A side's own role options, by field: ``DZLINEAGE_<SIDE>_ROLE_ARN`` and its external id."""
    return {
        "role_arn": f"{ENV_PREFIX}{side.upper()}_ROLE_ARN",
        "role_external_id": f"{ENV_PREFIX}{side.upper()}_ROLE_EXTERNAL_ID",
    }


def side_role_description(side: str, field: str) -> str:
    """What a side's role variable means, for `dzlineage settings` and the docs."""
    shared = AWS_OPTION_VARIABLES[field]
    if field == "role_arn":
        return (
            f"IAM role to assume for the {side} side's calls ({AWS_SIDES[side]}); unset: "
            f"{shared}'s role, or the default credentials when that is unset too."
        )
    return (
        f"External id the trust policy of {side_role_variables(side)['role_arn']} requires "
        f"(only with that variable; {shared} goes with {AWS_OPTION_VARIABLES['role_arn']})."
    )


def role_setting(side: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The variable the role of ``side`` comes from, or None (the default credentials)."""
    environ = os.environ if environ is None else environ
    for variable in (side_role_variables(side)["role_arn"], AWS_OPTION_VARIABLES["role_arn"]):
        if environ.get(variable):
            return variable
    return None


def aws_side_options(
    environ: Mapping[str, str] | None = None, *, deferred: bool = False
) -> dict[str, dict[str, Any]]:
    """Keyword arguments for the AWS resources of each side (:data:`AWS_SIDES`), by side.

    Each side gets the shared options (:func:`aws_resource_options`) and its own role with its
    external id where ``DZLINEAGE_<SIDE>_ROLE_ARN`` is set. A role and its external id go
    together: the shared external id belongs to the shared role, never to a side's own.
    """
    environ = os.environ if environ is None else environ
    problems: list[str] = []
    try:
        shared = aws_resource_options(environ, deferred=deferred)
    except InvalidSettings as error:
        shared, problems = {}, list(error.problems)
    sides: dict[str, dict[str, Any]] = {}
    for side in AWS_SIDES:
        own = {f: v for f, v in side_role_variables(side).items() if v in environ}
        options = {"side": side, **shared}
        if "role_arn" in own:
            options.pop("role_external_id", None)
        elif own:
            variable = own["role_external_id"]
            problems.append(
                f"{variable}={shown(environ[variable])}: set only with "
                f"{side_role_variables(side)['role_arn']} (the {side} side's role it belongs to)"
            )
            continue
        for field, variable in own.items():
            if deferred:
                options[field] = EnvVar(variable)
                continue
            try:
                options[field] = _aws_option_value(field, environ[variable])
            except ValueError as error:
                problems.append(f"{variable}={shown(environ[variable])}: {error}")
        sides[side] = options
    if problems:
        raise InvalidSettings(problems)
    return sides


#: The retry modes botocore knows.
RETRY_MODES = ("standard", "adaptive", "legacy")
#: AWS's IAM role ARN format (IAM User Guide, "IAM identifiers": `arn:aws:iam::account:role/
#: role-name-with-path`); AssumeRole's model gives no pattern beyond the characters.
_ROLE_ARN = re.compile(r"arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+")


@cache
def _botocore_has(name: str) -> bool:
    """Whether ``service.Operation`` is an operation of botocore's model of the service."""
    import botocore.session

    session = botocore.session.get_session()
    service, _, operation = name.partition(".")
    if service not in session.get_available_services():
        return False
    return operation in session.get_service_model(service).operation_names


def _aws_option_value(field: str, value: str) -> Any:
    if field == "max_attempts":
        try:
            attempts = int(value)
        except ValueError:
            raise ValueError("not a whole number of attempts (e.g. 5)") from None
        if attempts < 1:
            raise ValueError("at least 1 attempt (the first call counts)")
        return attempts
    if field == "retry_mode" and value not in RETRY_MODES:
        raise ValueError(f"choose one of {', '.join(RETRY_MODES)}")
    if field == "role_external_id":
        problem = _aws_string_problem(value, _aws_string("sts", "AssumeRole", "ExternalId"))
        if problem:
            raise ValueError(f"not an external id AssumeRole takes: it {problem}")
    if field == "rate_limits":
        # The client's own reading (its ValueError names the part), and an override's
        # operation as botocore names it: a misspelt one would pace nothing, silently.
        limits = parse_rate_limits(value)
        unknown = [
            name
            for name, quota in limits.items()
            if quota.source == SETTING_SOURCE and not _botocore_has(name)
        ]
        if unknown:
            raise ValueError(
                f"{', '.join(shown(name) for name in unknown)}: no such operation in botocore's "
                "models (<service>.<Operation> as botocore names them, e.g. datazone.CreateAsset)"
            )
    if field == "role_arn" and not _ROLE_ARN.fullmatch(value):
        raise ValueError(
            f"not an IAM role ARN ({_ROLE_ARN.pattern}, e.g. "
            "arn:aws:iam::123456789012:role/dzlineage-data)"
        )
    return value
