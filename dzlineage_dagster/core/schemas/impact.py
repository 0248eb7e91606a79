"""What a topic's new schema version changes for the Iceberg columns written from it.

:func:`compare_columns` compares the row columns of two versions (as :mod:`~dzlineage_dagster.
core.avro` or :mod:`~dzlineage_dagster.core.schemas.json_schema` read them). Breaking for the Iceberg
tables the sink evolves from the records: a removed column (the sink stops writing it; readers
of it get nulls or fail), a type change Iceberg cannot promote, and a column that was nullable
and is required now. Iceberg's table spec ("Schema Evolution", the type promotions allowed):
``int`` -> ``long``, ``float`` -> ``double``, ``decimal(P,S)`` -> ``decimal(P',S)`` with
``P' > P``; every other type change needs a new column. A new column is additive.

:func:`affected_columns` follows the column lineage (downstream column -> the topic columns it
is written from) to name the downstream columns each change reaches.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from dzlineage_dagster.core.schemas.avro import Column

ChangeKind = Literal["removed", "type_changed", "nullability_tightened", "added", "type_promoted"]
Verdict = Literal["breaking", "additive", "none"]
#: Iceberg's allowed primitive promotions (table spec, "Schema Evolution").
ICEBERG_PROMOTIONS = frozenset({("int", "long"), ("float", "double")})
_DECIMAL = re.compile(r"decimal\((\d+),(\d+)\)")


@dataclass(frozen=True)
class ColumnChange:
    column: str
    kind: ChangeKind
    breaking: bool
    detail: str


def iceberg_promotes(before: str, after: str) -> bool:
    """Whether Iceberg evolves a column of type ``before`` to ``after`` in place."""
    if (before, after) in ICEBERG_PROMOTIONS:
        return True
    old, new = _DECIMAL.fullmatch(before), _DECIMAL.fullmatch(after)
    return bool(old and new and old[2] == new[2] and int(new[1]) > int(old[1]))


def compare_columns(previous: Sequence[Column], latest: Sequence[Column]) -> list[ColumnChange]:
    """The changes from ``previous`` to ``latest``, in the previous version's column order, the
    added columns last."""
    now = {column.name: column for column in latest}
    changes = []
    for old in previous:
        new = now.get(old.name)
        if new is None:
            changes.append(ColumnChange(old.name, "removed", True, f"{old.type} column removed"))
            continue
        if new.type != old.type:
            promoted = iceberg_promotes(old.type, new.type)
            changes.append(
                ColumnChange(
                    old.name,
                    "type_promoted" if promoted else "type_changed",
                    not promoted,
                    f"{old.type} -> {new.type}"
                    + (" (Iceberg promotes it)" if promoted else " (Iceberg cannot promote it)"),
                )
            )
        if old.nullable and not new.nullable:
            changes.append(
                ColumnChange(old.name, "nullability_tightened", True, "nullable -> required")
            )
    before = {column.name for column in previous}
    changes += [
        ColumnChange(c.name, "added", False, f"{c.type} column added")
        for c in latest
        if c.name not in before
    ]
    return changes


def verdict(changes: Iterable[ColumnChange]) -> Verdict:
    changes = list(changes)
    if any(change.breaking for change in changes):
        return "breaking"
    return "additive" if changes else "none"


@dataclass(frozen=True)
class AffectedColumn:
    """A downstream column one change reaches."""

    node: tuple[str, ...]
    column: str
    change: ColumnChange


def affected_columns(
    changes: Iterable[ColumnChange],
    topic: tuple[str, ...],
    lineage: Mapping[tuple[str, ...], Mapping[str, Sequence[tuple[tuple[str, ...], str]]]],
) -> list[AffectedColumn]:
    """Each downstream column written from a changed topic column. ``lineage`` is node ->
    column -> its upstream (node, column) pairs (the graph's column lineage)."""
    by_column = {change.column: change for change in changes}
    found = []
    for node, columns in sorted(lineage.items()):
        for column, upstream in columns.items():
            for upstream_node, upstream_column in upstream:
                change = by_column.get(upstream_column)
                if upstream_node == topic and change is not None:
                    found.append(AffectedColumn(node, column, change))
    return found
