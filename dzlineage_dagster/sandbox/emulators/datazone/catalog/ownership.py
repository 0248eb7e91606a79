"""Moving an asset to another project: DataZone's ``UpdateAssetOwner``, as botocore's model
documents it.

- The transfer is asynchronous (202): the answer and ``GetAsset.ownershipTransfer`` say
  ``IN_PROGRESS`` until it ends ``SUCCEEDED`` (the target owns the asset and its listing) or
  ``FAILED`` (rolled back: the source still owns it). It takes ``processing`` (0 by default:
  done at once, as listings and lineage events are) from when it was asked for.
- Starting it creates a revision of the asset ("the revision of the asset that was created when
  the transfer started"): the latest revision's content again, under the next number.
- One transfer at a time per asset; while one runs, changes to the asset or its listing
  (a revision, a deletion, a listing change set, another transfer) fail with a
  ``ConflictException``.
- The domain's administration project (``CreateProject`` with ``projectCategory`` ``ADMIN``) may
  hand an asset to any project and receive one from any project; every other move goes through
  it. A domain has at most one (a sandbox choice: AWS does not say), and one without it cannot
  transfer between two other projects.

Sandbox choices where AWS does not say: a move that breaks these rules is a
``ValidationException`` naming the rule; the transfer's revision is not published by itself,
so a listed asset stays listed at the revision it was published at, now owned by the target;
a transfer made to fail (the ``fail-after-accept`` fault) keeps its revision.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from dzlineage_dagster.sandbox.emulators.datazone.catalog.records import Asset, Project
from dzlineage_dagster.sandbox.emulators.datazone.common import invalid
from dzlineage_dagster.sandbox.protocol.aws import AwsServiceError

#: AssetOwnershipTransferStatus values (botocore's model).
IN_PROGRESS, SUCCEEDED, FAILED = "IN_PROGRESS", "SUCCEEDED", "FAILED"

#: CreateProject's ``projectCategory`` of a domain's administration project.
ADMIN_CATEGORY = "ADMIN"


@dataclass(frozen=True)
class OwnershipTransfer:
    asset_id: str
    source_project_id: str
    target_project_id: str
    started_at: datetime
    ends_at: datetime
    fails: bool

    def status(self, at: datetime) -> str:
        if at < self.ends_at:
            return IN_PROGRESS
        return FAILED if self.fails else SUCCEEDED

    def output(self, at: datetime) -> dict[str, Any]:
        status = self.status(at)
        return {
            "status": status,
            "sourceProjectId": self.source_project_id,
            "targetProjectId": self.target_project_id,
            "startedAt": self.started_at,
            "updatedAt": self.started_at if status == IN_PROGRESS else self.ends_at,
        }


class OwnershipTransfers:
    """The ownership transfers of one domain's assets: the latest of each asset."""

    def __init__(self) -> None:
        self._latest: dict[str, OwnershipTransfer] = {}

    def of_asset(self, asset_id: str) -> OwnershipTransfer | None:
        return self._latest.get(asset_id)

    def settle(self, assets: dict[str, Asset], at: datetime) -> None:
        """Hand every asset whose transfer succeeded by ``at`` to its target project."""
        for transfer in self._latest.values():
            asset = assets.get(transfer.asset_id)
            if asset is not None and transfer.status(at) == SUCCEEDED:
                asset.owning_project_id = transfer.target_project_id

    def refuse_change(self, asset_id: str, at: datetime, change: str) -> None:
        """ConflictException while the asset's ownership is being transferred."""
        transfer = self._latest.get(asset_id)
        if transfer is not None and transfer.status(at) == IN_PROGRESS:
            raise AwsServiceError(
                "ConflictException",
                f"Cannot {change} asset {asset_id}: its ownership transfer to project "
                f"{transfer.target_project_id} is in progress",
            )

    def start(
        self,
        asset: Asset,
        target: Project,
        administration: Project | None,
        *,
        at: datetime,
        by: str,
        processing: timedelta,
        fails: bool,
    ) -> OwnershipTransfer:
        """Check the move against the domain's rules, add the transfer's revision, start it."""
        self.refuse_change(asset.id, at, "transfer the ownership of")
        source = asset.owning_project_id
        if target.id == source:
            raise invalid(f"Asset {asset.id} is already owned by project {target.id}")
        if administration is None:
            raise invalid(
                "The domain has no administration project: an asset moves only from or to it"
            )
        if administration.id not in (source, target.id):
            raise invalid(
                f"Asset {asset.id} of project {source} can only be transferred to the domain's "
                f"administration project {administration.id}, not to project {target.id}"
            )
        latest = asset.latest
        asset.revisions.append(
            replace(latest, revision=str(int(latest.revision) + 1), created_at=at, created_by=by)
        )
        transfer = OwnershipTransfer(
            asset_id=asset.id,
            source_project_id=source,
            target_project_id=target.id,
            started_at=at,
            ends_at=at + processing,
            fails=fails,
        )
        self._latest[asset.id] = transfer
        return transfer
