"""Reconcile: compare what DataZone holds with the registry and the mapping, and repair.

The sync trusts the mapping (that is what makes an unchanged topic cost nothing); a person in
the portal or an edited SSM parameter can make it wrong. Reconcile reads DataZone itself:
Search by the topic asset type with its forms (this domain and owning project, 50 assets a
page; the forms tell a person's edit of a field the product owns, confirmed by GetAsset
before it is believed) and the lineage events, plans the repairs (:func:`~dzlineage_dagster.core.catalog.reconcile.
plan_repairs`), and applies them through the ordinary stages: a repaired topic's mapping is
staged (or forgotten, for a recreation) and the topic is synced, so the asset ends with the
registry's current content and the mapping is written once.

Search's consistency is not documented: an asset created a moment ago, or one Search misses
for any reason, must not be taken for gone. Every mapped asset Search does not list is read by
id (``GetAsset``) before the plan, so only an asset DataZone itself says is not found is gone.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from dzlineage_dagster.core.catalog.curation import AssetContent, owned_content_fingerprint
from dzlineage_dagster.core.catalog.forms import KAFKA_TOPIC_ASSET_TYPE
from dzlineage_dagster.core.catalog.reconcile import (
    CatalogAsset,
    LineageRuns,
    Repair,
    RepairKind,
    plan_repairs,
)
from dzlineage_dagster.core.connectors.topics import TopicKind, classify_topic
from dzlineage_dagster.core.mapping.ssm_names import MappingRecord, registry_arn_of_schema
from dzlineage_dagster.sync.run_state import SyncRun

#: Lineage processing states that mean DataZone has, or will have, the event.
_HEALTHY_LINEAGE = {"REQUESTED", "PROCESSING", "SUCCESS"}


@dataclass
class ReconcileReport:
    repairs: list[Repair]
    #: Topic assets of this domain and project that DataZone's Search listed.
    assets_seen: int
    search_pages: int
    lineage_pages: int
    #: Mapped assets Search did not list, read by id (GetAsset) before any is taken for gone.
    assets_read_by_id: int = 0
    #: Topic -> what the repair's sync did (filled when the repairs are applied).
    results: dict[str, str] = field(default_factory=dict)

    @property
    def topics(self) -> list[str]:
        return list(dict.fromkeys(repair.topic for repair in self.repairs))

    def rows(self) -> list[tuple[str, str, str]]:
        """(topic, repair, detail [-> result]) for the CLI summary and the run's metadata."""
        return [
            (
                repair.topic,
                repair.kind.value,
                repair.detail
                + (f" -> {self.results[repair.topic]}" if repair.topic in self.results else ""),
            )
            for repair in self.repairs
        ]


def inspect_catalog(run: SyncRun) -> ReconcileReport:
    """The repairs the catalog needs; reads only (registry, SSM, Search, lineage events)."""
    registry = {
        topic: listed.schema_arn
        for topic, listed in run.registry_topics.items()
        if classify_topic(topic) is TopicKind.TABLE
    }
    mappings = run.mappings.all()
    datazone = run.resource.datazone
    items, search_pages = datazone.search_typed_assets(
        run.settings.domain_id,
        owning_project_id=run.settings.project_id,
        type_name=KAFKA_TOPIC_ASSET_TYPE.name,
    )
    assets = [
        CatalogAsset(
            id=item["identifier"],
            name=item.get("name", ""),
            external_identifier=item.get("externalIdentifier"),
            description=item.get("description") or "",
            owned_fingerprint=_owned_fingerprint(
                item.get("additionalAttributes", {}).get("formsOutput")
            ),
        )
        for item in items
    ]
    seen = len(assets)
    assets = _confirm_edits_by_id(run, assets, mappings)
    listed = {asset.id for asset in assets}
    unlisted = sorted(
        {
            record.asset_id
            for arn, record in mappings.items()
            if arn in registry.values() and record.asset_id not in listed
        }
    )
    assets += _read_by_id(run, unlisted)
    events, lineage_pages = datazone.lineage_event_summaries(run.settings.domain_id)
    repairs = plan_repairs(
        registry, mappings, dict(run.mappings.foreign), assets, _lineage_runs(events)
    )
    return ReconcileReport(repairs, seen, search_pages, lineage_pages, len(unlisted))


def _confirm_edits_by_id(
    run: SyncRun, assets: list[CatalogAsset], mappings: dict[str, MappingRecord]
) -> list[CatalogAsset]:
    """``assets`` with the forms of each one whose product-owned part Search shows edited read
    again by id (GetAsset): Search may show an older revision (its consistency is not
    documented), so only the asset itself says a person edited it. One read per such asset."""
    written = {record.asset_id: record.content_fingerprint for record in mappings.values()}
    datazone = run.resource.datazone.client()
    confirmed = []
    for asset in assets:
        fingerprint = written.get(asset.id)
        if fingerprint and asset.owned_fingerprint not in (None, fingerprint):
            try:
                current = datazone.get_asset(
                    domainIdentifier=run.settings.domain_id, identifier=asset.id
                )
            except datazone.exceptions.ResourceNotFoundException:
                current = {}  # deleted since Search listed it: its forms are unknown
            asset = replace(asset, owned_fingerprint=_owned_fingerprint(current.get("formsOutput")))
        confirmed.append(asset)
    return confirmed


def _read_by_id(run: SyncRun, asset_ids: list[str]) -> list[CatalogAsset]:
    """The assets of ``asset_ids`` that DataZone has in this domain and project (GetAsset
    each); one it answers ResourceNotFoundException for is gone."""
    datazone = run.resource.datazone.client()
    found = []
    for asset_id in asset_ids:
        try:
            asset = datazone.get_asset(domainIdentifier=run.settings.domain_id, identifier=asset_id)
        except datazone.exceptions.ResourceNotFoundException:
            continue
        if asset.get("owningProjectId") != run.settings.project_id:
            continue  # another project's: not this scope's asset, as Search's filter says
        found.append(
            CatalogAsset(
                id=asset["id"],
                name=asset.get("name", ""),
                external_identifier=asset.get("externalIdentifier"),
                description=asset.get("description") or "",
                owned_fingerprint=_owned_fingerprint(asset.get("formsOutput")),
            )
        )
    return found


def _owned_fingerprint(forms_output: list[dict] | None) -> str | None:
    """What the product owns of an asset's forms (Search's or GetAsset's ``formsOutput``),
    fingerprinted as the mapping records what it wrote; None when the forms were not given."""
    if not forms_output:
        return None
    return owned_content_fingerprint(
        AssetContent.from_asset({"name": "", "formsOutput": forms_output})
    )


def apply_repairs(run: SyncRun, report: ReconcileReport) -> None:
    """Put each repair into the run's mapping store; syncing the repaired topics does it."""
    datazone = run.resource.datazone.client()
    for repair in report.repairs:
        current = run.mappings.get(repair.schema_arn)
        if repair.kind is RepairKind.RECREATE:
            run.mappings.forget(repair.schema_arn)
            continue
        if repair.kind is RepairKind.REPOST_LINEAGE:
            run.repost_lineage.add(repair.schema_arn)
            run.mappings.stage(replace(current, lineage_fingerprint=""))
            continue
        if repair.kind is RepairKind.PRODUCT_FIELDS:
            # No content the product wrote matches now: the topic's sync revises the asset
            # from its latest revision, the product's own last one telling what was edited.
            run.mappings.stage(replace(current, content_fingerprint=""))
            continue
        # The others revise the schema's own asset to the registry's current content, from
        # the revision it has now (the revision token covers it).
        asset = datazone.get_asset(
            domainIdentifier=run.settings.domain_id, identifier=repair.asset_id
        )
        if repair.kind is RepairKind.RESTORE:
            run.mappings.stage(
                replace(current, asset_revision=str(asset["revision"]), content_fingerprint="")
            )
        else:  # adopt, remap, rescope
            run.mappings.stage(
                MappingRecord(
                    schema_arn=repair.schema_arn,
                    topic=repair.topic,
                    asset_id=repair.asset_id,
                    asset_revision=str(asset["revision"]),
                    schema_version=0,
                    content_fingerprint="",
                    asset_type_revision=str(asset.get("typeRevision", "")),
                    # The lineage does not name the asset: a kept edge stays posted.
                    lineage_fingerprint=current.lineage_fingerprint if current else "",
                    registry_arn=registry_arn_of_schema(repair.schema_arn),
                )
            )


def _lineage_runs(events: list[dict]) -> LineageRuns:
    healthy: set[str] = set()
    failed: set[str] = set()
    for event in events:
        run_id = event.get("eventSummary", {}).get("openLineageRunEventSummary", {}).get("runId")
        if not run_id:
            continue
        if event.get("processingStatus") in _HEALTHY_LINEAGE:
            healthy.add(run_id)
        else:
            failed.add(run_id)
    return LineageRuns(frozenset(healthy), frozenset(failed - healthy))
