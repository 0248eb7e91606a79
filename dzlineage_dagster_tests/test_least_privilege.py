"""The IAM policies under iam/ grant exactly what the project calls: a full sync, a new
schema version, a retirement (keep and delete), the catalog checks, the headless sync (dry run
too), `dzlineage trace` and `dzlineage orphans` against the sandbox, every call the sandbox
logged mapped to its IAM action.

An action the code calls that no policy grants fails (AccessDenied on AWS); an action a policy
grants that nothing called fails too (more privilege than needed). On the two-account sandbox,
each call's account says whose credentials made it: each side's calls are granted by that
side's policy, and the deployment's own identity only assumes the two roles.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.definitions import defs
from dzlineage_dagster.jobs import CATALOG_CHECKS_JOB, RETIRE_TOPICS_JOB
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.headless import run_headless_sync

IAM_DIRECTORY = Path(__file__).resolve().parent.parent / "iam"
#: The policy of each side's role (settings.AWS_SIDES), and the deployment's own identity's,
#: which only assumes them (iam/README.md).
SIDE_POLICY_FILES = {
    "data": "data-account-policy.json",
    "governance": "governance-account-policy.json",
}
RUNNER_POLICY_FILE = "runner-policy.json"
POLICY_FILES = (*SIDE_POLICY_FILES.values(), RUNNER_POLICY_FILE)
#: The trust policy of each side's role: the deployment assumes it with the side's external id.
TRUST_POLICY_FILES = {
    side: name.replace("-policy", "-trust-policy") for side, name in SIDE_POLICY_FILES.items()
}
#: The few API operations whose IAM action has another name (AWS's Service Authorization
#: Reference). None of the operations the project calls today differs; one that does goes here.
IAM_ACTION_OF_OPERATION: dict[tuple[str, str], str] = {}
#: IAM action prefix by the service name the call was signed for, where they differ.
IAM_PREFIX_OF_SIGNING_NAME: dict[str, str] = {}
#: Actions no policy grants: "No permissions are required to perform this operation" (the STS
#: API reference); the owners lookup asks who the sync runs as, to leave itself out.
NEEDS_NO_PERMISSION = {"sts:GetCallerIdentity"}


def iam_action(service: str, operation: str) -> str:
    special = IAM_ACTION_OF_OPERATION.get((service, operation))
    return special or f"{IAM_PREFIX_OF_SIGNING_NAME.get(service, service)}:{operation}"


def granted_actions() -> dict[str, set[str]]:
    """Policy file -> the actions its Allow statements grant."""
    granted = {}
    for name in POLICY_FILES:
        document = json.loads((IAM_DIRECTORY / name).read_text())
        assert document["Version"] == "2012-10-17"
        actions: set[str] = set()
        for statement in document["Statement"]:
            assert statement["Effect"] == "Allow", statement
            assert "*" not in "".join(statement["Action"]), f"wildcard action in {name}"
            actions |= set(statement["Action"])
        granted[name] = actions
    return granted


class UsedActions:
    """The IAM actions of the calls the project made, collected step by step so the test's own
    calls (seeding, deleting a schema, reading results) between the steps do not count."""

    def __init__(self, control) -> None:
        self.control = control
        self.actions: set[str] = set()
        control.clear_calls()

    def collect(self) -> None:
        for call in self.control.calls():
            self.actions.add(iam_action(call.service, call.operation or "?"))
        self.actions -= NEEDS_NO_PERMISSION
        self.control.clear_calls()


def run_lineage_reads(topic: str) -> None:
    """`dzlineage trace` (both directions, and the history) and `dzlineage orphans`, as a user
    runs them."""
    with redirect_stdout(io.StringIO()) as out:
        assert dzlineage(["trace", topic]) == 0
        assert dzlineage(["trace", topic, "--downstream"]) == 0
        assert dzlineage(["trace", topic, "--history"]) == 0
        assert dzlineage(["orphans"]) == 0
    assert topic in out.getvalue()


def test_the_shipped_policies_grant_exactly_the_actions_a_full_lifecycle_calls(
    platform, monkeypatch
):
    used = UsedActions(platform.control)
    first = platform.tick()
    assert platform.sync().success
    used.collect()

    topics = platform.registry_topics()
    table_topic = next(t for t in topics if t.startswith("shop.inventory."))
    platform.register_new_version(table_topic, "note")
    gone = "shop.sales.payments"
    platform.client("glue").delete_schema(SchemaId={"SchemaArn": platform.schema_arn(gone)})
    platform.control.clear_calls()
    second = platform.tick(cursor=first.cursor)
    assert platform.sync([table_topic]).success
    [retire] = [r for r in second.run_requests if r.job_name == RETIRE_TOPICS_JOB.name]
    assert (
        defs.resolve_job_def(RETIRE_TOPICS_JOB.name)
        .execute_in_process(run_config=retire.run_config, instance=platform.instance)
        .success
    )
    assert defs.resolve_job_def(CATALOG_CHECKS_JOB.name).execute_in_process(
        instance=platform.instance, raise_on_error=False
    )
    used.collect()

    # A changed topic, so the headless sync reads back a few events of its own (by id); then a
    # version the registry refuses (a column with no default), so the sync lists the versions
    # for the newest AVAILABLE one.
    platform.register_new_version(table_topic, "remark")
    refused = platform.register_with_column(table_topic, {"name": "refused", "type": "string"})
    assert refused["Status"] == "FAILURE"
    also_gone = "shop.sales.orders"
    platform.client("glue").delete_schema(SchemaId={"SchemaArn": platform.schema_arn(also_gone)})
    platform.control.clear_calls()
    monkeypatch.setenv("DZLINEAGE_DELETED_SCHEMA_POLICY", "delete")
    settings = LineageSettings.from_env()
    assert run_headless_sync(settings, dry_run=True, out=io.StringIO()) == 0
    out = io.StringIO()
    assert run_headless_sync(settings, dry_run=False, out=out) == 0, out.getvalue()
    run_lineage_reads(table_topic)
    used.collect()

    granted = granted_actions()
    all_granted = set().union(*(granted[name] for name in SIDE_POLICY_FILES.values()))
    assert not used.actions - all_granted, (
        f"called but not granted: {sorted(used.actions - all_granted)}"
    )
    assert not all_granted - used.actions, (
        f"granted but never called: {sorted(all_granted - used.actions)}"
    )
    prefixes = {
        side: {a.split(":")[0] for a in granted[f]} for side, f in SIDE_POLICY_FILES.items()
    }
    assert prefixes == {
        "data": {"glue", "kafka", "kafkaconnect"},
        "governance": {"datazone", "ssm"},
    }


def test_on_two_accounts_each_sides_calls_are_granted_by_that_sides_policy(sandbox, monkeypatch):
    from dzlineage_dagster.sandbox.demo.accounts import SIDE_ACCOUNTS
    from dzlineage_dagster_tests.platform import fresh_platform

    platform = fresh_platform(sandbox, monkeypatch, two_accounts=True)
    out = io.StringIO()
    assert run_headless_sync(LineageSettings.from_env(), dry_run=False, out=out) == 0, out
    run_lineage_reads("shop.sales.orders")

    side_of_account = {account: side for side, account in SIDE_ACCOUNTS.items()}
    used: dict[str, set[str]] = {}
    for call in platform.control.calls():
        side = side_of_account.get(call.account, "runner")
        used.setdefault(side, set()).add(iam_action(call.service, call.operation or "?"))
    used = {side: actions - NEEDS_NO_PERMISSION for side, actions in used.items()}
    granted = granted_actions()
    for side, policy in SIDE_POLICY_FILES.items():
        assert used[side] <= granted[policy], (
            f"the {side} side called, its policy does not grant: {used[side] - granted[policy]}"
        )
    # The deployment's own identity only assumes the roles, and its policy grants just that.
    assert used["runner"] == granted[RUNNER_POLICY_FILE] == {"sts:AssumeRole"}


def test_each_sides_trust_policy_lets_the_deployment_assume_it_with_an_external_id():
    for side, name in TRUST_POLICY_FILES.items():
        document = json.loads((IAM_DIRECTORY / name).read_text())
        [statement] = document["Statement"]
        assert statement["Effect"] == "Allow" and statement["Action"] == "sts:AssumeRole"
        assert set(statement["Principal"]) == {"AWS"}, "only the deployment's role, no service"
        external_id = statement["Condition"]["StringEquals"]["sts:ExternalId"]
        assert external_id == f"{side.upper()}_EXTERNAL_ID", name


def test_the_glue_lineage_policy_grants_exactly_what_glue_as_a_destination_adds(
    platform, monkeypatch
):
    """With glue among the destinations, the sync, its read-back, `trace`/`orphans --graph
    glue` and doctor call, beyond what the side policies (and doctor's) grant, exactly what
    iam/glue-lineage-policy.json grants, on ``*`` (docs/glue-lineage.md#permissions)."""
    monkeypatch.setenv("DZLINEAGE_LINEAGE_DESTINATIONS", "datazone,glue")
    used = UsedActions(platform.control)
    out = io.StringIO()
    assert run_headless_sync(LineageSettings.from_env(), dry_run=False, out=out) == 0, out
    topic = "shop.sales.orders"
    with redirect_stdout(io.StringIO()):
        assert dzlineage(["trace", topic, "--graph", "glue"]) == 0
        assert dzlineage(["orphans", "--graph", "glue"]) == 0
        assert dzlineage(["doctor"]) == 0
    used.collect()
    document = json.loads((IAM_DIRECTORY / "glue-lineage-policy.json").read_text())
    [statement] = document["Statement"]
    assert statement["Resource"] == "*"
    others = set().union(*granted_actions().values(), doctor_actions())
    assert used.actions - others == set(statement["Action"])


def doctor_actions() -> set[str]:
    document = json.loads((IAM_DIRECTORY / "doctor-policy.json").read_text())
    return {action for statement in document["Statement"] for action in statement["Action"]}
