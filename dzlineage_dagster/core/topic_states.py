"""The words a topic's state is told in, wherever it shows: the `dzlineage sync` summary, the
`sync --dry-run` plan and the Dagster UI's metadata of a topic's partitions.

A state has one word, said as a plan (what a sync would do) or as done (what it did): ``create``
and ``created``, ``post`` and ``posted``; a state that reads the same either way (``unchanged``,
``no edge``, ``not-cataloged``) is one word in both. A topic's lineage is told as the state, then
its edges, so the plan's row and the sync's row of one topic line up::

    post: shop.sales.orders -> shop.sales.orders -> lakehouse.sales_orders (connector)
    posted: shop.sales.orders -> shop.sales.orders -> lakehouse.sales_orders (connector)
    unchanged: shop.sales.orders -> shop.sales.orders -> lakehouse.sales_orders (connector)
    no edge: heartbeat topic of connector 'shop-debezium-source' (from its config)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class StateWord:
    """One state of a topic's asset or lineage, as a plan says it and as a sync reports it."""

    planned: str
    done: str

    def said(self, *, done: bool) -> str:
        return self.done if done else self.planned


# The topic's asset.
CREATE = StateWord("create", "created")
REVISE = StateWord("revise", "revised")
UNCHANGED = StateWord("unchanged", "unchanged")
#: Heartbeat, transaction and schema-change topics, and a key registry's schemas: no asset.
NOT_CATALOGED = StateWord("not-cataloged", "not-cataloged")
#: The topic could not be planned or synced; the row's last column says why.
FAILED = StateWord("FAILED", "FAILED")
#: A schema that left the registry, under each ``DZLINEAGE_DELETED_SCHEMA_POLICY``.
RETIREMENT = {
    "keep": StateWord("deprecate", "deprecated"),
    "delete": StateWord("delete", "deleted"),
}

# The topic's lineage.
POST = StateWord("post", "posted")
REPOST = StateWord("re-post", "re-posted")
NO_EDGE = StateWord("no edge", "no edge")
#: Posted before, and DataZone answered that it already held the events (a rerun's replay).
ALREADY_POSTED = "already posted"


def edges_state(
    state: str,
    sources: Sequence[str],
    topic: str,
    tables: Sequence[str],
    origin: str,
    notes: Sequence[str] = (),
) -> str:
    """A topic's lineage with edges: ``<state>: <sources> -> <topic> -> <tables> (<origin>;
    <notes>)`` (a side with nothing on it says so)."""
    detail = "; ".join([origin, *notes])
    return (
        f"{state}: {', '.join(sources) or 'no source'} -> {topic} -> "
        f"{', '.join(tables) or 'no table'} ({detail})"
    )


def no_edge_state(reason: str, notes: Sequence[str] = ()) -> str:
    """A topic's lineage with no edge to post: ``no edge: <reason>`` (and any jobs closed)."""
    return "; ".join([f"{NO_EDGE.done}: {reason}", *notes])
