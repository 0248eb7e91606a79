"""The DataZone emulator's catalog listings (CreateListingChangeSet, GetListing, SearchListings,
GetAsset's ``listing``), driven by real boto3 clients over HTTP."""

# The emulator tests' `dz` and `catalog` fixtures are imported, so the tests' arguments of the
# same names redefine them as pytest intends.
# ruff: noqa: F811

from __future__ import annotations

import json
import time

import pytest
from botocore.exceptions import ClientError

from dzlineage_dagster.sandbox.server.app import Sandbox
from dzlineage_dagster.sandbox.server.control import sandbox_environment
from dzlineage_dagster_tests.clients import sandbox_client
from dzlineage_dagster_tests.sandbox.test_datazone_emulator import (  # noqa: F401 (fixtures)
    ROLE,
    Catalog,
    catalog,
    dz,
)


def publish(dz, catalog: Catalog, asset_id: str, revision: str | None = None, **params):
    call = {"domainIdentifier": catalog.domain_id, "entityIdentifier": asset_id}
    if revision is not None:
        call["entityRevision"] = revision
    return dz.create_listing_change_set(**call, entityType="ASSET", action="PUBLISH", **params)


def revise(dz, catalog: Catalog, asset_id: str, name: str) -> dict:
    return dz.create_asset_revision(
        domainIdentifier=catalog.domain_id,
        identifier=asset_id,
        name=name,
        formsInput=catalog.topic_forms(name),
    )


def listed(dz, catalog: Catalog, **params) -> list[dict]:
    """What SearchListings shows (as a user of any project sees the catalog)."""
    items = dz.search_listings(domainIdentifier=catalog.domain_id, **params)["items"]
    return [item["assetListing"] for item in items]


def test_an_asset_is_not_in_the_catalog_until_it_is_published(dz, catalog):
    asset = catalog.create_asset(dz, "shop.sales.orders")
    assert listed(dz, catalog) == []
    assert "listing" not in dz.get_asset(domainIdentifier=catalog.domain_id, identifier=asset["id"])

    answer = publish(dz, catalog, asset["id"], asset["revision"], clientToken="p-1")
    assert answer["status"] == "ACTIVE" and answer["listingRevision"] == "1"
    got = dz.get_asset(domainIdentifier=catalog.domain_id, identifier=asset["id"])
    assert got["listing"] == {"listingId": answer["listingId"], "listingStatus": "ACTIVE"}
    [item] = listed(dz, catalog, additionalAttributes=["FORMS"])
    assert (item["listingId"], item["entityId"], item["entityRevision"]) == (
        answer["listingId"],
        asset["id"],
        "1",
    )
    assert item["name"] == "shop.sales.orders"
    assert json.loads(item["additionalAttributes"]["forms"]) == {
        "TopicForm": {"topic": "shop.sales.orders"}
    }


def test_only_the_latest_revision_can_be_published(dz, catalog):
    asset = catalog.create_asset(dz, "shop.sales.orders")
    revise(dz, catalog, asset["id"], "shop.sales.orders v2")
    with pytest.raises(ClientError, match=r"ValidationException.*only the latest revision \(2\)"):
        publish(dz, catalog, asset["id"], "1")
    assert listed(dz, catalog) == []
    # No entityRevision: the latest is published.
    assert publish(dz, catalog, asset["id"])["status"] == "ACTIVE"
    assert [item["entityRevision"] for item in listed(dz, catalog)] == ["2"]


def test_the_catalog_shows_the_published_revision_not_a_later_unpublished_one(dz, catalog):
    asset = catalog.create_asset(dz, "orders")
    first = publish(dz, catalog, asset["id"], "1")
    revise(dz, catalog, asset["id"], "orders (curated)")

    [item] = listed(dz, catalog, additionalAttributes=["FORMS"])
    assert (item["name"], item["entityRevision"]) == ("orders", "1")
    assert json.loads(item["additionalAttributes"]["forms"])["TopicForm"]["topic"] == "orders"
    assert listed(dz, catalog, searchText="curated") == []

    second = publish(dz, catalog, asset["id"], "2")
    assert (second["listingId"], second["listingRevision"]) == (first["listingId"], "2")
    [item] = listed(dz, catalog, searchText="curated")
    assert (item["name"], item["entityRevision"], item["listingRevision"]) == (
        "orders (curated)",
        "2",
        "2",
    )
    listing = dz.get_listing(domainIdentifier=catalog.domain_id, identifier=first["listingId"])
    assert listing["listingRevision"] == "2" and listing["name"] == "orders (curated)"
    assert listing["item"]["assetListing"]["assetRevision"] == "2"
    older = dz.get_listing(
        domainIdentifier=catalog.domain_id, identifier=first["listingId"], listingRevision="1"
    )
    assert older["name"] == "orders" and older["item"]["assetListing"]["assetRevision"] == "1"
    assert json.loads(older["item"]["assetListing"]["forms"]) == {"TopicForm": {"topic": "orders"}}


def test_republishing_the_listed_revision_changes_nothing(dz, catalog):
    asset = catalog.create_asset(dz, "orders")
    first = publish(dz, catalog, asset["id"], "1")
    again = publish(dz, catalog, asset["id"], "1")
    assert again == {**first, "ResponseMetadata": again["ResponseMetadata"]}


def test_unpublishing_takes_the_asset_out_of_the_catalog_and_publishing_brings_it_back(dz, catalog):
    asset = catalog.create_asset(dz, "orders")
    first = publish(dz, catalog, asset["id"], "1")
    gone = dz.create_listing_change_set(
        domainIdentifier=catalog.domain_id,
        entityIdentifier=asset["id"],
        entityType="ASSET",
        action="UNPUBLISH",
    )
    assert gone["status"] == "INACTIVE"
    assert listed(dz, catalog) == []
    got = dz.get_asset(domainIdentifier=catalog.domain_id, identifier=asset["id"])
    assert got["listing"]["listingStatus"] == "INACTIVE"
    with pytest.raises(ClientError, match=r"ResourceNotFoundException.*no published listing"):
        dz.create_listing_change_set(
            domainIdentifier=catalog.domain_id,
            entityIdentifier=asset["id"],
            entityType="ASSET",
            action="UNPUBLISH",
        )

    back = publish(dz, catalog, asset["id"], "1")
    assert (back["listingId"], back["listingRevision"], back["status"]) == (
        first["listingId"],
        "2",
        "ACTIVE",
    )
    assert [item["entityId"] for item in listed(dz, catalog)] == [asset["id"]]


def test_a_deleted_asset_leaves_the_catalog(dz, catalog):
    asset = catalog.create_asset(dz, "orders")
    listing_id = publish(dz, catalog, asset["id"], "1")["listingId"]
    dz.delete_asset(domainIdentifier=catalog.domain_id, identifier=asset["id"])
    assert listed(dz, catalog) == []
    listing = dz.get_listing(domainIdentifier=catalog.domain_id, identifier=listing_id)
    assert listing["status"] == "INACTIVE"


def test_listings_of_unknown_assets_and_listings_are_not_found(dz, catalog):
    with pytest.raises(ClientError, match="ResourceNotFoundException"):
        publish(dz, catalog, "nosuchasset")
    with pytest.raises(ClientError, match="ResourceNotFoundException"):
        dz.get_listing(domainIdentifier=catalog.domain_id, identifier="nosuchlisting")
    asset = catalog.create_asset(dz, "orders")
    listing_id = publish(dz, catalog, asset["id"])["listingId"]
    with pytest.raises(ClientError, match=r"ResourceNotFoundException.*Revision 9"):
        dz.get_listing(
            domainIdentifier=catalog.domain_id, identifier=listing_id, listingRevision="9"
        )


def test_search_listings_filters_and_pages_like_search(dz, catalog):
    ids = []
    for name in ("orders", "payments", "customers"):
        asset = catalog.create_asset(dz, name)
        publish(dz, catalog, asset["id"])
        ids.append(asset["id"])
    catalog.create_asset(dz, "unpublished orders")

    assert [i["name"] for i in listed(dz, catalog, searchText="orders")] == ["orders"]
    first = dz.search_listings(domainIdentifier=catalog.domain_id, maxResults=2)
    assert len(first["items"]) == 2 and first["totalMatchCount"] == 3
    rest = dz.search_listings(
        domainIdentifier=catalog.domain_id, maxResults=2, nextToken=first["nextToken"]
    )
    seen = [i["assetListing"]["entityId"] for i in first["items"] + rest["items"]]
    assert sorted(seen) == sorted(ids)


def test_publishing_takes_time_when_the_sandbox_is_told_so():
    processing = 0.5
    with Sandbox(listing_processing_seconds=processing) as slow:
        dz = sandbox_client(sandbox_environment(slow.endpoint_url), "datazone")
        domain = dz.create_domain(name="listing-delay", domainExecutionRole=ROLE)
        project = dz.create_project(domainIdentifier=domain["id"], name="owners")
        asset = dz.create_asset(
            domainIdentifier=domain["id"],
            owningProjectIdentifier=project["id"],
            name="orders",
            typeIdentifier="amazon.datazone.RelationalTableAssetType",
            formsInput=[{"formName": "RelationalTableForm", "content": '{"tableName": "o"}'}],
        )
        asked = time.monotonic()
        answer = dz.create_listing_change_set(
            domainIdentifier=domain["id"],
            entityIdentifier=asset["id"],
            entityType="ASSET",
            action="PUBLISH",
        )
        assert answer["status"] == "CREATING"
        assert dz.search_listings(domainIdentifier=domain["id"])["items"] == []
        while time.monotonic() - asked < processing * 10:
            status = dz.get_asset(domainIdentifier=domain["id"], identifier=asset["id"])
            if status["listing"]["listingStatus"] == "ACTIVE":
                break
            time.sleep(processing / 10)
        assert status["listing"]["listingStatus"] == "ACTIVE"
        assert time.monotonic() - asked >= processing
        assert len(dz.search_listings(domainIdentifier=domain["id"])["items"]) == 1
