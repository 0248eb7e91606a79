"""`dzlineage trace` and `dzlineage orphans` on the seeded demo, its lineage posted as the product
posts it: `dzlineage sync` posts both hops, source table -> Debezium connector -> topic and
topic -> Iceberg sink connector -> table, each derived from the connectors' configs."""

from __future__ import annotations

import json

import pytest
from openlineage.client.event_v2 import InputDataset, OutputDataset, RunState

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.sandbox.demo.seed import Column as SeedColumn
from dzlineage_dagster_tests.relay.events import DEBEZIUM_PRODUCER, run_event, to_json

SOURCE_NAMESPACE = "postgres://shop-db.cluster-c8a1b2c3d4e5.us-east-1.rds.amazonaws.com:5432"
TOPIC = "shop.sales.orders"
TABLE = "lakehouse.sales_orders"
ORDER_COLUMNS = ("id", "customer_id", "order_date", "status", "total")


@pytest.fixture
def demo(platform, capsys):
    assert dzlineage(["sync"]) == 0
    capsys.readouterr()
    return platform


def trace(capsys, *args: str) -> tuple[int, str, str]:
    code = dzlineage(["trace", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_trace_answers_what_feeds_a_table_and_what_breaks_without_a_topic(demo, capsys):
    # what feeds this table
    code, out, _ = trace(capsys, TABLE, "--columns", "--no-owners")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(f"Glue table {TABLE}  arn:aws:glue:us-east-1:")
    assert lines[1] == f"└─<- topic {TOPIC}  via kafka-connect.shop-iceberg-sink/{TOPIC}"
    assert (
        f"   └─<- source table shop.sales.orders on {SOURCE_NAMESPACE}  "
        f"via kafka-connect.shop-debezium-source/{TOPIC}" in lines
    )
    assert "         after.total <- total" in lines

    # what breaks if i drop this topic
    code, out, _ = trace(capsys, TOPIC, "--downstream", "--format", "json")
    assert code == 0
    graph = json.loads(out)
    assert graph["root"].endswith(f"/{TOPIC}") and graph["root"].startswith("kafka://")
    assert {(n["label"], n["kind"]) for n in graph["nodes"]} == {
        (TOPIC, "topic"),
        (TABLE, "glue_table"),
    }

    # a source table name traces from the source table
    code, out, _ = trace(capsys, "sales.orders", "--downstream", "--depth", "1")
    assert code == 0
    assert out.splitlines()[0].startswith(f"source table shop.sales.orders  {SOURCE_NAMESPACE}/")
    assert out.count("-> topic shop.sales.orders  via") == 1 and "Glue table" not in out
    code, mermaid, _ = trace(capsys, "sales.orders", "--downstream", "--format", "mermaid")
    assert mermaid.startswith("graph LR") and mermaid.count("-->") == 2
    code, dot, _ = trace(capsys, TOPIC, "--kind", "source_table", "--format", "dot")
    assert code == 0 and "shop.sales.orders (source table)" in dot

    # unknown names are refused with near matches
    code, out, err = trace(capsys, "lakehouse.sales_order")
    assert code == 2 and out == ""
    assert "no dataset named 'lakehouse.sales_order'" in err
    assert "did you mean lakehouse.sales_orders" in err


def test_trace_names_whom_to_call_about_each_topic(demo, capsys):
    demo.client("glue").tag_resource(
        ResourceArn=demo.schema_arn(TOPIC), TagsToAdd={"owner": "alice@example.com"}
    )
    project = demo.client("datazone").get_project(
        domainIdentifier=demo.settings.domain_id, identifier=demo.settings.project_id
    )
    # The sandbox's caller created the project, so DataZone made it an owner; it is the sync's
    # own principal, no one to call. Another owner is.
    caller = demo.client("sts").get_caller_identity()
    lead = f"arn:aws:iam::{caller['Account']}:role/data-platform-lead"
    demo.client("datazone").create_project_membership(
        domainIdentifier=demo.settings.domain_id,
        projectIdentifier=demo.settings.project_id,
        member={"userIdentifier": lead},
        designation="PROJECT_OWNER",
    )
    code, out, _ = trace(capsys, TABLE)
    assert code == 0
    owners = out.splitlines()[1].split("  owners: ")[1].split(", ")
    # The project's owner as its user profile names it (here an IAM principal), not its id.
    assert owners == ["alice@example.com", f"team:{project['name']}", lead]
    assert caller["Arn"] not in out
    code, out, _ = trace(capsys, TABLE, "--format", "json")
    topic = next(n for n in json.loads(out)["nodes"] if n["kind"] == "topic")
    assert topic["owners"][:2] == ["alice@example.com", f"team:{project['name']}"]

    # A wrong owner is named, and the topic still shows whom DataZone knows.
    demo.client("glue").tag_resource(
        ResourceArn=demo.schema_arn(TOPIC), TagsToAdd={"owner": "alice"}
    )
    code, out, err = trace(capsys, TABLE)
    assert code == 0
    assert f"dzlineage trace: {TOPIC}: glue-schema-tag:owner: 'alice' is not an owner" in err
    assert out.splitlines()[1].endswith(f"  owners: team:{project['name']}, {lead}")
    code, out, _ = trace(capsys, TABLE, "--no-owners")
    assert "owners:" not in out


def test_a_node_apart_from_the_platforms_topic_is_shown_by_its_own_identity(demo, capsys):
    """Debezium, its connector naming no bootstrap servers, posts the topic as
    ``kafka://unknown:unknown``: a node of its own, which trace never shows under the platform
    topic's name nor with that topic's owners."""
    demo.client("glue").tag_resource(
        ResourceArn=demo.schema_arn(TOPIC), TagsToAdd={"owner": "alice@example.com"}
    )
    unknown = f"kafka://unknown:unknown/{TOPIC}"
    # Debezium's job `<topic.prefix>.<taskId>` in namespace `topic.prefix`, as it names them.
    event = run_event(
        inputs=[InputDataset(SOURCE_NAMESPACE, "shop.sales.orders")],
        outputs=[OutputDataset("kafka://unknown:unknown", TOPIC)],
        state=RunState.RUNNING,
        job=("shop", "shop.0"),
        producer=DEBEZIUM_PRODUCER,
    )
    demo.client("datazone").post_lineage_event(
        domainIdentifier=demo.settings.domain_id, event=to_json(event).encode()
    )
    code, out, _ = trace(capsys, "sales.orders", "--downstream", "--depth", "1")
    assert code == 0
    lines = out.splitlines()
    (platform_topic,) = [line for line in lines if f"-> topic {TOPIC}  via" in line]
    assert "owners: alice@example.com" in platform_topic
    (apart,) = [line for line in lines if "unknown:unknown" in line]
    assert apart.endswith(f"-> topic {unknown}  via shop.shop.0"), apart
    code, out, _ = trace(capsys, "sales.orders", "--downstream", "--format", "json")
    nodes = {n["id"]: n for n in json.loads(out)["nodes"]}
    assert nodes[unknown]["label"] == unknown and nodes[unknown]["owners"] == []
    platform_id = next(i for i, n in nodes.items() if n["kind"] == "topic" and i != unknown)
    assert nodes[platform_id]["label"] == TOPIC
    # --history labels the same way.
    code, out, _ = trace(capsys, "sales.orders", "--downstream", "--history")
    assert code == 0
    assert f"-> topic {unknown}  via shop.shop.0" in out
    assert f"-> topic {TOPIC}  via kafka-connect.shop-debezium-source/{TOPIC}" in out


def test_orphans_lists_topics_that_feed_no_table_and_tables_nothing_feeds(demo, capsys):
    demo.create_table_topic("shop.sales.refunds", [SeedColumn("id", "bigint", nullable=False)])
    demo.client("glue").create_table(
        DatabaseName=demo.settings.glue_database, TableInput={"Name": "manual_upload"}
    )
    assert dzlineage(["orphans", "--format", "json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["topics_without_downstream_table"] == ["shop.sales.refunds"]
    # The demo's daily_revenue is an aggregate no connector writes: nothing feeds it either.
    unfed = {t.rsplit("/", 1)[-1] for t in found["tables_without_upstream"]}
    assert unfed == {"daily_revenue", "manual_upload"}

    assert dzlineage(["orphans"]) == 0
    text = capsys.readouterr().out
    assert "feed no table (1):\n  shop.sales.refunds\n" in text


@pytest.mark.parametrize(
    "command", [("trace", TABLE), ("orphans",), ("impact", TOPIC)], ids=lambda c: c[0]
)
def test_a_registry_that_does_not_exist_is_named_by_its_setting(
    platform, capsys, monkeypatch, command
):
    monkeypatch.setenv("DZLINEAGE_REGISTRY_NAME", "no-such-registry")
    code = dzlineage(list(command))
    err = capsys.readouterr().err
    assert code == 2
    [line] = err.strip().splitlines()
    assert line.startswith(
        f"dzlineage {command[0]}: DZLINEAGE_REGISTRY_NAME='no-such-registry': "
        "Glue Schema Registry does not exist"
    ), line
