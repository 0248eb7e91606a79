"""The IAM policies under iam/ grant exactly what the project calls: a full sync, a new
schema version, a retirement (keep and delete), the catalog checks, and the headless sync
(dry run too) against the sandbox, every call the sandbox logged mapped to its IAM action.

An action the code calls that no policy grants fails (AccessDenied on AWS); an action a policy
grants that nothing called fails too (more privilege than needed).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from dzlineage_dagster.definitions import defs
from dzlineage_dagster.jobs import CATALOG_CHECKS_JOB, RETIRE_TOPICS_JOB
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.headless import run_headless_sync

IAM_DIRECTORY = Path(__file__).resolve().parent.parent / "iam"
#: The policy of each account; the Dagster+ agent note (iam/README.md) says how they combine.
POLICY_FILES = ("governance-account-policy.json", "data-account-policy.json")
#: The few API operations whose IAM action has another name (AWS's Service Authorization
#: Reference). None of the operations the project calls today differs; one that does goes here.
IAM_ACTION_OF_OPERATION: dict[tuple[str, str], str] = {}
#: IAM action prefix by the service name the call was signed for, where they differ.
IAM_PREFIX_OF_SIGNING_NAME: dict[str, str] = {}


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
        self.control.clear_calls()


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

    also_gone = "shop.sales.orders"
    platform.client("glue").delete_schema(SchemaId={"SchemaArn": platform.schema_arn(also_gone)})
    platform.control.clear_calls()
    monkeypatch.setenv("DZLINEAGE_DELETED_SCHEMA_POLICY", "delete")
    settings = LineageSettings.from_env()
    assert run_headless_sync(settings, dry_run=True, out=io.StringIO()) == 0
    out = io.StringIO()
    assert run_headless_sync(settings, dry_run=False, out=out) == 0, out.getvalue()
    used.collect()

    granted = granted_actions()
    all_granted = set().union(*granted.values())
    assert not used.actions - all_granted, (
        f"called but not granted: {sorted(used.actions - all_granted)}"
    )
    assert not all_granted - used.actions, (
        f"granted but never called: {sorted(all_granted - used.actions)}"
    )
    governance = granted["governance-account-policy.json"]
    assert {a.split(":")[0] for a in governance} == {"datazone"}
