"""Beyond the first sync: deleted schemas, lost mappings, checks, and the headless CLI."""

from __future__ import annotations

import json
import re

import pytest

from dzlineage_dagster.checks import (
    lineage_tables_exist_in_glue,
    no_two_assets_share_a_schema,
    ssm_mappings_point_at_existing_assets,
)
from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.definitions import defs
from dzlineage_dagster.jobs import RETIRE_TOPICS_JOB
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster_tests.platform import writes
from dzlineage_dagster_tests.stored_mapping import drop_mapping, stored_mappings
from dzlineage_dagster_tests.test_catalog_operators import kafka_form
from dzlineage_dagster_tests.test_catalog_sync import (
    latest_metadata,
    table_topics,
    topic_assets,
)

GONE = "shop.sales.payments"


def test_a_deleted_schema_loses_its_partition_and_its_asset_is_kept_as_deprecated(platform):
    first = platform.tick()
    assert platform.sync().success
    arn = platform.schema_arn(GONE)
    asset_id = topic_assets(platform)[arn][0]
    datazone = platform.client("datazone")
    domain = {"domainIdentifier": platform.settings.domain_id}
    described = datazone.get_asset(**domain, identifier=asset_id)["description"]
    platform.client("glue").delete_schema(SchemaId={"SchemaArn": arn})

    second = platform.tick(cursor=first.cursor)
    assert GONE not in platform.instance.get_dynamic_partitions("kafka_topics")
    [retire] = [r for r in second.run_requests if r.job_name == RETIRE_TOPICS_JOB.name]
    assert retire.run_config["ops"]["retire_topic_assets"]["config"]["topics"] == [GONE]

    result = defs.resolve_job_def(RETIRE_TOPICS_JOB.name).execute_in_process(
        run_config=retire.run_config, instance=platform.instance
    )
    assert result.success
    asset = datazone.get_asset(**domain, identifier=asset_id)
    assert asset["description"] == (
        f"DEPRECATED: schema {arn} was deleted from the registry. {described}"
    )
    assert arn not in stored_mappings(platform.settings)


def test_a_retire_run_retires_only_the_topics_it_names(platform):
    assert platform.sync().success
    other = "shop.inventory.customers"
    before = topic_assets(platform)
    arns = {topic: platform.schema_arn(topic) for topic in (GONE, other)}
    for arn in arns.values():
        platform.client("glue").delete_schema(SchemaId={"SchemaArn": arn})

    result = defs.resolve_job_def(RETIRE_TOPICS_JOB.name).execute_in_process(
        run_config={"ops": {"retire_topic_assets": {"config": {"topics": [GONE]}}}},
        instance=platform.instance,
    )
    assert result.success
    datazone = platform.client("datazone")
    domain = {"domainIdentifier": platform.settings.domain_id}
    [gone_id], [other_id] = before[arns[GONE]], before[arns[other]]
    assert datazone.get_asset(**domain, identifier=gone_id)["description"].startswith("DEPRECATED")
    assert not datazone.get_asset(**domain, identifier=other_id)["description"].startswith(
        "DEPRECATED"
    )
    mapped = stored_mappings(platform.settings)
    assert arns[other] in mapped and arns[GONE] not in mapped


def test_a_refused_retirement_fails_the_sync_by_topic_and_keeps_the_mapping(
    platform, monkeypatch, capsys
):
    assert dzlineage(["sync"]) == 0
    arn = platform.schema_arn(GONE)
    platform.client("glue").delete_schema(SchemaId={"SchemaArn": arn})
    monkeypatch.setenv("DZLINEAGE_DELETED_SCHEMA_POLICY", "delete")
    platform.control.set_faults(
        FaultRule(service="datazone", operation="DeleteAsset", kind="access-denied")
    )
    capsys.readouterr()

    assert dzlineage(["sync"]) == 1
    out = capsys.readouterr().out
    [row] = [line.rstrip() for line in out.splitlines() if line.startswith(f"{GONE} ")]
    assert re.fullmatch(
        rf"{re.escape(GONE)}\s+failed: DeleteAsset failed: AccessDeniedException: Injected fault "
        r"\(access-denied\) for datazone\.DeleteAsset\s+schema left the registry",
        row,
    ), row
    assert arn in stored_mappings(platform.settings)

    platform.control.clear_faults()
    assert dzlineage(["sync"]) == 0
    assert re.search(rf"^{re.escape(GONE)}\s+deleted\s", capsys.readouterr().out, re.M)
    assert len(stored_mappings(platform.settings)) == len(table_topics(platform))


def test_the_delete_policy_deletes_the_asset_and_the_mapping(platform, monkeypatch, capsys):
    assert dzlineage(["sync"]) == 0
    arn = platform.schema_arn(GONE)
    asset_id = topic_assets(platform)[arn][0]
    platform.client("glue").delete_schema(SchemaId={"SchemaArn": arn})
    monkeypatch.setenv("DZLINEAGE_DELETED_SCHEMA_POLICY", "delete")

    assert dzlineage(["sync", "--dry-run"]) == 0
    assert re.search(rf"^{re.escape(GONE)}\s+delete\s", capsys.readouterr().out, re.M)
    assert dzlineage(["sync"]) == 0
    datazone = platform.client("datazone")
    with pytest.raises(datazone.exceptions.ResourceNotFoundException):
        datazone.get_asset(domainIdentifier=platform.settings.domain_id, identifier=asset_id)
    assert len(stored_mappings(platform.settings)) == len(table_topics(platform))


def test_a_lost_mapping_is_repaired_from_datazone_instead_of_duplicating(platform):
    assert platform.sync().success
    topic = table_topics(platform)[0]
    arn = platform.schema_arn(topic)
    [asset_id] = topic_assets(platform)[arn]
    drop_mapping(platform.settings, arn)
    # A new version too, so the create call differs from the first one (no client-token replay):
    # DataZone refuses the duplicate externalIdentifier and the sync adopts the existing asset.
    platform.register_new_version(topic, "repair_marker")

    platform.control.clear_calls()
    assert platform.sync([topic]).success
    assert latest_metadata(platform, "datazone_topic_asset", topic)["action"] == "adopted"
    assert topic_assets(platform)[arn] == [asset_id]
    assert stored_mappings(platform.settings)[arn].asset_id == asset_id
    counts = platform.control.call_counts()
    assert counts[("datazone", "CreateAssetRevision")] == 1


def test_the_checks_job_passes_after_a_sync(platform):
    assert platform.sync().success
    result = defs.resolve_job_def("catalog_checks").execute_in_process(instance=platform.instance)
    assert result.success
    evaluations = {e.check_name: e for e in result.get_asset_check_evaluations()}
    # The demo has, on purpose, a table the convention would get wrong and a batch table no
    # topic feeds: their two checks warn; everything else passes.
    warned = {
        "connector_mapping_matches_convention": "shop.archive.orders",
        "every_iceberg_table_is_fed_by_a_topic": "lakehouse.daily_revenue",
    }
    assert set(evaluations) == {
        "ssm_mappings_point_at_existing_assets",
        "no_two_assets_share_a_schema",
        "lineage_tables_exist_in_glue",
        "lineage_landed_on_datazone_nodes",
        "lineage_landed_on_glue_nodes",
        "every_table_topic_has_a_sink",
        "no_ambiguous_edges",
        "every_connector_is_understood",
        *warned,
    }
    for name, evaluation in evaluations.items():
        if name in warned:
            assert not evaluation.passed and evaluation.severity.value == "WARN", name
            (problem,) = evaluation.metadata["problems"].value
            assert problem.startswith(warned[name]), problem
        else:
            assert evaluation.passed, (name, evaluation.description)


def test_checks_fail_when_the_catalog_drifts(platform):
    assert platform.sync().success
    settings = platform.settings
    lineage_sync = LineageSyncResource.with_settings(settings)
    topic = table_topics(platform)[0]
    [asset_id] = topic_assets(platform)[platform.schema_arn(topic)]
    platform.client("datazone").delete_asset(
        domainIdentifier=settings.domain_id, identifier=asset_id
    )
    table = latest_metadata(platform, "topic_lineage", topic)["iceberg_table"]
    database, name = table.split(".", 1)
    platform.client("glue").delete_table(DatabaseName=database, Name=name)

    dangling = ssm_mappings_point_at_existing_assets(lineage_sync=lineage_sync)
    assert not dangling.passed and asset_id in json.dumps(dangling.metadata["problems"].value)
    missing = lineage_tables_exist_in_glue(lineage_sync=lineage_sync)
    assert not missing.passed and name in json.dumps(missing.metadata["problems"].value)
    assert no_two_assets_share_a_schema(lineage_sync=lineage_sync).passed


def test_headless_sync_reports_per_topic_and_a_dry_run_writes_nothing(platform, capsys):
    assert dzlineage(["sync", "--dry-run"]) == 0
    plan = capsys.readouterr().out
    for topic in table_topics(platform):
        assert re.search(rf"^{re.escape(topic)}\s+create\s", plan, re.M), plan
    assert writes(platform.control.call_counts(), "datazone", "ssm") == {}

    assert dzlineage(["sync"]) == 0
    summary = capsys.readouterr().out
    assert f"{len(platform.registry_topics())} topics, 0 failed" in summary
    assert dzlineage(["sync", "--dry-run"]) == 0
    assert not re.search(r"\screate\s", capsys.readouterr().out)


def test_headless_sync_exits_non_zero_and_names_the_failing_topic(platform, capsys):
    broken = {"type": "record", "name": "x", "fields": [{"name": "bad-name", "type": "string"}]}
    platform.create_schema("shop.sales.broken", broken, compatibility="NONE")
    assert dzlineage(["sync"]) == 1
    out = capsys.readouterr().out
    assert "shop.sales.broken" in out and "FAILED" in out


def test_headless_sync_that_cannot_start_says_why_without_a_traceback(platform, capsys):
    from dzlineage_dagster.sandbox.server.faults import FaultRule

    platform.control.set_faults(FaultRule(service="datazone", operation="GetFormType"))
    assert dzlineage(["sync"]) == 1
    err = capsys.readouterr().err
    assert "could not start" in err and "ThrottlingException" in err
    assert "Traceback" not in err


def cataloged(platform, topic: str) -> tuple[int, dict]:
    """The version the topic's mapping record names, and its DataZone asset."""
    record = stored_mappings(platform.settings)[platform.schema_arn(topic)]
    asset = platform.client("datazone").get_asset(
        domainIdentifier=platform.settings.domain_id, identifier=record.asset_id
    )
    return record.schema_version, asset


def test_a_version_the_registry_failed_is_never_cataloged_as_the_latest(platform, caplog, capsys):
    """GetSchemaVersion's latest is the FAILURE version (it is numbered): the sync catalogs the
    newest AVAILABLE one instead, says why, and changes nothing in DataZone; the version sweep
    does not take the failed number for a new version (the next sync is idle); the next good
    version (numbered after the failed one) is cataloged as usual."""
    topic = "shop.sales.orders"
    assert dzlineage(["sync"]) == 0
    synced, _ = cataloged(platform, topic)

    # A column with no default: a reader of the new version cannot read the earlier data.
    failed = platform.register_with_column(topic, {"name": "voucher", "type": "string"}, synced)
    assert failed["Status"] == "FAILURE"
    platform.control.clear_calls()
    assert dzlineage(["sync"]) == 0
    version, asset = cataloged(platform, topic)
    assert (version, kafka_form(asset)["schema_version"]) == (synced, synced)
    assert "voucher" not in json.dumps(asset["formsOutput"])
    assert writes(platform.control.call_counts(), "datazone") == {}
    assert (
        f"{topic}: version {synced + 1} of schema {topic} is not AVAILABLE in the registry (it "
        f"failed the schema's BACKWARD compatibility check, or is still being checked): version "
        f"{synced} stays the cataloged one"
    ) in caplog.text
    capsys.readouterr()
    assert dzlineage(["sync"]) == 0
    assert "unchanged since the last complete sync: nothing to do" in capsys.readouterr().out

    coupon = {"name": "coupon", "type": ["null", "string"], "default": None}
    assert platform.register_with_column(topic, coupon, synced)["Status"] == "AVAILABLE"
    assert dzlineage(["sync"]) == 0
    version, asset = cataloged(platform, topic)
    assert (version, kafka_form(asset)["schema_version"]) == (synced + 2, synced + 2)
    assert "coupon" in json.dumps(asset["formsOutput"])
