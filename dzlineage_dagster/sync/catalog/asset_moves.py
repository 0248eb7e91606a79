"""Moving a registry's topic assets to another project with DataZone's ``UpdateAssetOwner``.

The assets are the settings' registry's (their ``externalIdentifier`` is one of its schema
ARNs) of the product's asset type, owned by the settings' project or, after a move that was
interrupted between its two transfers, by the domain's administration project. Each goes the
route of :func:`~dzlineage_dagster.core.ownership.moves.transfer_route`; one round per hop
(at most two: to the administration project, then to the target) starts every asset's
transfer, then follows each with GetAsset until it is no longer ``IN_PROGRESS`` (transfers are
asynchronous, so a round waits for its slowest one, not for each in turn). The calls go through the resource's client, paced by ``DZLINEAGE_CLIENT_RATE_LIMITS``
like every other write.

Running it again is safe: assets already with the target are not found any more, those left
with the administration project take only their second transfer, and each transfer's client
token (asset, from, to) makes a retried call the same transfer. A transfer that FAILED in an
earlier run is answered again for that token, so it is retried once under a new one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from dzlineage_dagster.core.catalog.forms import KAFKA_TOPIC_ASSET_TYPE
from dzlineage_dagster.core.mapping.ssm_names import registry_arn_of_schema
from dzlineage_dagster.core.ownership.moves import transfer_route
from dzlineage_dagster.sync.checks.preflight import administration_project
from dzlineage_dagster.sync.errors import SyncError, describe_error, error_code
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.stages.asset import client_token

#: How often an IN_PROGRESS transfer is read again, and how long one may take.
POLL_SECONDS = 1.0
TRANSFER_TIMEOUT_SECONDS = 600.0


@dataclass
class MovingAsset:
    id: str
    schema_arn: str
    owner: str
    route: list[str]


@dataclass
class MoveReport:
    moved: list[MovingAsset] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # schema ARN -> why
    #: UpdateAssetOwner calls DataZone accepted (a replayed one included).
    update_calls: int = 0


def move_assets(run: SyncRun, target: str, progress: Callable[[str], None]) -> MoveReport:
    """Move the registry's topic assets to project ``target``; ``progress`` gets a line at the
    start and every 100 assets of each round. Raises :class:`SyncError` when it cannot start
    (the target is the settings' project or cannot be read, no administration project)."""
    settings = run.settings
    if target == settings.project_id:
        raise SyncError(f"the assets of project {target} are already its own: nothing to move")
    datazone = run.resource.datazone.client()
    try:
        datazone.get_project(domainIdentifier=settings.domain_id, identifier=target)
    except ClientError as error:
        raise SyncError(f"project {target}: {describe_error(error)}") from None
    administration = administration_project(run)
    if administration is None:
        raise SyncError(
            f"domain {settings.domain_id} has no administration project (projectCategory ADMIN) "
            "that this caller can see, and DataZone moves an asset only from or to it"
        )
    report = MoveReport()
    # Search by owning project finds only the source's and the administration project's
    # assets, whose routes transfer_route always knows.
    pending = _registry_assets(run, {settings.project_id, administration["id"]})
    for asset in pending:
        asset.route = transfer_route(
            asset.owner,
            source=settings.project_id,
            target=target,
            administration=administration["id"],
        )
    progress(
        f"{len(pending)} assets of registry {settings.registry_name} to move to project "
        f"{target} through the administration project {administration['name']!r} "
        f"({administration['id']})"
    )
    while pending := [a for a in pending if a.route and a.schema_arn not in report.failed]:
        # The longest routes first: their first transfers bring them to the administration
        # project, from which they go to the target together with the assets already there.
        longest = max(len(a.route) for a in pending)
        round_ = [a for a in pending if len(a.route) == longest]
        hop = round_[0].route[0]
        for done, asset in enumerate(round_, 1):
            _start_transfer(run, asset, report)
            if done % 100 == 0 or done == len(round_):
                progress(f"transfers to project {hop} started: {done}/{len(round_)}")
        for done, asset in enumerate(round_, 1):
            _await_transfer(run, asset, report)
            if done % 100 == 0 or done == len(round_):
                progress(f"transfers to project {hop} done: {done}/{len(round_)}")
    return report


def _registry_assets(run: SyncRun, owners: set[str]) -> list[MovingAsset]:
    """The product's assets of the settings' registry that the projects ``owners`` own."""
    registry = run.registry_arn
    found = []
    for owner in sorted(owners):
        items, _ = run.resource.datazone.search_typed_assets(
            run.settings.domain_id, owning_project_id=owner, type_name=KAFKA_TOPIC_ASSET_TYPE.name
        )
        for item in items:
            arn = item.get("externalIdentifier") or ""
            if arn.startswith("arn:") and registry_arn_of_schema(arn) == registry:
                found.append(MovingAsset(item["identifier"], arn, item["owningProjectId"], []))
    return found


def _start_transfer(
    run: SyncRun, asset: MovingAsset, report: MoveReport, retry_of: str = ""
) -> None:
    """UpdateAssetOwner to the asset's next project; ``retry_of`` names the failed transfer
    (its start time) that a retry follows, so that the retry's client token is a new one."""
    hop = asset.route[0]
    try:
        run.resource.datazone.client().update_asset_owner(
            domainIdentifier=run.settings.domain_id,
            identifier=asset.id,
            targetProjectIdentifier=hop,
            clientToken=client_token("move", asset.id, asset.owner, hop, retry_of),
        )
    except ClientError as error:
        # ConflictException: a transfer of it is already running (an interrupted move's):
        # following it is what this round does anyway.
        if error_code(error) != "ConflictException":
            report.failed[asset.schema_arn] = f"UpdateAssetOwner: {describe_error(error)}"
        return
    report.update_calls += 1


def _await_transfer(run: SyncRun, asset: MovingAsset, report: MoveReport) -> None:
    if asset.schema_arn in report.failed:
        return
    transfer = _finished_transfer(run, asset.id)
    if _failed_before(run, transfer):
        # An earlier run's transfer that failed, answered again for this run's client token
        # (DataZone returns a known token's transfer): this run's own retry needs a new token.
        _start_transfer(run, asset, report, retry_of=str(transfer["startedAt"]))
        if asset.schema_arn in report.failed:
            return
        transfer = _finished_transfer(run, asset.id)
    status = transfer.get("status")
    if status == "SUCCEEDED" and transfer.get("targetProjectId") == asset.route[0]:
        asset.owner = asset.route.pop(0)
        if not asset.route:
            report.moved.append(asset)
        return
    why = (
        f"still in progress after {TRANSFER_TIMEOUT_SECONDS:.0f} s"
        if status == "IN_PROGRESS"
        else status
    )
    report.failed[asset.schema_arn] = f"transfer to project {asset.route[0]}: {why}"


def _finished_transfer(run: SyncRun, asset_id: str) -> dict[str, Any]:
    """The asset's latest transfer once it is no longer IN_PROGRESS (or at the timeout)."""
    deadline = time.monotonic() + TRANSFER_TIMEOUT_SECONDS
    while True:
        transfer = _transfer_of(run, asset_id)
        if transfer.get("status") != "IN_PROGRESS" or time.monotonic() >= deadline:
            return transfer
        time.sleep(POLL_SECONDS)


def _failed_before(run: SyncRun, transfer: dict[str, Any]) -> bool:
    started = transfer.get("startedAt")
    return transfer.get("status") == "FAILED" and started is not None and started < run.started_at


def _transfer_of(run: SyncRun, asset_id: str) -> dict[str, Any]:
    asset = run.resource.datazone.client().get_asset(
        domainIdentifier=run.settings.domain_id, identifier=asset_id
    )
    return asset.get("ownershipTransfer") or {}
