"""A run that dies after CreateAsset and before PutParameter, and the two ways back from it.

Two mechanisms keep the rerun from duplicating the asset, and each test here passes only through
its own: clientToken replay (same content, same token: DataZone answers the first CreateAsset
again) and adoption (the content changed, so a new token: ConflictException on the schema ARN,
then Search finds the asset and a revision takes it over). The call log tells them apart.
"""

from __future__ import annotations

import pytest

from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster_tests.platform import fresh_platform
from dzlineage_dagster_tests.test_catalog_sync import latest_metadata, topic_assets

TOPIC = "shop.sales.orders"
CONFLICT = 409


@pytest.fixture
def platform(sandbox, monkeypatch):
    platform = fresh_platform(sandbox, monkeypatch)
    yield platform
    sandbox.control.clear_faults()


def crash_after_create_asset(platform) -> str:
    """Sync TOPIC with every PutParameter failing; the id of the asset the run left behind."""
    platform.control.set_faults(
        FaultRule(service="ssm", operation="PutParameter", kind="server-error")
    )
    crashed = platform.sync([TOPIC])
    platform.control.clear_faults()
    assert not crashed.success
    [asset_id] = topic_assets(platform)[platform.schema_arn(TOPIC)]
    assert (
        platform.client("ssm").get_parameters_by_path(
            Path=platform.settings.ssm_prefix, Recursive=True
        )["Parameters"]
        == []
    )
    return asset_id


def datazone_calls(platform) -> list[tuple[str, int]]:
    return [(c.operation, c.status) for c in platform.control.calls() if c.service == "datazone"]


def test_a_rerun_with_the_same_content_gets_its_asset_back_by_client_token_replay(platform):
    asset_id = crash_after_create_asset(platform)
    platform.control.clear_calls()

    assert platform.sync([TOPIC]).success
    calls = datazone_calls(platform)
    assert [c for c in calls if c[0] == "CreateAsset"] == [("CreateAsset", 201)]
    assert not [c for c in calls if c[1] == CONFLICT], calls
    assert "Search" not in {operation for operation, _ in calls}
    assert "CreateAssetRevision" not in {operation for operation, _ in calls}
    metadata = latest_metadata(platform, "datazone_topic_asset", TOPIC)
    assert (metadata["action"], metadata["datazone_asset_id"]) == ("created", asset_id)
    assert topic_assets(platform)[platform.schema_arn(TOPIC)] == [asset_id]


def test_a_rerun_with_new_content_adopts_the_asset_after_a_conflict(platform):
    asset_id = crash_after_create_asset(platform)
    # A new schema version before the rerun: new content, so a new client token, no replay.
    platform.register_new_version(TOPIC, "added_before_the_rerun")
    platform.control.clear_calls()

    assert platform.sync([TOPIC]).success
    calls = datazone_calls(platform)
    assert [c for c in calls if c[0] == "CreateAsset"] == [("CreateAsset", CONFLICT)]
    assert ("Search", 200) in calls
    assert [c for c in calls if c[0] == "CreateAssetRevision"] == [("CreateAssetRevision", 200)]
    metadata = latest_metadata(platform, "datazone_topic_asset", TOPIC)
    assert (metadata["action"], metadata["datazone_asset_id"]) == ("adopted", asset_id)
    assert topic_assets(platform)[platform.schema_arn(TOPIC)] == [asset_id]
    revised = platform.client("datazone").get_asset(
        domainIdentifier=platform.settings.domain_id, identifier=asset_id
    )
    assert revised["revision"] == "2"


def test_an_asset_deleted_in_datazone_is_recreated_when_its_schema_changes(platform):
    assert platform.sync([TOPIC]).success
    [deleted] = topic_assets(platform)[platform.schema_arn(TOPIC)]
    platform.client("datazone").delete_asset(
        domainIdentifier=platform.settings.domain_id, identifier=deleted
    )
    platform.register_new_version(TOPIC, "added_after_the_delete")
    platform.control.clear_calls()

    assert platform.sync([TOPIC]).success
    calls = datazone_calls(platform)
    assert [c for c in calls if c[0] in ("CreateAssetRevision", "CreateAsset")] == [
        ("CreateAssetRevision", 404),
        ("CreateAsset", 201),
    ]
    [recreated] = topic_assets(platform)[platform.schema_arn(TOPIC)]
    assert recreated != deleted
    metadata = latest_metadata(platform, "datazone_topic_asset", TOPIC)
    assert (metadata["action"], metadata["datazone_asset_id"]) == ("created", recreated)
