"""What the catalog should be repaired into: the registry, the mapping and DataZone compared.

Pure: it takes what a reconcile run read (the registry's table topics, this scope's mapping
records, the topic assets DataZone's Search lists, the lineage runs DataZone processed) and
says, per topic, which repair brings the three back in line. Applying a repair is the sync's
job (:mod:`dzlineage_dagster.sync.catalog.reconcile`).

An asset belongs to a schema by its ``externalIdentifier`` (the schema ARN, unique in a domain),
never by its name, which anyone may change in the portal.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from enum import Enum

from dzlineage_dagster.core.lineage.state import PostedLineage
from dzlineage_dagster.core.mapping.ssm_names import MappingRecord

#: What the retire stage puts in front of a deprecated asset's description.
DEPRECATED_MARK = "DEPRECATED"


class RepairKind(str, Enum):
    #: The mapped asset is gone and no asset carries the schema: create a new one.
    RECREATE = "recreate"
    #: The mapping names a missing asset or another schema's asset: map the schema's own.
    REMAP = "remap"
    #: No mapping, but an asset carries the schema (renamed, or its mapping lost): map it.
    ADOPT = "adopt"
    #: The mapping's record names another domain or project: map this scope's asset.
    RESCOPE = "rescope"
    #: The asset was deprecated when its schema left; the schema is back: revise it current.
    RESTORE = "restore"
    #: The mapping says lineage was posted, DataZone has no processed or pending event of it.
    REPOST_LINEAGE = "repost-lineage"
    #: Fields the product owns on the asset are not what it last wrote (a person edited one):
    #: revise it, which puts them right and names each with both values.
    PRODUCT_FIELDS = "product-fields"


@dataclass(frozen=True)
class CatalogAsset:
    """A topic asset as DataZone's Search lists it."""

    id: str
    name: str
    external_identifier: str | None
    description: str = ""
    #: The fingerprint of the part of its forms the product owns
    #: (:func:`~dzlineage_dagster.core.catalog.curation.owned_content_fingerprint`); None: its
    #: forms were not read.
    owned_fingerprint: str | None = None

    @property
    def deprecated(self) -> bool:
        return self.description.startswith(DEPRECATED_MARK)


@dataclass(frozen=True)
class Repair:
    topic: str
    schema_arn: str
    kind: RepairKind
    detail: str
    #: The asset the schema is mapped to after the repair (None: a new one is created).
    asset_id: str | None = None


@dataclass(frozen=True)
class LineageRuns:
    """Lineage run ids DataZone holds, by what became of their events."""

    #: Runs with an event processed or still being processed.
    healthy: frozenset[str]
    #: Runs whose every event failed processing.
    failed: frozenset[str]


def plan_repairs(
    registry: Mapping[str, str],
    mappings: Mapping[str, MappingRecord],
    foreign: Mapping[str, MappingRecord],
    assets: Collection[CatalogAsset],
    lineage: LineageRuns | None,
) -> list[Repair]:
    """The repairs for ``registry`` (table topic -> schema ARN), in topic order.

    ``mappings`` are this scope's trusted records by schema ARN; ``foreign`` the records found
    under this scope's path that name another domain or project; ``assets`` every topic asset
    of this domain and project; ``lineage`` None skips the lineage comparison.
    """
    by_id = {asset.id: asset for asset in assets}
    by_schema: dict[str, list[CatalogAsset]] = {}
    for asset in assets:
        if asset.external_identifier:
            by_schema.setdefault(asset.external_identifier, []).append(asset)
    repairs = []
    for topic, schema_arn in sorted(registry.items()):
        owned = by_schema.get(schema_arn, [])
        own = owned[0] if owned else None
        record = mappings.get(schema_arn)
        repair = _asset_repair(topic, schema_arn, record, foreign.get(schema_arn), own, by_id)
        if repair is not None:
            repairs.append(repair)
            continue
        edited = _edited_product_fields(topic, record, by_id)
        if edited is not None:
            repairs.append(edited)
        if record is not None and lineage is not None and record.lineage_fingerprint:
            detail = _lineage_problem(topic, record, lineage)
            if detail:
                repairs.append(
                    Repair(topic, schema_arn, RepairKind.REPOST_LINEAGE, detail, record.asset_id)
                )
    return repairs


def _edited_product_fields(
    topic: str, record: MappingRecord | None, by_id: Mapping[str, CatalogAsset]
) -> Repair | None:
    """A revision for the mapped asset whose fields the product owns differ from what the
    product last wrote (the mapping's content fingerprint), or None."""
    mapped = by_id.get(record.asset_id) if record is not None else None
    if mapped is None or mapped.owned_fingerprint is None or not record.content_fingerprint:
        return None
    if mapped.owned_fingerprint == record.content_fingerprint:
        return None
    return Repair(
        topic,
        record.schema_arn,
        RepairKind.PRODUCT_FIELDS,
        f"asset {mapped.id}: fields the product owns are not what it last wrote (edited in "
        "DataZone): revise it",
        mapped.id,
    )


def _lineage_problem(topic: str, record: MappingRecord, lineage: LineageRuns) -> str | None:
    """Why the topic's lineage must be re-posted, or None when DataZone has every run."""
    try:
        posted = PostedLineage.decode(record.lineage_fingerprint)
    except ValueError as error:
        return f"{error}: re-post"
    run_ids = posted.run_ids(topic) if posted else []
    unhealthy = [run_id for run_id in run_ids if run_id not in lineage.healthy]
    if not unhealthy:
        return None
    failed = any(run_id in lineage.failed for run_id in unhealthy)
    state = "FAILED in DataZone" if failed else "missing"
    return f"lineage run {', '.join(unhealthy)} is {state}: re-post"


def _asset_repair(
    topic: str,
    schema_arn: str,
    record: MappingRecord | None,
    foreign: MappingRecord | None,
    own: CatalogAsset | None,
    by_id: Mapping[str, CatalogAsset],
) -> Repair | None:
    def to_own_or_new(kind: RepairKind, why: str) -> Repair:
        if own is not None:
            return Repair(topic, schema_arn, kind, f"{why}: map asset {own.id}", own.id)
        return Repair(topic, schema_arn, RepairKind.RECREATE, f"{why}: create a new asset")

    if record is None and foreign is not None:
        return to_own_or_new(
            RepairKind.RESCOPE,
            f"mapping records domain {foreign.domain_id} / project {foreign.project_id}",
        )
    if record is None:
        if own is None:
            return None  # a new topic: the sync creates its asset, nothing to repair
        return Repair(
            topic,
            schema_arn,
            RepairKind.ADOPT,
            f"no mapping; asset {own.id} ({own.name!r}) carries the schema: adopt it",
            own.id,
        )
    mapped = by_id.get(record.asset_id)
    if mapped is None:
        return to_own_or_new(RepairKind.REMAP, f"mapped asset {record.asset_id} is gone")
    if mapped.external_identifier != schema_arn:
        owner = (mapped.external_identifier or "").rpartition("/")[2] or "no schema"
        return to_own_or_new(
            RepairKind.REMAP, f"mapped asset {mapped.id} belongs to schema {owner}"
        )
    if mapped.deprecated:
        return Repair(
            topic,
            schema_arn,
            RepairKind.RESTORE,
            f"asset {mapped.id} is deprecated but its schema is in the registry: revise it",
            mapped.id,
        )
    return None
