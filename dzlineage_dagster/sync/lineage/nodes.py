"""The lineage nodes of a graph as every reader of it asks for them: `dzlineage trace` and
`orphans`, the impact of a schema version (`dzlineage impact`, the `schema_change_is_compatible`
check) and the sync's lineage read-back. Two graphs answer GetLineageNode: DataZone's
(:class:`DataZoneLineage`, a domain's) and the Glue Data Catalog's (:class:`GlueLineage`, an
account's and Region's; docs/glue-lineage.md).

A :class:`LineageReader` reads a node by id or sourceIdentifier once per reader, however many
threads ask for it (the read-back compares topics in parallel), and knows it by both names
afterwards, as a :class:`~dzlineage_dagster.core.lineage.graph.LineageNode` whichever service
answered; :meth:`LineageReader.datasets_beyond` is the one walk from a dataset to the datasets
one job away (a dataset's neighbours are the runs, or jobs, reading or writing it; theirs are
their datasets). A neighbour is known by its id only: each costs a GetLineageNode, counted in
:attr:`LineageReader.calls`.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from dzlineage_dagster.core.lineage.graph import (
    GraphEdge,
    LineageGraph,
    LineageNode,
    NodeRevision,
    column_pairs,
    records_table_creation,
)
from dzlineage_dagster.settings import LINEAGE_DESTINATIONS, env_name
from dzlineage_dagster.sync.errors import error_code

if TYPE_CHECKING:
    from dzlineage_dagster.settings import LineageSettings
    from dzlineage_dagster.sync.run_state import SyncRun

#: Revisions `trace --history` reads at most (each costs a GetLineageNode or more).
HISTORY_LIMIT = 50


class LineageQueryError(Exception):
    """A name that resolves to nothing, or to several datasets: the message says which."""


@dataclass
class LineageReader:
    """A lineage graph's nodes, each read once (by id or sourceIdentifier) per reader; a
    graph's reader says how it reads one (:meth:`_get`) and where it reads (:attr:`where`)."""

    client: Any
    #: Keep each node's forms (its OpenLineage facets: columns, column lineage). The read-back
    #: needs only ids and neighbours.
    forms: bool = field(default=True, kw_only=True)
    #: GetLineageNode calls made.
    calls: int = field(default=0, init=False)
    _nodes: dict[str, Future[LineageNode | None]] = field(
        default_factory=dict, init=False, repr=False
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def where(self) -> str:
        """The graph, as a message names it."""
        raise NotImplementedError

    def _get(self, identifier: str) -> LineageNode | None:
        """GetLineageNode of this graph (None: no such node)."""
        raise NotImplementedError

    def node(self, identifier: str) -> LineageNode | None:
        """GetLineageNode's answer (None: no such node). The first thread to ask reads it, the
        others wait for its answer."""
        with self._lock:
            answer = self._nodes.get(identifier)
            reads_it = answer is None
            if answer is None:
                answer = self._nodes[identifier] = Future()
                self.calls += 1
        if reads_it:
            try:
                found = self._get(identifier)
            except BaseException as error:
                answer.set_exception(error)
            else:
                answer.set_result(found)
                if found is not None:
                    with self._lock:
                        for name in (found.id, found.source_identifier):
                            if name:
                                self._nodes.setdefault(name, answer)
        return answer.result()

    def datasets_beyond(
        self, node: LineageNode, direction: str, *, through_runs_only: bool = False
    ) -> list[tuple[LineageNode, str | None]]:
        """The dataset nodes one job away from ``node`` in ``direction`` ("upstream" or
        "downstream"), each with its job (``namespace.name``); catalog asset nodes skipped.
        A dataset node that is itself a neighbour (an asset's node has its dataset's node
        upstream) comes with no job, unless ``through_runs_only``: then only what a job (or
        its run) reads or writes counts (what reads a table, for its impact)."""
        found = []
        for neighbour_id in getattr(node, direction):
            neighbour = self.node(neighbour_id)
            if neighbour is None:
                continue
            if neighbour.is_dataset and not through_runs_only:
                found.append((neighbour, None))
            elif neighbour.job is not None:
                for far_id in getattr(neighbour, direction):
                    dataset = self.node(far_id)
                    if dataset is not None and dataset.is_dataset:
                        found.append((dataset, neighbour.job))
        return found

    def walk(self, root: str, direction: str, depth: int | None) -> LineageGraph:
        """The datasets reachable from ``root`` (a sourceIdentifier) going ``direction``,
        at most ``depth`` dataset hops, with each edge's job and column pairs."""
        start = self.node(root)
        if start is None:
            raise LineageQueryError(
                f"{root} has no lineage node in {self.where}: no lineage event named it yet "
                "(has `dzlineage sync` posted this topic's lineage?)"
            )
        graph = LineageGraph()
        graph.add_node(root, start.schema_columns)
        frontier, seen = [(start, 0)], {root}
        while frontier:
            node, hops = frontier.pop(0)
            if depth is not None and hops >= depth:
                continue
            for far, job in self.datasets_beyond(node, direction):
                near_id, far_id = node.source_identifier, far.source_identifier
                graph.add_node(far_id, far.schema_columns)
                upstream, downstream = (far, node) if direction == "upstream" else (node, far)
                lineage = downstream.facet("columnLineage") or {}
                pairs = column_pairs(lineage, upstream.source_identifier)
                if not pairs and lineage.get("fields"):
                    pairs = column_pairs(
                        lineage, upstream.source_identifier, self.locations(upstream)
                    )
                graph.add_edge(
                    GraphEdge(upstream.source_identifier, downstream.source_identifier, job, pairs)
                )
                if far_id not in seen and far_id != near_id:
                    seen.add(far_id)
                    frontier.append((far, hops + 1))
        return graph

    def locations(self, table: LineageNode) -> list[str]:
        """The storage locations the graph shows a table made from: the datasets one
        ``glue_manual`` job upstream of it (what the Glue Data Catalog records at CreateTable),
        the name Spark gives a table it reads through the catalog in its column lineage."""
        return [
            dataset.source_identifier
            for dataset, job in self.datasets_beyond(table, "upstream")
            if records_table_creation(job)
        ]


@dataclass
class DataZoneLineage(LineageReader):
    """DataZone's lineage nodes of one domain.

    ``at`` is ``GetLineageNode``'s ``eventTimestamp``: the timestamp view when the reader
    started (only the latest run of each job, so an edge a job's newer run no longer draws, a
    re-routed or deleted connector's, is not in the answer); None asks without it (DataZone's
    current view: the read-back, which reads nodes DataZone made moments ago and must not
    depend on this machine's clock against DataZone's)."""

    domain_id: str
    at: datetime | None = field(default_factory=lambda: datetime.now(timezone.utc))

    @property
    def where(self) -> str:
        return f"DataZone domain {self.domain_id}"

    def _get(self, identifier: str) -> LineageNode | None:
        view = {} if self.at is None else {"eventTimestamp": self.at}
        try:
            found = self.client.get_lineage_node(
                domainIdentifier=self.domain_id, identifier=identifier, **view
            )
        except ClientError as error:
            if error_code(error) != "ResourceNotFoundException":
                raise
            return None
        return LineageNode.from_response(found, forms=self.forms)

    def history(
        self, root: str, direction: str, limit: int = HISTORY_LIMIT
    ) -> tuple[list[NodeRevision], bool]:
        """The node's revisions, newest first (ListLineageNodeHistory, at most ``limit``), each
        with the datasets one job away in ``direction`` as DataZone showed them at the
        revision's eventTimestamp (GetLineageNode with it); and whether older ones were left."""
        start = self.node(root)
        if start is None:
            raise LineageQueryError(f"{root} has no lineage node in {self.where}")
        pages = self.client.get_paginator("list_lineage_node_history").paginate(
            domainIdentifier=self.domain_id,
            identifier=start.id,
            sortOrder="DESCENDING",
            PaginationConfig={"MaxItems": limit + 1},
        )
        summaries = [summary for page in pages for summary in page.get("nodes") or ()]
        revisions = []
        for summary in summaries[:limit]:
            # Whether a view at T holds the events of time T is not documented: a millisecond
            # later holds them either way.
            at = summary["eventTimestamp"] + timedelta(milliseconds=1)
            view = DataZoneLineage(self.client, self.domain_id, at, forms=False)
            node = view.node(start.id)
            found = view.datasets_beyond(node, direction) if node is not None else []
            revisions.append(
                NodeRevision(
                    summary["eventTimestamp"],
                    tuple(sorted({(d.source_identifier, job) for d, job in found}, key=str)),
                )
            )
            self.calls += view.calls
        return revisions, len(summaries) > limit


@dataclass
class GlueLineage(LineageReader):
    """The Glue Data Catalog's lineage graph: one per account and Region, the client's (no
    domain, no timestamp view: GetLineageNode takes the identifier alone)."""

    @property
    def where(self) -> str:
        return "the Glue Data Catalog's lineage graph"

    def _get(self, identifier: str) -> LineageNode | None:
        try:
            found = self.client.get_lineage_node(Identifier=identifier)
        except ClientError as error:
            if error_code(error) != "EntityNotFoundException":
                raise
            return None
        return LineageNode.from_response(found, forms=self.forms)


#: The graphs `trace`, `orphans` and `impact` read (``--graph``): each lineage destination's,
#: DataZone's (the first) the default.
GRAPHS = LINEAGE_DESTINATIONS


def require_graph(settings: LineageSettings, graph: str) -> None:
    """LineageQueryError unless ``graph`` is a graph the settings' sync posts to: the Glue
    graph holds a topic's lineage only when ``DZLINEAGE_LINEAGE_DESTINATIONS`` names glue
    (otherwise only what AWS records itself, which says nothing of a topic)."""
    if graph not in GRAPHS:
        raise LineageQueryError(f"no lineage graph {graph!r}: one of {', '.join(GRAPHS)}")
    destinations = settings.lineage_destinations
    if graph == "glue" and "glue" not in destinations:
        raise LineageQueryError(
            "the Glue Data Catalog's lineage graph holds the sync's lineage only when "
            f"{env_name('lineage_destinations')} names glue (it names "
            f"{','.join(destinations)}): add glue there and sync, or read DataZone's graph "
            "(--graph datazone)"
        )


def lineage_reader(
    run: SyncRun, graph: str = "datazone", *, current: bool = False, forms: bool = True
) -> LineageReader:
    """The reader of ``graph``'s nodes with the run's clients (:func:`require_graph` first).
    ``current``: DataZone's current view rather than the timestamp view of now (Glue has only
    the one). Glue's graph is the data side's account's and Region's: it is read with the
    client of the Glue Data Catalog the Iceberg tables are in."""
    require_graph(run.settings, graph)
    if graph == "glue":
        return GlueLineage(run.resource.data_catalog.client(), forms=forms)
    return DataZoneLineage(
        run.resource.datazone.client(),
        run.settings.domain_id,
        **({"at": None} if current else {}),
        forms=forms,
    )
