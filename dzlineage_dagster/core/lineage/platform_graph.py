"""The platform's lineage as nodes of Dagster's asset graph: the asset-key scheme, and the state
the platform-graph component keeps between loads (plain data, JSON).

Asset keys (documented in docs/dagster-graph.md; a team's own assets depend on them by key):

- a captured source table: ``["source", <engine>, <database>, <schema>, <table>]``, without the
  schema part for MySQL/MariaDB (whose databases have none), e.g.
  ``source/postgres/shop/sales/orders``;
- a Kafka topic: ``["kafka", <topic>]``, e.g. ``kafka/shop.sales.orders``;
- an Iceberg table: ``["iceberg", <database>, <table>]`` as its catalog names it, e.g.
  ``iceberg/lakehouse/sales_orders``.

Each node's edges are the topology's resolved edges (override > connector > convention), the
same the sync posts to DataZone; its column lineage is the sync's hop's ``columnLineage`` with
the Debezium envelope's ``after.`` prefix taken off, so a column is named as its table has it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from dzlineage_dagster.core.connectors.debezium import SourceTable
from dzlineage_dagster.core.connectors.iceberg_sink import SinkTable
from dzlineage_dagster.core.connectors.topology import TopicLineage
from dzlineage_dagster.core.schemas.avro import Column

AssetPath = tuple[str, ...]
NodeKind = Literal["source_table", "topic", "iceberg_table"]
#: Bumped when the state's layout changes: an older state is ignored until refreshed.
#: 2: JSON lines, the header, then one line per node: its outline, a tab, the whole node.
STATE_FORMAT = 2
#: The group of topics no known Debezium connector writes (override-only sources, or none).
UNCONNECTED_GROUP = "kafka"
_INVALID_GROUP_CHARACTER = re.compile(r"[^A-Za-z0-9_]")


def source_table_key(table: SourceTable) -> AssetPath:
    parts = (table.engine.value, table.database, table.schema, table.table)
    return ("source", *(part for part in parts if part is not None))


def topic_key(topic: str) -> AssetPath:
    return ("kafka", topic)


def iceberg_table_key(database: str, table: str) -> AssetPath:
    return ("iceberg", database, table)


def group_name(name: str) -> str:
    """``name`` as a Dagster group name (letters, digits and ``_`` only)."""
    return _INVALID_GROUP_CHARACTER.sub("_", name) or UNCONNECTED_GROUP


@dataclass(frozen=True)
class ColumnDep:
    """One upstream column of a node's column: the upstream node's key and its column."""

    key: AssetPath
    column: str


@dataclass(frozen=True)
class PlatformNode:
    """One external asset of the graph."""

    key: AssetPath
    kind: NodeKind
    group: str
    kinds: tuple[str, ...]
    description: str
    deps: tuple[AssetPath, ...] = ()
    columns: tuple[Column, ...] = ()
    #: Column -> the upstream columns it is written from.
    column_lineage: Mapping[str, tuple[ColumnDep, ...]] = field(default_factory=dict)
    owners: tuple[str, ...] = ()
    #: The node's DataZone asset page (None when the catalog has none, or no portal).
    url: str | None = None
    #: What the UI shows beside the node, as text.
    facts: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PlatformGraphState:
    """What ``write_state_to_path`` stores: the nodes, and the digest of the topology they were
    read from (compared with the live one to tell the state is stale). Read with a scope
    (:meth:`read`), its nodes are the scope's."""

    digest: str
    written_at: str
    nodes: tuple[PlatformNode, ...]
    #: The connectors' part of ``digest``: what the connector sensor, which reads only the
    #: connectors, compares (empty in a state written before it was kept).
    connectors_digest: str = ""

    def to_json(self) -> str:
        """The header line, then per node its outline (key, kind, deps, connector: what a scope
        reads), a tab and the whole node: a large state is drawn in part without decoding (or
        holding) every node's columns (:meth:`read`). JSON escapes tabs inside strings."""
        header = {
            "format": STATE_FORMAT,
            "digest": self.digest,
            "written_at": self.written_at,
            "connectors_digest": self.connectors_digest,
        }
        lines = [json.dumps(header, sort_keys=True)]
        for node in self.nodes:
            outline = [node.key, node.kind, node.deps, node.facts.get("connector")]
            lines.append(f"{json.dumps(outline)}\t{json.dumps(asdict(node), sort_keys=True)}")
        return "\n".join(lines) + "\n"

    @classmethod
    def from_json(cls, text: str) -> PlatformGraphState | None:
        """The whole state in ``text``; None for a state of another format (refresh to replace
        it)."""
        read = cls.read(lambda: text.splitlines(), GraphScope(max_topics=None))
        return read[0] if read else None

    @classmethod
    def read(
        cls, lines: Callable[[], Iterable[str]], scope: GraphScope
    ) -> tuple[PlatformGraphState, DrawnGraph] | None:
        """The state whose lines ``lines()`` gives, with only ``scope``'s nodes (as drawn); None
        for a state of another format. Two passes: the outlines draw the scope, then only the
        drawn nodes are decoded whole, so memory follows what is drawn, not the platform."""
        first = iter(lines())
        header = json.loads(next(first, "{}"))
        if header.get("format") != STATE_FORMAT:
            return None
        outlines = []
        for line in first:
            key, kind, deps, connector = json.loads(line.partition("\t")[0])
            outlines.append(
                PlatformNode(
                    key=tuple(key), kind=kind, group="", kinds=(), description="",
                    deps=tuple(tuple(dep) for dep in deps),
                    facts={"connector": connector} if connector else {},
                )
            )  # fmt: skip
        outline = draw(outlines, scope)
        wanted = {node.key for node in outline.nodes}
        nodes = []
        rest = iter(lines())
        next(rest)
        for line, node in zip(rest, outlines, strict=True):
            if node.key in wanted:
                nodes.append(_node_from_json(json.loads(line.partition("\t")[2])))
        drawn = replace(outline, nodes=tuple(nodes))
        state = cls(
            digest=header["digest"],
            written_at=header["written_at"],
            nodes=drawn.nodes,
            connectors_digest=header.get("connectors_digest", ""),
        )
        return state, drawn

    def node(self, key: Sequence[str]) -> PlatformNode | None:
        return next((node for node in self.nodes if node.key == tuple(key)), None)

    def edges(self) -> set[tuple[AssetPath, AssetPath]]:
        """Every (upstream, downstream) pair of keys."""
        return {(dep, node.key) for node in self.nodes for dep in node.deps}


def _column_from_json(column: dict[str, Any]) -> Column:
    """A column of the state, its nested fields (a struct's) columns again."""
    return Column(
        **{
            **column,
            "fields": tuple(_column_from_json(nested) for nested in column.get("fields", ())),
            "symbols": tuple(column.get("symbols", ())),
            "aliases": tuple(column.get("aliases", ())),
        }
    )


def _node_from_json(node: Mapping[str, Any]) -> PlatformNode:
    return PlatformNode(
        key=tuple(node["key"]),
        kind=node["kind"],
        group=node["group"],
        kinds=tuple(node["kinds"]),
        description=node["description"],
        deps=tuple(tuple(dep) for dep in node["deps"]),
        columns=tuple(_column_from_json(column) for column in node["columns"]),
        column_lineage={
            column: tuple(ColumnDep(tuple(dep["key"]), dep["column"]) for dep in deps)
            for column, deps in node["column_lineage"].items()
        },
        owners=tuple(node["owners"]),
        url=node["url"],
        facts=dict(node["facts"]),
    )


#: Topics the graph draws unless ``max_topics`` says otherwise: 30,000 specs, whose load the
#: benchmark measured (docs/dagster-graph.md, "Large platforms").
DEFAULT_MAX_TOPICS = 10_000


@dataclass(frozen=True)
class GraphScope:
    """The part of the platform the graph draws: the topics every given filter admits (each
    filter: any of its values), each with its source tables and Iceberg tables; of those, the
    first ``max_topics`` by name (None: all of them)."""

    #: A source database or an Iceberg (Glue) database the topic reads from or feeds.
    databases: tuple[str, ...] = ()
    #: The Debezium connector capturing the topic's source table.
    connectors: tuple[str, ...] = ()
    topic_prefixes: tuple[str, ...] = ()
    #: A regular expression the whole topic name matches (as Debezium's include lists do).
    topic_pattern: str | None = None
    max_topics: int | None = DEFAULT_MAX_TOPICS

    def __post_init__(self) -> None:
        if self.topic_pattern is not None:
            try:
                re.compile(self.topic_pattern)
            except re.error as error:
                raise ValueError(
                    f"topic_pattern {self.topic_pattern!r} is not a regular expression: {error}"
                ) from None
        if self.max_topics is not None and self.max_topics < 1:
            raise ValueError(
                f"max_topics must be at least 1 (null draws every topic), not {self.max_topics}"
            )

    @property
    def filters(self) -> bool:
        return bool(self.databases or self.connectors or self.topic_prefixes or self.topic_pattern)

    def admits(
        self,
        topic: PlatformNode,
        sources: Sequence[PlatformNode],
        tables: Sequence[PlatformNode],
    ) -> bool:
        """Whether ``topic``, read from ``sources`` and feeding ``tables``, is in scope."""
        name = topic.key[-1]
        return (
            (not self.topic_prefixes or name.startswith(self.topic_prefixes))
            and (not self.topic_pattern or re.fullmatch(self.topic_pattern, name) is not None)
            and (
                not self.connectors
                or any(source.facts.get("connector") in self.connectors for source in sources)
            )
            and (
                not self.databases
                or any(source.key[2] in self.databases for source in sources)
                or any(table.key[1] in self.databases for table in tables)
            )
        )


@dataclass(frozen=True)
class DrawnGraph:
    """The nodes a scope draws, and what it left out."""

    nodes: tuple[PlatformNode, ...]
    #: Topics of the state, of the scope's filters, and drawn.
    topics: int
    in_scope: int
    drawn: int
    #: The first topic (by name) ``max_topics`` left out; None when it left out none.
    first_left_out: str | None = None

    @property
    def truncation_note(self) -> str | None:
        """What ``max_topics`` left out and how to see it (None when it left out nothing)."""
        if self.first_left_out is None:
            return None
        return (
            f"the platform graph draws {self.drawn:,} of the {self.in_scope:,} topics in its "
            f"scope ({self.topics:,} on the platform): max_topics is {self.drawn:,}, so the "
            f"{self.in_scope - self.drawn:,} topics from {self.first_left_out} on (by name) "
            "and their source and Iceberg tables are not drawn. Narrow the scope (databases, "
            "connectors, topic_prefixes, topic_pattern) or raise max_topics in defs.yaml "
            "(docs/dagster-graph.md, 'Large platforms')."
        )


def draw(nodes: Sequence[PlatformNode], scope: GraphScope) -> DrawnGraph:
    """The nodes of ``scope``'s topics (``nodes`` sorted by key, as the state keeps them), each
    topic with its source tables and the Iceberg tables it feeds, in the same order."""
    topics = [node for node in nodes if node.kind == "topic"]
    limit = len(topics) if scope.max_topics is None else scope.max_topics
    if not scope.filters and len(topics) <= limit:
        return DrawnGraph(tuple(nodes), len(topics), len(topics), len(topics))
    by_key = {node.key: node for node in nodes}
    fed: dict[AssetPath, list[PlatformNode]] = {}
    for node in nodes:
        if node.kind == "iceberg_table":
            for dep in node.deps:
                fed.setdefault(dep, []).append(node)
    in_scope = [
        topic
        for topic in topics
        if scope.admits(
            topic, [by_key[dep] for dep in topic.deps if dep in by_key], fed.get(topic.key, ())
        )
    ]
    drawn = in_scope[:limit]
    keys = {topic.key for topic in drawn}
    for topic in drawn:
        keys.update(topic.deps)
        keys.update(table.key for table in fed.get(topic.key, ()))
    return DrawnGraph(
        tuple(node for node in nodes if node.key in keys),
        len(topics),
        len(in_scope),
        len(drawn),
        in_scope[limit].key[-1] if len(in_scope) > limit else None,
    )


def topology_digest(connectors_digest: str, registry_tokens: Mapping[str, str]) -> str:
    """What the graph is read from, in one digest: the connectors' configurations (see
    ``connectors_digest``) and every registry topic's change token (a new schema version
    changes the topic's columns)."""
    content = json.dumps([connectors_digest, sorted(registry_tokens.items())])
    return hashlib.sha256(content.encode()).hexdigest()


@dataclass(frozen=True)
class TopicGraph:
    """What the sync knows about one topic, with its column lineage already keyed by node."""

    lineage: TopicLineage
    #: The row columns of its latest value schema (empty when unknown or unparsed).
    columns: tuple[Column, ...] = ()
    #: Topic column -> source columns (the source hop's column lineage).
    source_column_lineage: Mapping[str, tuple[ColumnDep, ...]] = field(default_factory=dict)
    #: Iceberg table key -> its column -> topic columns (the sink hop's column lineage).
    table_column_lineage: Mapping[AssetPath, Mapping[str, tuple[ColumnDep, ...]]] = field(
        default_factory=dict
    )
    owners: tuple[str, ...] = ()
    url: str | None = None
    facts: Mapping[str, str] = field(default_factory=dict)


def platform_nodes(
    topics: Iterable[TopicGraph], table_columns: Mapping[AssetPath, tuple[Column, ...]]
) -> tuple[PlatformNode, ...]:
    """The source table, topic and Iceberg table nodes of every topic with an edge, sorted by
    key. ``table_columns`` are the Iceberg tables' columns as the catalog holds them; a table
    not (yet) in the catalog shows the columns the sink writes into it: its topic's."""
    sources: dict[AssetPath, PlatformNode] = {}
    topic_nodes: list[PlatformNode] = []
    tables: dict[AssetPath, _TableNode] = {}
    for graph in topics:
        lineage = graph.lineage
        if not lineage.sources and not lineage.sinks:
            continue
        group = group_name(lineage.source_connector or UNCONNECTED_GROUP)
        for edge in lineage.sources:
            key = source_table_key(edge.table)
            sources.setdefault(
                key, _source_node(key, edge.table, lineage.topic, group, graph.columns)
            )
        key = topic_key(lineage.topic)
        topic_nodes.append(
            PlatformNode(
                key=key,
                kind="topic",
                group=group,
                kinds=("kafka",),
                description=(
                    f"Kafka topic {lineage.topic} ({lineage.origin} lineage): {lineage.reason}"
                ),
                deps=tuple(dict.fromkeys(source_table_key(t) for t in lineage.source_tables)),
                columns=graph.columns,
                column_lineage=graph.source_column_lineage,
                owners=graph.owners,
                url=graph.url,
                facts={
                    **graph.facts,
                    "lineage_origin": lineage.origin,
                    **(
                        {"ambiguous_reason": lineage.ambiguous_reason}
                        if lineage.ambiguous_reason
                        else {}
                    ),
                },
            )
        )
        for edge in lineage.sinks:
            table_key = iceberg_table_key(edge.table.database, edge.table.table)
            table = tables.setdefault(table_key, _TableNode(edge.table))
            table.topics.setdefault(key, graph)
            if edge.table.connector:
                table.connectors.setdefault(edge.table.connector)
            for column, deps in graph.table_column_lineage.get(table_key, {}).items():
                table.column_lineage.setdefault(column, {}).update(dict.fromkeys(deps))
    nodes = [
        *sources.values(),
        *topic_nodes,
        *(table.node(key, table_columns.get(key)) for key, table in tables.items()),
    ]
    return tuple(sorted(nodes, key=lambda node: node.key))


def _source_node(
    key: AssetPath, table: SourceTable, topic: str, group: str, columns: tuple[Column, ...]
) -> PlatformNode:
    """A captured table, with the columns Debezium's change events carry of its rows."""
    return PlatformNode(
        key=key,
        kind="source_table",
        group=group,
        kinds=(table.engine.value,),
        columns=columns,
        description=(
            f"{table.engine.value} table {table.qualified} on {table.hostname}:{table.port}, "
            f"captured by Debezium connector {table.connector or '(override)'} into {topic}"
        ),
        facts={
            "dagster/table_name": table.qualified,
            "host": f"{table.hostname}:{table.port}",
            "connector": table.connector,
        },
    )


@dataclass
class _TableNode:
    """An Iceberg table's node while the topics feeding it are gathered."""

    table: SinkTable
    topics: dict[AssetPath, TopicGraph] = field(default_factory=dict)
    connectors: dict[str, None] = field(default_factory=dict)
    column_lineage: dict[str, dict[ColumnDep, None]] = field(default_factory=dict)

    def node(self, key: AssetPath, catalog_columns: tuple[Column, ...] | None) -> PlatformNode:
        name = f"{self.table.database}.{self.table.table}"
        writers = ", ".join(self.connectors) or "an override"
        fed_by = ", ".join(topic[-1] for topic in self.topics)
        columns = catalog_columns
        if columns is None:
            columns = next((t.columns for t in self.topics.values() if t.columns), ())
        return PlatformNode(
            key=key,
            kind="iceberg_table",
            group=group_name(self.table.database),
            kinds=("iceberg", "glue") if self.table.is_glue else ("iceberg",),
            description=f"Iceberg table {name}, written by {writers} from {fed_by}",
            deps=tuple(self.topics),
            columns=columns,
            column_lineage={
                column: tuple(deps) for column, deps in sorted(self.column_lineage.items())
            },
            # Whoever owns a topic feeding the table is told when it changes.
            owners=tuple(dict.fromkeys(o for t in self.topics.values() for o in t.owners)),
            facts={
                "dagster/table_name": name,
                "catalog": self.table.catalog,
                "in_catalog": "yes" if catalog_columns is not None else "not yet",
            },
        )


def glue_table_columns(table: Mapping[str, Any]) -> tuple[Column, ...]:
    """The columns of a Glue ``Table`` (GetTables' shape): ``StorageDescriptor.Columns``, less
    those Iceberg's GlueCatalog marks no longer current (``iceberg.field.current=false``: a
    dropped column it keeps listed); nullable unless ``iceberg.field.optional`` is ``false``."""
    columns = []
    for column in (table.get("StorageDescriptor") or {}).get("Columns") or []:
        parameters = column.get("Parameters") or {}
        if parameters.get("iceberg.field.current") == "false":
            continue
        columns.append(
            Column(
                name=column["Name"],
                type=column.get("Type") or "",
                nullable=parameters.get("iceberg.field.optional") != "false",
                description=column.get("Comment"),
            )
        )
    return tuple(columns)
