"""DataZone's catalog listings: what an asset looks like to the users of other projects.

An asset is private to its owning project until it is published. ``CreateListingChangeSet``
with ``PUBLISH`` records the asset at one revision as a *listing revision*; AWS's asset
versioning guide: only the asset's latest revision can be published, and a new revision reaches
subscribers only once it is published too. ``UNPUBLISH`` takes the listing out of the catalog
(status INACTIVE); publishing again revives the same listing with a new listing revision.

Publishing is asynchronous on AWS (the answer's status is CREATING, later ACTIVE): a listing
revision becomes visible ``processing`` after it was asked for, like lineage events
(:mod:`..lineage`); until then the catalog still shows the revision published before, if any.
A delay of 0 (the default) behaves synchronously.

``SearchListings`` answers what a user of another project finds: only listed assets, each at its
visible listing revision (name, description and forms as they were published), never a later
revision that was not published.

Where AWS documents the rule but not the answer (the error for publishing a revision that is not
the latest, republishing a revision already listed, unpublishing an asset that is not listed),
the sandbox's choices are named in :meth:`Listings.publish` and :meth:`Listings.unpublish`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from dzlineage_dagster.sandbox.emulators.datazone.catalog.records import Asset, AssetRevision
from dzlineage_dagster.sandbox.emulators.datazone.common import invalid, new_id, not_found

#: ListingStatus values (botocore's model).
CREATING, ACTIVE, INACTIVE = "CREATING", "ACTIVE", "INACTIVE"


@dataclass(frozen=True)
class ListingRevision:
    """The asset at one revision, as it was published."""

    revision: str
    asset_revision: AssetRevision
    created_at: datetime
    created_by: str
    #: When publishing it is done: from then on the catalog shows this revision.
    visible_at: datetime


@dataclass
class Listing:
    id: str
    #: The asset itself, kept even after DeleteAsset so its listing can still be read.
    asset: Asset
    revisions: list[ListingRevision] = field(default_factory=list)
    unpublished_at: datetime | None = None
    updated_by: str = ""

    def status(self, at: datetime) -> str:
        if self.unpublished_at is not None:
            return INACTIVE
        return ACTIVE if self.revisions[-1].visible_at <= at else CREATING

    def visible(self, at: datetime) -> ListingRevision | None:
        """The listing revision the catalog shows at ``at`` (None: unpublished or not yet)."""
        if self.unpublished_at is not None:
            return None
        shown = [r for r in self.revisions if r.visible_at <= at]
        return shown[-1] if shown else None

    def revision(self, number: str | None) -> ListingRevision:
        if number is None:
            return self.revisions[-1]
        for revision in self.revisions:
            if revision.revision == number:
                return revision
        raise not_found(f"Revision {number} of listing {self.id} doesn't exist")

    def as_published(self, revision: ListingRevision) -> Asset:
        """The asset as this listing revision shows it: its history up to the published one."""
        index = next(
            i
            for i, r in enumerate(self.asset.revisions)
            if r.revision == revision.asset_revision.revision
        )
        return replace(self.asset, revisions=self.asset.revisions[: index + 1])

    def change_output(self, at: datetime) -> dict[str, Any]:
        """CreateListingChangeSet's answer."""
        return {
            "listingId": self.id,
            "listingRevision": self.revisions[-1].revision,
            "status": self.status(at),
        }

    def output(self, domain_id: str, revision: ListingRevision, at: datetime) -> dict[str, Any]:
        """GetListing's answer for ``revision``."""
        published = revision.asset_revision
        return {
            "domainId": domain_id,
            "id": self.id,
            "listingRevision": revision.revision,
            "createdAt": self.revisions[0].created_at,
            "updatedAt": self.revisions[-1].created_at,
            "createdBy": self.revisions[0].created_by,
            "updatedBy": self.updated_by or revision.created_by,
            "item": {
                "assetListing": {
                    "assetId": self.asset.id,
                    "assetRevision": published.revision,
                    "assetType": self.asset.type_name,
                    "createdAt": revision.created_at,
                    "forms": forms_document(published),
                    "owningProjectId": self.asset.owning_project_id,
                }
            },
            "name": published.name,
            "description": published.description,
            "status": self.status(at),
        }

    def search_item(self, revision: ListingRevision, with_forms: bool) -> dict[str, Any]:
        """SearchListings' item for the visible ``revision``."""
        published = revision.asset_revision
        item: dict[str, Any] = {
            "listingId": self.id,
            "listingRevision": revision.revision,
            "name": published.name,
            "entityId": self.asset.id,
            "entityRevision": published.revision,
            "entityType": self.asset.type_name,
            "description": published.description,
            "createdAt": revision.created_at,
            "listingCreatedBy": self.revisions[0].created_by,
            "listingUpdatedBy": self.updated_by or revision.created_by,
            "owningProjectId": self.asset.owning_project_id,
        }
        if with_forms:
            item["additionalAttributes"] = {"forms": forms_document(published)}
        return item


def forms_document(revision: AssetRevision) -> str:
    """A listing's ``forms``: one JSON document, each form's content under its form name."""
    return json.dumps({form.name: json.loads(form.content or "{}") for form in revision.forms})


class Listings:
    """The listings of one domain, by id and by the asset they list."""

    def __init__(self) -> None:
        self.by_id: dict[str, Listing] = {}
        self._by_asset: dict[str, str] = {}

    def of_asset(self, asset_id: str) -> Listing | None:
        listing_id = self._by_asset.get(asset_id)
        return self.by_id.get(listing_id) if listing_id else None

    def get(self, listing_id: str) -> Listing:
        if listing_id not in self.by_id:
            raise not_found(f"Listing {listing_id} not found")
        return self.by_id[listing_id]

    def publish(
        self,
        asset: Asset,
        entity_revision: str | None,
        *,
        at: datetime,
        by: str,
        processing: timedelta,
    ) -> Listing:
        """List ``asset`` at ``entity_revision`` (default: its latest).

        Sandbox choices: a revision other than the latest is refused with a
        ValidationException naming the latest; publishing the revision the listing already
        holds (and is not unpublished) answers the listing unchanged.
        """
        latest = asset.latest
        if entity_revision is not None and entity_revision != latest.revision:
            raise invalid(
                f"Revision {entity_revision} of asset {asset.id} cannot be published: only the "
                f"latest revision ({latest.revision}) of an asset can be published"
            )
        listing = self.of_asset(asset.id)
        if listing is None:
            listing = Listing(new_id(), asset)
            self.by_id[listing.id] = listing
            self._by_asset[asset.id] = listing.id
        elif (
            listing.unpublished_at is None
            and listing.revisions[-1].asset_revision.revision == latest.revision
        ):
            return listing
        listing.revisions.append(
            ListingRevision(
                revision=str(len(listing.revisions) + 1),
                asset_revision=latest,
                created_at=at,
                created_by=by,
                visible_at=at + processing,
            )
        )
        listing.unpublished_at = None
        listing.updated_by = by
        return listing

    def unpublish(self, asset: Asset, *, at: datetime, by: str) -> Listing:
        """Take the asset's listing out of the catalog.

        Sandbox choice: an asset with no listing, or one already unpublished, is refused with
        a ResourceNotFoundException.
        """
        listing = self.of_asset(asset.id)
        if listing is None or listing.unpublished_at is not None:
            raise not_found(f"Asset {asset.id} has no published listing")
        listing.unpublished_at = at
        listing.updated_by = by
        return listing

    def withdraw(self, asset_id: str, *, at: datetime) -> None:
        """DeleteAsset: a deleted asset is no longer listed (a sandbox choice; AWS does not say
        whether it refuses to delete a published asset or withdraws its listing)."""
        listing = self.of_asset(asset_id)
        if listing is not None and listing.unpublished_at is None:
            listing.unpublished_at = at

    def visible(self, at: datetime) -> list[tuple[Listing, ListingRevision]]:
        """Every listing the catalog shows at ``at``, with the revision it shows."""
        shown = []
        for listing in self.by_id.values():
            revision = listing.visible(at)
            if revision is not None:
                shown.append((listing, revision))
        return shown
