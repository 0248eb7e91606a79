"""The relay's renaming across scopes (ScopedNameRules) and its unmapped check across platforms:
each scope's names map to its own nodes, in NameRules' order of rule kinds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from openlineage.client.event_v2 import InputDataset

from dzlineage_dagster.core.identity.glue import GlueCatalogIndex
from dzlineage_dagster.core.identity.kafka import KafkaCluster
from dzlineage_dagster.core.lineage.relay_events import (
    NameRules,
    PlatformDatasets,
    ScopedNameRules,
    canonicalize,
    unmapped_in_scopes,
)
from dzlineage_dagster_tests.core.test_relay_events import (
    BROKERS,
    CLUSTER_RULES,
    GRAPH_KAFKA_NAMESPACE,
    names,
    received,
)
from dzlineage_dagster_tests.relay.events import run_event

BILLING_BROKERS = {
    listener: brokers.replace(".demo.", ".billing.").replace("us-east-1", "eu-west-1")
    for listener, brokers in BROKERS.items()
}
BILLING_NAMESPACE = "kafka://b-1.billing.x.c2.kafka.eu-west-1.amazonaws.com:9098"
BILLING_RULES = NameRules(
    kafka=KafkaCluster.of(name="billing", broker_strings=BILLING_BROKERS),
    glue_catalog=GlueCatalogIndex.of(
        "eu-west-1", "333333333333", {"billing_lake": [{"Name": "entries"}]}
    ),
)
SCOPED = ScopedNameRules({"shop": CLUSTER_RULES, "billing": BILLING_RULES})
#: Namespaces of every kind the rules know, and some they do not.
NAMESPACES = [
    *(f"kafka://{a}" for s in (*BROKERS.values(), *BILLING_BROKERS.values()) for a in s.split(",")),
    "kafka://b-1.other:9098",
    "arn:aws:glue:us-east-1:123456789012",
    "arn:aws:glue:eu-west-1:333333333333",
    "postgres://10.0.1.5:5432",
    "s3://lake",
]


def renamed_namespace(rules, namespace: str, name: str) -> str:
    event = received(run_event(inputs=[InputDataset(namespace, name)]))
    return canonicalize(event, rules)[0].document["inputs"][0]["namespace"]


@given(st.sampled_from(sorted(BROKERS)), st.integers(0, 1), st.booleans(), names)
def test_every_broker_of_each_scopes_cluster_maps_to_that_clusters_namespace(
    listener, index, billing, topic
):
    brokers, namespace = (
        (BILLING_BROKERS, BILLING_NAMESPACE) if billing else (BROKERS, GRAPH_KAFKA_NAMESPACE)
    )
    address = brokers[listener].split(",")[index]
    assert renamed_namespace(SCOPED, f"kafka://{address}", topic) == namespace


@given(st.sampled_from(NAMESPACES), st.sampled_from(["table/billing_lake/entries", "sales.orders"]))
def test_one_scope_renames_as_its_platforms_rules(namespace, name):
    for rules in (CLUSTER_RULES, BILLING_RULES):
        assert renamed_namespace(ScopedNameRules({"only": rules}), namespace, name) == (
            renamed_namespace(rules, namespace, name)
        )


def test_a_second_scopes_glue_table_takes_its_accounts_arn():
    namespace = "arn:aws:glue:eu-west-1:333333333333"
    assert renamed_namespace(SCOPED, namespace, "table/billing_lake/entries") == (
        "arn:aws:glue:eu-west-1:333333333333:table"
    )


def test_the_namespace_map_applies_once_before_any_scopes_cluster():
    other = "kafka://b-1.other:9098"
    mapped = ScopedNameRules(
        SCOPED.scopes, {other: BILLING_NAMESPACE, "kafka://x:1": "kafka://x:1"}
    )
    assert renamed_namespace(mapped, other, "t") == BILLING_NAMESPACE
    # Mapped to itself: kept, whatever a later scope's rules would say.
    assert renamed_namespace(mapped, "kafka://x:1", "t") == "kafka://x:1"
    assert SCOPED.kafka_namespaces() == {GRAPH_KAFKA_NAMESPACE, BILLING_NAMESPACE}


def test_a_dataset_is_unmapped_only_when_no_scope_has_it_and_the_fix_names_its_scope():
    shop = PlatformDatasets(frozenset({f"{GRAPH_KAFKA_NAMESPACE}/shop.t"}), frozenset({"shop.t"}))
    billing = PlatformDatasets(
        frozenset({f"{BILLING_NAMESPACE}/billing.t"}),
        frozenset({"billing.t"}),
        broker="b-1.billing:9098",
    )
    job = {"namespace": "spark", "name": "j"}

    def found(namespace: str, name: str):
        return unmapped_in_scopes({"namespace": namespace, "name": name}, job, [shop, billing])

    assert found(BILLING_NAMESPACE, "billing.t") is None
    assert found(GRAPH_KAFKA_NAMESPACE, "shop.t") is None
    misnamed = found("kafka://10.0.0.1:9092", "billing.t")
    assert misnamed.refusable and "b-1.billing:9098" in misnamed.fix
    assert not found("kafka://10.0.0.1:9092", "elsewhere").refusable
    assert unmapped_in_scopes({"namespace": "s3://x", "name": "y"}, job, []) is None
