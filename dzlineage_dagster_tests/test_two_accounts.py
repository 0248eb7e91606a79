"""The data side (registry, Glue catalog, MSK, MSK Connect) in one account and DataZone (with
the SSM mapping) in another, each reached through its own role: from the CLI with nothing but
environment variables, from the shipped `Definitions`, and with a side's role swapped, which
fails the way AWS answers a call in the wrong account, naming the side and its setting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from dagster import Definitions

from dzlineage_dagster.assets.common import kafka_topics
from dzlineage_dagster.definitions import build_resources, defs
from dzlineage_dagster.sandbox.demo.accounts import (
    SIDE_ACCOUNTS,
    account_administrator,
    side_external_id,
    side_role_arn,
    trust_policy,
)
from dzlineage_dagster.sandbox.server.app import SANDBOX_ACCOUNT_ID
from dzlineage_dagster.settings import side_role_variables

REPOSITORY = Path(__file__).resolve().parent.parent
#: The services each side's calls go to (settings.AWS_SIDES), by the sandbox's service names.
SIDE_SERVICES = {
    "data": {"glue", "kafka", "kafkaconnect"},
    "governance": {"datazone", "ssm"},
}
OTHER_SIDE = {"data": "governance", "governance": "data"}


@pytest.fixture
def two_accounts(sandbox, monkeypatch):
    from dzlineage_dagster_tests.platform import fresh_platform

    platform = fresh_platform(sandbox, monkeypatch, two_accounts=True)
    assert {platform.environment[side_role_variables(s)["role_arn"]] for s in SIDE_ACCOUNTS} == {
        f"arn:aws:iam::{account}:role/dzlineage-{side}" for side, account in SIDE_ACCOUNTS.items()
    }
    return platform


def dzlineage(environment: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """`dzlineage ...` in a fresh process that sees only ``environment`` (and where Python is)."""
    return subprocess.run(
        [sys.executable, "-m", "dzlineage_dagster.cli", *args],
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(REPOSITORY), **environment},
        capture_output=True,
        text=True,
        timeout=300,
    )


def swapped(environment: dict[str, str], side: str) -> dict[str, str]:
    """``environment`` with ``side``'s role (and external id) replaced by the other side's."""
    own, other = side_role_variables(side), side_role_variables(OTHER_SIDE[side])
    return {**environment, **{own[field]: environment[other[field]] for field in own}}


def accounts_by_service(calls) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for call in calls:
        found.setdefault(call.service, set()).add(call.account)
    return found


def test_the_cli_alone_syncs_a_registry_and_a_domain_in_different_accounts(two_accounts):
    platform = two_accounts
    synced = dzlineage(platform.environment, "sync")
    assert synced.returncode == 0, synced.stderr
    assert "0 failed" in synced.stdout

    # Each side's services were called in that side's account only, every call through a role
    # the deployment's own identity assumed.
    by_service = accounts_by_service(platform.control.calls())
    for side, services in SIDE_SERVICES.items():
        for service in services & set(by_service):
            assert by_service[service] == {SIDE_ACCOUNTS[side]}, (service, by_service[service])
    assert by_service["sts"] == {SANDBOX_ACCOUNT_ID}
    assert {"glue", "kafka", "kafkaconnect", "datazone", "ssm"} <= set(by_service)

    # The lineage landed in the governance account's domain, naming the data account's tables.
    traced = dzlineage(
        platform.environment, "trace", "shop.sales.orders", "--downstream", "--format", "json"
    )
    assert traced.returncode == 0, traced.stderr
    nodes = {node["id"] for node in json.loads(traced.stdout)["nodes"]}
    assert f"arn:aws:glue:us-east-1:{SIDE_ACCOUNTS['data']}:table/lakehouse/sales_orders" in nodes
    domain = platform.settings.domain_id
    # The project's topic assets (the demo's Glue table assets live in a project of their own).
    assets = platform.side_client("governance", "datazone").search(
        domainIdentifier=domain,
        searchScope="ASSET",
        owningProjectIdentifier=platform.settings.project_id,
    )["items"]
    assert len(assets) == len(platform.side_client("data", "glue").list_schemas()["Schemas"]) - 1
    # The mapping lives with the domain; the data account holds none of it.
    prefix = platform.settings.ssm_prefix
    for side, expected in (("governance", True), ("data", False)):
        parameters = platform.side_client(side, "ssm").get_parameters_by_path(
            Path=prefix, Recursive=True
        )["Parameters"]
        assert bool(parameters) is expected, side


@pytest.mark.parametrize(
    ("side", "what"),
    [("data", "Glue Schema Registry does not exist"), ("governance", "DataZone domain does not")],
)
def test_a_swapped_side_role_fails_naming_the_side_and_its_setting(two_accounts, side, what):
    platform = two_accounts
    platform.control.clear_calls()
    failed = dzlineage(swapped(platform.environment, side), "sync")
    assert failed.returncode == 1
    variable = side_role_variables(side)["role_arn"]
    assert what in failed.stderr
    assert f"the {side} side's role {variable}=" in failed.stderr
    assert f"set {variable} to a role in that account" in failed.stderr
    writes = [c for c in platform.control.calls() if c.operation.startswith(("Create", "Put"))]
    assert not writes, "a run with a side in the wrong account wrote before it failed"


def test_the_shipped_definitions_reach_each_side_with_its_role(two_accounts):
    platform = two_accounts
    topics = [
        s["SchemaName"] for s in platform.side_client("data", "glue").list_schemas()["Schemas"]
    ]
    platform.instance.add_dynamic_partitions(kafka_topics.name, sorted(topics))
    # As Dagster+ loads the code location: the resources from the environment, as EnvVars.
    shipped = Definitions(
        assets=defs.assets, jobs=defs.jobs, resources=build_resources(platform.environment)
    )
    assert platform.sync(sorted(topics), definitions=shipped).success
    by_service = accounts_by_service(platform.control.calls())
    assert by_service["datazone"] == {SIDE_ACCOUNTS["governance"]}
    assert by_service["glue"] == {SIDE_ACCOUNTS["data"]}


@pytest.mark.parametrize("side", ["data", "governance"])
def test_a_wrong_external_id_fails_naming_the_sides_external_id_setting(two_accounts, side):
    platform = two_accounts
    variables = side_role_variables(side)
    wrong = {**platform.environment, variables["role_external_id"]: "not-the-agreed-id"}
    failed = dzlineage(wrong, "sync")
    assert failed.returncode == 1
    assert f"the {side} side's role {variables['role_arn']}=" in failed.stderr
    assert "cannot be assumed; its trust policy must trust this identity with " in failed.stderr
    assert f"{variables['role_external_id']} as its sts:ExternalId" in failed.stderr
    assert "AccessDenied" in failed.stderr and "Traceback" not in failed.stderr


def set_trust(platform, side: str, external_id: str) -> None:
    """The side's role trusts the deployment's account with ``external_id`` only, as the side
    account's administrator sets it."""
    endpoint = platform.environment["AWS_ENDPOINT_URL"]
    base = platform.base_session()
    account_administrator(base, side, endpoint).client(
        "iam", endpoint_url=endpoint
    ).update_assume_role_policy(
        RoleName=side_role_arn(side).rsplit("/", 1)[1],
        PolicyDocument=trust_policy(base, endpoint, external_id),
    )


@pytest.mark.parametrize("side", ["data", "governance"])
def test_doctor_sends_a_broken_trust_policy_to_the_trust_policy_of_the_right_side(
    two_accounts, side
):
    """A side's trust policy that no longer takes the agreed external id: doctor's one FAIL
    row is that side's, names its role, its trust policy and its external id in the sync's own
    words, and asks for no action AWS does not have; the side's other checks are not run, the
    other side's are (its quotas included). Setting the trust policy right, as the row says,
    makes doctor pass."""
    from dzlineage_dagster_tests.test_doctor import assert_advice_is_real

    platform = two_accounts
    other = OTHER_SIDE[side]
    set_trust(platform, side, "another-agreed-id")
    doctor = dzlineage(platform.environment, "doctor", "--format", "json")
    assert doctor.returncode == 1, doctor.stderr
    rows = json.loads(doctor.stdout)["checks"]
    failed = [r for r in rows if r["status"] == "FAIL"]
    assert [(r["check"], r["subject"]) for r in failed] == [("identity", side)], failed
    [row] = failed
    variables = side_role_variables(side)
    assert row["detail"].startswith("sts.AssumeRole failed: AccessDenied"), row
    assert row["fix"].startswith(f"the {side} side's role {variables['role_arn']}="), row
    assert (
        f"its trust policy must trust this identity with {variables['role_external_id']} as "
        f"its sts:ExternalId (as iam/{side}-account-trust-policy.json does)"
    ) in row["fix"]
    assert "sts:AssumeRole on the role (as iam/runner-policy.json does)" in row["fix"]
    assert_advice_is_real(rows)
    # Nothing blames the other side: its rows pass, or wait for one of this side's checks.
    for r in rows:
        if r["subject"] == other or (r["check"] == "quota" and other in r["subject"]):
            assert r["status"] == "OK", r
    skipped = [
        r for r in rows if r["detail"] == f"not checked: the {side} side's role cannot be assumed"
    ]
    assert {r["subject"] for r in skipped} == {side} and len(skipped) >= 2, rows
    # The sync says it in the same words.
    sync = dzlineage(platform.environment, "sync")
    assert sync.returncode == 1 and row["fix"] in sync.stderr, sync.stderr

    set_trust(platform, side, side_external_id(side))
    doctor = dzlineage(platform.environment, "doctor", "--format", "json")
    assert doctor.returncode == 0, [
        r for r in json.loads(doctor.stdout)["checks"] if r["status"] != "OK"
    ]


#: A central lake account whose Glue Data Catalog holds the Iceberg tables.
CATALOG_ACCOUNT = "333333333333"


def catalog_owner_glue(platform):
    """Glue as the central lake account's administrator (a role of that account)."""
    base = platform.base_session()
    endpoint = platform.environment["AWS_ENDPOINT_URL"]
    credentials = base.client("sts", endpoint_url=endpoint).assume_role(
        RoleArn=f"arn:aws:iam::{CATALOG_ACCOUNT}:role/lake-admin", RoleSessionName="lake-admin"
    )["Credentials"]
    return boto3.client(
        "glue",
        endpoint_url=endpoint,
        region_name=base.region_name,
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
    )


def grant_catalog_reads(glue, region: str, grantee: str, database: str) -> None:
    """The lake account's Glue resource policy granting ``grantee``'s account the reads
    (AWS Glue developer guide, "Granting cross-account access")."""
    base = f"arn:aws:glue:{region}:{CATALOG_ACCOUNT}"
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:aws:iam::{grantee}:root"},
                "Action": ["glue:GetDatabase", "glue:GetTables", "glue:GetTable"],
                "Resource": [
                    f"{base}:catalog",
                    f"{base}:database/{database}",
                    f"{base}:table/{database}/*",
                ],
            }
        ],
    }
    glue.put_resource_policy(PolicyInJson=json.dumps(policy))


def test_the_glue_catalog_id_is_read_and_named_in_the_lineage(two_accounts):
    platform = two_accounts
    owner = catalog_owner_glue(platform)
    lakehouse = platform.settings.glue_database
    owner.create_database(DatabaseInput={"Name": lakehouse})
    owner.create_table(
        DatabaseName=lakehouse,
        TableInput={"Name": "central_only", "Parameters": {"table_type": "ICEBERG"}},
    )
    central = {**platform.environment, "DZLINEAGE_GLUE_CATALOG_ID": CATALOG_ACCOUNT}
    # Without the lake account's grant, AWS refuses the data role's reads: doctor names it.
    doctor = dzlineage(central, "doctor")
    assert doctor.returncode == 1, doctor.stdout
    rows = [line for line in doctor.stdout.splitlines() if "glue-catalog" in line]
    assert len(rows) == 1, doctor.stdout
    [row] = rows
    assert "AccessDeniedException" in row and "glue:PutResourcePolicy" in row, row
    assert f"in account {CATALOG_ACCOUNT}" in row, row

    grant_catalog_reads(owner, platform.environment["AWS_REGION"], SIDE_ACCOUNTS["data"], lakehouse)
    doctor = dzlineage(central, "doctor")
    assert not [
        line for line in doctor.stdout.splitlines() if "glue-catalog" in line and "FAIL" in line
    ], doctor.stdout
    assert dzlineage(central, "sync").returncode == 0

    traced = dzlineage(central, "trace", "shop.sales.orders", "--downstream", "--format", "json")
    nodes = {node["id"] for node in json.loads(traced.stdout)["nodes"]}
    assert f"arn:aws:glue:us-east-1:{CATALOG_ACCOUNT}:table/{lakehouse}/sales_orders" in nodes
    # The tables read are the central catalog's (CatalogId), not the data account's own.
    orphans = dzlineage(central, "orphans", "--format", "json")
    unfed = json.loads(orphans.stdout)["tables_without_upstream"]
    assert f"arn:aws:glue:us-east-1:{CATALOG_ACCOUNT}:table/{lakehouse}/central_only" in unfed
    assert not [table for table in unfed if "daily_revenue" in table], unfed


def test_the_relay_reads_the_cluster_as_the_data_side_and_posts_as_the_governance_side(
    two_accounts,
):
    from openlineage.client.event_v2 import OutputDataset

    from dzlineage_dagster.relay.build import build_relay
    from dzlineage_dagster.relay.settings import RelaySettings
    from dzlineage_dagster_tests.relay.events import run_event, to_json

    platform = two_accounts
    platform.control.clear_calls()
    relay = build_relay(
        RelaySettings.from_env(platform.environment),
        with_spool=False,
        environ=platform.environment,
    )
    event = run_event(outputs=[OutputDataset(namespace="s3://lake", name="revenue")])
    relay.post("two-accounts-relay-test", to_json(event))
    by_service = accounts_by_service(platform.control.calls())
    assert by_service["kafka"] == {SIDE_ACCOUNTS["data"]}
    assert by_service["datazone"] == {SIDE_ACCOUNTS["governance"]}


def test_the_platform_graph_reads_the_data_account_through_the_data_side_s_role(two_accounts):
    """The component takes both sides' roles from defs.yaml's settings, as the sync does."""
    from dzlineage_dagster.components import PlatformGraphComponent
    from dzlineage_dagster.components.platform_graph import SETTING_VARIABLES
    from dzlineage_dagster.sync.lineage.platform_graph import read_platform_graph

    platform = two_accounts
    settings = {k: v for k, v in platform.environment.items() if k in SETTING_VARIABLES}
    component = PlatformGraphComponent(settings=settings)
    state = read_platform_graph(component.sync_run())
    assert any(node.key[0] == "kafka" for node in state.nodes)
    by_service = accounts_by_service(platform.control.calls())
    assert by_service["glue"] == {SIDE_ACCOUNTS["data"]}
