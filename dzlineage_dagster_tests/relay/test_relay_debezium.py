"""Debezium's own lineage, through the relay, meets the lineage the project's sync posts."""

from __future__ import annotations

import signal

import pytest

from benchmarks.relay_process import relay_environment, running_relay
from dzlineage_dagster_tests.platform import fresh_platform
from dzlineage_dagster_tests.relay.events import debezium_events

TOPIC = "shop.inventory.customers"


@pytest.fixture
def platform(sandbox, monkeypatch):
    return fresh_platform(sandbox, monkeypatch)


def debezium_config(platform, name: str = "shop-debezium-source") -> dict[str, str]:
    connect = platform.client("kafkaconnect")
    (summary,) = [c for c in connect.list_connectors()["connectors"] if c["connectorName"] == name]
    return connect.describe_connector(connectorArn=summary["connectorArn"])[
        "connectorConfiguration"
    ]


def test_debezium_events_join_the_nodes_the_sync_posts_for_the_same_connector(platform, tmp_path):
    assert platform.sync().success
    datazone = platform.client("datazone")
    domain = platform.settings.domain_id

    def node(identifier: str) -> dict:
        return datazone.get_lineage_node(domainIdentifier=domain, identifier=identifier)

    brokers = platform.client("kafka").get_bootstrap_brokers(
        ClusterArn=platform.settings.msk_cluster_arn
    )
    graph_topic = f"kafka://{brokers['BootstrapBrokerStringSaslIam'].split(',')[0]}/{TOPIC}"
    synced = node(graph_topic)
    assert synced["downstreamNodes"], "the sync posts the topic -> Iceberg table hop"

    # Named as Debezium 3.2+ names them: the job `<topic.prefix>.<taskId>` in namespace
    # `topic.prefix`; the table `postgres://<database.hostname>:<database.port>` +
    # `<db>.<schema>.<table>`; the topic `kafka://` + the first broker of the bootstrap servers
    # the connector was given (here the TLS listener's, not the one the graph uses).
    config = debezium_config(platform)
    prefix = config["topic.prefix"]
    source = (
        f"postgres://{config['database.hostname']}:{config['database.port']}",
        f"{config['database.dbname']}.inventory.customers",
    )
    tls_broker = brokers["BootstrapBrokerStringTls"].split(",")[0]
    events = debezium_events(
        topic_prefix=prefix, task_id="0", source=source, topic=(f"kafka://{tls_broker}", TOPIC)
    )

    environment = relay_environment(platform.environment)
    with running_relay(environment, tmp_path / "spool.db") as relay:
        transport = relay.transport()
        answers = [transport.emit(event).json() for event in events]
        relay.stop(signal.SIGINT)  # Ctrl-C
    assert [a["status"] for a in answers] == ["forwarded", "forwarded"]
    assert "renamed" not in answers[0] and len(answers[1]["renamed"]) == 1

    joined = node(graph_topic)
    assert joined["id"] == synced["id"], "Debezium's topic is the sync's topic node"
    assert {n["id"] for n in synced["downstreamNodes"]} <= {
        n["id"] for n in joined["downstreamNodes"]
    }
    # Upstream of the topic: Debezium's own run, and the sync's connector-derived source hop;
    # both come from the same source table node.
    upstream_runs = {
        node(n["id"])["sourceIdentifier"]: node(n["id"]) for n in joined["upstreamNodes"]
    }
    debezium_run = upstream_runs[f"{prefix}.{prefix}.0/{events[0].run.runId}"]
    assert len(upstream_runs) == 2, sorted(upstream_runs)
    (table,) = [node(n["id"]) for n in debezium_run["upstreamNodes"]]
    assert table["sourceIdentifier"] == f"{source[0]}/{source[1]}"
    (sync_run,) = [run for key, run in upstream_runs.items() if run is not debezium_run]
    assert [n["id"] for n in sync_run["upstreamNodes"]] == [table["id"]]
    # Downstream of the topic: the sync's run into the Iceberg table, and the topic's asset.
    downstream = {node(n["id"])["sourceIdentifier"] for n in joined["downstreamNodes"]}
    assert any(s.startswith("amazon.datazone.asset/") for s in downstream), downstream
    iceberg = platform.upstream_source_identifiers(
        node("arn:aws:glue:us-east-1:123456789012:table/lakehouse/inventory_customers"), depth=4
    )
    assert f"{source[0]}/{source[1]}" in iceberg, "source table -> topic -> Iceberg table"
