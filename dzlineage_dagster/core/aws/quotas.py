"""The per-account API rate quotas of the operations the project calls, with their source.

One table serves both sides: the client's rate limiter defaults to these rates (so a sync runs
at the quota instead of into it), and ``dzlineage sandbox --quotas aws`` enforces them (so the
sandbox throttles where AWS would). Keys are ``service.Operation`` as botocore names them.

Published figures (per account and Region):

- DataZone user guide, "Quotas for Amazon DataZone", API rate limits: CreateAsset,
  CreateAssetRevision, DeleteAsset, ListAssetRevisions, CreateAssetType, CreateFormType,
  Search, SearchTypes: 20 TPS each.
- Systems Manager endpoints and quotas, Parameter Store max throughput: GetParameter,
  GetParameters and GetParametersByPath share 40 TPS by default (one bucket for the three).

Assumed where nothing is published (:data:`ASSUMED` says which): DataZone's Get* operations,
ListProjects, PostLineageEvent, CreateListingChangeSet (publishing) and UpdateAssetOwner (moving
an asset to another project; the quotas page lists no figure for them) at 20 TPS, like the
published DataZone operations; SSM PutParameter and DeleteParameter at 20 TPS (the published
default covers reads only); Glue Schema Registry and Data Catalog reads at 50 TPS (Glue
publishes no per-operation rates); the Glue Data Catalog's lineage operations (PostLineageEvent,
GetLineageNode) at 20 TPS, like DataZone's (the guide says only "The request rate exceeds the
quota"); MSK and MSK Connect describes at 10 TPS (called once a run).
Raise or lower any of them with ``DZLINEAGE_CLIENT_RATE_LIMITS`` when an account's quotas differ.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dzlineage_dagster.core.text import shown

#: The source of a figure AWS publishes none for.
ASSUMED_SOURCE = "assumed"
#: Where AWS publishes the figures it publishes: the document's title and its address.
DATAZONE_QUOTAS_PAGE = (
    "Amazon DataZone User Guide, 'Quotas for Amazon DataZone', API rate limits "
    "(https://docs.aws.amazon.com/datazone/latest/userguide/datazone-limits.html)"
)
SSM_QUOTAS_PAGE = (
    "AWS General Reference, 'AWS Systems Manager endpoints and quotas', Parameter Store max "
    "throughput (https://docs.aws.amazon.com/general/latest/gr/ssm.html)"
)
#: A figure given by the user (``DZLINEAGE_CLIENT_RATE_LIMITS``), not by a document.
SETTING_SOURCE = "DZLINEAGE_CLIENT_RATE_LIMITS"


@dataclass(frozen=True)
class Quota:
    rate: float
    #: Operations that share one bucket name it here (SSM's reads share one throughput).
    bucket: str
    #: Where the figure comes from: an AWS document, ``assumed``, or the setting.
    source: str

    @property
    def published(self) -> bool:
        return self.source not in (ASSUMED_SOURCE, SETTING_SOURCE)


def _quotas() -> dict[str, Quota]:
    table: dict[str, Quota] = {}

    def add(operations: str, rate: float, *, source: str, shared: str | None = None) -> None:
        for operation in operations.split():
            table[operation] = Quota(rate, shared or operation, source)

    add(
        "datazone.CreateAsset datazone.CreateAssetRevision datazone.DeleteAsset "
        "datazone.ListAssetRevisions datazone.CreateAssetType datazone.CreateFormType "
        "datazone.Search datazone.SearchTypes",
        20,
        source=DATAZONE_QUOTAS_PAGE,
    )
    add(
        "ssm.GetParameter ssm.GetParameters ssm.GetParametersByPath",
        40,
        source=SSM_QUOTAS_PAGE,
        shared="ssm.GetParameter*",
    )
    add(
        "datazone.GetAsset datazone.GetAssetType datazone.GetFormType datazone.GetDomain "
        "datazone.GetProject datazone.ListProjects datazone.PostLineageEvent "
        "datazone.CreateListingChangeSet datazone.UpdateAssetOwner "
        "datazone.GetLineageNode "
        "datazone.GetLineageEvent datazone.ListLineageEvents datazone.ListLineageNodeHistory "
        "ssm.PutParameter ssm.DeleteParameter",
        20,
        source=ASSUMED_SOURCE,
    )
    add(
        "glue.ListSchemas glue.GetSchema glue.GetSchemaVersion glue.ListSchemaVersions "
        "glue.GetTable glue.GetTables",
        50,
        source=ASSUMED_SOURCE,
    )
    add("glue.PostLineageEvent glue.GetLineageNode", 20, source=ASSUMED_SOURCE)
    add(
        "kafka.DescribeCluster kafka.DescribeClusterV2 kafka.GetBootstrapBrokers "
        "kafkaconnect.ListConnectors kafkaconnect.DescribeConnector",
        10,
        source=ASSUMED_SOURCE,
    )
    return table


#: ``service.Operation`` -> its quota.
AWS_QUOTAS: Mapping[str, Quota] = _quotas()
ASSUMED = frozenset(name for name, quota in AWS_QUOTAS.items() if not quota.published)


def parse_rate_limits(text: str) -> dict[str, Quota]:
    """The client's rate limits from a setting: ``off``, ``aws``, or ``aws`` with overrides.

    ``aws,datazone.CreateAsset=50,ssm.PutParameter=5`` takes the table and changes two rates
    (an override gives the operation a bucket of its own). Raises ValueError naming the part
    that is wrong.
    """
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if parts == ["off"]:
        return {}
    if not parts or parts[0] != "aws":
        # The whole value is the caller's to show, beside the variable it names.
        raise ValueError("say 'off', 'aws', or 'aws,<service.Operation>=<calls per second>,...'")
    limits = dict(AWS_QUOTAS)
    for name, rate in parse_rates(parts[1:]).items():
        limits[name] = Quota(rate, name, SETTING_SOURCE)
    return limits


def parse_rates(parts: list[str]) -> dict[str, float]:
    """``["datazone.CreateAsset=50", ...]`` as ``{"datazone.CreateAsset": 50.0}``; ValueError
    names the part that is wrong."""
    rates = {}
    for part in parts:
        name, _, rate_text = part.partition("=")
        if "." not in name or not rate_text:
            raise ValueError(f"{shown(part)}: a rate is <service.Operation>=<calls per second>")
        rates[name.strip()] = checked_rate(part, rate_text)
    return rates


def checked_rate(where: str, value: object) -> float:
    """``value`` as a positive number of calls per second; ValueError names ``where``."""
    try:
        rate = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{shown(where)}: {shown(value)} is not a number") from None
    if not rate > 0:
        raise ValueError(f"{shown(where)}: the rate must be positive")
    return rate
