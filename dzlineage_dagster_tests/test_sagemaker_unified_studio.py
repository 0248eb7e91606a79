"""The product in an Amazon SageMaker Unified Studio (DataZone V2) domain: the demo syncs with
its project's grants, and without a grant or membership the sync stops once, before anything
is written, naming what to add (docs/sagemaker-unified-studio.md)."""

from __future__ import annotations

import io
import json
import logging

import pytest

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.core.catalog.forms import KAFKA_TOPIC_ASSET_TYPE
from dzlineage_dagster.sandbox.demo.seed import TYPE_POLICY_DETAILS
from dzlineage_dagster.sandbox.server.ambiguities import Ambiguities
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.catalog.custom_types import ensure_custom_types
from dzlineage_dagster.sync.headless import run_headless_sync, start_run
from dzlineage_dagster_tests.platform import fresh_platform, writes
from dzlineage_dagster_tests.test_catalog_operators import rows_of
from dzlineage_dagster_tests.test_catalog_sync import table_topics, topic_assets
from dzlineage_dagster_tests.test_least_privilege import IAM_DIRECTORY, UsedActions, granted_actions

TYPE_POLICIES = ("CREATE_FORM_TYPE", "CREATE_ASSET_TYPE")


@pytest.fixture
def smus(sandbox, monkeypatch):
    """The demo platform on a V2 domain, its project granted what the product needs."""
    platform = fresh_platform(sandbox, monkeypatch, domain_version="V2")
    yield platform
    sandbox.control.clear_faults()
    sandbox.control.set_ambiguities(**Ambiguities().describe())


def domain(platform) -> dict:
    return platform.client("datazone").get_domain(identifier=platform.settings.domain_id)


def grants(platform, unit: str, policy: str) -> list[dict]:
    return platform.client("datazone").list_policy_grants(
        domainIdentifier=platform.settings.domain_id,
        entityType="DOMAIN_UNIT",
        entityIdentifier=unit,
        policyType=policy,
    )["grantList"]


def remove_type_grants(platform) -> None:
    root = domain(platform)["rootDomainUnitId"]
    for policy in TYPE_POLICIES:
        for grant in grants(platform, root, policy):
            platform.client("datazone").remove_policy_grant(
                domainIdentifier=platform.settings.domain_id,
                entityType="DOMAIN_UNIT",
                entityIdentifier=root,
                policyType=policy,
                principal=grant["principal"],
            )


def add_grant(platform, unit: str, project: str, policy: str, cascade: bool) -> None:
    platform.client("datazone").add_policy_grant(
        domainIdentifier=platform.settings.domain_id,
        entityType="DOMAIN_UNIT",
        entityIdentifier=unit,
        policyType=policy,
        principal={"project": {"projectDesignation": "OWNER", "projectIdentifier": project}},
        detail={TYPE_POLICY_DETAILS[policy]: {"includeChildDomainUnits": cascade}},
    )


def catalog_writes(platform) -> dict[str, int]:
    return writes(platform.control.call_counts(), "datazone", "ssm")


def custom_types(platform) -> list[str]:
    """The product's types that exist in the domain."""
    datazone = platform.client("datazone")
    found = []
    for name in ("KafkaSchemaFormType", "MskSourceReferenceFormType"):
        try:
            datazone.get_form_type(
                domainIdentifier=platform.settings.domain_id, formTypeIdentifier=name
            )
            found.append(name)
        except datazone.exceptions.ResourceNotFoundException:
            pass
    try:
        datazone.get_asset_type(
            domainIdentifier=platform.settings.domain_id, identifier=KAFKA_TOPIC_ASSET_TYPE.name
        )
        found.append(KAFKA_TOPIC_ASSET_TYPE.name)
    except datazone.exceptions.ResourceNotFoundException:
        pass
    return found


def assert_synced(platform, capsys) -> None:
    assert dzlineage(["sync"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert {rows_of(out, topic)[0][1] for topic in table_topics(platform)} == {"created"}
    assert all(len(ids) == 1 for ids in topic_assets(platform).values())


def test_the_demo_syncs_on_a_sagemaker_unified_studio_domain(smus, capsys):
    assert domain(smus)["domainVersion"] == "V2"
    smus.control.clear_calls()
    assert_synced(smus, capsys)
    # The start-up check and the authorization check share the run's one GetProject (3 before).
    assert smus.control.call_counts()[("datazone", "GetProject")] == 1
    assert dzlineage(["sync"]) == 0
    assert "nothing to do" in capsys.readouterr().out


def test_without_its_grants_the_sync_stops_once_and_writes_nothing_until_they_are_added(
    smus, capsys
):
    remove_type_grants(smus)
    root = domain(smus)["rootDomainUnitId"]
    project = smus.settings.project_id
    smus.control.clear_calls()

    for command in (["sync"], ["sync", "--dry-run"]):
        assert dzlineage(command) == 1
        err = capsys.readouterr().err
        assert err.count("could not start") == 1
        for policy in TYPE_POLICIES:
            assert f"policy {policy} is not granted to project {project} on domain unit" in err
            assert f"--entity-identifier {root} --policy-type {policy}" in err
        assert "nothing was written" in err and "dzlineage grant-policies --apply" in err
    # The Dagster job stops at the custom types, before any topic.
    result = smus.sync()
    assert not result.success
    failures = [e.step_failure_data.error.message for e in result.get_step_failure_events()]
    assert len(failures) == 1 and "CREATE_FORM_TYPE" in failures[0]
    assert catalog_writes(smus) == {}
    assert custom_types(smus) == [] and topic_assets(smus) == {}

    # The administrator's command lists them read-only, then adds them.
    assert dzlineage(["grant-policies"]) == 1
    listed = capsys.readouterr().out
    assert listed.count("MISSING policy") == 2 and "--apply" in listed
    assert catalog_writes(smus) == {}
    assert dzlineage(["grant-policies", "--apply"]) == 0
    assert capsys.readouterr().out.count("added ") == 2
    assert all(grants(smus, root, policy) for policy in TYPE_POLICIES)
    assert dzlineage(["grant-policies"]) == 0
    capsys.readouterr()
    assert_synced(smus, capsys)


def test_a_caller_outside_the_project_is_stopped_before_any_write(smus, capsys):
    me = smus.client("sts").get_caller_identity()["Arn"].replace(":sts::", ":iam::")
    smus.client("datazone").delete_project_membership(
        domainIdentifier=smus.settings.domain_id,
        projectIdentifier=smus.settings.project_id,
        member={"userIdentifier": me},
    )
    smus.control.clear_calls()
    assert dzlineage(["sync"]) == 1
    err = capsys.readouterr().err
    assert f"{me} is not a member of project {smus.settings.project_id}" in err
    assert "aws datazone create-project-membership" in err
    assert catalog_writes(smus) == {} and custom_types(smus) == []


def test_another_projects_asset_type_needs_use_asset_type(smus, capsys, monkeypatch):
    # The platform team's project made the types; the demo's project only uses them.
    ensure_custom_types(start_run(smus.settings, logging.getLogger("test")))
    datazone = smus.client("datazone")
    user = datazone.create_project(domainIdentifier=smus.settings.domain_id, name="catalog-b")
    root = domain(smus)["rootDomainUnitId"]
    for policy in TYPE_POLICIES:
        add_grant(smus, root, user["id"], policy, cascade=True)
    monkeypatch.setenv("DZLINEAGE_PROJECT_ID", user["id"])
    smus.control.clear_calls()

    assert dzlineage(["sync"]) == 1
    err = capsys.readouterr().err
    assert err.count("could not start") == 1
    assert f"policy USE_ASSET_TYPE is not granted to project {user['id']}" in err
    assert f"--entity-type ASSET_TYPE --entity-identifier {KAFKA_TOPIC_ASSET_TYPE.name}" in err
    # The Dagster job's topic step says it once too, before its first topic.
    result = smus.sync()
    failures = [e.step_failure_data.error.message for e in result.get_step_failure_events()]
    assert len(failures) == 1 and "policy USE_ASSET_TYPE is not granted" in failures[0]
    assert catalog_writes(smus) == {}

    assert dzlineage(["grant-policies", "--apply"]) == 0
    assert "added USE_ASSET_TYPE" in capsys.readouterr().out
    assert dzlineage(["sync"]) == 0
    owners = {
        item["assetItem"]["owningProjectId"]
        for item in datazone.search(
            domainIdentifier=smus.settings.domain_id, searchScope="ASSET", maxResults=50
        )["items"]
        if item["assetItem"]["typeIdentifier"] == KAFKA_TOPIC_ASSET_TYPE.name
    }
    assert owners == {user["id"]}
    assert LineageSettings.from_env().project_id == user["id"]


def child_unit_project(platform, monkeypatch) -> tuple[str, str, str]:
    """A 'Sales' domain unit below the root and a project of the caller's in it, in the settings."""
    datazone = platform.client("datazone")
    root = domain(platform)["rootDomainUnitId"]
    sales = datazone.create_domain_unit(
        domainIdentifier=platform.settings.domain_id, name="Sales", parentDomainUnitIdentifier=root
    )["id"]
    project = datazone.create_project(
        domainIdentifier=platform.settings.domain_id, name="sales-catalog", domainUnitId=sales
    )["id"]
    monkeypatch.setenv("DZLINEAGE_PROJECT_ID", project)
    return root, sales, project


def test_an_ancestors_grant_that_does_not_cascade_leaves_the_unit_without(
    smus, capsys, monkeypatch
):
    root, sales, project = child_unit_project(smus, monkeypatch)
    for policy in TYPE_POLICIES:
        add_grant(smus, root, project, policy, cascade=False)
    smus.control.clear_calls()
    assert dzlineage(["sync"]) == 1
    err = capsys.readouterr().err
    assert f"on domain unit 'Sales' ({sales})" in err
    assert f"--entity-identifier {root} " not in err  # the root's grant is there
    assert catalog_writes(smus) == {}
    assert dzlineage(["grant-policies", "--apply"]) == 0
    assert_synced(smus, capsys)


def test_where_every_ancestor_must_grant_too_no_type_is_half_created(smus, capsys, monkeypatch):
    smus.control.set_ambiguities(policy_ancestry="intersect")
    root, sales, project = child_unit_project(smus, monkeypatch)
    for policy in TYPE_POLICIES:
        add_grant(smus, sales, project, policy, cascade=True)
    # Enough under AWS's documented reading: the sync goes on, warning what the other needs,
    # and DataZone's refusal of the first type stops it.
    assert dzlineage(["sync"]) == 1
    err = capsys.readouterr().err
    assert f"CREATE_FORM_TYPE is not granted to project {project} on domain unit" in err
    assert err.count("could not start") == 1
    assert "every ancestor" in err and "AccessDeniedException" in err
    assert "Created before the refusal: nothing" in err
    assert custom_types(smus) == [] and topic_assets(smus) == {}
    assert dzlineage(["grant-policies", "--apply"]) == 0
    assert {
        g["principal"]["project"]["projectIdentifier"]
        for g in grants(smus, root, "CREATE_FORM_TYPE")
    } >= {project}
    assert_synced(smus, capsys)


def test_the_shipped_policies_with_the_v2_addendum_grant_what_a_v2_sync_calls(smus):
    used = UsedActions(smus.control)
    assert smus.sync().success
    used.collect()
    smus.register_new_version(table_topics(smus)[0], "note")
    smus.control.clear_calls()
    out = io.StringIO()
    assert run_headless_sync(LineageSettings.from_env(), dry_run=False, out=out) == 0
    used.collect()
    addendum = json.loads((IAM_DIRECTORY / "sagemaker-unified-studio-policy.json").read_text())
    v2_actions = {a for statement in addendum["Statement"] for a in statement["Action"]}
    granted = set().union(*granted_actions().values(), v2_actions)
    # GetCallerIdentity needs no permission (STS API reference: "No permissions are required").
    called = used.actions - {"sts:GetCallerIdentity"}
    assert not called - granted, f"called but not granted: {sorted(called - granted)}"
    assert v2_actions <= called, f"granted but never called: {sorted(v2_actions - called)}"
