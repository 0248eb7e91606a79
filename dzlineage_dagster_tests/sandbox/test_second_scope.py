"""The sandbox's second scope (`dzlineage sandbox --scopes two`): another team's CDC platform in
its own account and Region, reached by its own role. Each account sees only its own registry,
cluster, connectors, Glue database and change queue, as on AWS; each account's CloudTrail
events reach only its own queue; and one deployment syncs both registries into the one
DataZone domain, with their lineage, converging on a second run."""

from __future__ import annotations

import io
import json
import logging
import signal
import subprocess
from collections.abc import Callable
from functools import partial

import pytest
import yaml
from botocore.exceptions import ClientError
from dagster import DagsterInstance

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.core.changes.cloudtrail import read_message
from dzlineage_dagster.core.scopes import SCOPE_TAG
from dzlineage_dagster.sandbox.commands import run as run_command
from dzlineage_dagster.sandbox.demo.accounts import role_session
from dzlineage_dagster.sandbox.demo.second_scope import (
    FIRST_SCOPE,
    SECOND_ACCOUNT,
    SECOND_EXTERNAL_ID,
    SECOND_REGION,
    SECOND_ROLE_ARN,
    SECOND_SCOPE,
    seed_second_scope,
)
from dzlineage_dagster.sandbox.demo.seed import deployment_session, seed_platform
from dzlineage_dagster.sandbox.server.app import SANDBOX_ACCOUNT_ID
from dzlineage_dagster.sandbox.server.control import SANDBOX_REGION
from dzlineage_dagster.scopes import ScopeConfig, read_scopes
from dzlineage_dagster.settings import LineageSettings, aws_side_options
from dzlineage_dagster.sync.changes import run_queue_sync
from dzlineage_dagster.sync.headless import run_headless_sync, start_run
from dzlineage_dagster.sync.lineage.readback import last_sync_readback
from dzlineage_dagster_tests.clients import written_env_file
from dzlineage_dagster_tests.platform import DemoPlatform, writes
from dzlineage_dagster_tests.test_catalog_sync import topic_assets
from dzlineage_dagster_tests.test_cli import COMMAND, free_port
from dzlineage_dagster_tests.test_scopes_dagster import ScopedLocation

BILLING_TOPICS = (
    "billing.invoicing.invoice_lines",
    "billing.invoicing.invoices",
    "billing.ledger.entries",
)


class TwoScopes:
    """The demo platform (the first scope, in the deployment's account) and the billing platform
    (the second, in :data:`SECOND_ACCOUNT` and :data:`SECOND_REGION`), each with its change
    queue, seeded into the emptied sandbox."""

    def __init__(self, sandbox, monkeypatch) -> None:
        sandbox.control.reset()
        seeded = seed_platform(sandbox.endpoint_url, change_queue=True)
        seeded.update(
            seed_second_scope(
                sandbox.endpoint_url, seeded, region=SANDBOX_REGION, change_queue=True
            )
        )
        self.sandbox = sandbox
        self.environment = {**sandbox.environment(), **seeded}
        for name, value in self.environment.items():
            monkeypatch.setenv(name, value)
        self.scopes = {scope.name: scope for scope in read_scopes(self.environment)}
        #: The deployment's view: DataZone (shared by the scopes) with its own credentials.
        self.platform = DemoPlatform(sandbox, self.environment, DagsterInstance.ephemeral())
        sandbox.control.clear_calls()

    def session(self, scope: str, region: str | None = None):
        """A session with ``scope``'s credentials (the deployment's own for the first, the
        second's role for the second), in its Region unless told another."""
        base = deployment_session(region or SANDBOX_REGION)
        if scope == FIRST_SCOPE:
            return base
        return role_session(
            base,
            SECOND_ROLE_ARN,
            self.sandbox.endpoint_url,
            SECOND_EXTERNAL_ID,
            region_name=region or SECOND_REGION,
        )

    def client(self, scope: str, service: str, region: str | None = None):
        return self.session(scope, region).client(service, endpoint_url=self.sandbox.endpoint_url)

    def setting(self, scope: str, name: str) -> str:
        return self.scopes[scope].settings[name]

    def scope_run(self, scope: ScopeConfig) -> tuple[LineageSettings, dict[str, dict]]:
        """A scope's settings and AWS options, as a scope-aware CLI takes them: its settings,
        its data side with its Region and role, the governance side the deployment's."""
        scoped = scope.environ(self.environment)
        return LineageSettings.from_env(scoped), scope.side_options(aws_side_options(scoped))

    def sync(self, scope: ScopeConfig, *, from_queue: bool = False) -> str:
        """`dzlineage sync` (``from_queue``: ``--from-queue``) of one scope; its output."""
        settings, sides = self.scope_run(scope)
        out = io.StringIO()
        if from_queue:
            code = run_queue_sync(settings, out=out, aws_options=sides)
        else:
            code = run_headless_sync(settings, dry_run=False, out=out, aws_options=sides)
        assert code == 0, out.getvalue()
        return out.getvalue()


@pytest.fixture
def two_scopes(sandbox, monkeypatch) -> TwoScopes:
    return TwoScopes(sandbox, monkeypatch)


def test_the_sandbox_names_both_scopes_each_in_its_account_and_region(two_scopes):
    first, second = two_scopes.scopes[FIRST_SCOPE], two_scopes.scopes[SECOND_SCOPE]
    assert list(two_scopes.scopes) == [FIRST_SCOPE, SECOND_SCOPE]
    assert (first.region_name, first.role_arn) == (SANDBOX_REGION, None)
    assert (second.region_name, second.role_arn) == (SECOND_REGION, SECOND_ROLE_ARN)
    for scope, account, region in (
        (first, SANDBOX_ACCOUNT_ID, SANDBOX_REGION),
        (second, SECOND_ACCOUNT, SECOND_REGION),
    ):
        assert scope.settings["msk_cluster_arn"].split(":")[3:5] == [region, account]
        assert f"/{account}/" in scope.settings["change_queue_url"]
    # The deployment's own variables still name the first platform: tools that read one
    # registry serve the first scope.
    assert two_scopes.environment["DZLINEAGE_REGISTRY_NAME"] == first.settings["registry_name"]


@pytest.mark.parametrize("region", [SANDBOX_REGION, SECOND_REGION])
def test_each_account_lists_only_its_own_platform(two_scopes, region):
    def platform_of(scope: str) -> dict[str, set[str]]:
        def client(service: str):
            return two_scopes.client(scope, service, region)

        return {
            "registries": {
                r["RegistryName"] for r in client("glue").list_registries()["Registries"]
            },
            "databases": {d["Name"] for d in client("glue").get_databases()["DatabaseList"]},
            "clusters": {
                c["ClusterName"] for c in client("kafka").list_clusters_v2()["ClusterInfoList"]
            },
            "connectors": {
                c["connectorName"] for c in client("kafkaconnect").list_connectors()["connectors"]
            },
            "queues": set(client("sqs").list_queues().get("QueueUrls", [])),
            "rules": {r["Name"] for r in client("events").list_rules()["Rules"]},
        }

    first, second = platform_of(FIRST_SCOPE), platform_of(SECOND_SCOPE)
    # Each scope's platform is in its own account and Region only.
    home = first if region == SANDBOX_REGION else second
    away = second if region == SANDBOX_REGION else first
    assert home["registries"] and home["connectors"] and home["queues"] and home["rules"]
    assert all(not resources for resources in away.values()), away
    if region == SANDBOX_REGION:
        assert {"shop-cdc", "shop-cdc-keys"} == home["registries"]
    else:
        assert {"billing-cdc", "billing-cdc-keys"} == home["registries"]
        assert home["connectors"] == {"billing-debezium-source", "billing-iceberg-sink"}


def reads_of(two_scopes: TwoScopes, owner: str) -> list[tuple[str, Callable]]:
    """Reads of ``owner``'s registry, cluster, connector and change queue, each with the error
    code AWS answers a caller of another account (given a client factory)."""
    registry = two_scopes.setting(owner, "registry_name")
    cluster = two_scopes.setting(owner, "msk_cluster_arn")
    queue = two_scopes.setting(owner, "change_queue_url")
    [connector, *_] = two_scopes.client(owner, "kafkaconnect").list_connectors()["connectors"]
    return [
        (
            "EntityNotFoundException",
            lambda c: c("glue").get_registry(RegistryId={"RegistryName": registry}),
        ),
        ("NotFoundException", lambda c: c("kafka").describe_cluster_v2(ClusterArn=cluster)),
        (
            "NotFoundException",
            lambda c: c("kafkaconnect").describe_connector(connectorArn=connector["connectorArn"]),
        ),
        ("AccessDenied", lambda c: c("sqs").receive_message(QueueUrl=queue)),
    ]


def test_one_accounts_credentials_cannot_read_the_others_resources(two_scopes):
    for reader, owner in ((FIRST_SCOPE, SECOND_SCOPE), (SECOND_SCOPE, FIRST_SCOPE)):
        # In the owner's Region: only the account differs.
        region = SECOND_REGION if owner == SECOND_SCOPE else SANDBOX_REGION
        clients = partial(two_scopes.client, reader, region=region)
        for code, read in reads_of(two_scopes, owner):
            with pytest.raises(ClientError) as refused:
                read(clients)
            assert refused.value.response["Error"]["Code"] == code, (reader, code)
        # The owner's own credentials read them all.
        for _, read in reads_of(two_scopes, owner):
            read(partial(two_scopes.client, owner))


def test_a_queue_policy_granting_the_other_account_lets_it_read_that_queue(two_scopes):
    url = two_scopes.setting(SECOND_SCOPE, "change_queue_url")
    sqs = two_scopes.client(SECOND_SCOPE, "sqs")
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"AWS": f"arn:aws:iam::{SANDBOX_ACCOUNT_ID}:root"},
                "Action": "sqs:ReceiveMessage",
                "Resource": arn["QueueArn"],
            }
        ],
    }
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps(policy)})
    sqs.send_message(QueueUrl=url, MessageBody="granted")
    reader = two_scopes.client(FIRST_SCOPE, "sqs", SECOND_REGION)
    [message] = reader.receive_message(QueueUrl=url)["Messages"]
    assert message["Body"] == "granted"
    # The grant is ReceiveMessage's only.
    with pytest.raises(ClientError) as refused:
        reader.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    assert refused.value.response["Error"]["Code"] == "AccessDenied"


def test_each_scopes_changes_reach_its_own_queue_only(two_scopes):
    changed = {
        FIRST_SCOPE: "shop.sales.orders",
        SECOND_SCOPE: "billing.ledger.entries",
    }
    for scope, topic in changed.items():
        two_scopes.client(scope, "glue").update_schema(
            SchemaId={
                "RegistryName": two_scopes.setting(scope, "registry_name"),
                "SchemaName": topic,
            },
            Compatibility="FULL",
        )
    for scope, topic in changed.items():
        url = two_scopes.setting(scope, "change_queue_url")
        [message] = two_scopes.client(scope, "sqs").receive_message(
            QueueUrl=url, MaxNumberOfMessages=10
        )["Messages"]
        change = read_message(message["Body"], two_scopes.setting(scope, "registry_name"))
        assert (change.action, change.topic) == ("UpdateSchema", topic)
        detail = json.loads(message["Body"])
        region = SECOND_REGION if scope == SECOND_SCOPE else SANDBOX_REGION
        assert (detail["account"], detail["region"]) == (
            SECOND_ACCOUNT if scope == SECOND_SCOPE else SANDBOX_ACCOUNT_ID,
            region,
        )


def test_one_deployment_syncs_both_registries_into_the_one_domain_and_converges(two_scopes):
    scopes = list(two_scopes.scopes.values())
    reports = {scope.name: two_scopes.sync(scope) for scope in scopes}
    assert all("0 failed" in report for report in reports.values()), reports
    calls = two_scopes.sandbox.control.calls()
    # Each scope's data side was read in its own account, DataZone only in the deployment's.
    data_accounts = {c.account for c in calls if c.service in ("glue", "kafka", "kafkaconnect")}
    assert data_accounts == {SANDBOX_ACCOUNT_ID, SECOND_ACCOUNT}
    assert {c.account for c in calls if c.service == "datazone"} == {SANDBOX_ACCOUNT_ID}

    platform = two_scopes.platform
    assets = topic_assets(platform)
    registry_arns = {
        name: two_scopes.client(name, "glue").get_registry(
            RegistryId={"RegistryName": two_scopes.setting(name, "registry_name")}
        )["RegistryArn"]
        for name in two_scopes.scopes
    }
    by_registry = {
        name: {arn for arn in assets if arn.startswith(registry.replace(":registry/", ":schema/"))}
        for name, registry in registry_arns.items()
    }
    assert len(by_registry[SECOND_SCOPE]) == len(BILLING_TOPICS)
    assert by_registry[FIRST_SCOPE], "the demo platform's topics are assets too"
    assert all(len(ids) == 1 for ids in assets.values())

    # A billing table's lineage node, in its account's and Region's Glue catalog, has its topic
    # upstream.
    table = f"arn:aws:glue:{SECOND_REGION}:{SECOND_ACCOUNT}:table/billing_lake/ledger_entries"
    node = platform.client("datazone").get_lineage_node(
        domainIdentifier=platform.settings.domain_id, identifier=table
    )
    upstream = platform.upstream_source_identifiers(node, depth=2)
    assert any(source.endswith("/billing.ledger.entries") for source in upstream), upstream

    # Converged: each scope's registry is unchanged since its own last sync, and nothing is
    # written to DataZone. (The second run of each keeps what its version sweep learnt of the
    # registry's UpdatedTime, one PutParameter, as a one-registry sync does; the third writes
    # nothing at all.)
    two_scopes.sandbox.control.clear_calls()
    for scope in scopes:
        registry = scope.settings["registry_name"]
        assert f"registry {registry} unchanged since the last complete sync" in two_scopes.sync(
            scope
        )
    assert writes(two_scopes.sandbox.control.call_counts(), "datazone") == {}
    two_scopes.sandbox.control.clear_calls()
    for scope in scopes:
        two_scopes.sync(scope)
    assert writes(two_scopes.sandbox.control.call_counts(), "datazone", "ssm", "glue") == {}
    assert topic_assets(platform) == assets


def test_a_change_in_the_second_scope_is_synced_from_its_own_queue(two_scopes):
    """The demo on events, per scope: a new schema version in billing's registry reaches
    billing's queue only, and `dzlineage sync --from-queue` of that scope syncs exactly its
    topic, reading it by name in billing's account (no listing)."""
    for scope in two_scopes.scopes.values():
        two_scopes.sync(scope)
    platform = two_scopes.platform
    glue = two_scopes.client(SECOND_SCOPE, "glue")
    topic = "billing.ledger.entries"
    schema = {
        "RegistryName": two_scopes.setting(SECOND_SCOPE, "registry_name"),
        "SchemaName": topic,
    }
    latest = glue.get_schema_version(SchemaId=schema, SchemaVersionNumber={"LatestVersion": True})
    envelope = json.loads(latest["SchemaDefinition"])
    before = next(f for f in envelope["fields"] if f["name"] == "before")
    row = next(branch for branch in before["type"] if isinstance(branch, dict))
    row["fields"].append({"name": "memo", "type": ["null", "string"], "default": None})
    glue.register_schema_version(SchemaId=schema, SchemaDefinition=json.dumps(envelope))

    platform.control.clear_calls()
    out = two_scopes.sync(two_scopes.scopes[SECOND_SCOPE], from_queue=True)
    assert f"{topic}  synced" in out and "1 topics named by 1 messages, 0 failed" in out, out
    calls = platform.control.calls()
    assert ("glue", "ListSchemas") not in {(c.service, c.operation) for c in calls}
    assert {c.account for c in calls if c.service in ("sqs", "glue")} == {SECOND_ACCOUNT}
    # The first scope's queue saw nothing of it.
    first_queue = two_scopes.setting(FIRST_SCOPE, "change_queue_url")
    assert "Messages" not in two_scopes.client(FIRST_SCOPE, "sqs").receive_message(
        QueueUrl=first_queue
    )


def test_the_sandbox_command_with_two_scopes_prints_both_and_each_role_reads_its_registry(
    tmp_path,
):
    env_file = tmp_path / "sandbox.env"
    command = [
        "sandbox",
        "--port",
        str(free_port()),
        "--scopes",
        "two",
        "--env-file",
        str(env_file),
    ]
    process = subprocess.Popen([*COMMAND, *command], stdout=subprocess.DEVNULL)
    try:
        environment = written_env_file(process, env_file)
        first, second = read_scopes(environment)
        assert (first.name, second.name) == (FIRST_SCOPE, SECOND_SCOPE)
        endpoint = environment["AWS_ENDPOINT_URL"]
        for scope, session in (
            (first, deployment_session(SANDBOX_REGION)),
            (
                second,
                role_session(
                    deployment_session(SANDBOX_REGION),
                    second.role_arn,
                    endpoint,
                    second.role_external_id,
                    region_name=second.region_name,
                ),
            ),
        ):
            registries = session.client("glue", endpoint_url=endpoint).list_registries()
            names = {r["RegistryName"] for r in registries["Registries"]}
            assert scope.settings["registry_name"] in names
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    assert process.returncode == 0


def test_two_scopes_with_an_empty_sandbox_is_refused_naming_both_options(capsys):
    with pytest.raises(SystemExit) as refused:
        run_command("sandbox", ["--empty", "--scopes", "two"])
    assert refused.value.code == 2
    assert "--scopes two seeds a second platform beside the first; --empty seeds none" in (
        capsys.readouterr().err
    )


def test_a_topic_of_the_same_name_in_both_scopes_is_two_assets_that_never_meet(two_scopes, capsys):
    """Both teams run a `shop.sales.orders` (the same app in two accounts): one `dzlineage
    sync` across the scopes makes an asset for each registry's schema, a second converges,
    and each scope's read-back of its last sync reads only its own record of the name."""
    topic = "shop.sales.orders"
    first_glue = two_scopes.client(FIRST_SCOPE, "glue")
    first_registry = two_scopes.setting(FIRST_SCOPE, "registry_name")
    definition = first_glue.get_schema_version(
        SchemaId={"RegistryName": first_registry, "SchemaName": topic},
        SchemaVersionNumber={"LatestVersion": True},
    )["SchemaDefinition"]
    two_scopes.client(SECOND_SCOPE, "glue").create_schema(
        RegistryId={"RegistryName": two_scopes.setting(SECOND_SCOPE, "registry_name")},
        SchemaName=topic,
        DataFormat="AVRO",
        Compatibility="BACKWARD",
        SchemaDefinition=definition,
    )
    assert dzlineage(["sync"]) == 0, capsys.readouterr()
    capsys.readouterr()
    assets = topic_assets(two_scopes.platform)
    same_name = sorted(arn for arn in assets if arn.endswith(f"/{topic}"))
    assert len(same_name) == 2
    assert {arn.split(":")[4] for arn in same_name} == {SANDBOX_ACCOUNT_ID, SECOND_ACCOUNT}
    assert all(len(assets[arn]) == 1 for arn in same_name)

    two_scopes.sandbox.control.clear_calls()
    assert dzlineage(["sync"]) == 0
    assert writes(two_scopes.sandbox.control.call_counts(), "datazone") == {}
    assert topic_assets(two_scopes.platform) == assets

    # The first scope's topic has its connectors' lineage, read back from its own record; the
    # second's has none (no connector of billing writes it), and nothing of the first's.
    reports = {}
    for scope in two_scopes.scopes.values():
        settings, sides = two_scopes.scope_run(scope)
        run = start_run(settings, logging.getLogger("test"), sides)
        reports[scope.name] = last_sync_readback(run, [topic])
    assert all(report.ok for report in reports.values()), reports
    assert (reports[FIRST_SCOPE].topics, reports[SECOND_SCOPE].topics) == (1, 0)


def test_one_code_location_syncs_both_accounts_registries_through_its_sensors(
    two_scopes, monkeypatch
):
    """The issue's done-when, in Dagster: the code location loaded with the sandbox's
    DZLINEAGE_SCOPES (the demo in the deployment's account, billing in another account and
    Region behind its role) ticks each scope's registry sensor and runs what they request;
    both registries' topics become assets of the one domain, each read in its own account."""
    scopes = yaml.safe_load(two_scopes.environment["DZLINEAGE_SCOPES"])["scopes"]
    location = ScopedLocation(two_scopes.platform, monkeypatch, scopes)
    two_scopes.sandbox.control.clear_calls()
    for scope in (FIRST_SCOPE, SECOND_SCOPE):
        for request in location.tick(f"registry_schema_sensor__{scope}").run_requests:
            assert request.tags[SCOPE_TAG] == scope
            result = location.run(request)
            assert result.success, result.get_step_failure_events()
    keys = location.partition_keys()
    assert {f"{SECOND_SCOPE}/{topic}" for topic in BILLING_TOPICS} <= set(keys)
    assert all(key.split("/", 1)[0] in (FIRST_SCOPE, SECOND_SCOPE) for key in keys)
    accounts = {arn.split(":")[4] for arn in topic_assets(two_scopes.platform)}
    assert accounts == {SANDBOX_ACCOUNT_ID, SECOND_ACCOUNT}
    # Each registry was read with its own account's credentials.
    registry_reads = {
        call.account
        for call in two_scopes.sandbox.control.calls()
        if (call.service, call.operation) == ("glue", "ListSchemas")
    }
    assert registry_reads == {SANDBOX_ACCOUNT_ID, SECOND_ACCOUNT}


def test_a_scope_whose_role_does_not_exist_fails_alone_as_on_aws(two_scopes, capsys, monkeypatch):
    """A mistyped role of the second scope: AWS refuses to assume a role its account does not
    have (AccessDenied, as for a role that does not trust the caller), so the scope cannot
    start, and the first scope still syncs."""
    document = json.loads(two_scopes.environment["DZLINEAGE_SCOPES"])
    missing = f"arn:aws:iam::{SECOND_ACCOUNT}:role/dzlineage-dta"
    document["scopes"][1]["role_arn"] = missing
    monkeypatch.setenv("DZLINEAGE_SCOPES", json.dumps(document))
    with pytest.raises(ClientError, match="AccessDenied"):
        deployment_session(SANDBOX_REGION).client(
            "sts", endpoint_url=two_scopes.sandbox.endpoint_url
        ).assume_role(RoleArn=missing, RoleSessionName="typo", ExternalId=SECOND_EXTERNAL_ID)
    assert dzlineage(["sync", "-q"]) == 1
    out, err = capsys.readouterr()
    # Named by the scope's own keys, as written in DZLINEAGE_SCOPES, not by the deployment's
    # DZLINEAGE_DATA_ROLE_* variables the scope stands in for.
    assert (
        f"dzlineage sync: scope {SECOND_SCOPE}: could not start: registry_name='billing-cdc': "
        f"Glue Schema Registry could not be read: the scope's role_arn={missing} "
        "cannot be assumed; its trust policy must trust this identity with role_external_id "
        "as its sts:ExternalId"
    ) in err, err
    assert "DZLINEAGE_DATA_ROLE" not in err
    # The summary gives the first line of the scope's problem, not its last continuation.
    assert f"  {FIRST_SCOPE}     ok\n  {SECOND_SCOPE}  FAILED: could not start: registry_name=" in (
        out
    ), out
    assert out.rstrip().endswith(f"1 synced, 1 failed: {SECOND_SCOPE}")
