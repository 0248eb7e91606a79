"""The Glue Data Catalog's lineage graph as a destination beside DataZone
(``DZLINEAGE_LINEAGE_DESTINATIONS``): the same two hops per topic land on the table nodes AWS
made for the Iceberg tables, a second sync posts nothing new to either, a destination that
fails loses the other's progress nowhere and is caught up by the next sync with the same runs.
Over the sandbox, real boto3 clients; Glue's graph is read with ``glue.get_lineage_node``."""

from __future__ import annotations

import json

import pytest
from dagster import Definitions
from openlineage.client.event_v2 import DatasetEvent, InputDataset, StaticDataset

from benchmarks import bench_sync
from benchmarks.relay_process import API_KEY, relay_environment, running_relay
from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.definitions import build_resources, defs
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster_tests.relay.conftest import events_per_run
from dzlineage_dagster_tests.relay.events import (
    SPARK_PRODUCER,
    glue_symlinked_output,
    now,
    run_event,
    schema_facet,
    to_json,
)
from dzlineage_dagster_tests.test_catalog_sync import latest_metadata, table_topics
from dzlineage_dagster_tests.test_lineage_repost import (
    glue_arn,
    is_sink_hop,
    lineage_events,
    summaries,
    topic_of,
)
from dzlineage_dagster_tests.test_lineage_truth import (
    OLD,
    SINK,
    TOPIC,
    delete_archive_sink,
    demo_topic,
    table_id,
)

BOTH = "datazone,glue"


def posts(platform, service: str) -> int:
    return platform.control.call_counts()[(service, "PostLineageEvent")]


def glue_node(platform, identifier: str) -> dict:
    return platform.client("glue").get_lineage_node(Identifier=identifier)


def upstream(platform, identifier: str) -> list[dict]:
    return [
        glue_node(platform, ref["Id"]) for ref in glue_node(platform, identifier)["UpstreamNodes"]
    ]


def runs_of(platform, identifier: str, job_prefix: str) -> list[dict]:
    """The run nodes upstream of a dataset node whose job starts with ``job_prefix``."""
    return [
        node
        for node in upstream(platform, identifier)
        if node["TypeName"].endswith("JobRunLineageNodeType")
        and node["SourceIdentifier"].startswith(job_prefix)
    ]


def dataset_id(dataset: dict) -> str:
    """A dataset's node in Glue's graph: ``<namespace>/<name>`` (a Glue table: its ARN)."""
    return f"{dataset['namespace']}/{dataset['name']}"


def hops_posted_to_datazone(platform) -> dict[str, tuple[dict, dict]]:
    """topic -> (its source hop's summary, its sink hop's summary), as DataZone holds them."""
    hops: dict[str, dict[bool, dict]] = {}
    for summary in summaries(lineage_events(platform, processingStatus="SUCCESS")):
        hops.setdefault(topic_of(summary), {})[is_sink_hop(summary)] = summary
    return {topic: (sides[False], sides[True]) for topic, sides in hops.items() if len(sides) == 2}


def assert_glue_has_every_hop(platform) -> None:
    """Each Iceberg table's ARN node has its topic upstream (through the sink hop's run) and
    AWS's own ``glue_manual`` job beside it; the topic has its source tables upstream."""
    hops = hops_posted_to_datazone(platform)
    assert set(table_topics(platform)) <= set(hops)
    for topic, (source, sink) in hops.items():
        table = glue_arn(sink["outputs"][0])
        (sink_run,) = runs_of(platform, table, "kafka-connect.")
        assert [dataset_id(sink["inputs"][0])] == [
            n["SourceIdentifier"] for n in upstream(platform, sink_run["Id"])
        ], topic
        assert runs_of(platform, table, f"glue_manual.{table.rsplit('/', 2)[1]}."), table
        (source_run,) = runs_of(platform, dataset_id(sink["inputs"][0]), "kafka-connect.")
        assert sorted(
            n["SourceIdentifier"] for n in upstream(platform, source_run["Id"])
        ) == sorted(dataset_id(d) for d in source["inputs"]), topic


def sync_every_topic_again(monkeypatch) -> int:
    """A sync that reads every topic (another read-back wait is another sync context, so no
    registry token vouches for a topic): what it posts, it posts from the records' state."""
    monkeypatch.setenv("DZLINEAGE_LINEAGE_READBACK_WAIT_SECONDS", "1")
    return dzlineage(["sync"])


def test_both_destinations_put_each_topic_between_its_source_and_its_iceberg_table_in_glue(
    platform, monkeypatch, capsys
):
    monkeypatch.setenv("DZLINEAGE_LINEAGE_DESTINATIONS", BOTH)
    platform.control.clear_calls()
    assert dzlineage(["sync"]) == 0
    out = capsys.readouterr().out
    assert "lineage read-back: all landed" in out  # DataZone's side still holds
    hops = 2 * len(table_topics(platform))
    assert posts(platform, "datazone") == hops
    # Each hop, and each topic's schema and owners as a dataset event.
    assert posts(platform, "glue") == hops + len(table_topics(platform))
    assert_glue_has_every_hop(platform)
    topic_namespace, topic = next(
        (d["namespace"], d["name"])
        for s in summaries(lineage_events(platform))
        for d in s["inputs"]
        if d["namespace"].startswith("kafka://")
    )
    forms = {
        f["TypeName"]: json.loads(f["Content"])
        for f in glue_node(platform, f"{topic_namespace}/{topic}")["FormsOutput"]
    }
    assert forms["openlineage.schema"]["fields"], forms

    platform.control.clear_calls()
    assert sync_every_topic_again(monkeypatch) == 0
    assert (posts(platform, "datazone"), posts(platform, "glue")) == (0, 0)


def test_the_default_destination_makes_no_glue_lineage_call(platform, monkeypatch):
    monkeypatch.delenv("DZLINEAGE_LINEAGE_DESTINATIONS", raising=False)
    platform.control.clear_calls()
    assert dzlineage(["sync"]) == 0
    assert posts(platform, "datazone") == 2 * len(table_topics(platform))
    assert not [
        call
        for call in platform.control.call_counts()
        if call[0] == "glue" and "Lineage" in str(call[1])
    ]


@pytest.mark.parametrize("reading", ["same-run", "new-event"])
def test_a_glue_post_refused_midway_is_caught_up_by_the_next_sync_with_the_same_run(
    platform, monkeypatch, capsys, reading
):
    """Glue refuses the first topic's sink hop (its source hop got through): the topic fails
    naming glue:PostLineageEvent, DataZone's posts are kept; the next sync posts Glue alone,
    the source hop again under the same run id, and Glue's graph has that run once, under
    either reading of what Glue does with an event posted again."""
    platform.control.set_ambiguities(glue_lineage_repost=reading)
    monkeypatch.setenv("DZLINEAGE_LINEAGE_DESTINATIONS", BOTH)
    monkeypatch.setenv("DZLINEAGE_CONCURRENCY", "1")
    platform.control.set_faults(
        FaultRule("glue", "PostLineageEvent", "access-denied", count=1, skip=1)
    )
    platform.control.clear_calls()
    assert dzlineage(["sync"]) != 0
    out = capsys.readouterr().out + capsys.readouterr().err
    assert "credentials need glue:PostLineageEvent" in out, out
    assert "iam/glue-lineage-policy.json" in out, out
    assert "datazone posted and recorded" in out
    topics = len(table_topics(platform))
    assert posts(platform, "datazone") == 2 * topics

    platform.control.clear_faults()
    platform.control.clear_calls()
    assert dzlineage(["sync"]) == 0
    assert "to glue only: datazone has it" in capsys.readouterr().out
    # DataZone holds every topic; Glue takes the failed topic's two hops and its dataset event.
    assert (posts(platform, "datazone"), posts(platform, "glue")) == (0, 3)
    assert_glue_has_every_hop(platform)  # each hop's job has one run upstream of its dataset

    platform.control.clear_calls()
    assert sync_every_topic_again(monkeypatch) == 0
    assert (posts(platform, "datazone"), posts(platform, "glue")) == (0, 0)


def test_glue_throttling_is_waited_out_at_the_pace_setting(platform, monkeypatch):
    monkeypatch.setenv("DZLINEAGE_LINEAGE_DESTINATIONS", BOTH)
    monkeypatch.setenv("DZLINEAGE_MAX_ATTEMPTS", "1")  # botocore retries nothing: we do
    monkeypatch.setenv("DZLINEAGE_GLUE_LINEAGE_TPS", "200")
    platform.control.set_faults(FaultRule("glue", "PostLineageEvent", "throttle", count=3))
    platform.control.clear_calls()
    assert dzlineage(["sync"]) == 0
    topics = len(table_topics(platform))
    assert posts(platform, "glue") == 3 * topics + 3
    assert_glue_has_every_hop(platform)


def test_a_deleted_sink_s_edge_leaves_glue_s_graph_as_it_leaves_datazone_s(
    platform, monkeypatch, capsys
):
    """Glue draws a dataset's edge to the latest run of each job, as DataZone's aggregated
    view does: the closing run DataZone gets closes the hop on Glue too."""
    monkeypatch.setenv("DZLINEAGE_LINEAGE_DESTINATIONS", BOTH)
    assert dzlineage(["sync"]) == 0
    table = table_id(platform, OLD)
    assert runs_of(platform, table, f"kafka-connect.{SINK}/")
    delete_archive_sink(platform)
    platform.control.clear_calls()
    assert dzlineage(["sync"]) == 0
    assert f"closed [kafka-connect.{SINK}/{TOPIC}]" in capsys.readouterr().out
    # New content: the source hop's run again and the sink job's closing run, to each; and to
    # Glue the topic's dataset event.
    assert (posts(platform, "datazone"), posts(platform, "glue")) == (2, 3)
    assert runs_of(platform, table, f"kafka-connect.{SINK}/") == []
    # Glue keeps the table and its own CreateTable job: only the product's edge went.
    assert runs_of(platform, table, f"glue_manual.lakehouse.{OLD}")


def test_a_retired_topic_s_jobs_are_closed_at_every_destination(platform, monkeypatch, capsys):
    monkeypatch.setenv("DZLINEAGE_LINEAGE_DESTINATIONS", BOTH)
    assert dzlineage(["sync"]) == 0
    topic_id = "/".join(demo_topic(platform))
    platform.client("glue").delete_schema(SchemaId={"SchemaArn": platform.schema_arn(TOPIC)})
    platform.control.clear_calls()
    assert dzlineage(["sync"]) == 0
    assert posts(platform, "datazone") == posts(platform, "glue") == 2
    assert runs_of(platform, table_id(platform, OLD), "kafka-connect.") == []
    # The topic's node stays, fed by the source job's closing run, which reads nothing.
    (closing,) = runs_of(platform, topic_id, "kafka-connect.")
    assert glue_node(platform, closing["Id"])["UpstreamNodes"] == []


def test_the_relay_forwards_the_same_renamed_event_to_glue_and_retries_glue_from_its_spool(
    platform, tmp_path
):
    """A Spark job reading a topic through a TLS broker and writing a Glue table: Glue's graph
    gets the event the relay renamed (the topic under the graph's broker), as DataZone does;
    Glue refusing it once spools it, and the spool's retry lands it in both, DataZone once."""
    answer = platform.client("kafka").get_bootstrap_brokers(
        ClusterArn=platform.settings.msk_cluster_arn
    )
    tls_broker = answer["BootstrapBrokerStringTls"].split(",")[1]
    graph_broker = answer["BootstrapBrokerStringSaslIam"].split(",")[0]
    table = "spark_relayed"
    event = run_event(
        inputs=[InputDataset(f"kafka://{tls_broker}", "shop.sales.orders")],
        outputs=[
            glue_symlinked_output(
                f"s3://lake/warehouse/{table}", "us-east-1", "123456789012", "lakehouse", table
            )
        ],
    )
    environment = relay_environment(
        platform.environment,
        DZLINEAGE_RELAY_API_KEY=API_KEY,
        DZLINEAGE_LINEAGE_DESTINATIONS=BOTH,
    )
    platform.control.set_faults(FaultRule("glue", "PostLineageEvent", "access-denied", count=1))
    with running_relay(environment, tmp_path / "spool.db") as relay:
        status, answer = relay.post(to_json(event).encode())
        assert status == 202 and "glue:PostLineageEvent" in answer["reason"], answer
        status = relay.wait_until(lambda s: s["spool_depth"] == 0)
        # A dataset event (the topic's schema) goes to Glue alone, renamed the same way.
        described = DatasetEvent(
            eventTime=now(),
            producer=SPARK_PRODUCER,
            dataset=StaticDataset(
                f"kafka://{tls_broker}",
                "shop.sales.orders",
                facets={"schema": schema_facet(["order_id", "amount"])},
            ),
        )
        status_code, answer = relay.post(to_json(described).encode())
        assert (status_code, answer.get("status"), answer.get("to")) == (
            200,
            "forwarded",
            ["glue"],
        ), answer
        status = relay.status()
        relay.stop()
    assert status["details"]["forwarded_to_glue"] == 2

    table_arn = f"arn:aws:glue:us-east-1:123456789012:table/lakehouse/{table}"
    (run,) = runs_of(platform, table_arn, "spark.")
    assert run["SourceIdentifier"] == f"spark.nightly_revenue/{event.run.runId}"
    assert [n["SourceIdentifier"] for n in upstream(platform, run["Id"])] == [
        f"kafka://{graph_broker}/shop.sales.orders"
    ]
    assert events_per_run(platform)[(event.run.runId, "COMPLETE")] == 1
    topic_forms = glue_node(platform, f"kafka://{graph_broker}/shop.sales.orders")["FormsOutput"]
    (schema,) = [json.loads(f["Content"]) for f in topic_forms if f["TypeName"].endswith(".schema")]
    assert [field["name"] for field in schema["fields"]] == ["order_id", "amount"]


def test_the_dagster_asset_says_what_each_destination_took(platform, monkeypatch):
    monkeypatch.setenv("DZLINEAGE_LINEAGE_DESTINATIONS", BOTH)
    both = Definitions(assets=defs.assets, jobs=defs.jobs, resources=build_resources())
    topic = table_topics(platform)[0]
    assert platform.sync([topic], definitions=both).success
    # Two hops to each, and to Glue the topic's dataset event.
    first = latest_metadata(platform, "topic_lineage", topic)
    assert first["events_posted_to"] == {"datazone": 2, "glue": 3}
    assert platform.sync([topic], definitions=both).success
    again = latest_metadata(platform, "topic_lineage", topic)
    assert again["events_posted_to"] == {"datazone": 0, "glue": 0}


def test_the_benchmark_counts_glue_s_lineage_posts_beside_datazone_s(capsys):
    arguments = ["--topics", "2", "--systems", "sync", "--no-faults", "--no-quota"]
    assert bench_sync.main([*arguments, "--lineage-destinations", BOTH]) == 0
    table = capsys.readouterr().out
    first_sync = table.split("first sync", 1)[1].split("idle rerun", 1)[0]
    rows = dict(line.split() for line in first_sync.splitlines() if "PostLineageEvent" in line)
    # Two hops a topic to each, and a dataset event a topic to Glue.
    assert rows == {"datazone.PostLineageEvent": "4", "glue.PostLineageEvent": "6"}


def test_glue_alone_makes_no_datazone_lineage_call(platform, monkeypatch):
    """DataZone's lineage is neither posted nor read (its failed and foreign runs are its own
    to say); Glue's graph gets every hop."""
    monkeypatch.setenv("DZLINEAGE_LINEAGE_DESTINATIONS", "glue")
    monkeypatch.setenv("DZLINEAGE_LINEAGE_READBACK_WAIT_SECONDS", "0")
    platform.control.clear_calls()
    assert dzlineage(["sync"]) == 0
    lineage_calls = {
        operation: count
        for (service, operation), count in platform.control.call_counts().items()
        if service == "datazone" and "Lineage" in (operation or "")
    }
    assert lineage_calls == {}
    assert posts(platform, "glue") == 3 * len(table_topics(platform))
