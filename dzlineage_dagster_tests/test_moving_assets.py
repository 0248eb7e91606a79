"""Moving the demo's assets to another project the way the README says (issue 17, case 7):
refused with the steps named, moved with UpdateAssetOwner through the domain's administration
project, then adopted by the sync of the new project; and a second domain's settings never use
the first domain's mappings. On the seeded sandbox, through `dzlineage sync`."""

from __future__ import annotations

import time
from dataclasses import replace

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.sandbox.server.app import SANDBOX_ACCOUNT_ID, Sandbox
from dzlineage_dagster.sandbox.server.control import SandboxControl, sandbox_environment
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster_tests.clients import sandbox_client
from dzlineage_dagster_tests.platform import writes
from dzlineage_dagster_tests.stored_mapping import stored_mappings
from dzlineage_dagster_tests.test_catalog_operators import rows_of, sync_output
from dzlineage_dagster_tests.test_catalog_sync import latest_metadata, table_topics, topic_assets


def administration_project(platform) -> dict:
    [project] = platform.client("datazone").list_projects(
        domainIdentifier=platform.settings.domain_id, projectCategory="ADMIN"
    )["items"]
    return project


def move_asset(platform, asset_id: str, target: str) -> None:
    """UpdateAssetOwner, then GetAsset until the transfer is done, as the README says."""
    datazone = platform.client("datazone")
    domain = platform.settings.domain_id
    datazone.update_asset_owner(
        domainIdentifier=domain, identifier=asset_id, targetProjectIdentifier=target
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        transfer = datazone.get_asset(domainIdentifier=domain, identifier=asset_id)[
            "ownershipTransfer"
        ]
        if transfer["status"] != "IN_PROGRESS":
            break
        time.sleep(0.05)
    assert transfer["status"] == "SUCCEEDED", transfer


def of_project(platform, project_id: str):
    """The platform as the settings naming ``project_id`` see it."""
    return replace(
        platform, environment={**platform.environment, "DZLINEAGE_PROJECT_ID": project_id}
    )


def trace(capsys, dataset: str) -> str:
    """The lineage graph downstream of ``dataset`` (not its owners: the move changes those)."""
    assert dzlineage(["trace", dataset, "--downstream", "--no-owners"]) == 0
    return capsys.readouterr().out


def test_assets_moved_through_the_administration_project_are_adopted_by_the_new_project(
    platform, monkeypatch, capsys
):
    sync_output(capsys)
    settings = platform.settings
    datazone = platform.client("datazone")
    new = datazone.create_project(domainIdentifier=settings.domain_id, name="analytics")["id"]
    before = {topic: trace(capsys, topic) for topic in table_topics(platform)}
    assets = topic_assets(platform)
    monkeypatch.setenv("DZLINEAGE_PROJECT_ID", new)

    # Pointed at the new project before the move: refused, naming the owner and the two moves.
    assert dzlineage(["sync"]) == 1
    [refusal] = capsys.readouterr().err.splitlines()
    admin = administration_project(platform)
    assert (
        f"to move them to project {new}, transfer each asset with UpdateAssetOwner (aws "
        f"datazone update-asset-owner) to the domain's administration project "
        f"'domain-administration' ({admin['id']}), then from it to project {new}"
    ) in refusal, refusal

    for [asset_id] in assets.values():
        move_asset(platform, asset_id, admin["id"])
        move_asset(platform, asset_id, new)
    platform.control.clear_calls()
    out = sync_output(capsys)

    for topic in table_topics(platform):
        [[_, action, rest]] = rows_of(out, topic)
        assert action == "adopted", out
        # The transfers' revisions are the latest: the sync publishes the second one.
        assert rest.startswith("published r3"), out
        assert "  already posted: " in rest and rest.endswith("(connector)"), out
    assert "0 failed" in out, out
    # No duplicate: the same assets, now the new project's, each under its schema ARN once.
    assert topic_assets(of_project(platform, new)) == assets
    assert topic_assets(platform) == {}
    counts = platform.control.call_counts()
    # Each CreateAsset refused (409: the externalIdentifier is taken), so adopted; no revision
    # (the transfers' revision holds the content); the lineage events replayed by their tokens.
    assert writes(counts, "datazone") == {
        "datazone.CreateAsset": len(assets),
        "datazone.CreateListingChangeSet": len(assets),
        "datazone.PostLineageEvent": counts[("datazone", "PostLineageEvent")],
    }
    assert {c.status for c in platform.control.calls() if c.operation == "CreateAsset"} == {409}
    # The new project's mappings are written, one per asset, under its own path.
    mappings = stored_mappings(settings, project_id=new)
    assert {record.asset_id for record in mappings.values()} == {
        asset_id for [asset_id] in assets.values()
    }
    # Listed at the latest revision, owned by the new project, as any user sees the catalog.
    listings = [
        item["assetListing"]
        for item in datazone.search_listings(domainIdentifier=settings.domain_id)["items"]
    ]
    assert {
        (item["entityId"], item["entityRevision"], item["owningProjectId"]) for item in listings
    } == {(asset_id, "3", new) for [asset_id] in assets.values()}
    # The lineage is the same graph as before the move.
    assert {topic: trace(capsys, topic) for topic in table_topics(platform)} == before
    # And the next run has nothing to do.
    assert "nothing to do" in sync_output(capsys)


def test_the_refusal_names_one_move_when_the_assets_belong_to_the_administration_project(
    platform, monkeypatch, capsys
):
    sync_output(capsys)
    admin = administration_project(platform)
    settings = platform.settings
    for [asset_id] in topic_assets(platform).values():
        move_asset(platform, asset_id, admin["id"])
    new = platform.client("datazone").create_project(
        domainIdentifier=settings.domain_id, name="analytics"
    )["id"]
    monkeypatch.setenv("DZLINEAGE_PROJECT_ID", new)

    assert dzlineage(["sync", "--dry-run"]) == 1
    [refusal] = capsys.readouterr().err.splitlines()

    assert f"belong to project 'domain-administration' ({admin['id']})" in refusal, refusal
    assert (
        f"to move them to project {new}, transfer each asset with UpdateAssetOwner (aws "
        f"datazone update-asset-owner) from the domain's administration project to project {new}"
    ) in refusal, refusal


def test_settings_naming_another_domain_use_none_of_the_first_domains_mappings(
    platform, monkeypatch, capsys
):
    sync_output(capsys)
    settings = platform.settings
    datazone = platform.client("datazone")
    first_mappings = stored_mappings(settings)
    first_assets = topic_assets(platform)
    domain = datazone.create_domain(
        name="shop-data-eu",
        domainExecutionRole=datazone.get_domain(identifier=settings.domain_id)[
            "domainExecutionRole"
        ],
    )["id"]
    project = datazone.create_project(domainIdentifier=domain, name="cdc-lineage")["id"]
    second = replace(
        platform,
        environment={
            **platform.environment,
            "DZLINEAGE_DOMAIN_ID": domain,
            "DZLINEAGE_PROJECT_ID": project,
        },
    )
    monkeypatch.setenv("DZLINEAGE_DOMAIN_ID", domain)
    monkeypatch.setenv("DZLINEAGE_PROJECT_ID", project)
    platform.control.clear_calls()

    out = sync_output(capsys)

    # Same registry, same schema ARNs: a new asset of each in the second domain, none adopted
    # or revised from the first domain's mappings.
    for topic in table_topics(platform):
        [[_, action, _]] = rows_of(out, topic)
        assert action == "created", out
    second_assets = topic_assets(second)
    assert set(second_assets) == set(first_assets)
    assert not {a for [a] in second_assets.values()} & {a for [a] in first_assets.values()}
    calls = platform.control.calls()
    assert {c.status for c in calls if c.operation == "CreateAsset"} == {201}
    assert not [c for c in calls if c.operation in ("CreateAssetRevision", "GetAsset")]
    # The second domain's mappings live under its own path; the first domain's are untouched.
    second = stored_mappings(settings, domain_id=domain, project_id=project)
    assert {r.asset_id for r in second.values()} == {a for [a] in second_assets.values()}
    assert stored_mappings(settings) == first_mappings
    assert topic_assets(platform) == first_assets


def test_move_assets_moves_the_registrys_assets_and_is_safe_to_run_again(
    platform, monkeypatch, capsys
):
    sync_output(capsys)
    settings = platform.settings
    admin = administration_project(platform)
    new = platform.client("datazone").create_project(
        domainIdentifier=settings.domain_id, name="analytics"
    )["id"]
    assets = topic_assets(platform)
    # A move interrupted between its two transfers left one asset with the administration
    # project.
    [[parked]] = list(assets.values())[:1]
    move_asset(platform, parked, admin["id"])
    platform.control.clear_calls()

    assert dzlineage(["move-assets", "--to-project", new]) == 0
    moved = capsys.readouterr()

    assert topic_assets(of_project(platform, new)) == assets
    assert moved.out.splitlines() == [
        f"{len(assets)} assets moved to project {new} ({2 * len(assets) - 1} UpdateAssetOwner calls), "
        "0 not moved",
        f"next: set DZLINEAGE_PROJECT_ID={new} and run `dzlineage sync` (it adopts the moved "
        f"assets); then delete project {settings.project_id}'s mappings under "
        f"{settings.ssm_prefix}/{settings.domain_id}/{settings.project_id}/",
    ]
    progress = moved.err.splitlines()
    assert progress[0] == (
        f"dzlineage move-assets: {len(assets)} assets of registry shop-cdc to move to project "
        f"{new} through the administration project 'domain-administration' ({admin['id']})"
    )
    assert f"dzlineage move-assets: transfers to project {new} done: {len(assets)}/" in (moved.err)
    counts = platform.control.call_counts()
    # The parked asset takes only its second transfer; every transfer is followed by GetAsset.
    assert counts[("datazone", "UpdateAssetOwner")] == 2 * len(assets) - 1
    assert counts[("datazone", "GetAsset")] == 2 * len(assets) - 1
    assert writes(counts, "datazone", "ssm") == {"datazone.UpdateAssetOwner": 2 * len(assets) - 1}

    # Run again: nothing left to move, nothing written.
    platform.control.clear_calls()
    assert dzlineage(["move-assets", "--to-project", new]) == 0
    again = capsys.readouterr()
    assert again.out.startswith(
        f"0 assets moved to project {new} (0 UpdateAssetOwner calls), 0 not moved"
    )
    assert writes(platform.control.call_counts(), "datazone", "ssm") == {}

    # The new project's sync adopts them.
    monkeypatch.setenv("DZLINEAGE_PROJECT_ID", new)
    out = sync_output(capsys)
    assert {rows_of(out, t)[0][1] for t in table_topics(platform)} == {"adopted"}
    assert "0 failed" in out


def test_move_assets_says_why_it_cannot_start(platform, capsys):
    sync_output(capsys)
    settings = platform.settings

    assert dzlineage(["move-assets", "--to-project", settings.project_id]) == 2
    assert "already its own: nothing to move" in capsys.readouterr().err
    assert dzlineage(["move-assets", "--to-project", "nosuchproject"]) == 2
    assert "project nosuchproject: " in capsys.readouterr().err


def test_a_failed_transfer_is_named_and_the_next_run_moves_what_is_left(platform, sandbox, capsys):
    sync_output(capsys)
    settings = platform.settings
    new = platform.client("datazone").create_project(
        domainIdentifier=settings.domain_id, name="analytics"
    )["id"]
    assets = topic_assets(platform)
    sandbox.control.set_faults(
        FaultRule(
            service="datazone", operation="UpdateAssetOwner", kind="fail-after-accept", count=1
        )
    )

    assert dzlineage(["move-assets", "--to-project", new]) == 1
    failed = capsys.readouterr().out.splitlines()

    [first_arn] = [arn for arn in assets if failed[0].startswith(arn)]
    assert (
        failed[0]
        == f"{first_arn}  not moved: transfer to project {administration_project(platform)['id']}: FAILED"
    )
    assert (
        failed[1]
        == f"{len(assets) - 1} assets moved to project {new} ({2 * len(assets) - 1} UpdateAssetOwner calls), 1 not moved"
    )
    # The failed transfer was rolled back: the source still owns that asset.
    assert topic_assets(platform) == {first_arn: assets[first_arn]}

    sandbox.control.clear_faults()
    assert dzlineage(["move-assets", "--to-project", new]) == 0
    # The first call is answered with the failed transfer again (its client token is known),
    # so it is retried under a new token; then the second transfer.
    assert capsys.readouterr().out.startswith(
        f"1 assets moved to project {new} (3 UpdateAssetOwner calls), 0 not moved"
    )
    assert topic_assets(of_project(platform, new)) == assets


def test_move_assets_waits_for_transfers_that_take_time(platform, monkeypatch, capsys):
    # moto's state (the registry, the cluster) is one per process, so a second sandbox serves
    # the same platform; only its DataZone, where transfers take time, is its own.
    with Sandbox(ownership_transfer_seconds=1.0) as slow:
        environment = sandbox_environment(slow.endpoint_url)
        datazone = sandbox_client(environment, "datazone")
        domain = datazone.create_domain(
            name="shop-data", domainExecutionRole=f"arn:aws:iam::{SANDBOX_ACCOUNT_ID}:role/x"
        )["id"]
        owner, new = (
            datazone.create_project(domainIdentifier=domain, name=name)["id"]
            for name in ("cdc-lineage", "analytics")
        )
        datazone.create_project(
            domainIdentifier=domain, name="domain-administration", projectCategory="ADMIN"
        )
        environment.update(DZLINEAGE_DOMAIN_ID=domain, DZLINEAGE_PROJECT_ID=owner)
        for name, value in environment.items():
            monkeypatch.setenv(name, value)
        sync_output(capsys)
        control = SandboxControl(slow.endpoint_url)
        control.clear_calls()

        assert dzlineage(["move-assets", "--to-project", new]) == 0

        out = capsys.readouterr().out
        assert out.startswith(
            f"7 assets moved to project {new} (14 UpdateAssetOwner calls), 0 not moved"
        ), out
        # The first transfers were still IN_PROGRESS when first read: read again until done.
        assert control.call_counts()[("datazone", "GetAsset")] > 14
        owners = {
            item["assetItem"]["owningProjectId"]
            for item in datazone.search(domainIdentifier=domain, searchScope="ASSET")["items"]
            if item["assetItem"]["typeIdentifier"] == "KafkaTopicAssetType"
        }
        assert owners == {new}


def test_the_catalog_sync_job_of_the_new_project_adopts_the_moved_assets(
    platform, monkeypatch, capsys
):
    assert platform.sync().success
    new = platform.client("datazone").create_project(
        domainIdentifier=platform.settings.domain_id, name="analytics"
    )["id"]
    assets = topic_assets(platform)
    assert dzlineage(["move-assets", "--to-project", new]) == 0
    capsys.readouterr()
    monkeypatch.setenv("DZLINEAGE_PROJECT_ID", new)

    result = platform.sync()

    assert result.success, result.get_step_failure_events()
    for topic in table_topics(platform):
        metadata = latest_metadata(platform, "datazone_topic_asset", topic)
        assert metadata["action"] == "adopted"
        assert [metadata["datazone_asset_id"]] == assets[platform.schema_arn(topic)]
    assert topic_assets(of_project(platform, new)) == assets


def test_the_refusal_says_when_no_administration_project_is_found_or_the_target_is_it(
    platform, monkeypatch, capsys
):
    datazone = platform.client("datazone")
    role = datazone.get_domain(identifier=platform.settings.domain_id)["domainExecutionRole"]
    domain = datazone.create_domain(name="no-administration", domainExecutionRole=role)["id"]
    owner, other = (
        datazone.create_project(domainIdentifier=domain, name=name)["id"]
        for name in ("cdc-lineage", "analytics")
    )
    monkeypatch.setenv("DZLINEAGE_DOMAIN_ID", domain)
    monkeypatch.setenv("DZLINEAGE_PROJECT_ID", owner)
    sync_output(capsys)
    monkeypatch.setenv("DZLINEAGE_PROJECT_ID", other)

    assert dzlineage(["sync", "--dry-run"]) == 1
    [refusal] = capsys.readouterr().err.splitlines()
    assert (
        f"to the domain's administration project, then from it to project {other} (no "
        "administration project was found: DataZone moves an asset only from or to it)"
    ) in refusal, refusal

    admin = datazone.create_project(
        domainIdentifier=domain, name="administration", projectCategory="ADMIN"
    )["id"]
    monkeypatch.setenv("DZLINEAGE_PROJECT_ID", admin)
    assert dzlineage(["sync", "--dry-run"]) == 1
    [refusal] = capsys.readouterr().err.splitlines()
    assert (
        f"to move them to project {admin}, transfer each asset with UpdateAssetOwner (aws "
        "datazone update-asset-owner) to it (the domain's administration project), then sync"
    ) in refusal, refusal
