"""The DataZone emulator's UpdateAssetOwner (an asset moved to another project, through the
domain's administration project), ListProjects and GetAsset's ``ownershipTransfer``, driven by
real boto3 clients over HTTP."""

# The emulator tests' `dz` and `catalog` fixtures are imported, so the tests' arguments of the
# same names redefine them as pytest intends.
# ruff: noqa: F811

from __future__ import annotations

import time

import pytest
from botocore.exceptions import ClientError

from dzlineage_dagster.sandbox.server.app import Sandbox
from dzlineage_dagster.sandbox.server.control import sandbox_environment
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster_tests.clients import sandbox_client
from dzlineage_dagster_tests.sandbox.test_datazone_emulator import (  # noqa: F401 (fixtures)
    ROLE,
    Catalog,
    catalog,
    dz,
)
from dzlineage_dagster_tests.sandbox.test_datazone_listings import listed, publish, revise


def administration(dz, catalog: Catalog) -> str:
    return dz.create_project(
        domainIdentifier=catalog.domain_id, name="administration", projectCategory="ADMIN"
    )["id"]


def transfer(dz, catalog: Catalog, asset_id: str, target: str, **params) -> dict:
    return dz.update_asset_owner(
        domainIdentifier=catalog.domain_id,
        identifier=asset_id,
        targetProjectIdentifier=target,
        **params,
    )


def get(dz, catalog: Catalog, asset_id: str) -> dict:
    return dz.get_asset(domainIdentifier=catalog.domain_id, identifier=asset_id)


def test_an_asset_moves_to_another_project_through_the_administration_project(dz, catalog):
    admin = administration(dz, catalog)
    target = dz.create_project(domainIdentifier=catalog.domain_id, name="analytics")["id"]
    asset = catalog.create_asset(dz, "shop.sales.orders")
    assert "ownershipTransfer" not in get(dz, catalog, asset["id"])

    # Neither the source nor the target is the administration project: refused.
    with pytest.raises(ClientError, match=rf"ValidationException.*administration project {admin}"):
        transfer(dz, catalog, asset["id"], target)
    assert get(dz, catalog, asset["id"])["owningProjectId"] == catalog.project_id

    first = transfer(dz, catalog, asset["id"], admin, clientToken="move-1")
    assert first["ResponseMetadata"]["HTTPStatusCode"] == 202
    # The transfer made a revision: the latest content again, under the next number.
    assert (first["id"], first["revision"]) == (asset["id"], "2")
    assert first["ownershipTransfer"]["status"] == "SUCCEEDED"
    second = transfer(dz, catalog, asset["id"], target)
    assert second["revision"] == "3"
    assert second["ownershipTransfer"] == {
        **second["ownershipTransfer"],
        "status": "SUCCEEDED",
        "sourceProjectId": admin,
        "targetProjectId": target,
    }

    moved = get(dz, catalog, asset["id"])
    assert moved["owningProjectId"] == target
    assert moved["ownershipTransfer"] == second["ownershipTransfer"]
    assert (moved["name"], moved["formsOutput"]) == (asset["name"], asset["formsOutput"])
    found = dz.search(
        domainIdentifier=catalog.domain_id, searchScope="ASSET", owningProjectIdentifier=target
    )["items"]
    assert [item["assetItem"]["identifier"] for item in found] == [asset["id"]]
    # Moving it to the project that owns it is refused.
    with pytest.raises(ClientError, match=r"ValidationException.*already owned"):
        transfer(dz, catalog, asset["id"], target)


def test_the_published_listing_moves_along(dz, catalog):
    admin = administration(dz, catalog)
    asset = catalog.create_asset(dz, "shop.sales.orders")
    publish(dz, catalog, asset["id"])

    transfer(dz, catalog, asset["id"], admin)

    [item] = listed(dz, catalog)
    assert (item["entityId"], item["owningProjectId"]) == (asset["id"], admin)
    # Still listed at the revision that was published; the transfer's revision is the latest,
    # so it is the one a publication can list now.
    assert item["entityRevision"] == "1"
    assert get(dz, catalog, asset["id"])["listing"]["listingStatus"] == "ACTIVE"
    assert publish(dz, catalog, asset["id"], "2")["status"] == "ACTIVE"


def test_a_domain_has_one_administration_project_and_list_projects_finds_it(dz, catalog):
    admin = administration(dz, catalog)
    with pytest.raises(ClientError, match=f"ConflictException.*{admin}"):
        dz.create_project(
            domainIdentifier=catalog.domain_id, name="admin-2", projectCategory="ADMIN"
        )

    [found] = dz.list_projects(domainIdentifier=catalog.domain_id, projectCategory="ADMIN")["items"]
    assert (found["id"], found["name"], found["projectCategory"]) == (
        admin,
        "administration",
        "ADMIN",
    )
    got = dz.get_project(domainIdentifier=catalog.domain_id, identifier=admin)
    assert got["projectCategory"] == "ADMIN"
    every = dz.list_projects(domainIdentifier=catalog.domain_id)["items"]
    assert {p["id"] for p in every} == {admin, catalog.project_id}


def test_a_domain_without_an_administration_project_cannot_move_assets(dz, catalog):
    target = dz.create_project(domainIdentifier=catalog.domain_id, name="analytics")["id"]
    asset = catalog.create_asset(dz, "shop.sales.orders")
    with pytest.raises(ClientError, match=r"ValidationException.*no administration project"):
        transfer(dz, catalog, asset["id"], target)
    with pytest.raises(ClientError, match="ResourceNotFoundException"):
        transfer(dz, catalog, asset["id"], "nosuchproject")


def test_a_transfer_runs_for_a_while_and_blocks_changes_to_the_asset_and_its_listing():
    seconds = 0.5
    with Sandbox(ownership_transfer_seconds=seconds) as slow:
        dz = sandbox_client(sandbox_environment(slow.endpoint_url), "datazone")
        domain = dz.create_domain(name="transfer-delay", domainExecutionRole=ROLE)
        owners = dz.create_project(domainIdentifier=domain["id"], name="owners")["id"]
        catalog = Catalog(domain["id"], owners, "amazon.datazone.RelationalTableAssetType")
        admin = administration(dz, catalog)
        asset = dz.create_asset(
            domainIdentifier=domain["id"],
            owningProjectIdentifier=owners,
            name="orders",
            typeIdentifier=catalog.asset_type,
            formsInput=[{"formName": "RelationalTableForm", "content": '{"tableName": "o"}'}],
        )
        asked = time.monotonic()
        started = transfer(dz, catalog, asset["id"], admin, clientToken="move-slow")
        assert started["ownershipTransfer"]["status"] == "IN_PROGRESS"
        # The same token while it runs is the same transfer, not a second one.
        replayed = transfer(dz, catalog, asset["id"], admin, clientToken="move-slow")
        assert (replayed["revision"], replayed["ownershipTransfer"]) == (
            started["revision"],
            started["ownershipTransfer"],
        )
        in_progress = get(dz, catalog, asset["id"])
        assert (in_progress["owningProjectId"], in_progress["revision"]) == (owners, "2")
        assert in_progress["ownershipTransfer"]["status"] == "IN_PROGRESS"
        changes = {
            "a revision": lambda: dz.create_asset_revision(
                domainIdentifier=domain["id"],
                identifier=asset["id"],
                name="orders v2",
                formsInput=[{"formName": "RelationalTableForm", "content": '{"tableName": "o"}'}],
            ),
            "a publication": lambda: publish(dz, catalog, asset["id"]),
            "a deletion": lambda: dz.delete_asset(
                domainIdentifier=domain["id"], identifier=asset["id"]
            ),
            "another transfer": lambda: transfer(dz, catalog, asset["id"], admin),
        }
        for change, call in changes.items():
            with pytest.raises(ClientError, match=r"ConflictException.*in progress") as refused:
                call()
            assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 409, change

        while time.monotonic() - asked < seconds * 10:
            status = get(dz, catalog, asset["id"])["ownershipTransfer"]["status"]
            if status != "IN_PROGRESS":
                break
            time.sleep(seconds / 10)
        assert status == "SUCCEEDED"
        assert time.monotonic() - asked >= seconds
        done = get(dz, catalog, asset["id"])
        assert done["owningProjectId"] == admin
        assert done["ownershipTransfer"]["updatedAt"] > done["ownershipTransfer"]["startedAt"]
        # Changes are allowed again once it is done.
        assert publish(dz, catalog, asset["id"])["status"] == "ACTIVE"


def test_a_failed_transfer_leaves_the_asset_with_its_source_project(dz, catalog, sandbox):
    admin = administration(dz, catalog)
    asset = catalog.create_asset(dz, "shop.sales.orders")
    sandbox.control.set_faults(
        FaultRule(
            service="datazone", operation="UpdateAssetOwner", kind="fail-after-accept", count=1
        )
    )
    try:
        answer = transfer(dz, catalog, asset["id"], admin)
    finally:
        sandbox.control.clear_faults()
    assert answer["ownershipTransfer"]["status"] == "FAILED"
    got = get(dz, catalog, asset["id"])
    assert got["owningProjectId"] == catalog.project_id
    assert got["ownershipTransfer"]["status"] == "FAILED"
    # A failed transfer blocks nothing: the asset can be revised and moved again.
    revise(dz, catalog, asset["id"], "orders v3")
    assert transfer(dz, catalog, asset["id"], admin)["ownershipTransfer"]["status"] == "SUCCEEDED"
