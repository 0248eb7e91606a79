"""The platform graph's key scheme, nodes and state, as plain data."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.connectors.debezium import SourceEngine, SourceTable
from dzlineage_dagster.core.connectors.iceberg_sink import SinkTable
from dzlineage_dagster.core.connectors.topics import TopicKind
from dzlineage_dagster.core.connectors.topology import SinkEdge, SourceEdge, TopicLineage
from dzlineage_dagster.core.lineage.platform_graph import (
    STATE_FORMAT,
    ColumnDep,
    GraphScope,
    PlatformGraphState,
    TopicGraph,
    draw,
    glue_table_columns,
    group_name,
    iceberg_table_key,
    platform_nodes,
    source_table_key,
    topic_key,
    topology_digest,
)
from dzlineage_dagster.core.schemas.avro import Column

ID = Column("id", "long", False, None)
NOTE = Column("note", "string", True, "free text")


def source(engine: SourceEngine, database: str, schema: str | None, table: str) -> SourceTable:
    return SourceTable(engine, database, schema, table, "db.internal", "5432", "src")


def lineage(
    topic: str,
    sources: tuple[SourceTable, ...] = (),
    tables: tuple[SinkTable, ...] = (),
    connector: str | None = "shop-source",
) -> TopicLineage:
    return TopicLineage(
        topic=topic,
        kind=TopicKind.TABLE,
        sources=tuple(SourceEdge(t, "connector", "captured") for t in sources),
        source_connector=connector if sources else None,
        sinks=tuple(SinkEdge(t, "connector", "routed") for t in tables),
        sink_connectors=("sink",) if tables else (),
        origin="connector" if sources or tables else "none",
        ambiguous_reason=None,
        reason="because",
    )


def test_keys_name_each_node_as_its_system_does():
    assert source_table_key(source(SourceEngine.POSTGRES, "shop", "sales", "orders")) == (
        "source",
        "postgres",
        "shop",
        "sales",
        "orders",
    )
    # MySQL databases have no schemas: no empty part.
    assert source_table_key(source(SourceEngine.MYSQL, "shop", None, "orders")) == (
        "source",
        "mysql",
        "shop",
        "orders",
    )
    assert topic_key("shop.sales.orders") == ("kafka", "shop.sales.orders")
    assert iceberg_table_key("lakehouse", "orders") == ("iceberg", "lakehouse", "orders")


@given(st.text(max_size=30))
def test_group_names_are_always_valid_dagster_group_names(name):
    assert all(c.isascii() and (c.isalnum() or c == "_") for c in group_name(name))
    assert group_name(name)


def test_two_topics_into_one_table_give_it_both_deps_and_both_columns_lineage():
    table = SinkTable("lakehouse", "orders", "sink", "glue")
    table_key = iceberg_table_key("lakehouse", "orders")
    first = source(SourceEngine.POSTGRES, "shop", "sales", "orders_eu")
    second = source(SourceEngine.POSTGRES, "shop", "sales", "orders_us")
    graphs = [
        TopicGraph(
            lineage(name, (captured,), (table,)),
            columns=(ID,),
            source_column_lineage={"id": (ColumnDep(source_table_key(captured), "id"),)},
            table_column_lineage={table_key: {"id": (ColumnDep(topic_key(name), "id"),)}},
        )
        for name, captured in (("shop.eu.orders", first), ("shop.us.orders", second))
    ]
    nodes = {node.key: node for node in platform_nodes(graphs, {})}
    merged = nodes[table_key]
    assert merged.deps == (topic_key("shop.eu.orders"), topic_key("shop.us.orders"))
    assert merged.column_lineage["id"] == (
        ColumnDep(topic_key("shop.eu.orders"), "id"),
        ColumnDep(topic_key("shop.us.orders"), "id"),
    )
    # Not in the catalog yet: the columns the sink writes, its topic's.
    assert merged.columns == (ID,) and merged.facts["in_catalog"] == "not yet"
    assert nodes[topic_key("shop.eu.orders")].deps == (source_table_key(first),)
    assert nodes[source_table_key(first)].columns == (ID,)
    assert {n.group for n in nodes.values() if n.kind != "iceberg_table"} == {"shop_source"}


def test_a_topic_without_edges_draws_nothing_and_catalog_columns_win():
    table = SinkTable("lakehouse", "t", "sink", "glue")
    key = iceberg_table_key("lakehouse", "t")
    nodes = platform_nodes(
        [
            TopicGraph(lineage("__debezium-heartbeat.shop")),
            TopicGraph(lineage("shop.t", tables=(table,)), columns=(ID,)),
        ],
        {key: (ID, NOTE)},
    )
    assert [node.key for node in nodes] == [key, topic_key("shop.t")]
    assert nodes[0].columns == (ID, NOTE)
    assert nodes[1].group == "kafka"  # no Debezium connector writes it


def test_the_state_survives_its_json_and_another_format_is_ignored():
    table = SinkTable("lakehouse", "t", "sink", "glue")
    captured = source(SourceEngine.SQLSERVER, "shop", "dbo", "t")
    graph = TopicGraph(
        lineage("shop.t", (captured,), (table,)),
        columns=(ID, NOTE),
        source_column_lineage={"id": (ColumnDep(source_table_key(captured), "id"),)},
        owners=("team:cdc",),
        url="https://portal/asset",
        facts={"schema_version": "3"},
    )
    state = PlatformGraphState("d1", "2026-01-01T00:00:00+00:00", platform_nodes([graph], {}))
    assert PlatformGraphState.from_json(state.to_json()) == state
    assert state.edges() == {
        (source_table_key(captured), topic_key("shop.t")),
        (topic_key("shop.t"), iceberg_table_key("lakehouse", "t")),
    }
    assert (
        PlatformGraphState.from_json(
            state.to_json().replace(f'"format": {STATE_FORMAT}', '"format": 1')
        )
        is None
    )


def test_the_digest_moves_with_the_connectors_and_with_any_schema():
    base = topology_digest("c1", {"a": "t1", "b": "t1"})
    assert base == topology_digest("c1", {"b": "t1", "a": "t1"})
    assert base != topology_digest("c2", {"a": "t1", "b": "t1"})
    assert base != topology_digest("c1", {"a": "t1", "b": "t2"})
    assert base != topology_digest("c1", {"a": "t1"})


def test_glue_columns_leave_out_dropped_ones_and_read_iceberg_optionality():
    table = {
        "StorageDescriptor": {
            "Columns": [
                {"Name": "id", "Type": "bigint", "Parameters": {"iceberg.field.optional": "false"}},
                {"Name": "old", "Type": "string", "Parameters": {"iceberg.field.current": "false"}},
                {"Name": "note", "Type": "string", "Comment": "free text"},
            ]
        }
    }
    assert glue_table_columns(table) == (
        Column("id", "bigint", False, None),
        Column("note", "string", True, "free text"),
    )
    assert glue_table_columns({}) == ()


# A small platform for scopes: topic i read by connector c{i % 3} from database db{i % 2}, and
# feeding its own table and a table `all` shared by every topic of its lake{i % 2}.
def estate_topic(i: int) -> str:
    return f"{'app' if i % 4 else 'ops'}.t{i}"


ESTATE = platform_nodes(
    [
        TopicGraph(
            lineage(
                estate_topic(i),
                (SourceTable(SourceEngine.MYSQL, f"db{i % 2}", None, f"t{i}", "h", "3306", f"c{i % 3}"),),
                (SinkTable(f"lake{i % 2}", f"t{i}", "sink", "glue"), SinkTable(f"lake{i % 2}", "all", "sink", "glue")),
                connector=f"c{i % 3}",
            )
        )
        for i in range(12)
    ],
    {},
)  # fmt: skip
SCOPES = st.builds(
    GraphScope,
    databases=st.lists(st.sampled_from(["db0", "db1", "lake0", "lake1", "nope"]), max_size=2).map(tuple),
    connectors=st.lists(st.sampled_from(["c0", "c1", "c2", "nope"]), max_size=2).map(tuple),
    topic_prefixes=st.lists(st.sampled_from(["app.", "ops.", "app.t1", "x"]), max_size=2).map(tuple),
    topic_pattern=st.sampled_from([None, r"app\.t\d", r".*1", "t1"]),
    max_topics=st.one_of(st.none(), st.integers(1, 14)),
)  # fmt: skip


def topics_in_scope(scope: GraphScope) -> list[str]:
    """The estate's topics every filter of ``scope`` admits, by name, from how it was made."""
    return sorted(
        estate_topic(i)
        for i in range(12)
        if (not scope.topic_prefixes or estate_topic(i).startswith(scope.topic_prefixes))
        and (not scope.topic_pattern or re.fullmatch(scope.topic_pattern, estate_topic(i)))
        and (not scope.connectors or f"c{i % 3}" in scope.connectors)
        and (not scope.databases or {f"db{i % 2}", f"lake{i % 2}"} & set(scope.databases))
    )


@given(SCOPES)
def test_a_scope_draws_whole_topics_in_order_and_says_what_its_limit_left_out(scope):
    drawn = draw(ESTATE, scope)
    topics = [node for node in drawn.nodes if node.kind == "topic"]
    expected = topics_in_scope(scope)
    assert [topic.key[1] for topic in topics] == expected[: scope.max_topics]
    # Each topic comes with its source table and every table it feeds; nothing else; in order.
    drawn_topics = {topic.key for topic in topics}
    assert {node.key for node in drawn.nodes} == {
        *drawn_topics,
        *(dep for topic in topics for dep in topic.deps),
        *(n.key for n in ESTATE if n.kind == "iceberg_table" and drawn_topics & set(n.deps)),
    }
    assert list(drawn.nodes) == sorted(drawn.nodes, key=lambda node: node.key)
    assert (drawn.topics, drawn.in_scope, drawn.drawn) == (12, len(expected), len(topics))
    if len(expected) > len(topics):
        assert drawn.first_left_out == expected[len(topics)]
        assert f"draws {len(topics):,} of the {len(expected):,} topics" in drawn.truncation_note
    else:
        assert drawn.first_left_out is drawn.truncation_note is None


ESTATE_STATE = PlatformGraphState("d", "2026-01-01T00:00:00+00:00", ESTATE, "c")


@given(SCOPES)
def test_a_state_read_in_scope_holds_what_the_scope_draws_of_the_whole(scope):
    # Read from its outlines, then only the drawn nodes whole: the same as drawing it all.
    text = ESTATE_STATE.to_json()
    state, drawn = PlatformGraphState.read(text.splitlines, scope)
    assert drawn == draw(ESTATE, scope)
    assert state == PlatformGraphState("d", ESTATE_STATE.written_at, drawn.nodes, "c")


def test_without_filters_and_under_the_limit_the_graph_is_the_state_s():
    drawn = draw(ESTATE, GraphScope())
    assert drawn.nodes == ESTATE and drawn.truncation_note is None


def test_a_scope_s_bad_pattern_or_limit_is_named():
    with pytest.raises(ValueError, match=r"topic_pattern 'app\.\(' is not a regular expression"):
        GraphScope(topic_pattern=r"app.(")
    with pytest.raises(ValueError, match="max_topics must be at least 1"):
        GraphScope(max_topics=0)
