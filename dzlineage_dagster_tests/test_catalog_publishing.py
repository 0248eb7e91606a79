"""Publishing to the catalog (issue 17, case 3): every created or revised topic asset is listed
at its latest revision, so other projects' users find it as it is now; a run that stopped
between the revision and the publication is made good by the next; retirement unpublishes.

What other projects see is read with SearchListings (the catalog), never with Search (the
owning project's inventory).
"""

from __future__ import annotations

import json
import sys

import pytest

from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster_tests.clients import sandbox_client
from dzlineage_dagster_tests.crash_platform import headless_sync, seed_small
from dzlineage_dagster_tests.platform import DemoPlatform
from dzlineage_dagster_tests.test_catalog_curation import form_input
from dzlineage_dagster_tests.test_catalog_operators import action_of, rows_of, sync_output
from dzlineage_dagster_tests.test_catalog_sync import latest_metadata, table_topics, topic_assets

# The crash tests' kill helper and their small platform's fixture (the tests' `small_spec`
# argument is that fixture, as pytest intends).
from dzlineage_dagster_tests.test_crash_consistency import _kill_at, small_spec  # noqa: F401

TOPIC = "shop.sales.orders"
SMALL_TOPIC = "shop.inventory.customers"


def catalog_listings(platform_or_environment) -> dict[str, dict]:
    """Asset id -> its listing as SearchListings shows it to a user of any project."""
    datazone, domain_id = _datazone(platform_or_environment)
    found = {}
    token = None
    while True:
        page = datazone.search_listings(
            domainIdentifier=domain_id,
            additionalAttributes=["FORMS"],
            **({"nextToken": token} if token else {}),
        )
        for item in page["items"]:
            listing = item["assetListing"]
            found[listing["entityId"]] = listing
        token = page.get("nextToken")
        if not token:
            return found


def _datazone(platform_or_environment):
    if isinstance(platform_or_environment, dict):
        settings = LineageSettings.from_env(platform_or_environment)
        return sandbox_client(platform_or_environment, "datazone"), settings.domain_id
    return platform_or_environment.client("datazone"), platform_or_environment.settings.domain_id


def published_schema_version(listing: dict) -> int:
    forms = json.loads(listing["additionalAttributes"]["forms"])
    return forms["KafkaSchemaForm"]["schema_version"]


def calls_of(platform, operation: str) -> int:
    return platform.control.call_counts()[("datazone", operation)]


def test_every_created_asset_is_published_and_a_new_schema_version_is_republished(platform):
    assert platform.sync().success
    topics = table_topics(platform)
    asset_ids = {topic: topic_assets(platform)[platform.schema_arn(topic)][0] for topic in topics}
    listed = catalog_listings(platform)
    assert set(listed) == set(asset_ids.values())
    assert {listing["entityRevision"] for listing in listed.values()} == {"1"}
    assert calls_of(platform, "CreateListingChangeSet") == len(topics)
    metadata = latest_metadata(platform, "datazone_topic_asset", TOPIC)
    assert (metadata["catalog"], metadata["published_revision"]) == ("published r1", "1")
    assert (metadata["listing_status"], metadata["listing_revision"]) == ("ACTIVE", "1")

    platform.register_new_version(TOPIC, "note")
    platform.control.clear_calls()
    assert platform.sync([TOPIC]).success
    assert calls_of(platform, "CreateListingChangeSet") == 1
    listing = catalog_listings(platform)[asset_ids[TOPIC]]
    assert listing["entityRevision"] == "2"
    assert published_schema_version(listing) == 2
    asset = platform.client("datazone").get_asset(
        domainIdentifier=platform.settings.domain_id, identifier=asset_ids[TOPIC]
    )
    assert asset["revision"] == "2" and asset["listing"]["listingStatus"] == "ACTIVE"

    platform.control.clear_calls()
    assert platform.sync().success
    assert calls_of(platform, "CreateListingChangeSet") == 0


def test_with_publishing_off_nothing_is_published_until_it_is_turned_on(
    platform, capsys, monkeypatch
):
    monkeypatch.setenv("DZLINEAGE_PUBLISH_TO_CATALOG", "false")
    assert "publish" not in sync_output(capsys, "--dry-run")
    out = sync_output(capsys)
    assert "published" not in out
    assert calls_of(platform, "CreateListingChangeSet") == 0
    assert catalog_listings(platform) == {}

    # Turned on, the dry run says which stored revisions the next sync lists, and it does.
    monkeypatch.setenv("DZLINEAGE_PUBLISH_TO_CATALOG", "true")
    plan = sync_output(capsys, "--dry-run")
    assert rows_of(plan, TOPIC)[0][:2] == [TOPIC, "unchanged"]
    assert rows_of(plan, TOPIC)[0][2].split()[:4] == ["publish", "r1", "v1", "unchanged:"]
    platform.control.clear_calls()
    out = sync_output(capsys)
    assert calls_of(platform, "CreateListingChangeSet") == len(table_topics(platform))
    assert len(catalog_listings(platform)) == len(table_topics(platform))
    assert f"{TOPIC} " in out and "published r1" in out.split(f"\n{TOPIC} ")[1].splitlines()[0]


def test_a_publication_that_failed_is_made_by_the_next_run(platform, capsys):
    assert sync_output(capsys)
    asset_id = topic_assets(platform)[platform.schema_arn(TOPIC)][0]
    platform.register_new_version(TOPIC, "note")
    platform.control.set_faults(
        FaultRule(service="datazone", operation="CreateListingChangeSet", kind="access-denied")
    )
    code, out = headless_sync(platform.environment)
    assert code == 1
    assert (
        f"asset: {TOPIC}: could not publish revision 2 of asset {asset_id} in the catalog: "
        "CreateListingChangeSet failed: AccessDeniedException"
    ) in out
    assert catalog_listings(platform)[asset_id]["entityRevision"] == "1"

    platform.control.clear_faults()
    platform.control.clear_calls()
    code, out = headless_sync(platform.environment)
    assert code == 0, out
    assert calls_of(platform, "CreateAssetRevision") == 0  # revised once, by the failed run
    assert calls_of(platform, "CreateListingChangeSet") == 1
    assert catalog_listings(platform)[asset_id]["entityRevision"] == "2"


@pytest.mark.skipif(sys.platform == "win32", reason="needs fork")
def test_a_sync_killed_between_revision_and_publication_converges_on_the_rerun(
    sandbox,
    small_spec,  # noqa: F811
    monkeypatch,
):
    environment = seed_small(sandbox, small_spec, monkeypatch)
    assert headless_sync(environment)[0] == 0
    [asset_id] = catalog_listings(environment)
    # A platform view without a Dagster instance: only its registry helpers are used.
    DemoPlatform(sandbox, environment, None).register_new_version(SMALL_TOPIC, "note")

    # Killed while DataZone has the revision and the publication is on its way (held, dropped).
    _kill_at(sandbox, environment, FaultRule("datazone", "CreateListingChangeSet", "hold", count=1))
    datazone, domain_id = _datazone(environment)
    assert datazone.get_asset(domainIdentifier=domain_id, identifier=asset_id)["revision"] == "2"
    assert catalog_listings(environment)[asset_id]["entityRevision"] == "1"

    sandbox.control.clear_calls()
    code, out = headless_sync(environment)
    assert code == 0, out
    assert catalog_listings(environment)[asset_id]["entityRevision"] == "2"
    revisions = datazone.list_asset_revisions(domainIdentifier=domain_id, identifier=asset_id)
    assert [item["revision"] for item in revisions["items"]] == ["2", "1"]


@pytest.mark.parametrize(
    ("policy", "action"),
    [("keep", "deprecated and unpublished"), ("delete", "deleted and unpublished")],
)
def test_a_retired_topic_leaves_the_catalog(platform, capsys, monkeypatch, policy, action):
    monkeypatch.setenv("DZLINEAGE_DELETED_SCHEMA_POLICY", policy)
    sync_output(capsys)
    arn = platform.schema_arn(TOPIC)
    [asset_id] = topic_assets(platform)[arn]
    assert asset_id in catalog_listings(platform)
    platform.client("glue").delete_schema(SchemaId={"SchemaArn": arn})

    out = sync_output(capsys)
    assert f"{action}  " in out.split(f"\n{TOPIC} ")[1].splitlines()[0], out
    assert action_of(out, TOPIC) == action.split()[0]
    assert asset_id not in catalog_listings(platform)
    assert len(catalog_listings(platform)) == len(table_topics(platform))
    if policy == "keep":
        asset = platform.client("datazone").get_asset(
            domainIdentifier=platform.settings.domain_id, identifier=asset_id
        )
        assert asset["listing"]["listingStatus"] == "INACTIVE"


def test_an_asset_a_person_revised_since_is_left_for_them_to_publish(
    platform, capsys, monkeypatch, caplog
):
    monkeypatch.setenv("DZLINEAGE_PUBLISH_TO_CATALOG", "false")
    sync_output(capsys)
    asset_id = topic_assets(platform)[platform.schema_arn(TOPIC)][0]
    datazone, domain_id = _datazone(platform)
    made = datazone.get_asset(domainIdentifier=domain_id, identifier=asset_id)
    datazone.create_asset_revision(
        domainIdentifier=domain_id,
        identifier=asset_id,
        name="Orders (curated)",
        typeRevision=made["typeRevision"],
        formsInput=[form_input(form) for form in made["formsOutput"]],
    )

    monkeypatch.setenv("DZLINEAGE_PUBLISH_TO_CATALOG", "true")
    with caplog.at_level("WARNING", logger="dzlineage.sync"):
        sync_output(capsys)
    assert (
        f"{TOPIC}: revision 1 of asset {asset_id} not published: the asset has a later "
        "revision 2 made outside the sync"
    ) in caplog.text
    listed = catalog_listings(platform)
    assert asset_id not in listed
    assert len(listed) == len(table_topics(platform)) - 1
