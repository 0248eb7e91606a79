"""Producers' events through the relay, under each reading DataZone's documents leave open of a
node several events describe: a streaming run's separate events (``run_event_merge``), and a
reader's narrower schema of a platform topic (``node_schema``)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from openlineage.client.event_v2 import InputDataset, OutputDataset, RunState

from benchmarks.relay_process import relay_environment, running_relay
from dzlineage_dagster.relay.shared_nodes import HELD_DATASETS_FACET, PRODUCER_SCHEMA_FACET
from dzlineage_dagster.sandbox.server.ambiguities import CHOICES
from dzlineage_dagster_tests.openlineage_spec import validate_openlineage_event
from dzlineage_dagster_tests.relay.conftest import lineage_events, posted_event
from dzlineage_dagster_tests.relay.events import (
    DEBEZIUM_PRODUCER,
    run_event,
    schema_facet,
)
from dzlineage_dagster_tests.relay.test_relay_debezium import debezium_config

TOPIC = "shop.inventory.customers"
FLINK_PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.40.0/integration/flink"
T0 = datetime.now(timezone.utc).replace(microsecond=0)


def brokers(platform) -> dict[str, str]:
    return platform.client("kafka").get_bootstrap_brokers(
        ClusterArn=platform.settings.msk_cluster_arn
    )


def graph_topic(platform) -> str:
    """The topic's node as the sync names it: the first IAM broker."""
    return f"kafka://{brokers(platform)['BootstrapBrokerStringSaslIam'].split(',')[0]}/{TOPIC}"


def node(platform, identifier: str) -> dict:
    return platform.client("datazone").get_lineage_node(
        domainIdentifier=platform.settings.domain_id, identifier=identifier
    )


class Debezium:
    """One Debezium task's run, as Debezium 3.2+ names its job, source table and topic (here
    named by the TLS listener, which the relay renames to the graph's topic)."""

    def __init__(self, platform, task_id: str) -> None:
        config = debezium_config(platform)
        prefix = config["topic.prefix"]
        self.job = (prefix, f"{prefix}.{task_id}")
        self.table_namespace = f"postgres://{config['database.hostname']}:{config['database.port']}"
        self.database = config["database.dbname"]
        self.topic_namespace = (
            f"kafka://{brokers(platform)['BootstrapBrokerStringTls'].split(',')[0]}"
        )
        self.run_id = None

    def table(self, name: str = "customers") -> tuple[str, str]:
        return self.table_namespace, f"{self.database}.inventory.{name}"

    def event(self, state: RunState, second: int, inputs=(), outputs=(), run_id=None):
        return run_event(
            inputs=[InputDataset(*d) for d in inputs],
            outputs=[OutputDataset(*d) for d in outputs],
            run_id=run_id,
            state=state,
            job=self.job,
            event_time=(T0 + timedelta(seconds=second)).isoformat(),
            producer=DEBEZIUM_PRODUCER,
        )


def test_a_debezium_run_links_table_run_and_topic_whether_datazone_merges_its_events_or_not(
    platform, run_event_merge, tmp_path
):
    assert platform.sync().success
    debezium = Debezium(platform, "0")
    start = debezium.event(RunState.START, 0)
    run_id = start.run.runId
    events = [
        start,
        debezium.event(RunState.RUNNING, 1, inputs=[debezium.table()], run_id=run_id),
        debezium.event(
            RunState.RUNNING, 2, outputs=[(debezium.topic_namespace, TOPIC)], run_id=run_id
        ),
        debezium.event(RunState.COMPLETE, 3, run_id=run_id),
    ]
    with running_relay(relay_environment(platform.environment), tmp_path / "spool.db") as relay:
        transport = relay.transport()
        answers = [transport.emit(event).json() for event in events]
        status = relay.status()
        relay.stop()
    assert [a["status"] for a in answers] == ["forwarded"] * 4
    table_id = "/".join(debezium.table())
    topic_id = graph_topic(platform)
    topic = node(platform, topic_id)
    runs = {node(platform, n["id"])["sourceIdentifier"]: n["id"] for n in topic["upstreamNodes"]}
    run_source = f"{debezium.job[0]}.{debezium.job[1]}/{run_id}"
    assert run_source in runs, f"Debezium's run is not upstream of the topic: {sorted(runs)}"
    debezium_run = node(platform, runs[run_source])
    assert [node(platform, n["id"])["sourceIdentifier"] for n in debezium_run["upstreamNodes"]] == [
        table_id
    ]
    assert table_id in platform.upstream_source_identifiers(topic, depth=2)

    # START and the first RUNNING have nothing held to add; the topic's event gets the table,
    # COMPLETE both, each listed in the answer and in a run facet of the posted event.
    assert [a.get("heldDatasetsAdded") for a in answers] == [
        None,
        None,
        [f"input {table_id}"],
        [f"input {table_id}", f"output {topic_id}"],
    ]
    assert status["details"]["held_datasets_added"] == 3
    complete = posted_event(platform, answers[3]["id"])
    validate_openlineage_event(json.dumps(complete))
    namespace, name = debezium.table()
    assert complete["run"]["facets"][HELD_DATASETS_FACET]["addedInputs"] == [
        {"namespace": namespace, "name": name}
    ]


def test_a_producer_s_retry_of_an_event_posts_it_once(platform, tmp_path):
    """The client token is the event's as received; the relay remembers what it added to it, so
    a retry posts the same content under the same token (a replay) even after the run's held
    datasets grew. After the run's end it no longer remembers: the retry differs, DataZone
    answers 409, and the relay finds the event held."""
    assert platform.sync().success
    debezium = Debezium(platform, "1")
    first = debezium.event(RunState.RUNNING, 0, inputs=[debezium.table()])
    run_id = first.run.runId
    to_topic = debezium.event(
        RunState.RUNNING, 1, outputs=[(debezium.topic_namespace, TOPIC)], run_id=run_id
    )
    another_table = debezium.event(
        RunState.RUNNING, 2, inputs=[debezium.table("addresses")], run_id=run_id
    )
    complete = debezium.event(RunState.COMPLETE, 3, run_id=run_id)
    with running_relay(relay_environment(platform.environment), tmp_path / "spool.db") as relay:
        transport = relay.transport()
        answers = [transport.emit(event).json() for event in (first, to_topic, another_table)]
        retried = transport.emit(to_topic).json()
        transport.emit(complete)
        retried_after_the_end = transport.emit(to_topic).json()
        relay.stop()
    assert retried == answers[1], "the same event id, token and additions: a replay"
    assert len(answers[2]["heldDatasetsAdded"]) == 2, "the first table and the topic"
    assert "heldDatasetsAdded" not in retried_after_the_end
    assert retried_after_the_end["heldAlready"] is True
    held = [
        item
        for item in lineage_events(platform)
        if item["eventSummary"]["openLineageRunEventSummary"]["runId"] == run_id
    ]
    assert len(held) == 4


def product_columns(platform, topic_id: str) -> list[str]:
    """The topic's columns as the sync posted them (its own events' schema facet)."""
    namespace, _, name = topic_id.rpartition("/")
    for item in lineage_events(platform):
        summary = item["eventSummary"]["openLineageRunEventSummary"]
        if summary["job"]["namespace"] == "flink":
            continue
        event = posted_event(platform, item["id"])
        for dataset in (*event.get("inputs", []), *event.get("outputs", [])):
            schema = (dataset.get("facets") or {}).get("schema")
            if (dataset["namespace"], dataset["name"]) == (namespace, name) and schema:
                return [field["name"] for field in schema["fields"]]
    raise AssertionError(f"the sync posted no schema of {topic_id}")


def node_columns(platform, identifier: str) -> list[str] | None:
    forms = {f["formName"]: f for f in node(platform, identifier)["formsOutput"]}
    if "schema" not in forms:
        return None
    return [field["name"] for field in json.loads(forms["schema"]["content"])["fields"]]


@pytest.mark.parametrize("node_schema", CHOICES["node_schema"])
def test_a_flink_read_of_a_platform_topic_leaves_the_topic_s_columns_as_the_product_posted(
    platform, node_schema, tmp_path
):
    """Flink reads the topic (through broker b-2's TLS listener) with its two-field read
    schema, before the first sync and after it. Whichever schema DataZone keeps of several,
    the node shows the product's columns: the reader's schema never reaches it."""
    platform.control.set_ambiguities(node_schema=node_schema)
    b2 = brokers(platform)["BootstrapBrokerStringTls"].split(",")[1]

    def flink_read(second: int):
        facet = schema_facet(["id", "version"], producer=FLINK_PRODUCER)
        return run_event(
            inputs=[InputDataset(f"kafka://{b2}", TOPIC, facets={"schema": facet})],
            job=("flink", "customers-enrichment"),
            state=RunState.RUNNING,
            event_time=(datetime.now(timezone.utc) + timedelta(seconds=second)).isoformat(),
            producer=FLINK_PRODUCER,
        )

    with running_relay(relay_environment(platform.environment), tmp_path / "spool.db") as relay:
        before = relay.transport().emit(flink_read(0)).json()
        assert platform.sync().success
        after = relay.transport().emit(flink_read(1)).json()
        relay.stop()
    topic_id = graph_topic(platform)
    assert node_columns(platform, topic_id) == product_columns(platform, topic_id)
    assert before["schemaSetAside"] == after["schemaSetAside"] == [topic_id]
    posted_read = posted_event(platform, after["id"])
    validate_openlineage_event(json.dumps(posted_read))
    posted = posted_read["inputs"][0]["facets"]
    assert "schema" not in posted
    assert posted[PRODUCER_SCHEMA_FACET]["fieldNames"] == ["id", "version"]
    assert posted[PRODUCER_SCHEMA_FACET]["schemaProducer"] == FLINK_PRODUCER
