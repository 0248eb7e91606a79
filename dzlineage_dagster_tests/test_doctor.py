"""`dzlineage doctor` against the sandbox: all OK on the freshly seeded demo, and each check
broken in turn shows FAIL (or WARN) in its own row, with the fix, never a traceback."""

from __future__ import annotations

import json
import logging
import re
import shlex
import uuid
from functools import cache
from pathlib import Path

import botocore.session
import pytest
from moto.ssm.models import ssm_backends

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.core.aws.quotas import AWS_QUOTAS
from dzlineage_dagster.core.doctor import (
    IAM_PREFIXES,
    PARAMETER_CAPS,
    Status,
    iam_action,
    mapping_parameters_needed,
    short_source,
)
from dzlineage_dagster.resources import GlueDataCatalogResource, LineageSyncResource
from dzlineage_dagster.sandbox.server.app import SANDBOX_ACCOUNT_ID
from dzlineage_dagster.sandbox.server.control import SANDBOX_REGION
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster.sync.checks.doctor import CHECKS, run_doctor
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster_tests.test_least_privilege import IAM_DIRECTORY, POLICY_FILES


def doctor(capsys) -> tuple[int, list[dict[str, str]]]:
    """`dzlineage doctor --format json`: its exit code and its rows."""
    capsys.readouterr()
    code = dzlineage(["doctor", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is (code == 0)
    return code, report["checks"]


REPOSITORY = Path(__file__).resolve().parent.parent
#: ``service:Operation`` as IAM names an action: not an ARN's ``arn:aws:glue:REGION`` part.
ACTION_NAME = re.compile(r"(?<![\w:/])([a-z][a-z0-9-]*):([A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*)\b")
#: Condition keys the advice names beside actions (IAM User Guide, "AWS global and IAM
#: condition context keys"), not actions.
CONDITION_KEYS = {"sts:ExternalId", "aws:SourceArn"}


@cache
def botocore_operations(prefix: str) -> frozenset[str]:
    """The operations botocore's model of the service with IAM action prefix ``prefix`` names;
    empty when botocore knows no such service."""
    session = botocore.session.get_session()
    service = {iam: name for name, iam in IAM_PREFIXES.items()}.get(prefix, prefix)
    if service not in session.get_available_services():
        return frozenset()
    return frozenset(session.get_service_model(service).operation_names)


def unknown_actions(text: str) -> list[str]:
    """The IAM actions ``text`` names that no botocore service model has (``ssm:AssumeRole``)."""
    return [
        f"{prefix}:{operation}"
        for prefix, operation in ACTION_NAME.findall(text)
        if f"{prefix}:{operation}" not in CONDITION_KEYS
        and operation not in botocore_operations(prefix)
    ]


def assert_advice_is_real(rows: list[dict[str, str]]) -> None:
    """Every action a row names exists, and a policy file a denial's fix names grants it."""
    for row in rows:
        assert unknown_actions(row["detail"] + " " + row["fix"]) == [], row
        granted = re.search(r"^allow (\S+) to .*\(as (iam/[\w.-]+) does\)$", row["fix"])
        if granted:
            action, policy = granted.groups()
            assert action in policy_actions(policy.removeprefix("iam/")), row


def rows_of(rows: list[dict[str, str]], check: str) -> list[dict[str, str]]:
    return [row for row in rows if row["check"] == check]


def not_ok(rows: list[dict[str, str]]) -> list[tuple[str, str, str]]:
    return [(r["check"], r["subject"], r["status"]) for r in rows if r["status"] != "OK"]


def test_the_freshly_seeded_demo_is_all_ok(platform, capsys):
    code, rows = doctor(capsys)
    assert code == 0
    assert not_ok(rows) == []
    assert {row["check"] for row in rows} == {check.name for check in CHECKS}
    assert {row["subject"] for row in rows_of(rows, "identity")} == {"data", "governance"}
    # Read only: doctor wrote nothing anywhere.
    verbs = ("Create", "Put", "Post", "Update", "Delete", "Register")
    writes = [c for c in platform.control.calls() if (c.operation or "").startswith(verbs)]
    assert writes == []


def test_the_table_ends_with_the_verdict(platform, capsys):
    capsys.readouterr()
    assert dzlineage(["doctor"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["STATUS", "CHECK", "SUBJECT", "DETAIL", "FIX"]
    assert out.rstrip().endswith("0 FAIL: ready for the first sync")


@pytest.mark.parametrize(
    ("variable", "value", "check", "fix"),
    [
        ("DZLINEAGE_DOMAIN_ID", "dzd_nothere", "domain", "set DZLINEAGE_DOMAIN_ID"),
        ("DZLINEAGE_PROJECT_ID", "nothere", "project", "set DZLINEAGE_PROJECT_ID"),
        ("DZLINEAGE_REGISTRY_NAME", "nothere", "registry", "set DZLINEAGE_REGISTRY_NAME"),
        ("DZLINEAGE_GLUE_DATABASE", "nothere", "glue-catalog", "set DZLINEAGE_GLUE_DATABASE"),
    ],
)
def test_a_setting_that_names_nothing_fails_its_row(
    platform, capsys, monkeypatch, variable, value, check, fix
):
    monkeypatch.setenv(variable, value)
    code, rows = doctor(capsys)
    assert code == 1
    [failed] = [r for r in rows if r["status"] == "FAIL"]
    assert failed["check"] == check
    assert failed["fix"].startswith(fix)
    # What needs the broken one says so instead of failing the same way again.
    skipped = [r for r in rows if r["status"] == "WARN"]
    assert all(r["detail"].startswith("not checked: it needs ") for r in skipped), skipped


def test_an_incompatible_type_revision_fails_and_an_absent_one_will_be_created(platform, capsys):
    platform.client("datazone").create_form_type(
        domainIdentifier=platform.settings.domain_id,
        name="KafkaSchemaFormType",
        model={"smithy": "structure KafkaSchemaFormType {\n    @required\n    team: String\n}\n"},
        owningProjectIdentifier=platform.settings.project_id,
        status="ENABLED",
    )
    code, rows = doctor(capsys)
    assert code == 1
    types = {row["subject"]: row for row in rows_of(rows, "types")}
    kafka_schema = types["form type KafkaSchemaFormType"]
    assert kafka_schema["status"] == "FAIL"
    assert "revision 1 is incompatible" in kafka_schema["detail"]
    assert "team is required and not the product's" in kafka_schema["detail"]
    assert types["form type MskSourceReferenceFormType"]["status"] == "OK"
    assert "the first sync creates it" in types["asset type KafkaTopicAssetType"]["detail"]


def test_types_a_sync_made_are_compatible_and_the_next_sync_is_not_the_first(platform, capsys):
    assert platform.sync().success
    capsys.readouterr()
    code = dzlineage(["doctor", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert all("holds the product's" in row["detail"] for row in rows_of(report["checks"], "types"))
    # The mapping holds the sync's records: doctor no longer speaks of a first sync.
    assert report["synced_before"] is True
    assert report["verdict"].endswith("0 FAIL: ready to sync"), report["verdict"]
    [mapping] = rows_of(report["checks"], "ssm-mapping")
    assert mapping["detail"].endswith("records of an earlier sync"), mapping


def test_parameter_store_near_its_cap_fails_the_capacity_row(platform, capsys, request):
    """Another application's parameters fill the account's standard tier: the mapping of the
    demo's topics no longer fits."""
    topics = len(platform.registry_topics())
    needed = mapping_parameters_needed(topics, layout=platform.settings.ssm_mapping_layout)
    foreign = PARAMETER_CAPS["Standard"] - needed + 1
    backend = ssm_backends[SANDBOX_ACCOUNT_ID][SANDBOX_REGION]
    names = [f"/other-application/setting-{number}" for number in range(foreign)]
    # Gone after the test: the session's sandbox is reset by the next `platform` only, and each
    # parameter PutParameter creates counts the account's parameters (the tier caps).
    request.addfinalizer(lambda: backend.delete_parameters(names))
    for name in names:
        backend.put_parameter(
            name=name,
            description=None,
            value="x",
            parameter_type="String",
            allowed_pattern=None,
            keyid=None,
            overwrite=False,
            tags=None,
            data_type="text",
            tier=None,
            policies=None,
        )
    code, rows = doctor(capsys)
    assert code == 1
    [capacity] = rows_of(rows, "ssm-capacity")
    assert capacity["status"] == "FAIL"
    assert f"{foreign:,} parameters in the account" in capacity["detail"]
    assert "1 over the standard tier's cap" in capacity["detail"]


def test_a_quota_below_the_pacing_warns(platform, capsys):
    """The account's CreateAsset quota (the sandbox's own figure, not the product's table)
    is lower than the 20 TPS the client paces at."""
    platform.control.set_pacing(quotas="datazone.CreateAsset=10")
    try:
        code, rows = doctor(capsys)
    finally:
        platform.control.set_pacing()
    assert code == 0
    assert not_ok(rows) == [("quota", "datazone.CreateAsset", "WARN")]
    [low] = [r for r in rows if r["status"] == "WARN"]
    assert "is 10 TPS; the client paces at 20 TPS (Amazon DataZone User Guide" in low["detail"]
    assert low["fix"].startswith("set DZLINEAGE_CLIENT_RATE_LIMITS=aws,datazone.CreateAsset=10")


def test_a_frozen_updated_time_warns_that_the_version_sweep_finds_new_versions(platform, capsys):
    platform.control.set_ambiguities(schema_updated_time="frozen")
    code, rows = doctor(capsys)
    assert code == 0
    assert not_ok(rows) == [("updated-time", "Glue Schema Registry", "WARN")]
    [row] = rows_of(rows, "updated-time")
    assert "UpdatedTime does not move with new versions" in row["detail"]
    assert "the version sweep finds each within 60 ticks" in row["detail"]


def test_a_debezium_connector_whose_openlineage_names_topics_unknown_is_named(platform, capsys):
    """Debezium's own OpenLineage on, and no property its topics' Kafka namespace comes from:
    its topic events say `kafka://unknown:unknown`. The row names the connector and the
    property to set; setting it clears the row."""
    connect = platform.client("kafkaconnect")
    (summary,) = [
        c
        for c in connect.list_connectors()["connectors"]
        if c["connectorName"] == "shop-debezium-source"
    ]

    def update(**settings: str) -> None:
        described = connect.describe_connector(connectorArn=summary["connectorArn"])
        connect.update_connector(
            connectorArn=summary["connectorArn"],
            currentVersion=described["currentVersion"],
            connectorConfiguration={**described["connectorConfiguration"], **settings},
        )

    update(**{"openlineage.integration.enabled": "true"})
    code, rows = doctor(capsys)
    assert code == 0
    assert not_ok(rows) == [("connectors", "shop-debezium-source", "WARN")]
    (row,) = [r for r in rows_of(rows, "connectors") if r["status"] == "WARN"]
    assert "its topics kafka://unknown:unknown: `dzlineage relay` maps them" in row["detail"]
    assert row["fix"].startswith(
        "set openlineage.integration.dataset.kafka.bootstrap.servers=<a broker of the cluster"
    )
    assert row["fix"].endswith("on connector shop-debezium-source")

    brokers = platform.client("kafka").get_bootstrap_brokers(
        ClusterArn=platform.settings.msk_cluster_arn
    )
    update(
        **{
            "openlineage.integration.dataset.kafka.bootstrap.servers": brokers[
                "BootstrapBrokerStringSaslIam"
            ]
        }
    )
    code, rows = doctor(capsys)
    assert code == 0 and not_ok(rows) == []


#: (service, operation the fault denies, the check whose row fails, the IAM action to allow)
DENIALS = [
    ("sts", "GetCallerIdentity", "identity", "sts:GetCallerIdentity"),
    ("glue", "GetRegistry", "registry", "glue:GetRegistry"),
    ("glue", "GetDatabase", "glue-catalog", "glue:GetDatabase"),
    ("kafkaconnect", "ListConnectors", "connectors", "kafkaconnect:ListConnectors"),
    ("kafka", "DescribeClusterV2", "msk", "kafka:DescribeClusterV2"),
    ("ssm", "GetParametersByPath", "ssm-mapping", "ssm:GetParametersByPath"),
    ("datazone", "GetDomain", "domain", "datazone:GetDomain"),
    ("datazone", "GetProject", "project", "datazone:GetProject"),
    ("datazone", "Search", "asset-creation", "datazone:Search"),
    ("datazone", "GetFormType", "types", "datazone:GetFormType"),
    ("datazone", "ListLineageEvents", "lineage-reads", "datazone:ListLineageEvents"),
    ("ssm", "DescribeParameters", "ssm-capacity", "ssm:DescribeParameters"),
    ("servicequotas", "ListServiceQuotas", "quota", "servicequotas:ListServiceQuotas"),
    ("glue", "GetSchema", "updated-time", "glue:GetSchema"),
]


def test_each_denied_read_fails_its_row_naming_the_action_to_allow(platform, capsys):
    for service, operation, check, action in DENIALS:
        platform.control.set_faults(FaultRule(service, operation, "access-denied"))
        code, rows = doctor(capsys)
        assert code == 1, operation
        failed = [r for r in rows if r["status"] == "FAIL"]
        assert {r["check"] for r in failed} == {check}, (operation, failed)
        # botocore's name of the service, as the row names the call.
        call = f"{'service-quotas' if service == 'servicequotas' else service}.{operation}"
        for row in failed:
            assert row["detail"].startswith(f"{call} failed: "), row
            assert row["detail"].split(" failed: ")[1].startswith("AccessDeniedException")
            if action == "sts:GetCallerIdentity":
                assert row["fix"].startswith(f"{action} needs no permission"), row
                continue
            assert row["fix"].startswith(f"allow {action} to the {row['subject']} side"), row
            assert "(as iam/" in row["fix"], row
        assert_advice_is_real(failed)
    # Each side's identity is its own row.
    platform.control.set_faults(FaultRule("sts", "GetCallerIdentity", "access-denied"))
    _, rows = doctor(capsys)
    assert {r["subject"] for r in rows if r["status"] == "FAIL"} == {"data", "governance"}
    # Two checks are not a single read: `authorization` (a denied grant read is a WARN, the sync
    # goes on and DataZone decides) and `lineage-landed` (its reads are `lineage-reads`' and
    # `ssm-mapping`'s, whose denial leaves it not checked); each has its own test below.
    # `kafka-names` makes no call of its own (tests/relay/test_relay_kafka_identity.py).
    # `change-queue` calls nothing unless a queue is set: test_change_queue.py denies its call.
    # The Glue lineage rows read only where glue is a destination: test_glue_lineage_read.py.
    own_tests = {
        "authorization",
        "lineage-landed",
        "kafka-names",
        "change-queue",
        "glue-lineage",
        "glue-lineage-landed",
    }
    assert {check for _, _, check, _ in DENIALS} == {check.name for check in CHECKS} - own_tests


def test_a_denied_quota_read_is_the_row_of_the_side_whose_credentials_read_it(platform, capsys):
    """Each service's quotas are read with the credentials of the side that calls it: a
    refusal is that side's row (Glue's is the data side's), and the other services are read."""
    platform.control.set_faults(FaultRule("servicequotas", "ListServiceQuotas", "access-denied"))
    _, rows = doctor(capsys)
    failed = {
        (r["subject"], r["fix"].split(":", 2)[1].split(" to ")[0])
        for r in rows
        if r["status"] == "FAIL"
    }
    assert {subject for subject, _ in failed} == {"data", "governance"}
    assert all(action == "ListServiceQuotas" for _, action in failed), failed


def test_every_iam_action_the_product_names_exists_in_botocore():
    """The advice in the code, the docs and iam/ names only actions AWS has: no
    ``ssm:AssumeRole`` (AssumeRole is STS's), nothing misspelt."""
    texts = [
        *(
            path
            for path in (REPOSITORY / "dzlineage_dagster").rglob("*.py")
            if "sandbox" not in path.parts
        ),
        *(REPOSITORY / "docs").glob("*.md"),
        REPOSITORY / "README.md",
        *(REPOSITORY / "iam").iterdir(),
    ]
    contents = {str(path.relative_to(REPOSITORY)): path.read_text() for path in texts}
    named = sum(len(ACTION_NAME.findall(text)) for text in contents.values())
    assert named > 50  # the scan sees the actions it is meant to
    unknown = {name: unknown_actions(text) for name, text in contents.items()}
    assert {name: found for name, found in unknown.items() if found} == {}
    assert unknown_actions("allow ssm:AssumeRole, datazone:AssumeRole") == [
        "ssm:AssumeRole",
        "datazone:AssumeRole",
    ]


def test_the_doctor_and_v2_only_actions_are_those_of_their_policies_no_side_grants():
    from dzlineage_dagster.core.doctor import DOCTOR_ONLY_ACTIONS, SAGEMAKER_ONLY_ACTIONS

    sides = set().union(*(policy_actions(name) for name in POLICY_FILES))
    assert policy_actions("doctor-policy.json") - sides == DOCTOR_ONLY_ACTIONS
    assert policy_actions("sagemaker-unified-studio-policy.json") - sides == SAGEMAKER_ONLY_ACTIONS


def test_the_docs_list_every_check_and_every_paced_operation_with_its_source():
    page = (Path(__file__).resolve().parent.parent / "docs" / "doctor.md").read_text()
    checks_table, quotas_table = page.split("## Quotas", 1)
    for check in CHECKS:
        assert f"| `{check.name}`" in checks_table, check.name
    rows = [line for line in quotas_table.splitlines() if line.startswith("| ")]
    for name, quota in AWS_QUOTAS.items():
        operation = name.split(".")[1]
        source = "assumed" if not quota.published else short_source(quota.source)
        [row] = [r for r in rows if re.search(rf"\b{operation}\b(?!\*)", r.split(" | ")[0])]
        assert f"| {quota.rate:g}" in row and source in row, (name, row)


def test_a_side_whose_resources_act_as_different_principals_warns(platform, sandbox):
    """The identity check asks each resource's own client: a resource given other credentials
    (another IAM user here) shows up in its side's row."""
    iam = sandbox.client("iam")
    user = f"catalog-reader-{uuid.uuid4().hex[:8]}"
    iam.create_user(UserName=user)
    key = iam.create_access_key(UserName=user)["AccessKey"]
    resource = LineageSyncResource.with_settings(platform.settings)
    other = {
        "aws_access_key_id": key["AccessKeyId"],
        "aws_secret_access_key": key["SecretAccessKey"],
    }
    resource = resource.model_copy(update={"data_catalog": GlueDataCatalogResource(**other)})
    rows = run_doctor(SyncRun(resource, logging.getLogger("test"))).results
    identity = {row.subject: row for row in rows if row.check == "identity"}
    assert identity["governance"].status is Status.OK
    assert identity["data"].status is Status.WARN
    assert (
        f"data_catalog as arn:aws:iam::{SANDBOX_ACCOUNT_ID}:user/{user}" in identity["data"].detail
    )


def test_missing_settings_stop_doctor_before_any_check(sandbox_env, monkeypatch, capsys):
    for variable in ("DZLINEAGE_DOMAIN_ID", "DZLINEAGE_PROJECT_ID"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("DZLINEAGE_REGISTRY_NAME", "shop-cdc")
    capsys.readouterr()
    assert dzlineage(["doctor"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("dzlineage doctor: ")
    assert "DZLINEAGE_DOMAIN_ID" in captured.err


def test_the_doctor_policy_and_the_syncs_grant_every_call_doctor_makes(platform, capsys):
    """After a sync (so lineage events and nodes exist to read), every call of doctor's maps to
    an action one of iam/'s policies grants, and iam/doctor-policy.json grants only what doctor
    calls. STS GetCallerIdentity needs no permission (the STS API reference)."""
    assert platform.sync().success
    platform.control.clear_calls()
    code, _ = doctor(capsys)
    assert code == 0
    called = {
        iam_action(
            f"{'service-quotas' if c.service == 'servicequotas' else c.service}.{c.operation}"
        )
        for c in platform.control.calls()
    } - {"sts:GetCallerIdentity"}
    granted = {name: policy_actions(name) for name in (*POLICY_FILES, "doctor-policy.json")}
    assert called - set().union(*granted.values()) == set()
    assert granted["doctor-policy.json"] - called == set()


def policy_actions(name: str) -> set[str]:
    document = json.loads((IAM_DIRECTORY / name).read_text())
    return {
        action
        for statement in document["Statement"]
        for action in (
            [statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"]
        )
    }


def test_a_v2_domain_without_the_type_grants_fails_the_authorization_row(
    sandbox, monkeypatch, capsys
):
    """On a SageMaker Unified Studio domain whose project lost its grants, doctor names each
    missing policy with the exact grant to add, and still writes nothing."""
    from dzlineage_dagster_tests.platform import fresh_platform
    from dzlineage_dagster_tests.test_sagemaker_unified_studio import remove_type_grants

    platform = fresh_platform(sandbox, monkeypatch, domain_version="V2")
    code, rows = doctor(capsys)
    assert code == 0, not_ok(rows)
    assert [r["status"] for r in rows_of(rows, "authorization")] == ["OK"]

    remove_type_grants(platform)
    code, rows = doctor(capsys)
    assert code == 1
    failed = [r for r in rows if r["status"] == "FAIL"]
    assert {r["check"] for r in failed} == {"authorization"}
    for policy in ("CREATE_FORM_TYPE", "CREATE_ASSET_TYPE"):
        [row] = [r for r in failed if f"--policy-type {policy}" in r["fix"]]
        assert row["fix"].startswith("aws datazone add-policy-grant"), row
        assert f"--domain-identifier {platform.settings.domain_id}" in row["fix"]


def test_a_missing_membership_points_at_the_membership_line_that_fixes_it(
    sandbox, monkeypatch, capsys
):
    """V2, the sync's principal no longer a member of the project: doctor, the sync and
    grant-policies all point at the `aws datazone create-project-membership` line a project
    owner runs (grant-policies --apply adds no membership, and says so); making that call
    makes doctor pass."""
    from dzlineage_dagster_tests.platform import fresh_platform

    platform = fresh_platform(sandbox, monkeypatch, domain_version="V2")
    settings = platform.settings
    # moto's caller is an IAM user with an STS-styled ARN; DataZone names it by its IAM ARN.
    me = platform.client("sts").get_caller_identity()["Arn"].replace(":sts::", ":iam::")
    datazone = platform.client("datazone")
    datazone.delete_project_membership(
        domainIdentifier=settings.domain_id,
        projectIdentifier=settings.project_id,
        member={"userIdentifier": me},
    )
    code, rows = doctor(capsys)
    assert code == 1
    [row] = [r for r in rows if r["status"] == "FAIL"]
    assert row["check"] == "authorization" and f"{me} is not a member" in row["detail"], row
    assert row["fix"].startswith(
        "as an owner of the project: aws datazone create-project-membership"
    )
    assert "grant-policies" not in row["fix"]
    assert_advice_is_real(rows)

    assert dzlineage(["grant-policies", "--apply"]) == 1
    assert "--apply adds no membership: a project owner runs" in capsys.readouterr().out
    assert dzlineage(["sync"]) == 1
    refused = capsys.readouterr().err
    assert "a project owner adds the membership with the `aws datazone" in refused
    assert "grant-policies" not in refused

    # The line, as a project owner runs it.
    arguments = shlex.split(row["fix"].split(": ", 1)[1])
    option = dict(zip(arguments[3::2], arguments[4::2], strict=True))
    assert arguments[:3] == ["aws", "datazone", "create-project-membership"]
    datazone.create_project_membership(
        domainIdentifier=option["--domain-identifier"],
        projectIdentifier=option["--project-identifier"],
        member=json.loads(option["--member"]),
        designation=option["--designation"],
    )
    code, rows = doctor(capsys)
    assert code == 0, not_ok(rows)

    # A read the check needs, denied: the row names the action and the V2 policy that grants it.
    platform.control.set_faults(FaultRule("datazone", "ListPolicyGrants", "access-denied"))
    try:
        _, rows = doctor(capsys)
    finally:
        platform.control.clear_faults()
    [row] = rows_of(rows, "authorization")
    assert row["status"] == "WARN" and "could not be checked" in row["detail"], row
    assert row["fix"].startswith("allow datazone:ListPolicyGrants to the governance side's"), row
    assert row["fix"].endswith("(as iam/sagemaker-unified-studio-policy.json does)"), row
    assert_advice_is_real(rows)


def test_lineage_that_did_not_land_on_the_tables_nodes_fails_the_lineage_landed_row(
    platform, monkeypatch, capsys
):
    """Before any sync the read-back has nothing to compare; after a sync whose Glue naming
    DataZone files beside the tables' ARNs, one FAIL row per topic names both nodes."""
    from dzlineage_dagster.sync.stages import lineage as lineage_stage
    from dzlineage_dagster_tests.test_lineage_readback import (
        DEMO_LANDINGS,
        openlineage_glue_spec,
    )

    _, rows = doctor(capsys)
    [before] = rows_of(rows, "lineage-landed")
    assert before["status"] == "OK" and "0 topics" in before["detail"], before

    monkeypatch.setattr(lineage_stage, "glue_table_spec", openlineage_glue_spec)
    assert dzlineage(["sync"]) == 1
    code, rows = doctor(capsys)
    assert code == 1
    landed = rows_of(rows, "lineage-landed")
    assert len(landed) == DEMO_LANDINGS
    assert {r["status"] for r in landed} == {"FAIL"}
    [orders] = [r for r in landed if r["subject"] == "shop.sales.orders"]
    assert orders["detail"].startswith("expected the Glue table's node arn:aws:glue:"), orders
    assert "/table/lakehouse/sales_orders" in orders["detail"].split("found", 1)[1]
