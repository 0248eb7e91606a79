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
publishes no per-operation rates); MSK and MSK Connect describes at 10 TPS (called once a run).
Raise or lower any of them with ``DZLINEAGE_CLIENT_RATE_LIMITS`` when an account's quotas differ.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Quota:
    rate: float
    #: Operations that share one bucket name it here (SSM's reads share one throughput).
    bucket: str
    published: bool


def _quotas() -> dict[str, Quota]:
    table: dict[str, Quota] = {}

    def add(operations: str, rate: float, *, published: bool, shared: str | None = None) -> None:
        for operation in operations.split():
            table[operation] = Quota(rate, shared or operation, published)

    add(
        "datazone.CreateAsset datazone.CreateAssetRevision datazone.DeleteAsset "
        "datazone.ListAssetRevisions datazone.CreateAssetType datazone.CreateFormType "
        "datazone.Search datazone.SearchTypes",
        20,
        published=True,
    )
    add(
        "ssm.GetParameter ssm.GetParameters ssm.GetParametersByPath",
        40,
        published=True,
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
        published=False,
    )
    add(
        "glue.ListSchemas glue.GetSchema glue.GetSchemaVersion glue.ListSchemaVersions "
        "glue.GetTable glue.GetTables",
        50,
        published=False,
    )
    add(
        "kafka.DescribeCluster kafka.DescribeClusterV2 kafka.GetBootstrapBrokers "
        "kafkaconnect.ListConnectors kafkaconnect.DescribeConnector",
        10,
        published=False,
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
        raise ValueError(
            f"{text!r}: say 'off', 'aws', or 'aws,<service.Operation>=<calls per second>,...'"
        )
    limits = dict(AWS_QUOTAS)
    for part in parts[1:]:
        name, _, rate_text = part.partition("=")
        if "." not in name or not rate_text:
            raise ValueError(f"{part!r}: an override is <service.Operation>=<calls per second>")
        try:
            rate = float(rate_text)
        except ValueError:
            raise ValueError(f"{part!r}: {rate_text!r} is not a number") from None
        if not rate > 0:
            raise ValueError(f"{part!r}: the rate must be positive")
        limits[name.strip()] = Quota(rate, name.strip(), published=False)
    return limits
