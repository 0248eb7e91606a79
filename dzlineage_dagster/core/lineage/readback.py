"""Did the lineage land where it should? The comparison of a sync's read-back (pure, no AWS).

PostLineageEvent is asynchronous: an accepted event says nothing about the nodes DataZone
builds from it. Once DataZone has processed a sync's events (ListLineageEvents' SUCCESS or
FAILED), the read-back asks DataZone's own nodes what a user would see:

- each Iceberg table: ``GetLineageNode`` by the Glue table's ARN (the node DataZone's guide
  gives a Glue table, "The importance of the sourceIdentifier attribute to lineage nodes") has
  the topic upstream, i.e. one of its upstream run nodes is downstream of the topic's node;
- each topic: its asset is linked to its node. DataZone links a dataset node to the asset whose
  ``AssetCommonDetailsForm.sourceIdentifier`` equals the node's sourceIdentifier ("Linking
  dataset lineage nodes with assets"), and the asset's node
  (``amazon.datazone.asset/<assetId>``) then has the topic's node upstream.

The Glue Data Catalog's graph (when the sync posts there too) is compared the same way, by
the same table ARNs and topic identity, without the asset (Glue has none): its processing has
no status to wait for, so the read-back there waits by reading again until the landings match
or its wait is over (sync/lineage/readback.py).

A :class:`Landing` is what one topic's sync expects; a
:class:`~dzlineage_dagster.core.lineage.graph.LineageNode` is what ``GetLineageNode`` answered
(None: no such node); :func:`compare` names each mismatch with the node expected and the node
found.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from dzlineage_dagster.core.lineage.graph import LineageNode

ASSET_NODE_PREFIX = "amazon.datazone.asset/"


def glue_table_arn(region: str, account_id: str, database: str, table: str) -> str:
    """The Glue table's ARN as AWS writes it (Glue's ARN format, the node DataZone's guide
    gives the table): built here, not from the names the product posts, so a wrong naming
    shows up as a mismatch instead of agreeing with itself."""
    return f"arn:aws:glue:{region}:{account_id}:table/{database}/{table}"


@dataclass(frozen=True)
class Landing:
    """Where one topic's lineage should land: its node, its tables' ARNs, its asset."""

    topic: str
    #: The topic's dataset sourceIdentifier, ``<kafka namespace>/<topic>``.
    topic_node: str
    #: The Glue table ARNs its sink hops write.
    table_arns: tuple[str, ...] = ()
    #: Its DataZone asset (None: not cataloged, nothing to link).
    asset_id: str | None = None

    @property
    def asset_node(self) -> str | None:
        return f"{ASSET_NODE_PREFIX}{self.asset_id}" if self.asset_id else None


@dataclass(frozen=True)
class Mismatch:
    """One expectation DataZone's nodes do not meet: the node expected and the one found."""

    topic: str
    expected: str
    found: str

    def __str__(self) -> str:
        return f"{self.topic}: expected {self.expected}; found {self.found}"


@dataclass(frozen=True)
class ReadbackReport:
    """The read-back of a sync: what was checked, what did not match, what could not be."""

    topics: int = 0
    tables: int = 0
    assets: int = 0
    mismatches: tuple[Mismatch, ...] = ()
    #: Why the read-back did not run or ran only in part (events still processing, ...).
    notes: tuple[str, ...] = ()
    #: GetLineageNode calls it made.
    calls: int = 0
    checked: bool = True
    #: The graph read back: "datazone", or "glue" (the Glue Data Catalog's).
    graph: str = "datazone"

    @property
    def ok(self) -> bool:
        return self.checked and not self.mismatches

    @property
    def summary(self) -> str:
        title = "lineage read-back" + ("" if self.graph == "datazone" else f" in {self.graph}")
        if not self.checked:
            return f"{title}: not checked (" + "; ".join(self.notes) + ")"
        state = f"{len(self.mismatches)} mismatches" if self.mismatches else "all landed"
        notes = "".join(f"; {note}" for note in self.notes)
        assets = f"{self.assets} topic assets of " if self.graph == "datazone" else ""
        return (
            f"{title}: {state} ({self.tables} tables, {assets}{self.topics} topics, "
            f"{self.calls} GetLineageNode calls){notes}"
        )


#: Reads a node by id or sourceIdentifier; None when the graph has no such node.
NodeReader = Callable[[str], "LineageNode | None"]


def compare(landing: Landing, read: NodeReader) -> list[Mismatch]:
    """The mismatches of one topic's landing. ``read`` is called for the topic's node, each
    table's ARN and the asset's node, and on a mismatch for up to a few neighbours, to name
    the node that was found instead."""
    topic = read(landing.topic_node)
    if topic is None:
        expected = f"the topic's lineage node {landing.topic_node}"
        return [Mismatch(landing.topic, expected, "no such node")]
    mismatches = []
    for arn in landing.table_arns:
        table = read(arn)
        if table is not None and set(table.upstream) & set(topic.downstream):
            continue
        expected = f"the Glue table's node {arn} with the topic {landing.topic_node} upstream"
        mismatches.append(Mismatch(landing.topic, expected, _found_table(table, topic, read)))
    if landing.asset_node:
        asset = read(landing.asset_node)
        if asset is None or topic.id not in asset.upstream:
            expected = (
                f"asset {landing.asset_id}'s node linked to the topic's node "
                f"{landing.topic_node} ({topic.id})"
            )
            found = "no node for the asset" if asset is None else _named(asset.upstream, read)
            mismatches.append(Mismatch(landing.topic, expected, f"upstream of it: {found}"))
    return mismatches


#: How many neighbours a mismatch reads to name what was found (bounds its cost).
MAX_NAMED_NEIGHBOURS = 3


def _found_table(table: LineageNode | None, topic: LineageNode, read: NodeReader) -> str:
    """What the topic's runs feed instead of the table's ARN node, by sourceIdentifier."""
    fed = []
    for run_id in topic.downstream[:MAX_NAMED_NEIGHBOURS]:
        run = read(run_id)
        if run is not None:
            fed.extend(run.downstream[:MAX_NAMED_NEIGHBOURS])
    outputs = _named(tuple(fed), read)
    node = "no node by that ARN" if table is None else f"node {table.id} not fed by the topic"
    return f"{node}; the topic's runs feed {outputs}"


def _named(node_ids: Sequence[str], read: NodeReader) -> str:
    names = []
    for node_id in node_ids[:MAX_NAMED_NEIGHBOURS]:
        node = read(node_id)
        names.append(node.source_identifier if node is not None else node_id)
    more = len(node_ids) - MAX_NAMED_NEIGHBOURS
    return ", ".join(names) + (f" and {more} more" if more > 0 else "") if names else "nothing"


@dataclass
class ProcessingWait:
    """Which of a sync's posted events DataZone has finished processing (SUCCESS/FAILED)."""

    pending: set[str]
    failed: set[str] = field(default_factory=set)

    def update(self, statuses: Mapping[str, str]) -> None:
        """Take ListLineageEvents' ``processingStatus`` of events (id -> status)."""
        for event_id, status in statuses.items():
            if event_id in self.pending and status in ("SUCCESS", "FAILED"):
                self.pending.discard(event_id)
                if status == "FAILED":
                    self.failed.add(event_id)

    @property
    def done(self) -> bool:
        return not self.pending
