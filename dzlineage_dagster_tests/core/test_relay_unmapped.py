"""Which datasets the relay forwards under names that are none of the platform's nodes
(:func:`unmapped_dataset`), and what it advises."""

from __future__ import annotations

import dataclasses
import string

from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.identity.kafka import KafkaCluster
from dzlineage_dagster.core.lineage.relay_events import (
    BROKER_ALIASES_SETTING,
    DEBEZIUM_LINEAGE_BOOTSTRAP_PROPERTY,
    NAMESPACE_MAP_SETTING,
    SOURCE_HOST_ALIASES_SETTING,
    UNKNOWN_KAFKA_NAMESPACE,
    PlatformDatasets,
    unmapped_dataset,
)

BROKER = "b-1.demo.kafka.us-east-1.amazonaws.com:9098"
TOPICS = ("shop.sales.orders", "shop.inventory.customers")
SOURCE = "postgres://shop-db:5432/shop.sales.orders"
TABLE = "arn:aws:glue:us-east-1:123456789012:table/lakehouse/sales_orders"
KNOWN = PlatformDatasets(
    identities=frozenset({*(f"kafka://{BROKER}/{t}" for t in TOPICS), SOURCE, TABLE}),
    topics=frozenset(TOPICS),
    debezium_jobs={"shop": "shop-debezium-source"},
    broker=BROKER,
)
DEBEZIUM_JOB = {"namespace": "shop", "name": "shop.0"}
SPARK_JOB = {"namespace": "spark", "name": "nightly"}

hosts = st.text(string.ascii_lowercase + string.digits + ".-", min_size=1, max_size=30)
ports = st.integers(1, 65535).map(str)
names = st.text(string.ascii_letters + string.digits + "._-/", min_size=1, max_size=40)


def dataset(namespace: str, name: str) -> dict:
    return {"namespace": namespace, "name": name}


def test_the_platforms_own_nodes_are_mapped_a_glue_table_in_either_glue_form():
    for namespace, name in (
        (f"kafka://{BROKER}", TOPICS[0]),
        ("postgres://shop-db:5432", "shop.sales.orders"),
        ("arn:aws:glue:us-east-1:123456789012:table", "lakehouse/sales_orders"),
        ("arn:aws:glue:us-east-1:123456789012", "table/lakehouse/sales_orders"),
    ):
        assert unmapped_dataset(dataset(namespace, name), SPARK_JOB, KNOWN) is None, namespace


@given(host=hosts, port=ports, topic=st.sampled_from(TOPICS))
def test_a_platform_topic_under_any_other_kafka_namespace_is_unmapped_with_the_alias_fix(
    host, port, topic
):
    namespace = f"kafka://{host}:{port}"
    found = unmapped_dataset(dataset(namespace, topic), SPARK_JOB, KNOWN)
    if f"{host}:{port}" == BROKER:
        assert found is None
        return
    assert found.identity == f"{namespace}/{topic}"
    assert f"names the platform's topic {topic} under {namespace}" in found.reason
    assert found.fix == (
        f"if {host}:{port} is a broker of the cluster, add it to {BROKER_ALIASES_SETTING}; "
        f"else point the producer's bootstrap servers at the cluster ({BROKER})"
    )
    assert found.refusable


def test_debeziums_unknown_namespace_names_the_property_and_the_connector_of_the_job():
    unknown = dataset(UNKNOWN_KAFKA_NAMESPACE, TOPICS[0])
    assert unmapped_dataset(unknown, DEBEZIUM_JOB, KNOWN).fix == (
        f"set {DEBEZIUM_LINEAGE_BOOTSTRAP_PROPERTY}={BROKER} on connector shop-debezium-source"
    )
    # A job of no connector the platform knows: named by the job instead.
    other = {"namespace": "inventory", "name": "inventory.0"}
    assert unmapped_dataset(unknown, other, KNOWN).fix == (
        f"set {DEBEZIUM_LINEAGE_BOOTSTRAP_PROPERTY}={BROKER} on the Debezium connector of job "
        "inventory.inventory.0"
    )
    # Without a broker to quote, the advice says what to put there.
    nameless = PlatformDatasets(KNOWN.identities, KNOWN.topics, KNOWN.debezium_jobs)
    assert "=<a broker of the cluster> on" in unmapped_dataset(unknown, DEBEZIUM_JOB, nameless).fix


@given(bucket=hosts, path=names)
def test_a_dataset_foreign_to_the_platform_is_unmapped_with_a_reason_and_never_a_fix(bucket, path):
    found = unmapped_dataset(dataset(f"s3://{bucket}", path), SPARK_JOB, KNOWN)
    assert found.identity == f"s3://{bucket}/{path}"
    assert found.fix is None
    assert "none of the platform's datasets" in found.reason


def test_a_topic_name_the_platform_does_not_have_is_foreign_whatever_its_namespace():
    found = unmapped_dataset(dataset(UNKNOWN_KAFKA_NAMESPACE, "clicks"), DEBEZIUM_JOB, KNOWN)
    assert found.fix is None


def test_a_glue_table_the_platform_does_not_have_is_unmapped_even_in_the_platforms_form():
    found = unmapped_dataset(
        dataset("arn:aws:glue:us-east-1:123456789012:table", "lakehouse/nothere"), SPARK_JOB, KNOWN
    )
    assert found.identity == "arn:aws:glue:us-east-1:123456789012:table/lakehouse/nothere"
    assert found.reason == "names a Glue table the platform does not have"
    assert found.fix is None


@given(host=hosts)
def test_a_captured_source_table_under_another_host_is_unmapped_with_the_host_alias_fix(host):
    """dbt or Spark reading the source database by its IP or a DNS alias: the table's own
    node is a hop away, and the setting that joins them is named (never refused: the refusal
    is for topics)."""
    found = unmapped_dataset(
        dataset(f"postgres://{host}:5432", "shop.sales.orders"), SPARK_JOB, KNOWN
    )
    if host == "shop-db":
        assert found is None
        return
    assert found.reason == (
        f"names the platform's source table shop.sales.orders under postgres://{host}:5432, "
        "not postgres://shop-db:5432: a lineage node apart from the table's"
    )
    assert found.fix == (
        f"if {host} is the database shop-db, add {host}=shop-db to {SOURCE_HOST_ALIASES_SETTING}"
    )
    assert not found.refusable


def test_a_source_table_on_another_port_is_advised_the_namespace_map():
    """A host alias keeps the port: a pooler on another port needs the namespace renamed."""
    found = unmapped_dataset(
        dataset("postgres://10.0.3.17:6432", "shop.sales.orders"), SPARK_JOB, KNOWN
    )
    assert found.fix == (
        "if postgres://10.0.3.17:6432 is the database postgres://shop-db:5432, map it in "
        f'{NAMESPACE_MAP_SETTING}: {{"postgres://10.0.3.17:6432": "postgres://shop-db:5432"}}'
    )
    # Another engine's table of the same name is not this table.
    assert (
        unmapped_dataset(
            dataset("mysql://10.0.3.17:3306", "shop.sales.orders"), SPARK_JOB, KNOWN
        ).fix
        is None
    )


def test_a_glue_table_claimed_in_any_glue_form_that_does_not_exist_suggests_the_near_table():
    """A typo or a dropped table, named the way OpenLineage, dbt-glue or Athena name a Glue
    table: the reason says it is a Glue table, and the fix the platform's table it is closest to."""
    for namespace, name in (
        ("arn:aws:glue:us-east-1:123456789012", "table/lakehouse/sales_ordrs"),
        ("arn:aws:glue:us-east-1:123456789012", "lakehouse.sales_ordrs"),
        ("awsathena://athena.us-east-1.amazonaws.com", "AwsDataCatalog.lakehouse.sales_ordrs"),
    ):
        found = unmapped_dataset(dataset(namespace, name), SPARK_JOB, KNOWN)
        assert found.reason == "names a Glue table the platform does not have", namespace
        assert found.fix == "did you mean lakehouse.sales_orders?", namespace
        assert not found.refusable
    far = unmapped_dataset(
        dataset("awsathena://athena.us-east-1.amazonaws.com", "awsdatacatalog.audit.logins"),
        SPARK_JOB,
        KNOWN,
    )
    assert far.reason == "names a Glue table the platform does not have"
    assert far.fix is None


def test_a_bootstrap_list_with_one_foreign_server_names_only_that_server_in_the_fix():
    """Debezium's whole property, one entry of which is no broker of the cluster: adding the
    whole list as an alias is not the advice, the one server is."""
    cluster = KafkaCluster.of(
        name="demo", broker_strings={"BootstrapBrokerStringSaslIam": f"{BROKER},b-2.demo:9098"}
    )
    known = dataclasses.replace(KNOWN, kafka=cluster)
    namespace = f"kafka://{BROKER},b-2.demo:9098,kafka-cluster-prod:9092"
    found = unmapped_dataset(dataset(namespace, TOPICS[0]), DEBEZIUM_JOB, known)
    assert found.fix == (
        f"if kafka-cluster-prod:9092 is a broker of the cluster, add it to "
        f"{BROKER_ALIASES_SETTING}; else point the producer's bootstrap servers at the cluster "
        f"({BROKER})"
    )
