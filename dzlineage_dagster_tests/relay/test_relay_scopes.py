"""The relay across scopes (DZLINEAGE_SCOPES): producers' names of every scope's topics, Glue
tables and Debezium jobs map to that scope's nodes, each scope's cluster, connectors and Glue
catalog read in its own account and Region with its role; the sandbox's second scope is the
billing platform in account 333333333333 and eu-west-1 (docs/relay.md, "Scopes")."""

from __future__ import annotations

import pytest
from openlineage.client.event_v2 import InputDataset, OutputDataset

from dzlineage_dagster.core.identity.kafka import UNKNOWN_NAMESPACE
from dzlineage_dagster.sandbox.demo.second_scope import (
    FIRST_SCOPE,
    SECOND_ACCOUNT,
    SECOND_REGION,
    SECOND_SCOPE,
)
from dzlineage_dagster_tests.relay.events import debezium_events, run_event
from dzlineage_dagster_tests.relay.test_relay_access import relay_with
from dzlineage_dagster_tests.relay.test_relay_kafka_identity import forwarded
from dzlineage_dagster_tests.sandbox.test_second_scope import TwoScopes

BILLING_TOPIC = "billing.ledger.entries"
SHOP_TOPIC = "shop.sales.orders"


@pytest.fixture
def two_scopes(sandbox, monkeypatch) -> TwoScopes:
    return TwoScopes(sandbox, monkeypatch)


def brokers(two_scopes: TwoScopes, scope: str) -> dict[str, str]:
    answer = two_scopes.client(scope, "kafka").get_bootstrap_brokers(
        ClusterArn=two_scopes.setting(scope, "msk_cluster_arn")
    )
    return {k: v for k, v in answer.items() if k.startswith("BootstrapBroker")}


def canonical(two_scopes: TwoScopes, scope: str) -> str:
    """The scope's topic namespace: the sorted-first broker of its cluster's IAM listener."""
    return f"kafka://{min(brokers(two_scopes, scope)['BootstrapBrokerStringSaslIam'].split(','))}"


def calls_by_account(two_scopes: TwoScopes, service: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for call in two_scopes.sandbox.control.calls():
        if call.service == service:
            found[call.account] = found.get(call.account, 0) + 1
    return found


def test_each_scopes_brokers_map_to_its_own_clusters_namespace(two_scopes):
    relay = relay_with()
    # Each scope's cluster was read in its own account, once.
    assert calls_by_account(two_scopes, "kafka").keys() == {"123456789012", SECOND_ACCOUNT}
    event = run_event(
        inputs=[
            InputDataset(
                f"kafka://{brokers(two_scopes, scope)['BootstrapBrokerStringTls'].split(',')[0]}",
                topic,
            )
            for scope, topic in ((SECOND_SCOPE, BILLING_TOPIC), (FIRST_SCOPE, SHOP_TOPIC))
        ]
    )
    answer = forwarded(relay, event)
    assert [line.split(" -> ")[1] for line in answer["renamed"]] == [
        f"{canonical(two_scopes, SECOND_SCOPE)}/{BILLING_TOPIC}",
        f"{canonical(two_scopes, FIRST_SCOPE)}/{SHOP_TOPIC}",
    ]
    # Both are platform topics under their cluster's namespace: nothing is unmapped.
    assert "unmapped" not in answer
    assert set(relay.platforms) == {FIRST_SCOPE, SECOND_SCOPE}


def test_debeziums_unknown_namespace_maps_to_the_cluster_of_the_scope_whose_connector_writes_it(
    two_scopes,
):
    relay = relay_with()
    two_scopes.sandbox.control.clear_calls()
    written = debezium_events(
        topic_prefix="billing",
        task_id="0",
        source=("postgres://billing-db:5432", "billing.ledger.entries"),
        topic=(UNKNOWN_NAMESPACE, BILLING_TOPIC),
    )
    answer = forwarded(relay, written[1])
    assert answer["renamed"] == [
        f"{UNKNOWN_NAMESPACE}/{BILLING_TOPIC} -> {canonical(two_scopes, SECOND_SCOPE)}/{BILLING_TOPIC}"
    ]
    # The billing connectors were read with billing's role, in its account.
    assert SECOND_ACCOUNT in calls_by_account(two_scopes, "kafkaconnect")


def test_an_athena_name_of_a_second_scope_table_maps_to_its_glue_arn(two_scopes):
    relay = relay_with()
    output = OutputDataset(
        f"awsathena://athena.{SECOND_REGION}.amazonaws.com",
        "AwsDataCatalog.billing_lake.ledger_entries",
    )
    answer = forwarded(relay, run_event(outputs=[output]))
    [renamed] = answer["renamed"]
    assert renamed.endswith(
        f" -> arn:aws:glue:{SECOND_REGION}:{SECOND_ACCOUNT}:table/billing_lake/ledger_entries"
    ), renamed


def test_a_second_scope_topic_under_a_foreign_broker_is_unmapped_with_its_clusters_fix(
    two_scopes,
):
    relay = relay_with()
    event = run_event(inputs=[InputDataset("kafka://10.9.8.7:9092", BILLING_TOPIC)])
    answer = forwarded(relay, event)
    assert answer["unmapped"] == [f"kafka://10.9.8.7:9092/{BILLING_TOPIC}"]
    [listed] = relay.status()["unmapped"]["datasets"]
    billing_broker = brokers(two_scopes, SECOND_SCOPE)["BootstrapBrokerStringSaslIam"]
    assert billing_broker.split(",")[0] in listed["fix"], listed
    assert set(relay.status()["unmapped"]["platform"]) == {FIRST_SCOPE, SECOND_SCOPE}


def test_glues_lineage_goes_to_the_account_of_the_scope_whose_datasets_the_event_names(
    two_scopes,
):
    relay = relay_with(lineage_destinations="datazone,glue")
    billing_table = OutputDataset(
        f"awsathena://athena.{SECOND_REGION}.amazonaws.com",
        "AwsDataCatalog.billing_lake.ledger_entries",
    )
    shop_topic = InputDataset(canonical(two_scopes, FIRST_SCOPE), SHOP_TOPIC)
    posted = {}
    for label, event in (
        ("billing", run_event(outputs=[billing_table])),
        ("shop", run_event(inputs=[shop_topic])),
        ("both", run_event(inputs=[shop_topic], outputs=[billing_table])),
        ("neither", run_event(inputs=[InputDataset("s3://elsewhere", "x")])),
    ):
        two_scopes.sandbox.control.clear_calls()
        forwarded(relay, event)
        posted[label] = sorted(
            call.account
            for call in two_scopes.sandbox.control.calls()
            if (call.service, call.operation) == ("glue", "PostLineageEvent")
        )
    # (The call log names the account; each scope's client is in its own Region.)
    first, second = "123456789012", SECOND_ACCOUNT
    assert posted == {
        "billing": [second],
        "shop": [first],
        "both": sorted([first, second]),
        "neither": [first],
    }
