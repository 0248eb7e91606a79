"""The publish stage: a topic's asset is listed in the DataZone catalog at its latest revision.

A DataZone asset is visible only to its owning project until it is published; after every
revision "you must publish the new revision to the catalog for it to be updated and available
to subscribers", and only the latest revision can be published (AWS's asset-versioning guide).
So, with `publish_to_catalog` on, the asset stage's revision is published right after it is
made: one ``CreateListingChangeSet`` per created or revised asset, none for an unchanged one.

The mapping record remembers the revision last published (``published_revision``). An asset
whose record says its revision is not published yet (a run that failed or was killed between
the revision and the publication, an adopted or replayed asset, a record from before this
stage existed) is published by the next run that sees it. The record changes only when the
publication was accepted; the client token (asset and revision) makes a retried or repeated
publication of the same revision one listing revision.

Retirement unpublishes (:func:`unpublish_retired_asset`): a topic that left the registry is
taken out of the catalog, whatever `publish_to_catalog` says, since no one can subscribe to it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.mapping.ssm_names import MappingRecord
from dzlineage_dagster.sync.errors import SyncError, describe_error, error_code
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.stages.asset import AssetOutcome, AssetPlan, client_token

#: GetAsset's ``listing.listingStatus`` values of a listing the catalog shows (or soon will).
LISTED_STATUSES = frozenset({"CREATING", "ACTIVE"})


@dataclass(frozen=True)
class Publication:
    """One CreateListingChangeSet the sync made for a topic's asset, and DataZone's answer."""

    action: Literal["published", "unpublished"]
    asset_revision: str
    listing_id: str
    listing_revision: str
    #: CREATING while DataZone publishes it (asynchronously), then ACTIVE; INACTIVE unpublished.
    status: str
    #: The revision is another caller's (DataZone replayed its client token to the asset
    #: stage), so its publication is that caller's too: the same client token asks DataZone
    #: for it again, and DataZone answers with the one listing change (a second sync racing
    #: on one revision reports it once, as ``already published``).
    already: bool = False

    @property
    def summary(self) -> str:
        """How the sync's table says it: ``published r3``, ``already published r3``,
        ``unpublished``."""
        if self.action == "published":
            return f"{'already ' if self.already else ''}published r{self.asset_revision}"
        return "unpublished"


def publish_topic_asset(
    run: SyncRun, asset: AssetOutcome
) -> tuple[AssetOutcome, Publication] | None:
    """Publish the asset's revision if it is not published yet (with `publish_to_catalog` on).

    Returns the asset outcome with the published revision in its record (staged for the
    runner to write) and what was published; None when nothing was published.
    """
    record = asset.record
    if not publication_due(run, record):
        return None
    try:
        answer = _change_listing(
            run,
            record.asset_id,
            action="PUBLISH",
            entityRevision=record.asset_revision,
            clientToken=client_token("publish", record.asset_id, record.asset_revision),
        )
    except (ClientError, BotoCoreError) as error:
        if isinstance(error, ClientError) and _revised_outside_the_sync(run, record, error):
            return None
        raise _failure(record, f"publish revision {record.asset_revision} of", error) from error
    published = replace(record, published_revision=record.asset_revision)
    run.mappings.stage(published)
    publication = replace(
        _publication("published", record.asset_revision, answer),
        already=asset.action == "replayed",
    )
    return replace(asset, record=published), publication


def publication_due(run: SyncRun, record: MappingRecord) -> bool:
    """With `publish_to_catalog` on: the record's revision is not the one last published."""
    return run.settings.publish_to_catalog and record.published_revision != record.asset_revision


def planned_publication(run: SyncRun, plan: AssetPlan) -> str:
    """What the dry run says this stage would do after the asset stage carried out ``plan``:
    ``publish`` a new revision, ``publish r3`` a stored one not yet listed, or nothing."""
    if not run.settings.publish_to_catalog or plan.action == "not-cataloged":
        return ""
    if plan.action in ("create", "revise"):
        return "publish"
    if publication_due(run, plan.stored):
        return f"publish r{plan.stored.asset_revision}"
    return ""


def _revised_outside_the_sync(run: SyncRun, record: MappingRecord, error: ClientError) -> bool:
    """Whether DataZone refused the publication because a person revised the asset after the
    sync's revision (only the latest revision can be published); logged as a warning.

    The sync does not publish a revision it did not make: that is the person's to publish.
    """
    if error_code(error) not in ("ValidationException", "ConflictException"):
        return False
    latest = run.resource.datazone.client().get_asset(
        domainIdentifier=run.settings.domain_id, identifier=record.asset_id
    )["revision"]
    if str(latest) == record.asset_revision:
        return False
    run.log.warning(
        f"{record.topic}: revision {record.asset_revision} of asset {record.asset_id} not "
        f"published: the asset has a later revision {latest} made outside the sync, and only "
        "an asset's latest revision can be published; the sync publishes its own next "
        "revision of it (or publish it in the portal)"
    )
    return True


def unpublish_retired_asset(
    run: SyncRun, record: MappingRecord, asset: dict[str, Any]
) -> Publication | None:
    """Take a retired topic's asset (its GetAsset output) out of the catalog, if it is listed."""
    listing = asset.get("listing") or {}
    if listing.get("listingStatus") not in LISTED_STATUSES:
        return None
    try:
        answer = _change_listing(
            run,
            record.asset_id,
            action="UNPUBLISH",
            clientToken=client_token(
                "unpublish", asset["id"], listing["listingId"], asset["revision"]
            ),
        )
    except (ClientError, BotoCoreError) as error:
        raise _failure(record, "unpublish", error) from error
    return _publication("unpublished", str(asset["revision"]), answer)


def _change_listing(run: SyncRun, asset_id: str, **change: str) -> dict[str, Any]:
    return run.resource.datazone.client().create_listing_change_set(
        domainIdentifier=run.settings.domain_id,
        entityIdentifier=asset_id,
        entityType="ASSET",
        **change,
    )


def _failure(record: MappingRecord, what: str, error: Exception) -> SyncError:
    return SyncError(
        f"{record.topic}: could not {what} asset {record.asset_id} in the catalog: "
        f"{describe_error(error)}"
    )


def _publication(
    action: Literal["published", "unpublished"], asset_revision: str, answer: dict[str, Any]
) -> Publication:
    return Publication(
        action=action,
        asset_revision=asset_revision,
        listing_id=answer["listingId"],
        listing_revision=str(answer["listingRevision"]),
        status=answer["status"],
    )
