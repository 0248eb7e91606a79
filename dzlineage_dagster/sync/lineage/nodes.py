"""DataZone's lineage nodes as every reader of the graph asks for them: `dzlineage trace` and
`orphans`, the impact of a schema version (`dzlineage impact`, the `schema_change_is_compatible`
check) and the sync's lineage read-back.

:class:`DataZoneLineage` reads a node with ``GetLineageNode`` by id or sourceIdentifier once
per reader, however many threads ask for it (the read-back compares topics in parallel), and
knows it by both names afterwards; :meth:`DataZoneLineage.datasets_beyond` is the one walk from
a dataset to the datasets one job away (a dataset's neighbours are the runs of the jobs reading
or writing it, a run's are its datasets).
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from botocore.exceptions import ClientError

from dzlineage_dagster.core.lineage.graph import (
    DATASET_NODE_TYPE,
    JOB_RUN_NODE_TYPE,
    GraphEdge,
    LineageGraph,
    NodeRevision,
    column_pairs,
)
from dzlineage_dagster.sync.errors import error_code

#: Revisions `trace --history` reads at most (each costs a GetLineageNode or more).
HISTORY_LIMIT = 50


class LineageQueryError(Exception):
    """A name that resolves to nothing, or to several datasets: the message says which."""


@dataclass
class DataZoneLineage:
    """DataZone's lineage nodes, each read once (by id or sourceIdentifier) per reader.

    ``at`` is ``GetLineageNode``'s ``eventTimestamp``: the timestamp view when the reader
    started (only the latest run of each job, so an edge a job's newer run no longer draws, a
    re-routed or deleted connector's, is not in the answer); None asks without it (DataZone's
    current view: the read-back, which reads nodes DataZone made moments ago and must not
    depend on this machine's clock against DataZone's)."""

    client: Any
    domain_id: str
    at: datetime | None = field(default_factory=lambda: datetime.now(timezone.utc))
    #: Keep each node's forms (its OpenLineage facets: columns, column lineage). The read-back
    #: needs only ids and neighbours, and holds three nodes a topic for the whole run: at
    #: 20,000 topics the forms would be most of its memory.
    forms: bool = True
    #: GetLineageNode calls made.
    calls: int = field(default=0, init=False)
    _nodes: dict[str, Future[dict | None]] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def node(self, identifier: str) -> dict | None:
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
                        for name in (found["id"], found.get("sourceIdentifier")):
                            if name:
                                self._nodes.setdefault(name, answer)
        return answer.result()

    def _get(self, identifier: str) -> dict | None:
        view = {} if self.at is None else {"eventTimestamp": self.at}
        try:
            found = self.client.get_lineage_node(
                domainIdentifier=self.domain_id, identifier=identifier, **view
            )
        except ClientError as error:
            if error_code(error) != "ResourceNotFoundException":
                raise
            return None
        found.pop("ResponseMetadata", None)
        if not self.forms:
            found.pop("formsOutput", None)
        return found

    def datasets_beyond(
        self, node: dict, direction: str, *, through_runs_only: bool = False
    ) -> list[tuple[dict, str | None]]:
        """The dataset nodes one job away from ``node`` in ``direction`` ("upstream" or
        "downstream"), each with its job (``namespace.name``); catalog asset nodes skipped.
        A dataset node that is itself a neighbour (an asset's node has its dataset's node
        upstream) comes with no job, unless ``through_runs_only``: then only what a job run
        reads or writes counts (what reads a table, for its impact)."""
        found = []
        for reference in node.get(f"{direction}Nodes") or ():
            neighbour = self.node(reference["id"])
            if neighbour is None:
                continue
            if neighbour["typeName"] == DATASET_NODE_TYPE and not through_runs_only:
                found.append((neighbour, None))
            elif neighbour["typeName"] == JOB_RUN_NODE_TYPE:
                job = neighbour["sourceIdentifier"].rsplit("/", 1)[0]
                for far in neighbour.get(f"{direction}Nodes") or ():
                    dataset = self.node(far["id"])
                    if dataset is not None and dataset["typeName"] == DATASET_NODE_TYPE:
                        found.append((dataset, job))
        return found

    def history(
        self, root: str, direction: str, limit: int = HISTORY_LIMIT
    ) -> tuple[list[NodeRevision], bool]:
        """The node's revisions, newest first (ListLineageNodeHistory, at most ``limit``), each
        with the datasets one job away in ``direction`` as DataZone showed them at the
        revision's eventTimestamp (GetLineageNode with it); and whether older ones were left."""
        start = self.node(root)
        if start is None:
            raise LineageQueryError(
                f"{root} has no lineage node in DataZone domain {self.domain_id}"
            )
        pages = self.client.get_paginator("list_lineage_node_history").paginate(
            domainIdentifier=self.domain_id,
            identifier=start["id"],
            sortOrder="DESCENDING",
            PaginationConfig={"MaxItems": limit + 1},
        )
        summaries = [summary for page in pages for summary in page.get("nodes") or ()]
        revisions = []
        for summary in summaries[:limit]:
            # Whether a view at T holds the events of time T is not documented: a millisecond
            # later holds them either way.
            at = summary["eventTimestamp"] + timedelta(milliseconds=1)
            view = DataZoneLineage(self.client, self.domain_id, at, False)
            node = view.node(start["id"])
            found = view.datasets_beyond(node, direction) if node is not None else []
            revisions.append(
                NodeRevision(
                    summary["eventTimestamp"],
                    tuple(sorted({(d["sourceIdentifier"], job) for d, job in found}, key=str)),
                )
            )
            self.calls += view.calls
        return revisions, len(summaries) > limit

    def walk(self, root: str, direction: str, depth: int | None) -> LineageGraph:
        """The datasets reachable from ``root`` (a sourceIdentifier) going ``direction``,
        at most ``depth`` dataset hops, with each edge's job and column pairs."""
        start = self.node(root)
        if start is None:
            raise LineageQueryError(
                f"{root} has no lineage node in DataZone domain {self.domain_id}: no lineage "
                "event named it yet (has `dzlineage sync` posted this topic's lineage?)"
            )
        graph = LineageGraph()
        graph.add_node(root, schema_columns(start))
        frontier, seen = [(start, 0)], {root}
        while frontier:
            node, hops = frontier.pop(0)
            if depth is not None and hops >= depth:
                continue
            for far, job in self.datasets_beyond(node, direction):
                near_id, far_id = node["sourceIdentifier"], far["sourceIdentifier"]
                graph.add_node(far_id, schema_columns(far))
                upstream, downstream = (far, node) if direction == "upstream" else (node, far)
                lineage = facet(downstream, "columnLineage") or {}
                graph.add_edge(
                    GraphEdge(
                        upstream["sourceIdentifier"],
                        downstream["sourceIdentifier"],
                        job,
                        column_pairs(lineage, upstream["sourceIdentifier"]),
                    )
                )
                if far_id not in seen and far_id != near_id:
                    seen.add(far_id)
                    frontier.append((far, hops + 1))
        return graph


def facet(node: dict, name: str) -> dict | None:
    """A dataset node's OpenLineage facet, kept as the form of that name."""
    for form in node.get("formsOutput") or []:
        if form.get("formName") == name and form.get("content"):
            return json.loads(form["content"])
    return None


def schema_columns(node: dict) -> list[str]:
    return [f["name"] for f in (facet(node, "schema") or {}).get("fields", [])]
