"""Dataset identity (core/identity): one Kafka name per cluster whatever listener, alias or
connector property a producer used; other clusters kept apart; source hosts' aliases."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openlineage.client.event_v2 import InputDataset, OutputDataset

from dzlineage_dagster.core.connectors.debezium import (
    SourceEngine,
    SourceTable,
    parse_debezium_source,
)
from dzlineage_dagster.core.identity.kafka import (
    UNKNOWN_NAMESPACE,
    DebeziumTopics,
    KafkaCluster,
    canonical_broker,
    check_pinned_namespace,
    kafka_dataset_namespace,
    parse_broker_aliases,
    preferred_broker_string,
)
from dzlineage_dagster.core.identity.sources import SourceHosts, source_table_dataset
from dzlineage_dagster.core.lineage.relay_events import (
    CANONICAL_NAME_FACET,
    NameRules,
    canonicalize,
    parse_event,
)
from dzlineage_dagster_tests.relay.events import run_event, to_json

#: GetBootstrapBrokers' keys (botocore's kafka model) -> the port AWS answers them on.
LISTENER_PORTS = {
    "BootstrapBrokerString": 9092,
    "BootstrapBrokerStringTls": 9094,
    "BootstrapBrokerStringSaslScram": 9096,
    "BootstrapBrokerStringSaslIam": 9098,
    "BootstrapBrokerStringPublicTls": 9194,
    "BootstrapBrokerStringPublicSaslScram": 9196,
    "BootstrapBrokerStringPublicSaslIam": 9198,
    "BootstrapBrokerStringVpcConnectivityTls": 14001,
    "BootstrapBrokerStringVpcConnectivitySaslScram": 14001,
    "BootstrapBrokerStringVpcConnectivitySaslIam": 14001,
    "BootstrapBrokerStringIpv6": 20092,
    "BootstrapBrokerStringSaslIamIpv6": 20098,
}
labels = st.text(string.ascii_lowercase + string.digits, min_size=1, max_size=12)


@st.composite
def clusters(draw, name: str = "cdc") -> dict[str, str]:
    """A GetBootstrapBrokers answer: a cluster's brokers (in any order) on some listeners,
    always one inside the VPC (as AWS always gives)."""
    domain = f"{name}.{draw(labels)}.c2.kafka.us-east-1.amazonaws.com"
    count = draw(st.integers(1, 3))
    keys = draw(st.sets(st.sampled_from(sorted(LISTENER_PORTS)), min_size=1))
    keys.add(draw(st.sampled_from(["BootstrapBrokerStringSaslIam", "BootstrapBrokerStringTls"])))
    answer = {}
    for key in keys:
        host = "b-{}-public." if "Public" in key else "b-{}."
        addresses = [f"{host.format(n)}{domain}:{LISTENER_PORTS[key]}" for n in range(1, count + 1)]
        answer[key] = ",".join(draw(st.permutations(addresses)))
    return answer


@given(clusters(), st.data())
def test_every_broker_of_every_listener_names_the_cluster_and_the_order_never_moves_it(
    brokers, data
):
    cluster = KafkaCluster.of(name="cdc", broker_strings=brokers)
    reordered = {k: ",".join(reversed(v.split(","))) for k, v in brokers.items()}
    assert KafkaCluster.of(name="cdc", broker_strings=reordered).namespace == cluster.namespace
    key = data.draw(st.sampled_from(sorted(brokers)))
    address = data.draw(st.sampled_from(brokers[key].split(",")))
    assert cluster.canonical(f"kafka://{address}") in (cluster.namespace, None)
    assert cluster.names(f"kafka://{address}")
    assert cluster.names(f"kafka://{address.upper()}"), "DNS names have no case"
    # Debezium sends its whole property: a comma list of the cluster's brokers is the cluster.
    assert cluster.names(f"kafka://{brokers[key]}")
    assert cluster.topic_dataset("shop.sales.orders") == (cluster.namespace, "shop.sales.orders")


@given(clusters(), st.data(), st.sampled_from(["SASL_SSL", "SSL", "PLAINTEXT", "sasl_ssl"]))
def test_a_bootstrap_property_with_listener_schemes_names_the_cluster_as_the_doctor_reads_it(
    brokers, data, protocol
):
    """Kafka's clients take `SASL_SSL://host:port` entries in bootstrap.servers, and Debezium
    sends its property whole: the relay maps it to the cluster as `doctor`'s kafka-names row
    (foreign_servers) already counts it the cluster's."""
    cluster = KafkaCluster.of(name="cdc", broker_strings=brokers)
    key = data.draw(st.sampled_from(sorted(brokers)))
    servers = ", ".join(f"{protocol}://{a}" for a in brokers[key].split(","))
    assert cluster.foreign_servers(servers) == []
    assert cluster.names(f"kafka://{servers}")
    assert not cluster.names(f"kafka://{servers},{protocol}://erp.example:9092")


@given(clusters("cdc"), clusters("erp"), st.data())
def test_another_clusters_brokers_never_name_this_one(ours, theirs, data):
    cluster = KafkaCluster.of(name="cdc", broker_strings=ours)
    key = data.draw(st.sampled_from(sorted(theirs)))
    foreign = data.draw(st.sampled_from(theirs[key].split(",")))
    assert not cluster.names(f"kafka://{foreign}")
    assert cluster.canonical(f"kafka://{foreign}") is None
    mine = ours[next(iter(sorted(ours)))].split(",")[0]
    assert not cluster.names(f"kafka://{mine},{foreign}"), "a mixed list is no one cluster"
    assert cluster.foreign_servers(f"{mine},{foreign}") == [foreign]


def test_the_port_decides_two_clusters_behind_one_host():
    local = KafkaCluster.of(
        name="local", broker_strings={"BootstrapBrokerString": "localhost:9092"}
    )
    assert local.names("kafka://localhost:9092")
    assert not local.names("kafka://localhost:9093")


@pytest.mark.parametrize(
    ("strings", "broker"),
    [
        (
            {"BootstrapBrokerString": "b-1.c:9092", "BootstrapBrokerStringTls": "b-1.c:9094",
             "BootstrapBrokerStringSaslIam": "b-2.c:9098,b-1.c:9098"},
            "b-1.c:9098",
        ),
        ({"BootstrapBrokerString": "b-1.c:9092", "BootstrapBrokerStringTls": "b-3.c:9094,b-2.c:9094"},
         "b-2.c:9094"),
        ({"BootstrapBrokerString": "b-1.c:9092", "BootstrapBrokerStringSaslScram": "b-1.c:9096"},
         "b-1.c:9096"),
        ({"BootstrapBrokerStringSaslIam": "", "BootstrapBrokerString": "B-1.C:9092"}, "b-1.c:9092"),
    ],
)  # fmt: skip
def test_the_canonical_broker_is_the_sorted_first_of_iam_then_tls_then_scram_then_plaintext(
    strings, broker
):
    assert canonical_broker(strings) == broker
    assert preferred_broker_string(strings).lower().count(broker)


def test_a_cluster_with_no_inside_listener_is_named_in_the_error():
    with pytest.raises(ValueError, match="names no broker on any of BootstrapBrokerStringSaslIam"):
        canonical_broker({"BootstrapBrokerStringPublicSaslIam": "b-1-public.c:9198"})


def test_styles_and_the_pin():
    brokers = {"BootstrapBrokerStringSaslIam": "b-2.c:9098,b-1.c:9098"}
    by_broker = KafkaCluster.of(name="cdc", broker_strings=brokers)
    by_name = KafkaCluster.of(name="cdc", broker_strings=brokers, style="cluster")
    pinned = KafkaCluster.of(name="cdc", broker_strings=brokers, pinned="kafka://prod-cdc")
    assert (by_broker.namespace, by_name.namespace, pinned.namespace) == (
        "kafka://b-1.c:9098",
        "kafka://cdc",
        "kafka://prod-cdc",
    )
    # Whichever is canonical, the others' names map to it: a style changed joins the old nodes.
    for cluster in (by_broker, by_name, pinned):
        for other in ("kafka://b-1.c:9098", "kafka://b-2.c:9098", "kafka://cdc"):
            assert cluster.canonical(other) in (cluster.namespace, None)
            assert cluster.names(other)
    assert pinned.canonical("kafka://b-2.c:9098") == "kafka://prod-cdc"


@pytest.mark.parametrize("value", ["prod-cdc", "kafka://", "kafka://a/b", "kafka:// a"])
def test_a_pinned_namespace_must_be_a_kafka_namespace(value):
    with pytest.raises(ValueError, match="is not a Kafka namespace"):
        check_pinned_namespace(value)


#: Host names, none of them the test cluster's broker (b-1.c).
hosts = st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z0-9-]{1,10}){0,3}", fullmatch=True).filter(
    lambda host: host != "b-1.c"
)


@given(st.lists(st.tuples(hosts, st.none() | st.integers(1, 65535)), min_size=1, max_size=4))
def test_aliases_name_the_cluster_with_their_port_or_on_any_port_without(aliases):
    text = ",".join(f" {h}:{p} " if p else h for h, p in aliases)
    parsed = parse_broker_aliases(text)
    brokers = {"BootstrapBrokerStringSaslIam": "b-1.c:9098"}
    before = KafkaCluster.of(name="cdc", broker_strings=brokers)
    cluster = KafkaCluster.of(name="cdc", broker_strings=brokers, aliases=parsed)
    for host, port in aliases:
        assert cluster.canonical(f"kafka://{host}:{port or 9092}") == "kafka://b-1.c:9098"
        assert not before.names(f"kafka://{host}:{port or 9092}"), "only once configured"
        if (
            port is not None
            and (host, None) not in aliases
            and (host, port % 65535 + 1) not in aliases
        ):
            assert not cluster.names(f"kafka://{host}:{port % 65535 + 1}")


@pytest.mark.parametrize("text", ["a:b", "x/y:9092", "a=b", "host:port:9"])
def test_a_bad_alias_is_named(text):
    with pytest.raises(ValueError, match=r"is not host\[:port\]"):
        parse_broker_aliases(text)


@pytest.mark.parametrize(
    ("servers", "namespace"),
    [
        (
            "b-1.x.kafka.us-east-1.amazonaws.com:9098",
            "kafka://b-1.x.kafka.us-east-1.amazonaws.com:9098",
        ),
        ("b-1.x:9098,b-2.x:9098", "kafka://b-1.x:9098"),
        (" localhost:9092 , other:9092", "kafka://localhost:9092"),
        ("SASL_SSL://b-1.x:9096,SASL_SSL://b-2.x:9096", "kafka://b-1.x:9096"),
        ("[::1]:9092,[::2]:9092", "kafka://[::1]:9092"),
    ],
)
def test_kafka_dataset_namespace(servers: str, namespace: str) -> None:
    assert kafka_dataset_namespace(servers) == namespace


@pytest.mark.parametrize("servers", ["", "localhost", "b-1.x:port", ":9092"])
def test_kafka_dataset_namespace_needs_host_and_port(servers: str) -> None:
    with pytest.raises(ValueError, match="host:port"):
        kafka_dataset_namespace(servers)


# --- Debezium's kafka://unknown:unknown ------------------------------------------------------

SHOP = parse_debezium_source(
    "shop-debezium-source",
    {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "database.hostname": "shop-db.internal",
        "database.port": "5432",
        "database.dbname": "shop",
        "topic.prefix": "shop",
        "table.include.list": "sales.orders,inventory.customers",
    },
)
CLUSTER = KafkaCluster.of(
    name="cdc", broker_strings={"BootstrapBrokerStringSaslIam": "b-1.c:9098,b-2.c:9098"}
)
RULES = NameRules(kafka=CLUSTER, debezium=lambda: DebeziumTopics((SHOP,)))


def renamed(output: OutputDataset, job: tuple[str, str], rules: NameRules = RULES) -> dict:
    event = parse_event(to_json(run_event(outputs=[output], job=job)).encode())
    return canonicalize(event, rules)[0].document["outputs"][0]


def test_debeziums_unknown_namespace_maps_for_a_topic_its_connector_writes():
    dataset = renamed(OutputDataset(UNKNOWN_NAMESPACE, "shop.sales.orders"), ("shop", "shop.0"))
    assert (dataset["namespace"], dataset["name"]) == ("kafka://b-1.c:9098", "shop.sales.orders")
    facet = dataset["facets"][CANONICAL_NAME_FACET]
    assert (facet["originalNamespace"], facet["rule"]) == (
        UNKNOWN_NAMESPACE,
        "debezium-unknown-kafka",
    )


@pytest.mark.parametrize(
    ("job", "topic"),
    [
        (("shop", "shop.0"), "shop.sales.refunds"),  # a table the connector does not capture
        (("crm", "crm.0"), "shop.sales.orders"),  # no connector has that topic.prefix
        (("spark", "nightly"), "shop.sales.orders"),
    ],
)
def test_debeziums_unknown_namespace_stays_as_sent_otherwise(job, topic):
    assert renamed(OutputDataset(UNKNOWN_NAMESPACE, topic), job)["namespace"] == UNKNOWN_NAMESPACE


# --- source tables ---------------------------------------------------------------------------

ALIASES = SourceHosts.parse(
    "10.0.0.5=shop-db.abc.us-east-1.rds.amazonaws.com, Shop-DB=shop-db.internal"
)


def test_a_source_table_under_an_alias_host_takes_the_canonical_host_in_the_sync_and_relay():
    table = SourceTable(SourceEngine.POSTGRES, "shop", "sales", "orders", "10.0.0.5", "5432", "c")
    assert source_table_dataset(table, hosts=ALIASES) == (
        "postgres://shop-db.abc.us-east-1.rds.amazonaws.com:5432",
        "shop.sales.orders",
    )
    assert source_table_dataset(table) == ("postgres://10.0.0.5:5432", "shop.sales.orders")
    rules = NameRules(source_hosts=ALIASES)
    event = parse_event(
        to_json(run_event(inputs=[InputDataset("postgres://10.0.0.5:5432", "shop.sales.orders")]))
    )
    dataset = canonicalize(event, rules)[0].document["inputs"][0]
    assert dataset["namespace"] == "postgres://shop-db.abc.us-east-1.rds.amazonaws.com:5432"
    assert dataset["facets"][CANONICAL_NAME_FACET]["rule"] == "source-host-alias"
    assert ALIASES.canonical_namespace("mysql://shop-db:3306") == "mysql://shop-db.internal:3306"
    for untouched in ("postgres://10.0.0.6:5432", "s3://10.0.0.5", "kafka://10.0.0.5:9092"):
        assert ALIASES.canonical_namespace(untouched) is None


@pytest.mark.parametrize("text", ["10.0.0.5", "=host", "a=", "a=b:5432", "a b=c"])
def test_a_bad_source_host_alias_is_named(text):
    with pytest.raises(ValueError, match="is not alias=host"):
        SourceHosts.parse(text)
