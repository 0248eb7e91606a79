"""A run that dies after CreateAsset and before PutParameter, and the two ways back from it.

Two mechanisms keep the rerun from duplicating the asset, and each test here passes only through
its own: clientToken replay (same content, same token: DataZone answers the first CreateAsset
again) and adoption (the content changed, so a new token: ConflictException on the schema ARN,
then Search finds the asset and a revision takes it over). The call log tells them apart.
"""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster.sync.catalog.custom_types import ensure_custom_types
from dzlineage_dagster.sync.errors import SyncError
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.stages.asset import AssetWrite, plan_topic_asset, topic_forms_input
from dzlineage_dagster.sync.stages.schema import read_schema
from dzlineage_dagster_tests.stored_mapping import stored_mappings
from dzlineage_dagster_tests.test_catalog_sync import latest_metadata, topic_assets

TOPIC = "shop.sales.orders"
CONFLICT = 409


def crash_after_create_asset(platform) -> str:
    """Sync TOPIC with every PutParameter failing; the id of the asset the run left behind."""
    platform.control.set_faults(
        FaultRule(service="ssm", operation="PutParameter", kind="server-error")
    )
    crashed = platform.sync([TOPIC])
    platform.control.clear_faults()
    assert not crashed.success
    [asset_id] = topic_assets(platform)[platform.schema_arn(TOPIC)]
    assert stored_mappings(platform.settings) == {}
    return asset_id


def datazone_calls(platform) -> list[tuple[str, int]]:
    return [(c.operation, c.status) for c in platform.control.calls() if c.service == "datazone"]


def test_a_rerun_with_the_same_content_gets_its_asset_back_by_client_token_replay(platform):
    asset_id = crash_after_create_asset(platform)
    platform.control.clear_calls()

    assert platform.sync([TOPIC]).success
    calls = datazone_calls(platform)
    assert [c for c in calls if c[0] == "CreateAsset"] == [("CreateAsset", 201)]
    # The crashed run had posted the topic's hops; their reposts reuse the tokens with a new
    # eventTime, which DataZone refuses with 409 (the lineage stage counts that as posted).
    assert not [c for c in calls if c[1] == CONFLICT and c[0] != "PostLineageEvent"], calls
    # One Search: the run's ownership check of its one topic; no adoption searched for it.
    assert [c for c in calls if c[0] == "Search"] == [("Search", 200)]
    assert "CreateAssetRevision" not in {operation for operation, _ in calls}
    metadata = latest_metadata(platform, "datazone_topic_asset", TOPIC)
    assert (metadata["action"], metadata["datazone_asset_id"]) == ("replayed", asset_id)
    assert topic_assets(platform)[platform.schema_arn(TOPIC)] == [asset_id]
    # Every hop's token was refused as already used: the edge says it was there already.
    assert "already posted: " in latest_metadata(platform, "topic_lineage", TOPIC)["edge"]


def test_a_rerun_with_new_content_adopts_the_asset_after_a_conflict(platform):
    asset_id = crash_after_create_asset(platform)
    # A new schema version before the rerun: new content, so a new client token, no replay.
    platform.register_new_version(TOPIC, "added_before_the_rerun")
    platform.control.clear_calls()

    assert platform.sync([TOPIC]).success
    calls = datazone_calls(platform)
    assert [c for c in calls if c[0] == "CreateAsset"] == [("CreateAsset", CONFLICT)]
    # The run's ownership check of its one topic, then the adoption's.
    assert [c for c in calls if c[0] == "Search"] == [("Search", 200)] * 2
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
    # The revision starts from the asset's latest revision: reading it finds the asset gone.
    assert [c for c in calls if c[0] in ("GetAsset", "CreateAssetRevision", "CreateAsset")] == [
        ("GetAsset", 404),
        ("CreateAsset", 201),
    ]
    [recreated] = topic_assets(platform)[platform.schema_arn(TOPIC)]
    assert recreated != deleted
    metadata = latest_metadata(platform, "datazone_topic_asset", TOPIC)
    assert (metadata["action"], metadata["datazone_asset_id"]) == ("created", recreated)


def test_an_answer_replayed_for_another_write_is_not_trusted(platform):
    """DataZone publishes no rule for a reused clientToken with other parameters; AWS's generic
    one is a 409, but a service that compares only the token would replay the first answer. A
    write then checks the answer against its request and refuses one made for another write."""
    run = SyncRun(LineageSyncResource.with_settings(platform.settings))
    ensure_custom_types(run)
    first_version = read_schema(run, TOPIC)
    plan = plan_topic_asset(run, first_version, run.asset_type_revision)
    platform.register_new_version(TOPIC, "added_later")
    second_version_forms = topic_forms_input(run, read_schema(SyncRun(run.resource), TOPIC))

    def write(name: str, forms: list[dict[str, str]]) -> AssetWrite:
        # One content key for every write: the client tokens of all of them collide.
        return AssetWrite(
            run, first_version, name=name, forms=forms, type_revision=run.asset_type_revision,
            content_key=plan.desired.content_fingerprint,
        )  # fmt: skip

    created, action = write("orders", plan.forms).create()
    assert action == "created"
    # The default, AWS's generic answer: a 409.
    with pytest.raises(ClientError, match=r"\(ConflictException\)"):
        write("orders-renamed", plan.forms).create()

    platform.control.set_client_tokens(other_parameters="replay")
    with pytest.raises(SyncError) as raised:
        write("orders-renamed", second_version_forms).create()
    assert str(raised.value) == (
        f"CreateAsset for {TOPIC} answered with asset {created['id']} whose name, forms differ "
        "from the request: its client token replayed another write; the answer is not trusted"
    )
    _, action = write("orders", second_version_forms).revise(
        created["id"], str(created["revision"])
    )
    assert action == "revised"
    with pytest.raises(SyncError) as raised:
        write("orders", plan.forms).revise(created["id"], str(created["revision"]))
    assert str(raised.value) == (
        f"CreateAssetRevision for {TOPIC} answered with asset {created['id']} whose forms differ "
        "from the request: its client token replayed another write; the answer is not trusted"
    )
    assert topic_assets(platform)[platform.schema_arn(TOPIC)] == [created["id"]]
