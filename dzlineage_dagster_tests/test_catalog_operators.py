"""What operators do to a synced catalog, and that it ends true (issue 8's seven cases).

Each test first reproduces the operator's action on the seeded sandbox, then shows the fixed
behaviour through the same entry points an operator uses (`dzlineage sync`, `--reconcile`).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import replace

import pytest

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.core.lineage.openlineage import HOP_JOB_SEPARATOR
from dzlineage_dagster.core.lineage.state import PostedLineage, hop_run_id
from dzlineage_dagster.core.mapping.ssm_names import parameter_name
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sandbox.demo.seed import Column, debezium_value_schema
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster.sync.catalog.custom_types import ensure_custom_types
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.runner import sync_topics
from dzlineage_dagster_tests.stored_mapping import drop_mapping, put_mapping, stored_mappings
from dzlineage_dagster_tests.test_catalog_sync import table_topics, topic_assets

TOPIC = "shop.sales.payments"


def sync_output(capsys, *args: str) -> str:
    code = dzlineage(["sync", *args])
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def scoped_parameters(platform) -> dict[str, str]:
    """Every parameter under the prefix, as SSM holds it: the mapping in any layout and scope,
    and the registry digests."""
    pages = platform.client("ssm").get_paginator("get_parameters_by_path")
    return {
        p["Name"]: p["Value"]
        for page in pages.paginate(Path=platform.settings.ssm_prefix, Recursive=True)
        for p in page["Parameters"]
    }


def action_of(out: str, topic: str) -> str:
    match = re.search(rf"^{re.escape(topic)}\s+(\S+)", out, re.M)
    assert match, out
    return match.group(1)


def rows_of(out: str, topic: str) -> list[list[str]]:
    """The printed rows of ``topic`` (the sync's and the reconcile's): name, action, the rest."""
    rows = [
        line.rstrip().split(None, 2) for line in out.splitlines() if line.startswith(f"{topic} ")
    ]
    assert rows, out
    return rows


def another_projects_asset(schema_arn: str, project_id: str) -> str:
    """The failed asset stage's text when another project's asset has the schema's ARN."""
    return (
        f"asset: DataZone refused to create an asset for {schema_arn} (an asset with that "
        f"externalIdentifier exists), but Search finds no asset of project {project_id} with "
        "it: is it owned by another project?"
    )


def asset(platform, asset_id: str, domain_id: str | None = None) -> dict:
    return platform.client("datazone").get_asset(
        domainIdentifier=domain_id or platform.settings.domain_id, identifier=asset_id
    )


def kafka_form(asset_output: dict) -> dict:
    form = next(f for f in asset_output["formsOutput"] if f["formName"] == "KafkaSchemaForm")
    return json.loads(form["content"])


def column_names(asset_output: dict) -> list[str]:
    form = next(f for f in asset_output["formsOutput"] if f["formName"] == "RelationalTableForm")
    return [c["columnName"] for c in json.loads(form["content"])["columns"]]


def test_a_second_registry_leaves_the_first_registrys_assets_alone(platform, monkeypatch, capsys):
    sync_output(capsys)
    first = topic_assets(platform)
    glue = platform.client("glue")
    glue.create_registry(RegistryName="other-registry")
    # Another platform's topic: no connector this sync knows has its prefix.
    glue.create_schema(
        RegistryId={"RegistryName": "other-registry"},
        SchemaName="crm.sales.leads",
        DataFormat="AVRO",
        Compatibility="BACKWARD",
        SchemaDefinition=json.dumps(
            debezium_value_schema("crm.sales.leads", [Column("id", "bigint", nullable=False)])
        ),
    )
    monkeypatch.setenv("DZLINEAGE_REGISTRY_NAME", "other-registry")
    monkeypatch.setenv("DZLINEAGE_DELETED_SCHEMA_POLICY", "delete")

    out = sync_output(capsys)
    assert action_of(out, "crm.sales.leads") == "created", out
    assert "no known connector writes or reads 'crm.sales.leads'" in out, out
    assert not re.search(r"\b(deleted|deprecated)\b", out), out
    for ids in first.values():
        assert asset(platform, ids[0])["description"].startswith("Kafka topic")

    monkeypatch.setenv("DZLINEAGE_REGISTRY_NAME", platform.settings.registry_name)
    again = sync_output(capsys)
    for topic in table_topics(platform):
        assert action_of(again, topic) == "unchanged"


def test_a_new_domain_gets_its_own_assets_and_mappings(platform, monkeypatch, capsys):
    sync_output(capsys)
    first = topic_assets(platform)
    datazone = platform.client("datazone")
    domain_id = datazone.create_domain(
        name="second-domain",
        domainExecutionRole="arn:aws:iam::123456789012:role/AmazonDataZoneDomainExecution",
    )["id"]
    project_id = datazone.create_project(domainIdentifier=domain_id, name="second")["id"]
    monkeypatch.setenv("DZLINEAGE_DOMAIN_ID", domain_id)
    monkeypatch.setenv("DZLINEAGE_PROJECT_ID", project_id)

    out = sync_output(capsys)
    topics = table_topics(platform)
    assert all(action_of(out, topic) == "created" for topic in topics)
    in_new = stored_mappings(platform.settings, domain_id=domain_id, project_id=project_id)
    assert len(in_new) == len(topics)
    for record in in_new.values():
        assert asset(platform, record.asset_id, domain_id)["owningProjectId"] == project_id
    # The first domain's assets and mappings are untouched.
    assert len(stored_mappings(platform.settings)) == len(topics)
    assert topic_assets(platform) == first
    # The new domain holds the lineage too: the first domain's tokens (derived from the events,
    # not the domain) answered 409 there, which is not "already posted".
    events = datazone.list_lineage_events(domainIdentifier=domain_id)["items"]
    jobs = {e["eventSummary"]["openLineageRunEventSummary"]["job"]["name"] for e in events}
    assert {f"shop-debezium-source/{topic}" for topic in topics} <= jobs


def test_a_second_project_never_gets_the_first_projects_assets_back_by_client_token(
    platform, monkeypatch, capsys
):
    """The same schema and content in another project of the domain: a client token that did
    not cover the project would be the first project's, and a DataZone that replays reused
    tokens whatever the parameters would hand that project's asset over."""
    sync_output(capsys)
    first = topic_assets(platform)
    datazone = platform.client("datazone")
    # A sampled topic with no asset keeps the up-front ownership check (all sampled assets in
    # another project) from refusing the run: each topic's CreateAsset is what is tested here.
    new_topic = "shop.archive.orders"
    [gone] = first.pop(platform.schema_arn(new_topic))
    datazone.delete_asset(domainIdentifier=platform.settings.domain_id, identifier=gone)
    second = datazone.create_project(domainIdentifier=platform.settings.domain_id, name="second")
    monkeypatch.setenv("DZLINEAGE_PROJECT_ID", second["id"])
    platform.control.set_client_tokens(other_parameters="replay")

    assert dzlineage(["sync"]) == 1
    out = capsys.readouterr().out
    assert action_of(out, new_topic) == "created", out
    for topic in table_topics(platform):
        if topic == new_topic:
            continue
        [[_, action, detail]] = rows_of(out, topic)
        assert (action, detail) == (
            "FAILED",
            another_projects_asset(platform.schema_arn(topic), second["id"]),
        )
    assert topic_assets(platform) == first
    records = stored_mappings(platform.settings, project_id=second["id"]).values()
    assert [r.topic for r in records] == [new_topic]


def recreate_schema(platform, topic: str, definition: str) -> None:
    glue = platform.client("glue")
    glue.delete_schema(SchemaId={"SchemaArn": platform.schema_arn(topic)})
    platform.create_schema(topic, json.loads(definition))


def definition_of(platform, topic: str) -> str:
    return platform.client("glue").get_schema_version(
        SchemaId={"SchemaArn": platform.schema_arn(topic)},
        SchemaVersionNumber={"LatestVersion": True},
    )["SchemaDefinition"]


def test_a_recreated_schema_ends_with_a_current_undeprecated_asset(platform, capsys):
    sync_output(capsys)
    arn = platform.schema_arn(TOPIC)
    [asset_id] = topic_assets(platform)[arn]
    original = definition_of(platform, TOPIC)
    platform.client("glue").delete_schema(SchemaId={"SchemaArn": arn})
    assert action_of(sync_output(capsys), TOPIC) == "deprecated"
    platform.create_schema(TOPIC, json.loads(original))  # same name, same ARN

    out = sync_output(capsys)
    # The re-created schema's creation token differs (a new generation): DataZone refuses the
    # duplicate externalIdentifier and the deprecated asset is adopted and made current.
    assert action_of(out, TOPIC) == "adopted"
    current = asset(platform, asset_id)
    assert not current["description"].startswith("DEPRECATED")
    assert stored_mappings(platform.settings)[arn].asset_id == asset_id
    assert topic_assets(platform)[arn] == [asset_id]


def test_a_rolled_back_schema_ends_with_the_registrys_current_content(platform):
    run = SyncRun(LineageSyncResource.with_settings(platform.settings))
    ensure_custom_types(run)

    def sync_once() -> str:
        [outcome] = sync_topics(
            SyncRun(LineageSyncResource.with_settings(platform.settings)), [TOPIC]
        )
        assert outcome.ok, outcome.error
        return outcome.asset.action

    assert sync_once() == "created"
    original = definition_of(platform, TOPIC)
    platform.register_new_version(TOPIC, "added_later")
    assert sync_once() == "revised"
    # Rolled back: deleted and re-created at the older definition (same ARN, version 1).
    recreate_schema(platform, TOPIC, original)
    assert sync_once() == "revised"
    arn = platform.schema_arn(TOPIC)
    [asset_id] = topic_assets(platform)[arn]
    rolled_back = asset(platform, asset_id)
    assert "added_later" not in column_names(rolled_back)
    assert kafka_form(rolled_back)["schema_version"] == 1
    # The column comes back: the same content as the first revision, from another revision,
    # so a token of its own (one covering only the content would replay the first revision).
    platform.register_new_version(TOPIC, "added_later")
    assert sync_once() == "revised"
    again = asset(platform, asset_id)
    assert "added_later" in column_names(again)
    assert int(again["revision"]) == int(rolled_back["revision"]) + 1


def test_a_hand_deleted_asset_is_recreated_and_remapped_by_reconcile(platform, capsys):
    sync_output(capsys)
    arn = platform.schema_arn(TOPIC)
    [asset_id] = topic_assets(platform)[arn]
    platform.client("datazone").delete_asset(
        domainIdentifier=platform.settings.domain_id, identifier=asset_id
    )
    # The plain sync trusts the mapping and, idle, its registry digest (that keeps it cheap).
    assert "nothing to do" in sync_output(capsys)

    platform.control.clear_calls()
    plan = sync_output(capsys, "--dry-run", "--reconcile")
    # The whole row: a dry run has no result to append to the repair.
    assert [
        TOPIC, "recreate", f"mapped asset {asset_id} is gone: create a new asset"
    ] in rows_of(plan, TOPIC)  # fmt: skip
    assert "nothing was written" in plan
    writes = [
        c for c in platform.control.calls()
        if c.service in ("datazone", "ssm") and not c.operation.startswith(("Get", "List", "Search"))
    ]  # fmt: skip
    assert writes == []

    out = sync_output(capsys, "--reconcile")
    [new_id] = topic_assets(platform)[arn]
    assert [
        TOPIC, "recreate", f"mapped asset {asset_id} is gone: create a new asset -> created"
    ] in rows_of(out, TOPIC)  # fmt: skip
    assert new_id != asset_id
    assert stored_mappings(platform.settings)[arn].asset_id == new_id
    assert "reconcile: nothing to repair" in sync_output(capsys, "--reconcile")


def test_a_swapped_mapping_is_repaired_by_reconcile(platform, capsys):
    sync_output(capsys)
    first, second = table_topics(platform)[:2]
    arns = {topic: platform.schema_arn(topic) for topic in (first, second)}
    assets = topic_assets(platform)
    records = stored_mappings(platform.settings)
    swapped = replace(records[arns[first]], asset_id=records[arns[second]].asset_id)
    put_mapping(platform.settings, swapped)

    out = sync_output(capsys, "--reconcile")
    assert re.search(rf"^{re.escape(first)}\s+remap\s+mapped asset \S+ belongs to", out, re.M), out
    repaired = stored_mappings(platform.settings)
    assert repaired[arns[first]].asset_id == assets[arns[first]][0]
    assert repaired[arns[second]].asset_id == assets[arns[second]][0]
    assert topic_assets(platform) == assets  # nothing created


@pytest.mark.parametrize(
    "token_window", [8 * 3600, 0], ids=["within-token-window", "after-token-window"]
)
def test_a_renamed_asset_whose_mapping_was_lost_is_adopted_by_external_identifier(
    platform, capsys, token_window
):
    sync_output(capsys)
    # Within DataZone's window the rerun's CreateAsset replays the first answer, which is then
    # checked against the asset as it is now; after it, DataZone refuses the duplicate
    # externalIdentifier and the asset is found by it (not by its name, which changed).
    platform.control.set_client_tokens(window_seconds=token_window)
    arn = platform.schema_arn(TOPIC)
    [asset_id] = topic_assets(platform)[arn]
    current = asset(platform, asset_id)
    platform.client("datazone").create_asset_revision(
        domainIdentifier=platform.settings.domain_id,
        identifier=asset_id,
        name="Payments (renamed in the portal)",
        typeRevision=current["typeRevision"],
        formsInput=[
            {"formName": f["formName"], "typeIdentifier": f["typeName"],
             "typeRevision": f["typeRevision"], "content": f["content"]}
            for f in current["formsOutput"]
        ],
    )  # fmt: skip
    drop_mapping(platform.settings, arn)

    assert "adopt" in sync_output(capsys, "--dry-run", "--reconcile")
    # An idle sync whose registry digest matches reads no mapping (the accepted trade-off):
    # the reconcile, which reads everything, adopts the asset.
    assert "nothing to do" in sync_output(capsys)
    out = sync_output(capsys, "--reconcile")
    # The reconcile's repair adopts the asset; the portal's name is a person's (it is not the
    # product's), so the asset already holds what a revision would write: no write.
    actions = re.findall(rf"^{re.escape(TOPIC)}\s+(\S+)", out, re.M)
    assert "adopt" in actions and actions[0] == "replayed", out
    assert asset(platform, asset_id)["name"] == "Payments (renamed in the portal)"
    assert stored_mappings(platform.settings)[arn].asset_id == asset_id
    assert topic_assets(platform)[arn] == [asset_id]


def to_first_layout(platform) -> dict[str, str]:
    """Rewrite every mapping as the first SSM layout stored it (one parameter a topic, no scope
    in its path or record); schema ARN -> parameter name."""
    ssm = platform.client("ssm")
    prefix = platform.settings.ssm_prefix
    records = stored_mappings(platform.settings)
    # Before the scoped layouts nothing lived under the scoped path, not even a registry digest.
    for name in scoped_parameters(platform):
        ssm.delete_parameter(Name=name)
    first_layout = {}
    for arn, record in records.items():
        value = json.loads(record.to_parameter_value())
        for key in ("domain_id", "project_id", "registry_arn"):
            del value[key]
        first_layout[arn] = parameter_name(prefix, arn)
        ssm.put_parameter(Name=first_layout[arn], Value=json.dumps(value), Type="String")
    return first_layout


def test_first_layout_mappings_are_migrated_without_a_duplicate(platform, capsys):
    sync_output(capsys)
    before = topic_assets(platform)
    first_layout = to_first_layout(platform)
    platform.control.clear_calls()

    out = sync_output(capsys)
    assert f"moved {len(before)} mappings of the first SSM layout" in out
    assert all(action_of(out, topic) == "unchanged" for topic in table_topics(platform))
    counts = platform.control.call_counts()
    assert counts[("datazone", "CreateAsset")] == 0
    assert counts[("datazone", "CreateAssetRevision")] == 0
    assert topic_assets(platform) == before
    assert {arn: [r.asset_id] for arn, r in stored_mappings(platform.settings).items()} == before
    assert not set(scoped_parameters(platform)) & set(first_layout.values())


def topics_the_foreign_run_look_reads(platform) -> set[str]:
    """The topics whose records the sync's look for foreign runs reads by name, as things stand
    before the sync: those of the sync's jobs in DataZone's lineage events, newest first (each
    job once, FAILED events skipped), down to the first whose run the topic's record names as
    the sync's (sync/lineage/foreign.py)."""
    items = platform.client("datazone").list_lineage_events(
        domainIdentifier=platform.settings.domain_id, sortOrder="DESCENDING", maxResults=50
    )["items"]
    records, registry = stored_mappings(platform.settings), set(platform.registry_topics())
    read, seen = set(), set()
    for item in items:
        summary = item["eventSummary"]["openLineageRunEventSummary"]
        job = (summary["job"]["namespace"], summary["job"]["name"])
        if job in seen or item["processingStatus"] == "FAILED":
            continue
        seen.add(job)
        topic = job[1].rpartition(HOP_JOB_SEPARATOR)[2]
        read.add(topic)
        record = records.get(platform.schema_arn(topic)) if topic in registry else None
        posted = PostedLineage.decode(record.lineage_fingerprint) if record else None
        if posted is not None and summary["runId"] in {
            hop_run_id(posted.base, side, job) for side in ("source", "sink")
        }:
            break
    return read


def test_a_run_over_a_few_topics_migrates_their_first_layout_mappings_by_name(platform, capsys):
    sync_output(capsys)
    before = topic_assets(platform)
    first_layout = to_first_layout(platform)
    kept, gone = "shop.sales.orders", TOPIC
    [gone_asset] = before[platform.schema_arn(gone)]
    platform.client("datazone").delete_asset(
        domainIdentifier=platform.settings.domain_id, identifier=gone_asset
    )
    run = SyncRun(LineageSyncResource.with_settings(platform.settings))
    ensure_custom_types(run)
    looked_at = topics_the_foreign_run_look_reads(platform)
    platform.control.clear_calls()

    # Two of the registry's topics: their mappings are read by name, not the whole prefix.
    outcomes = {o.topic: o for o in sync_topics(run, [kept, gone])}
    assert platform.control.call_counts()[("ssm", "GetParametersByPath")] == 0
    assert all(o.ok for o in outcomes.values()), {t: o.error for t, o in outcomes.items()}
    # Its first-layout record named this project's asset: moved, and the asset left alone.
    assert outcomes[kept].asset.action == "unchanged"
    # The look for foreign runs on the sync's jobs reads one more record by name: that of the
    # topic of each of the sync's jobs among the newest runs, down to the sync's own newest.
    assert looked_at, "the look reads at least the newest run's record"
    assert (
        run.mappings.migrated.items()
        <= {
            platform.schema_arn(topic): first_layout[platform.schema_arn(topic)]
            for topic in {kept, *looked_at}
            if platform.schema_arn(topic) in first_layout
        }.items()
    )
    assert platform.schema_arn(kept) in run.mappings.migrated
    assert (
        stored_mappings(platform.settings)[platform.schema_arn(kept)].asset_id
        == before[platform.schema_arn(kept)][0]
    )
    # Its asset is gone (GetAsset: ResourceNotFoundException): not this run's to move; the topic
    # gets a new asset and its own scoped mapping.
    assert outcomes[gone].asset.action == "created"
    assert stored_mappings(platform.settings)[platform.schema_arn(gone)].asset_id != gone_asset
    left = set(scoped_parameters(platform)) & set(first_layout.values())
    assert left == set(first_layout.values()) - set(run.mappings.migrated.values())


def test_an_empty_registry_retires_nothing_without_confirmation(
    platform, monkeypatch, capsys, caplog
):
    sync_output(capsys)
    before = topic_assets(platform)
    glue = platform.client("glue")
    for topic in platform.registry_topics():
        glue.delete_schema(SchemaId={"SchemaArn": platform.schema_arn(topic)})
    monkeypatch.setenv("DZLINEAGE_DELETED_SCHEMA_POLICY", "delete")

    out = sync_output(capsys)
    held = (
        f"retirement held back: registry {platform.settings.registry_name} lists no schemas, "
        f"so all {len(before)} mapped assets would be retired; set "
        "DZLINEAGE_RETIRE_WHEN_REGISTRY_EMPTY=true to confirm"
    )
    assert held in out
    assert held in [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert topic_assets(platform) == before

    monkeypatch.setenv("DZLINEAGE_RETIRE_WHEN_REGISTRY_EMPTY", "true")
    out = sync_output(capsys)
    assert out.count(" deleted ") == len(before)
    assert topic_assets(platform) == {}


def test_an_exhausted_retry_budget_is_named_with_operation_and_topic(platform, monkeypatch, capsys):
    monkeypatch.setenv("DZLINEAGE_MAX_ATTEMPTS", "2")
    platform.control.set_faults(
        FaultRule(service="datazone", operation="CreateAsset", kind="server-error")
    )
    assert dzlineage(["sync"]) == 1
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith(TOPIC))
    assert "FAILED" in line and "CreateAsset failed" in line
    assert "retry budget exhausted: all 2 attempts failed (DZLINEAGE_MAX_ATTEMPTS)" in line


def test_the_sandbox_honours_a_client_token_within_its_window_only(platform):
    datazone = platform.client("datazone")
    settings = platform.settings
    project = {"domainIdentifier": settings.domain_id}
    first = datazone.post_lineage_event(
        **project, event=lineage_event("run-a"), clientToken="token-window-test"
    )
    replay = datazone.post_lineage_event(
        **project, event=lineage_event("run-a"), clientToken="token-window-test"
    )
    assert replay["id"] == first["id"]
    with pytest.raises(datazone.exceptions.ConflictException, match="different parameters"):
        datazone.post_lineage_event(
            **project, event=lineage_event("run-b"), clientToken="token-window-test"
        )
    platform.control.set_client_tokens(window_seconds=0.2)
    time.sleep(0.3)
    later = datazone.post_lineage_event(
        **project, event=lineage_event("run-b"), clientToken="token-window-test"
    )
    assert later["id"] != first["id"]


def lineage_event(run_name: str) -> bytes:
    return json.dumps(
        {
            "eventType": "COMPLETE",
            "eventTime": "2026-01-01T00:00:00Z",
            "run": {"runId": "01890000-0000-7000-8000-00000000000" + str(len(run_name) % 10)},
            "job": {"namespace": "test", "name": run_name},
            "inputs": [],
            "outputs": [],
            "producer": "https://example.invalid/test",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        }
    ).encode()


def test_the_reconcile_job_lists_its_repairs_in_the_runs_metadata(platform, capsys):
    from dzlineage_dagster.definitions import defs

    sync_output(capsys)
    arn = platform.schema_arn(TOPIC)
    [asset_id] = topic_assets(platform)[arn]
    platform.client("datazone").delete_asset(
        domainIdentifier=platform.settings.domain_id, identifier=asset_id
    )
    job = defs.resolve_job_def("catalog_reconcile")

    def reconcile(dry_run: bool) -> dict:
        result = job.execute_in_process(
            instance=platform.instance,
            run_config={"ops": {"reconcile_catalog": {"config": {"dry_run": dry_run}}}},
        )
        assert result.success
        [output] = [e for e in result.all_node_events if e.event_type_value == "STEP_OUTPUT"]
        return {k: v.value for k, v in output.event_specific_data.metadata.items()}

    planned = reconcile(dry_run=True)
    assert planned["repair_count"] == 1
    assert planned["repairs"][0]["topic"] == TOPIC
    assert planned["repairs"][0]["repair"] == "recreate"
    assert topic_assets(platform).get(arn) is None, "a dry run writes nothing"

    done = reconcile(dry_run=False)
    assert done["repairs"][0]["detail"].endswith("-> created")
    assert done["search_pages"] == 1
    [new_id] = topic_assets(platform)[arn]
    assert stored_mappings(platform.settings)[arn].asset_id == new_id


def test_a_schema_another_project_cataloged_fails_by_name_and_maps_nothing(platform, capsys):
    """Another team's project has an asset of this schema: DataZone refuses a second asset with
    its externalIdentifier in the domain, and taking over another project's asset is not this
    sync's to do, so the topic fails saying where the asset must be, and the others complete."""
    datazone = platform.client("datazone")
    domain = platform.settings.domain_id
    analytics = datazone.create_project(domainIdentifier=domain, name="analytics")
    arn = platform.schema_arn(TOPIC)
    glue_form = {"databaseName": "lakehouse", "tableName": "sales_payments"}
    theirs = datazone.create_asset(
        domainIdentifier=domain,
        owningProjectIdentifier=analytics["id"],
        name="payments, as analytics cataloged it",
        typeIdentifier="amazon.datazone.GlueTableAssetType",
        formsInput=[{"formName": "GlueTableForm", "content": json.dumps(glue_form)}],
        externalIdentifier=arn,
    )

    assert dzlineage(["sync"]) == 1
    out = capsys.readouterr().out
    assert rows_of(out, TOPIC) == [
        [TOPIC, "FAILED", another_projects_asset(arn, platform.settings.project_id)]
    ]
    assert arn not in stored_mappings(platform.settings)
    assert all(action_of(out, t) == "created" for t in table_topics(platform) if t != TOPIC), out
    assert asset(platform, theirs["id"])["owningProjectId"] == analytics["id"]
