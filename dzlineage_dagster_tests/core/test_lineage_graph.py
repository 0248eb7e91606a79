from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.lineage.graph import (
    GLUE_FACET_FORM_PREFIX,
    GraphEdge,
    LineageGraph,
    LineageNode,
    choose_dataset,
    column_pairs,
    near_matches,
    node_kind,
    records_table_creation,
    render,
    resolve_short_name,
    source_identifier,
)

SOURCE = "postgres://shop-db:5432/shop.sales.orders"
SHARD = "postgres://shop-db:5432/shop.sales.orders_archive"
TOPIC = "kafka://b-1.demo:9098/shop.sales.orders"
TABLE = "arn:aws:glue:us-east-1:123456789012:table/lakehouse/sales_orders"
REPORT = "arn:aws:glue:us-east-1:123456789012:table/lakehouse/daily_revenue"


def demo_graph() -> LineageGraph:
    graph = LineageGraph()
    for node_id, columns in ((SOURCE, ["id", "total"]), (TOPIC, ["after.id", "after.total"])):
        graph.add_node(node_id, columns)
    graph.add_edge(
        GraphEdge(SOURCE, TOPIC, "kafka-connect.shop-debezium-source", (("id", "after.id"),))
    )
    graph.add_edge(GraphEdge(SHARD, TOPIC, "kafka-connect.shop-debezium-source"))
    graph.add_edge(
        GraphEdge(TOPIC, TABLE, "kafka-connect.shop-iceberg-sink", (("after.id", "id"),))
    )
    graph.add_edge(GraphEdge(TABLE, REPORT, "glue.daily_revenue"))
    return graph


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (TABLE, [TABLE]),
        ("lakehouse.sales_orders", [TABLE]),
        ("LAKEHOUSE.SALES_ORDERS", [TABLE]),
        # The topic's name equals the source table's qualified name: both are offered.
        ("shop.sales.orders", sorted([SOURCE, TOPIC])),
        ("sales.orders_archive", [SHARD]),
        ("orders", sorted([SOURCE, TOPIC])),
        ("nothing.here", []),
    ],
)
def test_short_names_resolve_to_candidates(text: str, expected: list[str]) -> None:
    assert demo_graph().resolve(text) == expected


@pytest.mark.parametrize(
    ("node_id", "kind"),
    [(TABLE, "glue_table"), (TOPIC, "topic"), (SOURCE, "source_table"), ("s3://b/k", "dataset")],
)
def test_node_kinds_follow_the_identifier_form(node_id: str, kind: str) -> None:
    assert node_kind(node_id) == kind


def test_upstream_walk_finds_every_feeder_and_respects_depth() -> None:
    graph = demo_graph()
    assert set(graph.walk(TABLE, "upstream").nodes) == {TABLE, TOPIC, SOURCE, SHARD}
    assert set(graph.walk(TABLE, "upstream", depth=1).nodes) == {TABLE, TOPIC}
    assert set(graph.walk(TOPIC, "downstream").nodes) == {TOPIC, TABLE, REPORT}
    with pytest.raises(KeyError, match="no lineage node"):
        graph.walk("kafka://x/y", "upstream")


def test_text_tree_answers_what_feeds_this_table_with_columns() -> None:
    graph = demo_graph()
    text = render(graph.walk(TABLE, "upstream"), TABLE, "upstream", "text", columns=True)
    assert text.splitlines() == [
        f"Glue table lakehouse.sales_orders  {TABLE}",
        "└─<- topic shop.sales.orders  via kafka-connect.shop-iceberg-sink",
        "      id <- after.id",
        "   ├─<- source table shop.sales.orders on postgres://shop-db:5432  "
        "via kafka-connect.shop-debezium-source",
        "   │     after.id <- id",
        "   └─<- source table shop.sales.orders_archive on postgres://shop-db:5432  "
        "via kafka-connect.shop-debezium-source",
    ]


def test_json_mermaid_and_dot_carry_the_same_graph() -> None:
    graph = demo_graph().walk(TOPIC, "downstream")
    document = json.loads(render(graph, TOPIC, "downstream", "json", columns=True))
    assert {n["id"] for n in document["nodes"]} == {TOPIC, TABLE, REPORT}
    assert [tuple(p) for p in document["edges"][0]["columns"]] == [("after.id", "id")]
    mermaid = render(graph, TOPIC, "downstream", "mermaid")
    assert mermaid.startswith("graph LR") and mermaid.count("-->") == 2
    dot = render(graph, TOPIC, "downstream", "dot")
    assert dot.startswith("digraph lineage {") and dot.count("->") == 2 and dot.endswith("}")
    with pytest.raises(ValueError, match="format"):
        render(graph, TOPIC, "downstream", "svg")  # type: ignore[arg-type]


def test_cycles_end_the_tree() -> None:
    graph = LineageGraph()
    graph.add_edge(GraphEdge("kafka://b:1/a", "kafka://b:1/b"))
    graph.add_edge(GraphEdge("kafka://b:1/b", "kafka://b:1/a"))
    text = render(graph, "kafka://b:1/a", "downstream", "text")
    assert text.splitlines()[-1].endswith("(cycle)")


@given(st.lists(st.from_regex(r"[a-z]{1,6}(\.[a-z]{1,6}){0,2}", fullmatch=True), max_size=8))
def test_every_topic_resolves_by_its_own_name(names: list[str]) -> None:
    ids = [f"kafka://b-1:9098/{name}" for name in names]
    for node_id, name in zip(ids, names, strict=True):
        assert node_id in resolve_short_name(name, ids)


@pytest.mark.parametrize(
    ("text", "kind", "expected"),
    [
        # The exact name of a topic whose source table shares it: the topic.
        ("shop.sales.orders", None, [TOPIC]),
        ("shop.sales.orders", "source_table", [SOURCE]),
        # The end of a name: the source table, as topics carry a prefix.
        ("sales.orders", None, [SOURCE]),
        ("sales.orders", "topic", [TOPIC]),
        ("lakehouse.sales_orders", None, [TABLE]),
        ("lakehouse.sales_orders", "topic", []),
    ],
)
def test_a_name_of_several_kinds_means_the_most_plausible_one(text, kind, expected) -> None:
    assert choose_dataset(text, demo_graph().nodes, kind) == expected


def test_near_matches_suggest_the_names_a_typo_meant() -> None:
    assert near_matches("lakehouse.sales_order", demo_graph().nodes)[0] == "lakehouse.sales_orders"
    assert near_matches("zzz", demo_graph().nodes) == []


def test_source_identifiers_and_column_pairs_follow_datazone_naming() -> None:
    glue = ("arn:aws:glue:us-east-1:123456789012", "table/lakehouse/sales_orders")
    assert source_identifier(*glue) == TABLE
    assert source_identifier("kafka://b-1.demo:9098", "shop.sales.orders") == TOPIC
    facet = {
        "fields": {
            "id": {
                "inputFields": [
                    {
                        "namespace": "kafka://b-1.demo:9098",
                        "name": "shop.sales.orders",
                        "field": "after.id",
                    }
                ]
            },
            "note": {"inputFields": [{"namespace": "kafka://other:1", "name": "x", "field": "n"}]},
        }
    }
    assert column_pairs(facet, TOPIC) == (("after.id", "id"),)
    assert column_pairs({}, TOPIC) == ()
    # A field named by another name of the upstream dataset (a Glue table's S3 location, as
    # Spark names what it reads through the catalog) pairs only when that name is given.
    assert column_pairs(facet, TABLE) == ()
    assert column_pairs(facet, TABLE, ["kafka://other:1/x"]) == (("n", "note"),)


node_ids = st.text("abcdef0123456789-", min_size=1, max_size=36)
facet_names = st.sampled_from(["schema", "columnLineage", "ownership", "symlinks"])


@given(
    node_id=node_ids,
    source=st.text(min_size=1, max_size=40),
    upstream=st.lists(node_ids, max_size=5),
    downstream=st.lists(node_ids, max_size=5),
    kind=st.sampled_from(["Dataset", "JobRun", "Job"]),
    facets=st.dictionaries(facet_names, st.dictionaries(st.text(max_size=5), st.integers())),
)
def test_datazones_and_glues_answers_of_one_node_normalise_alike(
    node_id, source, upstream, downstream, kind, facets
) -> None:
    """GetLineageNode's answer in DataZone's camelCase and Glue's PascalCase (its forms named by
    ``openlineage.<facet>`` type names) are the same node: one model for both readers."""
    datazone = {
        "id": node_id,
        "sourceIdentifier": source,
        "typeName": f"amazon.datazone.{kind}LineageNodeType",
        "name": "n",
        "upstreamNodes": [{"id": i, "eventTimestamp": 0} for i in upstream],
        "downstreamNodes": [{"id": i} for i in downstream],
        "formsOutput": [
            {"formName": name, "typeName": "x", "content": json.dumps(facet)}
            for name, facet in facets.items()
        ],
    }
    glue = {
        "Id": node_id,
        "SourceIdentifier": source,
        "TypeName": f"amazon.glue.{kind}LineageNodeType",
        "Name": "n",
        "UpstreamNodes": [{"Id": i} for i in upstream],
        "DownstreamNodes": [{"Id": i} for i in downstream],
        "FormsOutput": [
            {"TypeName": f"{GLUE_FACET_FORM_PREFIX}{name}", "Content": json.dumps(facet)}
            for name, facet in facets.items()
        ],
    }
    ours, theirs = LineageNode.from_response(datazone), LineageNode.from_response(glue)
    assert (ours.id, ours.upstream, ours.downstream) == (
        theirs.id,
        theirs.upstream,
        theirs.downstream,
    )
    assert ours.is_dataset == theirs.is_dataset == (kind == "Dataset")
    assert ours.job == theirs.job
    for name, facet in facets.items():
        assert ours.facet(name) == theirs.facet(name) == facet
    assert LineageNode.from_response(glue, forms=False).forms == ()


def test_a_run_and_a_job_name_their_job_and_only_glues_own_creation_job_is_no_feed() -> None:
    run = LineageNode(
        "r", "default.daily_revenue.append/run-1", type_name="x.JobRunLineageNodeType"
    )
    job = LineageNode("j", "glue_manual.lakehouse.t", type_name="x.JobLineageNodeType")
    assert (run.job, job.job) == ("default.daily_revenue.append", "glue_manual.lakehouse.t")
    assert records_table_creation(job.job)
    assert not records_table_creation(run.job)
    assert not records_table_creation("default.not_glue_manual_x")
    assert not records_table_creation(None)


def test_owners_are_shown_beside_their_nodes_in_text_and_json() -> None:
    graph = demo_graph().walk(TABLE, "upstream", depth=1)
    owners = {TOPIC: ["alice@example.com", "team:lakehouse"]}
    text = render(graph, TABLE, "upstream", "text", owners=owners).splitlines()
    assert text[0] == f"Glue table lakehouse.sales_orders  {TABLE}"
    assert text[1].endswith(
        "via kafka-connect.shop-iceberg-sink  owners: alice@example.com, team:lakehouse"
    )
    document = json.loads(render(graph, TABLE, "upstream", "json", owners=owners))
    assert {n["id"]: n["owners"] for n in document["nodes"]} == {
        TABLE: [],
        TOPIC: ["alice@example.com", "team:lakehouse"],
    }


def test_history_keeps_only_the_revisions_where_the_neighbours_changed() -> None:
    from datetime import datetime, timedelta, timezone

    from dzlineage_dagster.core.lineage.graph import NodeRevision, neighbour_periods

    start = datetime(2026, 12, 1, tzinfo=timezone.utc)
    old, new = ((TABLE, "sink"),), ((REPORT, "sink"),)
    newest_first = [
        NodeRevision(start + timedelta(hours=hour), neighbours)
        for hour, neighbours in reversed([(0, ()), (1, old), (2, old), (3, new), (4, new)])
    ]
    assert [(p.at.hour, p.neighbours) for p in neighbour_periods(newest_first)] == [
        (3, new),
        (1, old),
        (0, ()),
    ]
    assert neighbour_periods([]) == []


def test_a_node_apart_from_the_platforms_is_labelled_by_its_whole_identity():
    """Debezium's `kafka://unknown:unknown` topic and a database reached by IP share the short
    names of the platform's topic and source table: they are shown whole, in every format."""
    unknown = "kafka://unknown:unknown/shop.sales.orders"
    by_ip = "postgres://10.0.1.5:5432/shop.sales.orders"
    clicks = "kafka://other:9092/clicks"
    graph = demo_graph()
    for node_id in (unknown, by_ip, clicks):
        graph.add_edge(GraphEdge(SOURCE, node_id, "debezium"))
    graph.name_apart_from({SOURCE, TOPIC, TABLE, REPORT})
    labels = {node_id: node.label for node_id, node in graph.nodes.items()}
    assert labels[unknown] == unknown and labels[by_ip] == by_ip
    assert labels[TOPIC] == "shop.sales.orders" and labels[clicks] == "clicks"
    assert graph.nodes[by_ip].described == f"source table {by_ip}"
    text = render(graph, SOURCE, "downstream", "text")
    assert f"-> topic {unknown}  via debezium" in text
    assert "-> topic shop.sales.orders" in text
    assert json.dumps(unknown) in render(graph, SOURCE, "downstream", "dot")
    # A node's mark stays when it is added again (with columns).
    graph.add_node(unknown, ["id"])
    assert graph.nodes[unknown].apart


def test_a_dataset_of_no_platform_kind_is_labelled_by_its_whole_identity():
    """Athena's query results (`s3://<bucket>` + `/`, as Airflow's AthenaOperator names them)
    and a file an S3 path names: the name alone says neither the bucket nor the system, and `/`
    says nothing at all."""
    results = "s3://shop-athena-results-123456789012//"
    export = "s3://exports/daily/revenue.csv"
    graph = demo_graph()
    for node_id in (results, export):
        graph.add_edge(GraphEdge(REPORT, node_id, "default.shop_reporting.daily_revenue"))
    assert graph.nodes[results].label == results
    assert graph.nodes[export].described == f"dataset {export}"
    text = render(graph, REPORT, "downstream", "text")
    assert f"-> dataset {results}  via default.shop_reporting.daily_revenue" in text
    assert graph.resolve(export) == [export]
