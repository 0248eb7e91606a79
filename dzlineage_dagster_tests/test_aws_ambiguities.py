"""The product under each reading of what AWS's documents leave open (issue 18): type
re-creation answered with a new revision or ConflictException, the registry's ``UpdatedTime``
moving or frozen on new and deleted versions, Search lagging behind writes, a 409 from
PostLineageEvent meaning a duplicate or a conflict that stored nothing; and the sandbox's
``DeleteSchemaVersions`` as the API reference describes it."""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter
from dataclasses import replace
from datetime import datetime, timezone

import pytest
from botocore.exceptions import ClientError

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.core.catalog.discovery import (
    FROZEN_EVIDENCE_SECONDS,
    VERSION_SWEEP_TICKS,
    UpdatedTimeBehaviour,
    clock_sweep,
    swept_to,
)
from dzlineage_dagster.core.catalog.forms import KAFKA_SCHEMA_FORM
from dzlineage_dagster.sandbox.server.control import SandboxControl
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster_tests.stored_mapping import drop_mapping, put_mapping, stored_mappings
from dzlineage_dagster_tests.test_catalog_operators import rows_of
from dzlineage_dagster_tests.test_catalog_sync import latest_metadata, table_topics, topic_assets
from dzlineage_dagster_tests.test_catalog_types_extended import Team, with_team_field
from dzlineage_dagster_tests.test_cli import COMMAND, free_port

TOPIC = "shop.sales.orders"


def schema_id(platform, topic: str = TOPIC) -> dict[str, str]:
    return {"SchemaArn": platform.schema_arn(topic)}


def schema(platform, topic: str = TOPIC) -> dict:
    return platform.client("glue").get_schema(SchemaId=schema_id(platform, topic))


def sweep_pass_runs(platform) -> int:
    """Runs (or ticks) in which the version sweep checks every topic once."""
    topics = len(platform.registry_topics())
    return -(-topics // -(-topics // VERSION_SWEEP_TICKS))


# --- the sandbox's switches -------------------------------------------------------------------


def test_delete_schema_versions_answers_as_the_api_reference_says(platform):
    glue = platform.client("glue")
    platform.register_new_version(TOPIC, "coupon")
    platform.register_new_version(TOPIC, "voucher")
    assert schema(platform)["LatestSchemaVersion"] == 3

    # The first version only goes with DeleteSchema; nothing of the range is deleted.
    with pytest.raises(ClientError) as refused:
        glue.delete_schema_versions(SchemaId=schema_id(platform), Versions="1-3")
    assert refused.value.response["Error"]["Code"] == "InvalidInputException"
    assert "first schema version" in refused.value.response["Error"]["Message"]
    assert schema(platform)["LatestSchemaVersion"] == 3

    # A missing version is reported, the others are deleted; the latest is then version 2.
    answer = glue.delete_schema_versions(SchemaId=schema_id(platform), Versions="3-4")
    assert [e["VersionNumber"] for e in answer["SchemaVersionErrors"]] == [4]
    assert answer["SchemaVersionErrors"][0]["ErrorDetails"]["ErrorCode"] == (
        "EntityNotFoundException"
    )
    assert schema(platform)["LatestSchemaVersion"] == 2
    latest = glue.get_schema_version(
        SchemaId=schema_id(platform), SchemaVersionNumber={"LatestVersion": True}
    )
    assert latest["VersionNumber"] == 2
    listed = glue.list_schema_versions(SchemaId=schema_id(platform))["Schemas"]
    assert [v["VersionNumber"] for v in listed] == [1, 2]
    # Numbers are not reused: the next version is 4.
    platform.register_new_version(TOPIC, "gift_card")
    assert schema(platform)["LatestSchemaVersion"] == 4


@pytest.mark.parametrize("updated_time", ["moves", "frozen"])
def test_updated_time_moves_on_new_and_deleted_versions_or_stays_frozen(platform, updated_time):
    platform.control.set_ambiguities(schema_updated_time=updated_time)
    created = schema(platform)["CreatedTime"]
    platform.register_new_version(TOPIC, "coupon")
    registered = schema(platform)["UpdatedTime"]
    platform.client("glue").delete_schema_versions(SchemaId=schema_id(platform), Versions="2")
    deleted = schema(platform)["UpdatedTime"]
    listed = platform.listed_topics()[TOPIC].updated_time
    if updated_time == "moves":
        assert created < registered < deleted
        assert listed == deleted
    else:
        assert created == registered == deleted
        assert listed == created


@pytest.mark.parametrize("type_recreation", ["revision", "conflict"])
def test_recreating_a_type_with_a_changed_model_makes_a_revision_or_conflicts(
    platform, type_recreation
):
    platform.control.set_ambiguities(type_recreation=type_recreation)
    team = Team(platform)
    model = KAFKA_SCHEMA_FORM.smithy_model()
    assert team.form_type(KAFKA_SCHEMA_FORM.name, model) == "1"
    # The same model again is the same revision under both readings.
    assert team.form_type(KAFKA_SCHEMA_FORM.name, model) == "1"
    if type_recreation == "revision":
        assert team.form_type(KAFKA_SCHEMA_FORM.name, with_team_field(model)) == "2"
    else:
        with pytest.raises(team.datazone.exceptions.ConflictException):
            team.form_type(KAFKA_SCHEMA_FORM.name, with_team_field(model))


def test_the_switches_refuse_unknown_names_and_values(platform):
    for switches in (
        {"type_recreation": "maybe"},
        {"glue_node_naming": "colon"},
        {"run_event_merge": "union"},
        {"node_schema": "last"},
        {"search_lag": "1"},
    ):
        with pytest.raises(Exception, match="400"):
            platform.control.set_ambiguities(**switches)
    assert platform.control.set_ambiguities(glue_node_naming="colon-join")["glue_node_naming"] == (
        "colon-join"
    )


# --- the product under each reading -----------------------------------------------------------


def synced_until(capsys, topic: str, action: str, runs: int) -> int:
    """How many `dzlineage sync` runs it took until ``topic``'s row says ``action``."""
    for run in range(1, runs + 1):
        assert dzlineage(["sync"]) == 0
        out = capsys.readouterr().out
        if "nothing to do" not in out and rows_of(out, topic)[0][1] == action:
            return run
    raise AssertionError(f"{topic} not {action} within {runs} syncs")


def test_headless_sync_finds_new_and_deleted_versions_when_updated_time_moves(platform, capsys):
    platform.control.set_ambiguities(schema_updated_time="moves")
    assert dzlineage(["sync"]) == 0
    first = capsys.readouterr().out
    assert {rows_of(first, topic)[0][1] for topic in table_topics(platform)} == {"created"}
    assert dzlineage(["sync"]) == 0
    assert "nothing to do" in capsys.readouterr().out

    platform.register_new_version(TOPIC, "coupon")
    assert synced_until(capsys, TOPIC, "revised", 1) == 1, "the listing itself shows it"
    platform.client("glue").delete_schema_versions(SchemaId=schema_id(platform), Versions="2")
    synced_until(capsys, TOPIC, "revised", sweep_pass_runs(platform))
    assert dzlineage(["sync"]) == 0
    assert "nothing to do" in capsys.readouterr().out


def revised_by_one_sync(platform, capsys) -> tuple[set[str], set[int]]:
    """The table topics one `dzlineage sync` revised, and the minutes it may have run in."""
    minutes = {int(time.time() // 60)}
    assert dzlineage(["sync"]) == 0
    minutes.add(int(time.time() // 60))
    out = capsys.readouterr().out
    revised = set()
    if "nothing to do" not in out:
        revised = {
            topic
            for topic in table_topics(platform)
            if f"\n{topic} " in f"\n{out}" and rows_of(out, topic)[0][1] == "revised"
        }
    return revised, minutes


def test_headless_sync_finds_the_versions_a_frozen_updated_time_hides_in_its_minutes_slice(
    platform, capsys
):
    """With ``UpdatedTime`` frozen the listing shows no new version: the version sweep finds
    them, in the slice of the run's minute (no stored position: core/test_version_sweep.py
    shows that steady runs check every topic within the slices' count)."""
    platform.control.set_ambiguities(schema_updated_time="frozen")
    assert dzlineage(["sync"]) == 0
    capsys.readouterr()
    topics = table_topics(platform)
    # A version registered within FROZEN_EVIDENCE_SECONDS of its schema's creation shows
    # nothing (the same moment, give or take): these come later.
    created = max(datetime.fromisoformat(schema(platform, t)["CreatedTime"]) for t in topics)
    time.sleep(
        max(
            0.0,
            (created - datetime.now(timezone.utc)).total_seconds() + FROZEN_EVIDENCE_SECONDS + 0.1,
        )
    )
    # Nothing learnt yet of UpdatedTime: the sweep checks 20 topics a run, here every one.
    for topic in topics:
        platform.register_new_version(topic, "coupon")
    revised, _ = revised_by_one_sync(platform, capsys)
    assert revised == set(topics)

    # That sync's probe learnt that UpdatedTime stands still: a sixtieth of the registry a
    # run (here one topic), the slice of the run's minute.
    for topic in topics:
        platform.register_new_version(topic, "voucher")
    revised, minutes = revised_by_one_sync(platform, capsys)
    listed = platform.registry_topics()
    assert any(
        revised == set(topics) & set(clock_sweep(listed, minute, UpdatedTimeBehaviour.FROZEN))
        for minute in minutes
    ), (revised, minutes)


@pytest.mark.parametrize("updated_time", ["moves", "frozen"])
def test_the_sensor_requests_a_new_version_whether_updated_time_moves_or_not(
    platform, updated_time
):
    platform.control.set_ambiguities(schema_updated_time=updated_time)
    assert platform.sync().success
    cursor = platform.tick().cursor
    bound = sweep_pass_runs(platform)
    for _ in range(bound):
        result = platform.tick(cursor)
        cursor = result.cursor
        assert not result.run_requests, "an idle tick requested a run"

    platform.register_new_version(TOPIC, "coupon")
    ticks, result = ticked_until_a_run(platform, cursor, bound)
    if updated_time == "moves":
        assert ticks == 1
    (request,) = result.run_requests
    assert request.tags["dagster/asset_partition_range_start"] == TOPIC
    assert request.tags["dagster/asset_partition_range_end"] == TOPIC

    # The run brings the asset to the new version: the sweep then finds nothing behind.
    assert platform.sync([TOPIC]).success
    cursor = result.cursor
    for _ in range(bound):
        result = platform.tick(cursor)
        cursor = result.cursor
        assert not result.run_requests, "a synced topic was requested again"


def ticked_until_a_run(platform, cursor: str, ticks: int):
    """(ticks it took, the tick's result) until the registry sensor requests a run."""
    for tick in range(1, ticks + 1):
        result = platform.tick(cursor)
        if result.run_requests:
            return tick, result
        cursor = result.cursor
    raise AssertionError(f"no run requested within {ticks} ticks")


def test_a_refused_type_recreation_stops_the_sync_before_any_asset_write(platform, capsys):
    platform.control.set_ambiguities(type_recreation="conflict")
    team = Team(platform)
    # Their revision lacks the product's data_format: the product would need a new revision.
    lacking = (
        KAFKA_SCHEMA_FORM.smithy_model()
        .replace("    data_format: String\n", "")
        .replace('    @documentation("The schema\'s data format: AVRO, JSON or PROTOBUF.")\n', "")
    )
    team.form_type(KAFKA_SCHEMA_FORM.name, lacking)
    platform.control.clear_calls()

    assert dzlineage(["sync"]) == 1
    error = capsys.readouterr().err
    assert "DataZone refused a new revision of form type KafkaSchemaFormType" in error
    assert "ConflictException" in error and "data_format is missing" in error
    assert "Nothing was written to the catalog" in error
    counts = platform.control.call_counts()
    assert counts[("datazone", "CreateAsset")] == counts[("datazone", "CreateAssetType")] == 0

    # The Dagster job stops at the same place with the same words.
    result = platform.sync()
    assert not result.success
    (failure,) = result.get_step_failure_events()
    assert failure.step_key == "kafka_topic_catalog"
    assert "DataZone refused a new revision of form type" in str(failure.event_specific_data)
    assert platform.control.call_counts()[("datazone", "CreateAsset")] == 0


def test_a_refused_type_recreation_is_never_needed_when_the_latest_revision_holds_the_product(
    platform, capsys
):
    platform.control.set_ambiguities(type_recreation="conflict")
    Team(platform).form_type(
        KAFKA_SCHEMA_FORM.name, with_team_field(KAFKA_SCHEMA_FORM.smithy_model())
    )
    assert dzlineage(["sync"]) == 0
    out = capsys.readouterr().out
    assert {rows_of(out, topic)[0][1] for topic in table_topics(platform)} == {"created"}


def test_reconcile_never_takes_an_asset_search_does_not_list_for_gone(platform, capsys):
    assert dzlineage(["sync"]) == 0
    capsys.readouterr()
    (asset_id,) = topic_assets(platform)[platform.schema_arn(TOPIC)]
    platform.control.set_ambiguities(search_omits=[asset_id])
    platform.control.clear_calls()

    assert dzlineage(["sync", "--reconcile"]) == 0
    out = capsys.readouterr().out
    assert "reconcile: nothing to repair" in out
    assert "1 mapped assets Search did not list read by id" in out
    counts = platform.control.call_counts()
    assert counts[("datazone", "CreateAsset")] == counts[("datazone", "CreateAssetRevision")] == 0


def test_a_failing_sweep_never_stops_the_sensor_from_seeing_the_listing(platform):
    assert platform.sync().success
    cursor = platform.tick().cursor
    platform.create_schema("shop.sales.refunds", {"type": "string"})
    platform.control.set_faults(FaultRule("ssm", "GetParameters", "access-denied"))
    result = platform.tick(cursor)
    assert "shop.sales.refunds" in platform.instance.get_dynamic_partitions("kafka_topics")
    assert result.run_requests
    assert swept_to(result.cursor) == swept_to(cursor), "the skipped slice was passed over"


# --- Search lag -------------------------------------------------------------------------------


def lag_free(platform, look):
    """``look(platform)`` as Search answers once it has caught up (the lag switched off for
    the look only: the lag is a view of the index, the assets are the same)."""
    lag = platform.control.set_ambiguities()["search_lag_seconds"]
    platform.control.set_ambiguities(search_lag_seconds=0)
    try:
        return look(platform)
    finally:
        platform.control.set_ambiguities(search_lag_seconds=lag)


def searched_names(platform, text: str) -> list[str]:
    items = platform.client("datazone").search(
        domainIdentifier=platform.settings.domain_id, searchScope="ASSET", searchText=text
    )["items"]
    return [i["assetItem"]["name"] for i in items]


def test_search_sees_a_creation_or_revision_only_lag_seconds_after_it(platform):
    datazone = platform.client("datazone")
    domain = platform.settings.domain_id
    platform.control.set_ambiguities(search_lag_seconds=1.5)
    table_form = {
        "formName": "RelationalTableForm",
        "typeIdentifier": "amazon.datazone.RelationalTableFormType",
        "content": json.dumps({"tableName": "orders"}),
    }
    created = datazone.create_asset(
        domainIdentifier=domain,
        owningProjectIdentifier=platform.settings.project_id,
        typeIdentifier="amazon.datazone.RelationalTableAssetType",
        name="lagging orders",
        formsInput=[table_form],
    )
    assert searched_names(platform, "lagging") == []
    time.sleep(1.6)
    assert searched_names(platform, "lagging") == ["lagging orders"]

    datazone.create_asset_revision(
        domainIdentifier=domain,
        identifier=created["id"],
        name="lagging orders, renamed",
        typeRevision=created["typeRevision"],
        formsInput=[table_form],
    )
    assert searched_names(platform, "lagging") == ["lagging orders"], "the revision before it"
    time.sleep(1.6)
    assert searched_names(platform, "lagging") == ["lagging orders, renamed"]


def test_a_lost_mapping_is_adopted_not_duplicated_while_search_lags(platform):
    assert platform.sync([TOPIC]).success
    arn = platform.schema_arn(TOPIC)
    (asset_id,) = topic_assets(platform)[arn]
    drop_mapping(platform.settings, arn)
    # A new version: CreateAsset differs from the first one, so DataZone refuses the schema's
    # second asset (ConflictException) instead of replaying the first; Search must find it.
    platform.register_new_version(TOPIC, "coupon")
    # Search sees the asset only some seconds into the next sync: after its first look.
    created = platform.client("datazone").get_asset(
        domainIdentifier=platform.settings.domain_id, identifier=asset_id
    )["createdAt"]
    age = (datetime.now(timezone.utc) - created).total_seconds()
    platform.control.set_ambiguities(search_lag_seconds=age + 6)
    platform.control.clear_calls()

    assert platform.sync([TOPIC]).success
    assert latest_metadata(platform, "datazone_topic_asset", TOPIC)["action"] == "adopted"
    assert lag_free(platform, topic_assets)[arn] == [asset_id]
    assert platform.control.call_counts()[("datazone", "CreateAsset")] == 1


def test_reconcile_right_after_a_sync_takes_nothing_search_lags_behind_for_gone(platform, capsys):
    platform.control.set_ambiguities(search_lag_seconds=30)
    assert dzlineage(["sync"]) == 0
    capsys.readouterr()
    platform.control.clear_calls()

    assert dzlineage(["sync", "--reconcile"]) == 0
    out = capsys.readouterr().out
    assert "reconcile: nothing to repair" in out
    topics = len(table_topics(platform))
    assert f"{topics} mapped assets Search did not list read by id" in out
    counts = platform.control.call_counts()
    assert counts[("datazone", "CreateAsset")] == counts[("datazone", "CreateAssetRevision")] == 0


# --- PostLineageEvent's 409 -------------------------------------------------------------------


def held_events(platform) -> Counter:
    """(job, run id, event type) -> how many such events DataZone holds."""
    items = platform.client("datazone").get_paginator("list_lineage_events")
    return Counter(
        (json.dumps(summary["job"], sort_keys=True), summary["runId"], summary["eventType"])
        for page in items.paginate(domainIdentifier=platform.settings.domain_id)
        for item in page["items"]
        for summary in [item["eventSummary"]["openLineageRunEventSummary"]]
    )


def forget_posted_lineage(platform, topic: str) -> None:
    """The topic's mapping as a run that crashed after posting and before writing it left it."""
    record = stored_mappings(platform.settings)[platform.schema_arn(topic)]
    put_mapping(platform.settings, replace(record, lineage_fingerprint=""))


@pytest.mark.parametrize("lineage_conflict", ["duplicate", "other"])
def test_every_lineage_event_is_held_once_whatever_a_409_means(platform, lineage_conflict):
    platform.control.set_ambiguities(lineage_conflict=lineage_conflict)
    assert platform.sync([TOPIC]).success
    held = held_events(platform)
    assert held and set(held.values()) == {1}
    first = latest_metadata(platform, "topic_lineage", TOPIC)
    assert "posted: " in first["edge"]
    assert (first["events_posted"], first["events_already_held"]) == (len(held), 0)
    conflicts = platform.control.call_counts()[("datazone", "PostLineageEvent")] - len(held)
    assert conflicts == (len(held) if lineage_conflict == "other" else 0)

    # A rerun after a crash that lost the posted state: the same tokens, a later eventTime.
    forget_posted_lineage(platform, TOPIC)
    platform.control.clear_calls()
    assert platform.sync([TOPIC]).success
    counts = platform.control.call_counts()
    assert held_events(platform) == held
    again = latest_metadata(platform, "topic_lineage", TOPIC)
    assert "already posted: " in again["edge"]
    # Every post a 409 for an event DataZone held: none counted as posted.
    assert (again["events_posted"], again["events_already_held"]) == (0, len(held))
    assert counts[("datazone", "PostLineageEvent")] == len(held), "a 409 was posted again"
    # Bounded: the health check's listing, the look for foreign runs (down to the sync's newest
    # run) and one listing of the events held, for all 409s.
    assert counts[("datazone", "ListLineageEvents")] == 3


def test_a_409_for_an_event_datazone_does_not_hold_is_never_counted_as_posted(
    platform, capsys, caplog
):
    # Every post refused (topics sync in parallel: a counted rule would be shared among them).
    platform.control.set_faults(FaultRule("datazone", "PostLineageEvent", "conflict"))
    platform.control.clear_calls()
    assert dzlineage(["sync"]) == 1
    topics = len(table_topics(platform))
    assert f"{topics} failed" in capsys.readouterr().out
    assert "answered 409 ConflictException to every post and DataZone holds no such event" in (
        caplog.text
    )
    counts = platform.control.call_counts()
    # Per topic: its first hop's post, then the same token and a derived one; for the run, the
    # health check's listing, the look for foreign runs and one of the events held; per topic
    # whose same-token post was refused again, one more listing (a concurrent sync may have
    # posted the event meanwhile).
    assert counts[("datazone", "PostLineageEvent")] == 3 * topics
    assert counts[("datazone", "ListLineageEvents")] == 3 + topics
    assert held_events(platform) == Counter()

    platform.control.clear_faults()
    assert dzlineage(["sync"]) == 0
    capsys.readouterr()
    held = held_events(platform)
    assert held and set(held.values()) == {1}, "the next sync posts each event once"


def test_the_sandbox_command_sets_the_search_lag_and_the_lineage_switches(tmp_path):
    port = free_port()
    env_file = tmp_path / "sandbox.env"
    options = ["--search-lag-seconds", "2.5", "--lineage-conflict", "other"]
    options += ["--run-event-merge", "latest", "--node-schema", "merged"]
    command = [*COMMAND, "sandbox", "--empty", "--port", str(port), "--env-file", str(env_file)]
    process = subprocess.Popen([*command, *options], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not env_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        switches = SandboxControl(f"http://127.0.0.1:{port}").set_ambiguities()
        assert switches["search_lag_seconds"] == 2.5
        assert switches["lineage_conflict"] == "other"
        assert (switches["run_event_merge"], switches["node_schema"]) == ("latest", "merged")
    finally:
        process.terminate()
        process.wait(timeout=30)
    refused = subprocess.run(
        [*command, "--search-lag-seconds", "-1"], capture_output=True, text=True, timeout=60
    )
    assert refused.returncode == 2
    assert "--search-lag-seconds: '-1' is not a number of seconds >= 0" in refused.stderr
