"""One node per topic and per source table, whatever broker, listener, alias or connector
property a producer names it by (issue 33, item 1): producers' events through the relay (built
in process from its settings, as in test_relay_access) into the sandbox, next to the sync."""

from __future__ import annotations

import pytest
from openlineage.client.event_v2 import InputDataset

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.core.identity.kafka import UNKNOWN_NAMESPACE
from dzlineage_dagster_tests.platform import fresh_platform
from dzlineage_dagster_tests.relay.events import debezium_events, run_event, to_json
from dzlineage_dagster_tests.relay.test_relay_access import post, relay_with
from dzlineage_dagster_tests.relay.test_relay_debezium import debezium_config
from dzlineage_dagster_tests.test_catalog_operators import rows_of
from dzlineage_dagster_tests.test_doctor import doctor
from dzlineage_dagster_tests.test_doctor import rows_of as rows_of_check

TOPIC = "shop.sales.orders"
SOURCE_CONNECTOR = "shop-debezium-source"
FLINK_PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.40.0/integration/flink"


@pytest.fixture
def platform(sandbox, monkeypatch):
    return fresh_platform(sandbox, monkeypatch)


def sync(capsys) -> str:
    code = dzlineage(["sync"])
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def brokers(platform) -> dict[str, str]:
    answer = platform.client("kafka").get_bootstrap_brokers(
        ClusterArn=platform.settings.msk_cluster_arn
    )
    return {k: v for k, v in answer.items() if k.startswith("BootstrapBroker")}


def canonical(platform) -> str:
    """The demo's topic namespace: the sorted-first broker of its IAM listener."""
    return f"kafka://{min(brokers(platform)['BootstrapBrokerStringSaslIam'].split(','))}"


def node(platform, source_identifier: str) -> dict | None:
    datazone = platform.client("datazone")
    try:
        return datazone.get_lineage_node(
            domainIdentifier=platform.settings.domain_id, identifier=source_identifier
        )
    except datazone.exceptions.ResourceNotFoundException:
        return None


def neighbours(platform, found: dict, side: str) -> set[str]:
    return {node(platform, n["id"])["sourceIdentifier"] for n in found.get(side, [])}


def forwarded(relay, event) -> dict:
    status, answer = post(relay, to_json(event).encode(), key=None)
    assert (status, answer.get("status")) == (200, "forwarded"), answer
    return answer


def update_connector(platform, name: str, **changes: str) -> None:
    connect = platform.client("kafkaconnect")
    (summary,) = [c for c in connect.list_connectors()["connectors"] if c["connectorName"] == name]
    connect.update_connector(
        connectorArn=summary["connectorArn"],
        currentVersion=summary["currentVersion"],
        connectorConfiguration={**debezium_config(platform, name), **changes},
    )


def test_debeziums_property_changed_keeps_the_topic_one_node(platform, capsys):
    """Debezium names the topic by the TLS broker string its connector sets; the relay maps it
    onto the sync's node, and the sync, after the property changed, keeps the node where it is."""
    sync(capsys)
    namespace = canonical(platform)
    synced = node(platform, f"{namespace}/{TOPIC}")
    assert synced is not None and synced["downstreamNodes"]
    tls = brokers(platform)["BootstrapBrokerStringTls"]
    config = debezium_config(platform, SOURCE_CONNECTOR)
    source = (
        f"postgres://{config['database.hostname']}:{config['database.port']}",
        f"{config['database.dbname']}.sales.orders",
    )
    relay = relay_with()
    events = debezium_events(
        topic_prefix="shop", task_id="0", source=source, topic=(f"kafka://{tls}", TOPIC)
    )
    answers = [forwarded(relay, event) for event in events]
    assert answers[1]["renamed"] == [f"kafka://{tls}/{TOPIC} -> {namespace}/{TOPIC}"]

    update_connector(
        platform,
        SOURCE_CONNECTOR,
        **{"openlineage.integration.dataset.kafka.bootstrap.servers": tls},
    )
    sync(capsys)

    joined = node(platform, f"{namespace}/{TOPIC}")
    assert joined["id"] == synced["id"]
    upstream = neighbours(platform, joined, "upstreamNodes")
    assert f"shop.shop.0/{events[0].run.runId}" in upstream, "Debezium's run feeds the node"
    assert any(s.startswith(f"kafka-connect.{SOURCE_CONNECTOR}/") for s in upstream), upstream
    assert neighbours(platform, synced, "downstreamNodes") <= neighbours(
        platform, joined, "downstreamNodes"
    ), "the Iceberg sink hop is still below it"
    for address in tls.split(","):
        assert node(platform, f"kafka://{address}/{TOPIC}") is None, "no second topic node"


def test_spark_and_flink_join_through_other_iam_brokers_and_the_public_listener(platform, capsys):
    arn = platform.settings.msk_cluster_arn
    kafka = platform.client("kafka")
    kafka.update_connectivity(
        ClusterArn=arn,
        ConnectivityInfo={"PublicAccess": {"Type": "SERVICE_PROVIDED_EIPS"}},
        CurrentVersion=kafka.describe_cluster_v2(ClusterArn=arn)["ClusterInfo"]["CurrentVersion"],
    )
    sync(capsys)
    namespace = canonical(platform)
    iam = sorted(brokers(platform)["BootstrapBrokerStringSaslIam"].split(","))
    public = brokers(platform)["BootstrapBrokerStringPublicSaslIam"].split(",")[0]
    relay = relay_with()
    readers = {
        ("spark", "orders_report"): iam[1],
        ("flink", "orders_alerts"): iam[2],
        ("spark", "partner_export"): public,
        ("flink", "scram_reader"): brokers(platform)["BootstrapBrokerStringSaslScram"].split(",")[
            1
        ],
    }
    runs = {}
    for job, address in readers.items():
        event = run_event(job=job, inputs=[InputDataset(f"kafka://{address}", TOPIC)])
        if job[0] == "flink":
            event.producer = FLINK_PRODUCER
        answer = forwarded(relay, event)
        assert answer["renamed"] == [f"kafka://{address}/{TOPIC} -> {namespace}/{TOPIC}"]
        runs[job] = event.run.runId

    below = neighbours(platform, node(platform, f"{namespace}/{TOPIC}"), "downstreamNodes")
    assert {f"{ns}.{name}/{run}" for (ns, name), run in runs.items()} <= below
    assert public.split(".", 1)[0] == "b-1-public"


def test_an_alias_joins_once_configured_and_another_clusters_broker_stays_apart(platform, capsys):
    sync(capsys)
    namespace = canonical(platform)
    alias = "kafka://kafka-cluster-prod:9092"
    other = platform.client("kafka").create_cluster_v2(
        ClusterName="erp-kafka",
        Provisioned={
            "BrokerNodeGroupInfo": {"InstanceType": "kafka.m5.large", "ClientSubnets": ["a", "b"]},
            "KafkaVersion": "3.6.0",
            "NumberOfBrokerNodes": 3,
            "ClientAuthentication": {"Sasl": {"Iam": {"Enabled": True}}},
        },
    )["ClusterArn"]
    foreign = platform.client("kafka").get_bootstrap_brokers(ClusterArn=other)
    foreign_broker = foreign["BootstrapBrokerStringSaslIam"].split(",")[0]

    def read_by(relay, namespace_sent: str) -> dict:
        event = run_event(
            job=("spark", "alias_reader"), inputs=[InputDataset(namespace_sent, TOPIC)]
        )
        return forwarded(relay, event)

    before = read_by(relay_with(), alias)
    assert "renamed" not in before, "an alias nobody configured is left as sent"
    configured = relay_with(kafka_broker_aliases="kafka-cluster-prod:9092")
    assert read_by(configured, alias)["renamed"] == [f"{alias}/{TOPIC} -> {namespace}/{TOPIC}"]
    assert "renamed" not in read_by(configured, "kafka://kafka-cluster-prod:9093")
    assert "renamed" not in read_by(configured, f"kafka://{foreign_broker}")

    assert (
        node(platform, f"kafka://{foreign_broker}/{TOPIC}")["id"]
        != (node(platform, f"{namespace}/{TOPIC}")["id"])
    ), "the other cluster's topic of the same name is its own node"


def test_debeziums_unknown_namespace_joins_only_for_a_topic_its_connector_writes(platform, capsys):
    sync(capsys)
    namespace = canonical(platform)
    relay = relay_with()
    # The platform's datasets (what unmapped ones are measured against) are read on their own.
    assert relay.platforms[None].current() is not None
    source = ("postgres://shop-db:5432", "shop.sales.orders")
    calls_before = platform.control.call_counts()[("kafkaconnect", "ListConnectors")]
    written = debezium_events(
        topic_prefix="shop", task_id="0", source=source, topic=(UNKNOWN_NAMESPACE, TOPIC)
    )
    answer = forwarded(relay, written[1])
    assert answer["renamed"] == [f"{UNKNOWN_NAMESPACE}/{TOPIC} -> {namespace}/{TOPIC}"]
    stranger = debezium_events(
        topic_prefix="crm", task_id="0", source=source, topic=(UNKNOWN_NAMESPACE, TOPIC)
    )
    assert "renamed" not in forwarded(relay, stranger[1])
    unwritten = debezium_events(
        topic_prefix="shop", task_id="0", source=source, topic=(UNKNOWN_NAMESPACE, "shop.x.y")
    )
    assert "renamed" not in forwarded(relay, unwritten[1])
    calls = platform.control.call_counts()[("kafkaconnect", "ListConnectors")] - calls_before
    assert calls == 1, "the connectors are read once, then cached"


def test_a_source_database_alias_is_named_by_its_canonical_host_in_the_sync_and_the_relay(
    platform, monkeypatch, capsys
):
    config = debezium_config(platform, SOURCE_CONNECTOR)
    host, port = config["database.hostname"], config["database.port"]
    update_connector(platform, SOURCE_CONNECTOR, **{"database.hostname": "10.0.0.5"})
    monkeypatch.setenv("DZLINEAGE_SOURCE_HOST_ALIASES", f"10.0.0.5={host}")
    sync(capsys)
    table = f"postgres://{host}:{port}/shop.sales.orders"
    assert f"{canonical(platform)}/{TOPIC}" in neighbours(
        platform, node(platform, table), "downstreamNodes"
    ) | {
        s
        for run in neighbours(platform, node(platform, table), "downstreamNodes")
        for s in neighbours(platform, node(platform, run), "downstreamNodes")
    }
    assert node(platform, f"postgres://10.0.0.5:{port}/shop.sales.orders") is None

    relay = relay_with()
    event = run_event(
        job=("spark", "db_reader"),
        inputs=[InputDataset(f"postgres://10.0.0.5:{port}", "shop.sales.orders")],
    )
    answer = forwarded(relay, event)
    assert answer["renamed"] == [f"postgres://10.0.0.5:{port}/shop.sales.orders -> {table}"]
    assert f"spark.db_reader/{event.run.runId}" in neighbours(
        platform, node(platform, table), "downstreamNodes"
    )


def test_a_pinned_namespace_revises_the_topic_asset_once_and_reposts_its_lineage(
    platform, monkeypatch, capsys
):
    """How an asset named by an older rule moves to the cluster's name: a namespace change is
    a revision of the asset's sourceIdentifier and a new post of the topic's hops."""
    sync(capsys)
    monkeypatch.setenv("DZLINEAGE_TOPIC_NAMESPACE", "kafka://cdc-prod")
    out = sync(capsys)
    moved = node(platform, f"kafka://cdc-prod/{TOPIC}")
    assert moved is not None, out
    assert any(
        s.startswith("arn:aws:glue:") or s.startswith("kafka-connect.")
        for s in neighbours(platform, moved, "downstreamNodes")
    ), "the sink hop is posted again under the new name"
    assert any(
        s.startswith("amazon.datazone.asset/")
        for s in neighbours(platform, moved, "downstreamNodes")
    ), "the topic asset now links the new node"
    [[_, action, *rest]] = rows_of(out, TOPIC)
    assert action == "revised" and "posted:" in rest[0], out
    again = sync(capsys)
    assert "revised" not in again and "posted" not in again, "revised once"


def test_doctor_warns_of_a_debezium_property_naming_no_broker_of_the_cluster_until_aliased(
    platform, monkeypatch, capsys
):
    def kafka_names() -> list[dict[str, str]]:
        return rows_of_check(doctor(capsys)[1], "kafka-names")

    assert [row["status"] for row in kafka_names()] == ["OK"]
    tls = brokers(platform)["BootstrapBrokerStringTls"]
    update_connector(
        platform,
        SOURCE_CONNECTOR,
        **{"openlineage.integration.dataset.kafka.bootstrap.servers": f"{tls},kafka-prod:9092"},
    )
    [row] = kafka_names()
    assert (row["subject"], row["status"]) == (SOURCE_CONNECTOR, "WARN")
    assert "name kafka-prod:9092, no broker of cluster cdc-demo" in row["detail"], row
    assert "DZLINEAGE_KAFKA_BROKER_ALIASES" in row["fix"]

    monkeypatch.setenv("DZLINEAGE_KAFKA_BROKER_ALIASES", "kafka-prod")
    assert [row["status"] for row in kafka_names()] == ["OK"]


def test_a_relay_without_the_cluster_says_at_start_that_kafka_names_pass_as_sent(
    platform, caplog, monkeypatch
):
    """No DZLINEAGE_MSK_CLUSTER_ARN: no broker, alias or `kafka://unknown:unknown` can be
    mapped, so every Kafka name is a node of its own; the operator reads why at start."""
    monkeypatch.delenv("DZLINEAGE_MSK_CLUSTER_ARN")
    with caplog.at_level("WARNING", logger="dzlineage.relay"):
        relay = relay_with(kafka_broker_aliases="kafka-cluster-prod:9092")
    assert relay.rules.kafka is None
    (line,) = [r.getMessage() for r in caplog.records if "Kafka names" in r.getMessage()]
    assert line == (
        "Kafka names are relayed as sent: DZLINEAGE_MSK_CLUSTER_ARN is not set, so no broker, "
        "alias (DZLINEAGE_KAFKA_BROKER_ALIASES) or Debezium kafka://unknown:unknown is mapped "
        "to the topics' nodes; set it to the cluster's ARN"
    )
