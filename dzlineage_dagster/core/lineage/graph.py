"""A lineage graph to ask questions of: resolve what a user types, walk it, render it.

``dzlineage trace`` fills a :class:`LineageGraph` from DataZone's lineage nodes (their
``sourceIdentifier`` is the node id here) and asks it for what feeds a dataset (upstream) or
what depends on it (downstream). Everything here is pure: nodes and edges in, text out.

Node ids follow DataZone's sourceIdentifier rules: a Glue table is
``arn:aws:glue:<region>:<account>:table/<db>/<table>``, any other dataset
``<namespace>/<name>`` (``kafka://b-1:9098/shop.sales.orders``,
``postgres://db:5432/shop.sales.orders``).
"""

from __future__ import annotations

import difflib
import json
import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

Direction = Literal["upstream", "downstream"]
#: How a lineage node type name ends (GetLineageNode's ``typeName``, DataZone's
#: ``amazon.datazone.DatasetLineageNodeType``) for a dataset, a job run and a job. Glue's
#: GetLineageNode names its types without saying them (the botocore model's ``TypeName`` is
#: any string): a node is read by the end of its type's name, whoever's prefix it has.
DATASET_TYPE_SUFFIX = "DatasetLineageNodeType"
JOB_RUN_TYPE_SUFFIX = "JobRunLineageNodeType"
JOB_TYPE_SUFFIX = "JobLineageNodeType"
_GLUE_TABLE = re.compile(r"arn:aws:glue:[^:]*:[^:]*:table/(?P<db>[^/]+)/(?P<table>.+)")
_GLUE_NAMESPACE = re.compile(r"arn:aws[a-z-]*:glue:[a-z0-9-]+:\d{12}")
_DATASET = re.compile(r"(?P<namespace>[a-z][a-z0-9+.\-]*://[^/]+)/(?P<name>.+)")


#: What each kind of node is, in the words a text answer labels it with (a source table and
#: its topic often share a name: ``shop.sales.orders``).
KIND_WORDS = {
    "glue_table": "Glue table",
    "topic": "topic",
    "source_table": "source table",
    "dataset": "dataset",
}


@dataclass(frozen=True)
class GraphNode:
    id: str
    #: "glue_table", "topic", "source_table" or "dataset".
    kind: str
    columns: tuple[str, ...] = ()
    #: Shown by its whole sourceIdentifier: it is not the platform's node of its short name (a
    #: topic under another Kafka namespace, such as Debezium's ``kafka://unknown:unknown``),
    #: so its short name would name another node (:meth:`LineageGraph.name_apart_from`).
    apart: bool = False

    @property
    def kind_word(self) -> str:
        return KIND_WORDS.get(self.kind, self.kind)

    @property
    def described(self) -> str:
        """What the node is, then its name: ``topic shop.sales.orders``, ``Glue table
        lakehouse.sales_orders``, ``source table shop.sales.orders on postgres://db:5432`` (the
        database server a source table lives on)."""
        dataset = _DATASET.fullmatch(self.id)
        shown = dataset and self.kind == "source_table" and not self.apart
        on = f" on {dataset['namespace']}" if shown else ""
        return f"{self.kind_word} {self.label}{on}"

    @property
    def label(self) -> str:
        """The short name a user would type: ``db.table``, the topic, ``db.schema.table``; the
        whole sourceIdentifier of a node :attr:`apart` from the platform's, and of a dataset of
        no platform kind (an S3 location: its name alone drops the bucket, and Athena's query
        results are named ``/``)."""
        if self.apart or self.kind == "dataset":
            return self.id
        glue = _GLUE_TABLE.fullmatch(self.id)
        if glue:
            return f"{glue['db']}.{glue['table']}"
        dataset = _DATASET.fullmatch(self.id)
        return dataset["name"] if dataset else self.id


@dataclass(frozen=True)
class GraphEdge:
    upstream: str
    downstream: str
    #: The job between them (e.g. ``kafka-connect.shop-iceberg-sink``), if known.
    job: str | None = None
    #: (upstream field, downstream field) pairs from the column lineage.
    columns: tuple[tuple[str, str], ...] = ()


def node_kind(node_id: str) -> str:
    """What a sourceIdentifier names, from its form."""
    if _GLUE_TABLE.fullmatch(node_id):
        return "glue_table"
    if node_id.startswith("kafka://"):
        return "topic"
    if re.match(r"(postgres|mysql|sqlserver|mssql|oracle)://", node_id):
        return "source_table"
    return "dataset"


#: How a Glue lineage node's form names the OpenLineage facet it keeps (``openlineage.schema``,
#: ``openlineage.columnLineage``): AWS names no form; this is the sandbox's reading, kept in one
#: place (docs/glue-lineage.md).
GLUE_FACET_FORM_PREFIX = "openlineage."


@dataclass(frozen=True)
class LineageNode:
    """A node of a lineage graph as GetLineageNode answered it, DataZone's (camelCase) or
    the Glue Data Catalog's (PascalCase) alike: its id, sourceIdentifier, neighbours' ids,
    type and forms (its OpenLineage facets, by name). Neighbours come as ids only: reading
    one is another GetLineageNode."""

    id: str
    source_identifier: str
    upstream: tuple[str, ...] = ()
    downstream: tuple[str, ...] = ()
    type_name: str = ""
    name: str = ""
    #: (facet name, JSON content): a DataZone form's ``formName``; a Glue form's ``TypeName``
    #: (its forms carry no other name) less :data:`GLUE_FACET_FORM_PREFIX`.
    forms: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_response(cls, response: Mapping, *, forms: bool = True) -> LineageNode:
        """GetLineageNode's answer, of either service; ``forms=False`` drops the forms (a
        reader that needs only ids and neighbours holds less)."""

        def member(name: str, default: object = None) -> object:
            return response.get(name, response.get(name[0].upper() + name[1:], default))

        def ids(name: str) -> tuple[str, ...]:
            return tuple(r.get("id", r.get("Id")) for r in member(name) or ())

        kept = tuple(
            (
                form.get("formName")
                or form.get("TypeName", "").removeprefix(GLUE_FACET_FORM_PREFIX),
                form.get("content", form.get("Content")) or "",
            )
            for form in (member("formsOutput") or () if forms else ())
        )
        return cls(
            id=str(member("id")),
            source_identifier=str(member("sourceIdentifier", "")),
            upstream=ids("upstreamNodes"),
            downstream=ids("downstreamNodes"),
            type_name=str(member("typeName", "")),
            name=str(member("name", "")),
            forms=kept,
        )

    @property
    def is_dataset(self) -> bool:
        return self.type_name.endswith(DATASET_TYPE_SUFFIX)

    @property
    def job(self) -> str | None:
        """The job this node is (``namespace.name``) or is a run of (a run's sourceIdentifier
        is ``<job>/<runId>``); None for a dataset or another kind of node."""
        if self.type_name.endswith(JOB_RUN_TYPE_SUFFIX):
            return self.source_identifier.rsplit("/", 1)[0]
        if self.type_name.endswith(JOB_TYPE_SUFFIX):
            return self.source_identifier
        return None

    def facet(self, name: str) -> dict | None:
        """The OpenLineage facet kept as the form of that name."""
        for form_name, content in self.forms:
            if form_name == name and content:
                return json.loads(content)
        return None

    @property
    def schema_columns(self) -> list[str]:
        return [f["name"] for f in (self.facet("schema") or {}).get("fields", [])]


#: The job the Glue Data Catalog records for a table made with CreateTable: its storage location
#: -> ``glue_manual.<database>.<table>`` -> the table (Glue developer guide, "Lineage for AWS
#: Glue Data Catalog tables and crawlers").
GLUE_TABLE_CREATION_JOB = "glue_manual"


def records_table_creation(job: str | None) -> bool:
    """Whether ``job`` (``namespace.name``) is the job AWS Glue records for a table's creation:
    what it draws is the table's own storage, not a producer feeding it."""
    return job is not None and f".{GLUE_TABLE_CREATION_JOB}." in f".{job}"


@dataclass
class LineageGraph:
    nodes: dict[str, GraphNode] = field(default_factory=dict)
    edges: list[GraphEdge] = field(default_factory=list)

    def add_node(self, node_id: str, columns: Iterable[str] = ()) -> GraphNode:
        existing = self.nodes.get(node_id)
        merged = tuple(dict.fromkeys((*(existing.columns if existing else ()), *columns)))
        node = GraphNode(node_id, node_kind(node_id), merged, existing.apart if existing else False)
        self.nodes[node_id] = node
        return node

    def name_apart_from(self, platform: Iterable[str]) -> None:
        """Show by its whole sourceIdentifier each node that is none of the ``platform``'s own
        identities but has the short name of one (``kafka://unknown:unknown/shop.sales.orders``
        beside the platform's topic ``shop.sales.orders``): a node is labelled by its own
        identity, never by another node's name. Nodes whose short name is nobody else's keep it."""
        apart = ids_apart(self.nodes, platform)
        for node_id in apart:
            self.nodes[node_id] = replace(self.nodes[node_id], apart=True)

    def add_edge(self, edge: GraphEdge) -> None:
        self.add_node(edge.upstream)
        self.add_node(edge.downstream)
        if edge not in self.edges:
            self.edges.append(edge)

    def resolve(self, text: str) -> list[str]:
        """The node ids ``text`` may mean, best matches only (see :func:`resolve_short_name`)."""
        return resolve_short_name(text, self.nodes)

    def walk(self, root: str, direction: Direction, depth: int | None = None) -> LineageGraph:
        """The subgraph reachable from ``root`` going ``direction``, at most ``depth`` hops."""
        if root not in self.nodes:
            raise KeyError(f"no lineage node {root!r}")
        result = LineageGraph()
        result.add_node(root, self.nodes[root].columns)
        queue = deque([(root, 0)])
        seen = {root}
        while queue:
            current, hops = queue.popleft()
            if depth is not None and hops >= depth:
                continue
            for edge in self.edges:
                near, far = (
                    (edge.downstream, edge.upstream)
                    if direction == "upstream"
                    else (edge.upstream, edge.downstream)
                )
                if near != current:
                    continue
                result.add_node(far, self.nodes[far].columns)
                result.add_edge(edge)
                if far not in seen:
                    seen.add(far)
                    queue.append((far, hops + 1))
        return result


def ids_apart(node_ids: Iterable[str], platform: Iterable[str]) -> set[str]:
    """The ids of ``node_ids`` that are none of ``platform``'s but have the short name of one
    (case-insensitive): those a label must show whole (:attr:`GraphNode.apart`)."""
    platform = set(platform)
    taken = {_label(node_id).lower() for node_id in platform}
    return {i for i in node_ids if i not in platform and _label(i).lower() in taken}


def resolve_short_name(text: str, node_ids: Iterable[str]) -> list[str]:
    """The ids a short name may mean, best rank first and only that rank, sorted.

    Ranks: the exact id; a dataset whose name is ``text`` (a topic name, ``db.schema.table``);
    a Glue table ``db.table``; a dataset whose name ends with ``.<text>`` (``inventory.customers``
    for ``postgres://h:5432/shop.inventory.customers``). Case-insensitive after the exact id.
    """
    ids = list(dict.fromkeys(node_ids))
    if text in ids:
        return [text]
    wanted = text.lower()
    ranks: dict[int, list[str]] = {}
    for node_id in ids:
        node = GraphNode(node_id, node_kind(node_id))
        label = node.label.lower()
        if label == wanted:
            rank = 1
        elif label.endswith("." + wanted):
            rank = 2
        else:
            continue
        ranks.setdefault(rank, []).append(node_id)
    return sorted(ranks[min(ranks)]) if ranks else []


#: Which kind a name means when it names several equally well. A name typed exactly as a node
#: calls it means a Glue table, else the topic (Debezium's topic and its source table share
#: ``db.schema.table`` when ``topic.prefix`` is the database name), else the source table; a
#: name matching only the end of several (``inventory.customers``) means the source table, as a
#: topic is named with a prefix before the table's own name.
EXACT_KIND_ORDER = ("glue_table", "topic", "source_table", "dataset")
SUFFIX_KIND_ORDER = ("source_table", "topic", "glue_table", "dataset")


def choose_dataset(text: str, node_ids: Iterable[str], kind: str | None = None) -> list[str]:
    """The node ids ``text`` means, narrowed to one kind: ``kind`` when given, else the kind
    the name most plausibly means (see :data:`EXACT_KIND_ORDER`). Several ids of that kind
    (or none) are returned as they are, for the caller to report."""
    ids = [i for i in dict.fromkeys(node_ids) if kind is None or node_kind(i) == kind]
    candidates = resolve_short_name(text, ids)
    kinds = {node_kind(c) for c in candidates}
    if len(kinds) <= 1:
        return candidates
    exact = any(GraphNode(c, node_kind(c)).label.lower() == text.lower() for c in candidates)
    preferred = next(k for k in (EXACT_KIND_ORDER if exact else SUFFIX_KIND_ORDER) if k in kinds)
    return [c for c in candidates if node_kind(c) == preferred]


def near_matches(text: str, node_ids: Iterable[str], limit: int = 5) -> list[str]:
    """Short names of the nodes whose name is close to ``text``, closest first (for a typo)."""
    labels = sorted({GraphNode(i, node_kind(i)).label for i in node_ids})
    lowered = {label.lower(): label for label in labels}
    close = difflib.get_close_matches(text.lower(), list(lowered), n=limit, cutoff=0.6)
    return [lowered[c] for c in close]


def source_identifier(namespace: str, name: str) -> str:
    """DataZone's sourceIdentifier of an OpenLineage dataset: the ARN of a Glue table (its
    OpenLineage name joins the namespace at a colon), ``<namespace>/<name>`` otherwise."""
    if _GLUE_NAMESPACE.fullmatch(namespace) and name.startswith("table/"):
        return f"{namespace}:{name}"
    return f"{namespace}/{name}"


def column_pairs(
    column_lineage: Mapping, upstream_id: str, aliases: Iterable[str] = ()
) -> tuple[tuple[str, str], ...]:
    """(upstream field, downstream field) pairs of a ``columnLineage`` facet (as an output
    dataset carries it) whose input fields come from the dataset ``upstream_id`` (or one of
    its ``aliases``: a Glue table's storage location, by which Spark names the fields it reads
    through the Data Catalog)."""
    names = {upstream_id, *aliases}
    pairs = []
    for output_field, lineage in (column_lineage.get("fields") or {}).items():
        for source in lineage.get("inputFields") or []:
            if source_identifier(source["namespace"], source["name"]) in names:
                pairs.append((source["field"], output_field))
    return tuple(pairs)


@dataclass(frozen=True)
class NodeRevision:
    """A lineage node as one of its revisions showed it: when, and its datasets one job away
    in one direction (sourceIdentifier, job)."""

    at: datetime
    neighbours: tuple[tuple[str, str | None], ...]


def neighbour_periods(revisions: Sequence[NodeRevision]) -> list[NodeRevision]:
    """From a node's revisions (newest first), the ones where its neighbours changed: each
    period's oldest revision, newest period first (a re-post of the same edges is no change)."""
    periods: list[NodeRevision] = []
    for revision in reversed(revisions):
        if not periods or periods[-1].neighbours != revision.neighbours:
            periods.append(revision)
    return periods[::-1]


def render_history(
    root: str,
    direction: Direction,
    revisions: Sequence[NodeRevision],
    fmt: Literal["text", "json"],
    *,
    truncated: bool = False,
    platform: Iterable[str] = (),
) -> str:
    """What fed (or what read) ``root`` over time: :func:`neighbour_periods` of its
    revisions, as text lines or JSON; ``truncated``: older revisions were not read;
    ``platform``: the platform's own nodes, for :func:`ids_apart`."""
    periods = neighbour_periods(revisions)
    datasets = {root, *(d for period in periods for d, _ in period.neighbours)}
    apart = ids_apart(datasets, platform)

    def node(node_id: str) -> GraphNode:
        return GraphNode(node_id, node_kind(node_id), apart=node_id in apart)

    if fmt == "json":
        return json.dumps(
            {
                "root": root,
                "direction": direction,
                "history": [
                    {
                        "since": period.at.isoformat(),
                        "datasets": [
                            {"id": d, "kind": node_kind(d), "label": node(d).label, "job": job}
                            for d, job in period.neighbours
                        ],
                    }
                    for period in periods
                ],
                "truncated": truncated,
            },
            indent=2,
        )
    top = node(root)
    arrow = "<-" if direction == "upstream" else "->"
    lines = [f"{top.kind_word} {top.label}  {root}", f"{direction}, newest first:"]
    for period in periods:
        since = f"since {period.at:%Y-%m-%d %H:%M:%S %Z}".rstrip()
        if not period.neighbours:
            lines.append(f"  {since}  {arrow} (nothing)")
        for dataset, job in period.neighbours:
            via = f"  via {job}" if job else ""
            described = node(dataset).described
            lines.append(f"  {since}  {arrow} {described}{via}")
    if truncated:
        lines.append("  (older revisions not read)")
    return "\n".join(lines)


def _label(node_id: str) -> str:
    return GraphNode(node_id, node_kind(node_id)).label


def render(
    graph: LineageGraph,
    root: str,
    direction: Direction,
    fmt: Literal["text", "json", "mermaid", "dot"],
    *,
    columns: bool = False,
    owners: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """``graph`` (usually :meth:`LineageGraph.walk`'s result) as a text tree, JSON, Mermaid or
    Graphviz dot; ``columns`` adds the column pairs of each edge, ``owners`` (node id -> owner
    names) whom to call about a node, in the text tree and the JSON."""
    owners = owners or {}
    if fmt == "text":
        return _render_text(graph, root, direction, columns, owners)
    if fmt == "json":
        return json.dumps(
            {
                "root": root,
                "direction": direction,
                "nodes": [
                    {
                        "id": n.id,
                        "kind": n.kind,
                        "label": n.label,
                        "columns": list(n.columns),
                        "owners": list(owners.get(n.id, ())),
                    }
                    for n in graph.nodes.values()
                ],
                "edges": [
                    {
                        "upstream": e.upstream,
                        "downstream": e.downstream,
                        "job": e.job,
                        "columns": [list(pair) for pair in e.columns] if columns else [],
                    }
                    for e in graph.edges
                ],
            },
            indent=2,
        )
    keys = {node_id: f"n{i}" for i, node_id in enumerate(graph.nodes)}
    if fmt == "mermaid":
        lines = ["graph LR"]
        lines += [
            f'  {keys[n.id]}["{_mermaid_text(n.label)}<br/>{n.kind_word}"]'
            for n in graph.nodes.values()
        ]
        for edge in graph.edges:
            label = _edge_label(edge, columns)
            arrow = f" -->|{_mermaid_text(label)}| " if label else " --> "
            lines.append(f"  {keys[edge.upstream]}{arrow}{keys[edge.downstream]}")
        return "\n".join(lines)
    if fmt == "dot":
        lines = ["digraph lineage {", "  rankdir=LR;"]
        lines += [
            f"  {keys[n.id]} [label={json.dumps(f'{n.label} ({n.kind_word})')}, tooltip={json.dumps(n.id)}];"
            for n in graph.nodes.values()
        ]
        for edge in graph.edges:
            label = _edge_label(edge, columns)
            attribute = f" [label={json.dumps(label)}]" if label else ""
            lines.append(f"  {keys[edge.upstream]} -> {keys[edge.downstream]}{attribute};")
        lines.append("}")
        return "\n".join(lines)
    raise ValueError(f"format {fmt!r} must be one of text, json, mermaid, dot")


def _edge_label(edge: GraphEdge, columns: bool) -> str:
    parts = [edge.job] if edge.job else []
    if columns and edge.columns:
        parts.append(", ".join(f"{a} -> {b}" for a, b in edge.columns))
    return ": ".join(parts)


def _mermaid_text(text: str) -> str:
    return text.replace('"', "#quot;").replace("|", "#124;")


def _render_text(
    graph: LineageGraph,
    root: str,
    direction: Direction,
    columns: bool,
    owners: Mapping[str, Sequence[str]],
) -> str:
    arrow = "<-" if direction == "upstream" else "->"

    def owned(node_id: str) -> str:
        names = owners.get(node_id)
        return f"  owners: {', '.join(names)}" if names else ""

    top = graph.nodes[root]
    lines = [f"{top.kind_word} {top.label}  {root}{owned(root)}"]

    def visit(node_id: str, indent: str, path: frozenset[str]) -> None:
        edges = [
            e
            for e in graph.edges
            if (e.downstream if direction == "upstream" else e.upstream) == node_id
        ]
        for position, edge in enumerate(edges):
            far = edge.upstream if direction == "upstream" else edge.downstream
            last = position == len(edges) - 1
            branch = "└─" if last else "├─"
            via = f"  via {edge.job}" if edge.job else ""
            node = graph.nodes[far]
            cycle = " (cycle)" if far in path else ""
            lines.append(f"{indent}{branch}{arrow} {node.described}{via}{cycle}{owned(far)}")
            child_indent = indent + ("   " if last else "│  ")
            if columns:
                for upstream_field, downstream_field in edge.columns:
                    lines.append(f"{child_indent}   {downstream_field} <- {upstream_field}")
            if not cycle:
                visit(far, child_indent, path | {far})

    visit(root, "", frozenset({root}))
    return "\n".join(lines)
