"""Did the lineage land where it should? The comparison of a sync's read-back (pure, no AWS).

PostLineageEvent is asynchronous: an accepted event says nothing about the nodes DataZone
builds from it. Once DataZone has processed a topic's events (SUCCESS or FAILED:
:class:`TopicsProcessing`), the read-back asks DataZone's own nodes what a user would see,
while the sync still posts the later topics' events (when to read the statuses:
:func:`time_to_poll`):

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

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

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
class _Awaited:
    """A topic waiting for its events' processing."""

    events_left: int
    added_at: datetime
    failed: bool = False


@dataclass
class TopicsProcessing:
    """Which topics' posted events DataZone has finished processing (SUCCESS or FAILED), as
    their statuses come in: a topic's read-back can start once every one of its events ended,
    while the sync still posts the later topics' events."""

    #: Event id -> the topic that posted it, for the events not ended yet.
    _topic_of: dict[str, str] = field(default_factory=dict)
    _waiting: dict[str, _Awaited] = field(default_factory=dict)
    #: Topics one of whose events ended FAILED: nothing to compare, the next sync re-posts them.
    failed: list[str] = field(default_factory=list)

    def add(self, topic: str, event_ids: Sequence[str], at: datetime) -> None:
        """The topic posted ``event_ids`` by ``at`` (this machine's clock, after the post)."""
        ids = set(event_ids)
        if not ids or topic in self._waiting:
            raise ValueError(f"{topic}: no events to wait for, or awaited already")
        self._topic_of.update(dict.fromkeys(ids, topic))
        self._waiting[topic] = _Awaited(len(ids), at)

    def update(self, statuses: Mapping[str, str]) -> list[str]:
        """Take events' ``processingStatus`` (id -> status; other ids ignored); the topics
        all of whose events have now ended, none FAILED, in the order they ended. A topic
        with a FAILED event goes to :attr:`failed` instead, once all its events ended."""
        processed = []
        for event_id, status in statuses.items():
            topic = self._topic_of.get(event_id)
            if topic is None or status not in ("SUCCESS", "FAILED"):
                continue
            del self._topic_of[event_id]
            awaited = self._waiting[topic]
            awaited.events_left -= 1
            awaited.failed = awaited.failed or status == "FAILED"
            if awaited.events_left:
                continue
            del self._waiting[topic]
            (self.failed if awaited.failed else processed).append(topic)
        return processed

    @property
    def pending(self) -> set[str]:
        """The events whose processing has not ended (as last read)."""
        return set(self._topic_of)

    @property
    def earliest(self) -> datetime | None:
        """When the longest-waiting topic was added (None: none waits)."""
        return min((awaited.added_at for awaited in self._waiting.values()), default=None)

    def __len__(self) -> int:
        """How many topics wait for their events' processing."""
        return len(self._waiting)


#: Topics a status read during the sync asks about at least: fewer reads of a domain's events
#: listing (a page per 50 events of every producer) than a read per posted topic.
POLL_BATCH_TOPICS = 25


def time_to_poll(
    *,
    unpolled: int,
    waiting: int,
    reading: int,
    readers: int,
    since_poll: float,
    poll_seconds: float,
    sync_done: bool,
) -> bool:
    """Whether the read-back reads DataZone's processing status now.

    ``unpolled`` topics posted since the last read, ``waiting`` topics (those included) whose
    events had not ended, ``reading`` topics whose nodes are being read or queued to be by
    ``readers`` threads, ``since_poll`` seconds since the last read. While the sync runs, a
    read waits until the readers are about to run out of topics (so a read covers as many
    topics as the readers' pace allows) and there are :data:`POLL_BATCH_TOPICS` new ones; once
    it is done, whatever is left is read at once. Topics read before are read again every
    ``poll_seconds`` at most."""
    if not unpolled and not waiting:
        return False
    if not sync_done and reading >= readers:
        return False
    if unpolled >= (1 if sync_done else POLL_BATCH_TOPICS):
        return True
    return waiting > unpolled and since_poll >= poll_seconds


#: Pending events read one by one at least (a sync of a few changed topics: a bounded cost
#: however many events the domain's producers posted since).
READ_ONE_BY_ONE_UP_TO = 10


def statuses_one_by_one(pending: int, events_in_window: int, page_size: int) -> bool:
    """Whether to read ``pending`` events' processing status one by one (GetLineageEvent,
    a call each) rather than list the domain's events since the longest-waiting one
    (ListLineageEvents, a page per ``page_size``) where ``events_in_window`` of the sync's own
    are (at least: other producers' add pages): whichever costs fewer calls, and a few one by
    one (:data:`READ_ONE_BY_ONE_UP_TO`) whatever the domain holds."""
    return pending <= max(READ_ONE_BY_ONE_UP_TO, math.ceil(events_in_window / page_size))
