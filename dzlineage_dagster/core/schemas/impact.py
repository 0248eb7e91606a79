"""What a topic's new schema version changes for the Iceberg columns written from it.

:func:`compare_columns` compares the row columns of two versions (as :mod:`~dzlineage_dagster.
core.avro` or :mod:`~dzlineage_dagster.core.schemas.json_schema` read them). Breaking for the Iceberg
tables the sink evolves from the records: a removed column (the sink stops writing it; readers
of it get nulls or fail), a type change Iceberg cannot promote, and a column that was nullable
and is required now. Iceberg's table spec ("Schema Evolution", the type promotions allowed):
``int`` -> ``long``, ``float`` -> ``double``, ``decimal(P,S)`` -> ``decimal(P',S)`` with
``P' > P``; every other type change needs a new column. A new column is additive. An enum
(Avro ``enum``, Debezium's ``Enum``/``EnumSet`` and their ``allowed`` values) that lost a
symbol is breaking: rows of that value no longer come, and readers filtering on it find none.

A field of the new version whose Avro ``aliases`` name a field the previous version had (and
the new one has not) is that field renamed (the Avro specification's schema resolution reads
the writer's field into the reader's field it aliases). Breaking for the Iceberg sink all the
same: Iceberg's Kafka Connect sink evolves a table by adding columns, promoting types and
making columns optional only (``org.apache.iceberg.connect.data.SchemaUpdate``: ``AddColumn``,
``UpdateType``, ``MakeOptional``), and matches record fields to columns by name, so a renamed
field becomes a new column and the old one stops being written.

:func:`affected_columns` follows the column lineage (downstream column -> the topic columns it
is written from) to name the downstream columns each change reaches.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from dzlineage_dagster.core.ownership.owners import Owner
from dzlineage_dagster.core.schemas.avro import Column

ChangeKind = Literal[
    "removed",
    "renamed",
    "type_changed",
    "nullability_tightened",
    "symbols_removed",
    "added",
    "type_promoted",
    "symbols_added",
]
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
    renamed_to = _renames(previous, latest)
    changes = []
    for old in previous:
        new = now.get(old.name)
        if new is None and old.name in renamed_to:
            new = renamed_to[old.name]
            changes.append(
                ColumnChange(
                    old.name,
                    "renamed",
                    True,
                    f"renamed to {new.name} (an Avro alias): the Iceberg sink adds {new.name} "
                    f"as a new column and stops writing {old.name}",
                )
            )
        elif new is None:
            changes.append(ColumnChange(old.name, "removed", True, f"{old.type} column removed"))
            continue
        changes += _column_changes(old, new)
    before = {column.name for column in previous}
    renamed = {column.name for column in renamed_to.values()}
    changes += [
        ColumnChange(c.name, "added", False, f"{c.type} column added")
        for c in latest
        if c.name not in before and c.name not in renamed
    ]
    return changes


def _renames(previous: Sequence[Column], latest: Sequence[Column]) -> dict[str, Column]:
    """Previous column name -> the new column whose aliases name it (a rename)."""
    gone = {column.name for column in previous} - {column.name for column in latest}
    renamed_to: dict[str, Column] = {}
    for column in latest:
        if column.name in gone:
            continue
        for alias in column.aliases:
            if alias in gone:
                renamed_to.setdefault(alias, column)
    return renamed_to


def _column_changes(old: Column, new: Column) -> list[ColumnChange]:
    """The type, nullability and symbol changes of one column (its name as it was)."""
    changes = []
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
    if old.symbols and new.symbols:
        removed = [symbol for symbol in old.symbols if symbol not in new.symbols]
        added = [symbol for symbol in new.symbols if symbol not in old.symbols]
        if removed:
            changes.append(
                ColumnChange(
                    old.name, "symbols_removed", True, f"symbols removed: {', '.join(removed)}"
                )
            )
        if added:
            changes.append(
                ColumnChange(old.name, "symbols_added", False, f"symbols added: {', '.join(added)}")
            )
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


@dataclass(frozen=True)
class DownstreamAsset:
    """An asset that reads an Iceberg table written from the topic: the table's own node in
    Dagster's asset graph (``system`` "dagster", ``name`` its key), or a node a lineage graph
    (``system`` "datazone" or "glue", the Glue Data Catalog's) shows downstream of the table (a
    team's model, a job's output)."""

    table: str
    system: Literal["dagster", "datazone", "glue"]
    name: str
    #: The lineage node's id and type (None for a Dagster key).
    node_id: str | None = None
    type_name: str | None = None

    def label(self) -> str:
        if self.system == "dagster":
            return f"{self.name} (Dagster)"
        graph = GRAPH_WORDS[self.system]
        return f"{self.name} ({graph} {self.type_name or 'node'} {self.node_id})"


#: How a downstream asset's label names the lineage graph that showed it.
GRAPH_WORDS = {"datazone": "DataZone", "glue": "Glue"}


@dataclass(frozen=True)
class ImpactReport:
    """What the topic's latest schema version changes, the columns and assets it reaches, and
    who to tell: the one answer `dzlineage impact` prints and the topic's asset check shows."""

    topic: str
    latest_version: int
    #: None: the topic's first version, nothing to compare.
    previous_version: int | None = None
    changes: tuple[ColumnChange, ...] = ()
    affected: tuple[AffectedColumn, ...] = ()
    #: The Iceberg tables the topic feeds, ``<database>.<table>``.
    tables: tuple[str, ...] = ()
    downstream: tuple[DownstreamAsset, ...] = ()
    owners: tuple[Owner, ...] = ()

    @property
    def verdict(self) -> Verdict:
        return verdict(self.changes)

    @property
    def versions(self) -> str:
        if self.previous_version is None:
            return f"v{self.latest_version}"
        return f"v{self.previous_version} -> v{self.latest_version}"

    def affected_tables(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(table_name(a.node) for a in self.affected))

    def narrowed_to(self, table: str, column: str | None = None) -> ImpactReport:
        """Only what reaches ``table`` (``<database>.<table>``), or one column of it; the
        changes too when a column is given."""
        affected = tuple(
            a
            for a in self.affected
            if table_name(a.node) == table and (column is None or a.column == column)
        )
        changes = self.changes
        if column is not None:
            reaching = {a.change for a in affected}
            changes = tuple(change for change in self.changes if change in reaching)
        downstream = tuple(d for d in self.downstream if d.table == table)
        return replace(self, changes=changes, affected=affected, downstream=downstream)

    def summary(self) -> str:
        """One line: the verdict, and what it reaches."""
        if self.previous_version is None:
            return f"{self.topic} {self.versions}: its first version, nothing to compare"
        if self.verdict == "none":
            return f"{self.topic} {self.versions}: no column changed"
        breaking = [c for c in self.changes if c.breaking]
        if not breaking:
            added = ", ".join(c.column for c in self.changes)
            return f"{self.topic} {self.versions}: additive ({added})"
        columns = ", ".join(f"{table_name(a.node)}.{a.column}" for a in self.affected)
        reached = set(self.affected_tables())
        readers = [d.label() for d in self.downstream if d.table in reached]
        return (
            f"{self.topic} {self.versions}: {len(breaking)} breaking changes "
            f"({', '.join(f'{c.column} {c.kind}' for c in breaking)})"
            + (f" reaching {columns}" if columns else "; no Iceberg column is written from them")
            + (f"; read by {', '.join(readers)}" if readers else "")
            + (f"; owners: {', '.join(o.name for o in self.owners)}" if self.owners else "")
        )

    def text(self) -> str:
        """The whole report as lines for a terminal: what :meth:`to_json` carries, each section
        labelled (``(none)`` where it is empty, so a reader knows it was looked at); a first
        version is compared with nothing, and followed nowhere."""
        if self.previous_version is None:
            return self.summary()
        lines = [f"{self.topic} {self.versions}: {self.verdict}"]
        lines += [
            f"  {'BREAKING' if c.breaking else 'additive':8}  {c.column}: {c.detail}"
            for c in self.changes
        ]
        lines += [
            f"  reaches   {table_name(a.node)}.{a.column} ({a.change.kind})" for a in self.affected
        ]
        if self.changes and not self.affected:
            lines.append("  reaches   no Iceberg column")
        lines.append(f"  tables    {', '.join(self.tables) or '(none)'}")
        readers = [d.label() for d in self.downstream] or ["(none)"]
        lines += [f"  read by   {reader}" for reader in readers]
        owners = [f"{o.name} ({o.source})" for o in self.owners] or ["(none)"]
        lines.append(f"  owners    {', '.join(owners)}")
        return "\n".join(lines)

    def markdown(self) -> str:
        """The report as tables, for the Dagster UI."""
        lines = [f"**{self.topic}** {self.versions}: {self.verdict}", ""]
        if self.changes:
            lines += ["| column | change | breaking | detail |", "|---|---|---|---|"]
            lines += [
                f"| `{c.column}` | {c.kind} | {'yes' if c.breaking else 'no'} | {c.detail} |"
                for c in self.changes
            ]
            lines.append("")
        if self.affected:
            lines += ["| Iceberg column | from | change |", "|---|---|---|"]
            lines += [
                f"| `{table_name(a.node)}.{a.column}` | `{a.change.column}` | {a.change.kind} |"
                for a in self.affected
            ]
            lines.append("")
        if self.downstream:
            lines.append("Downstream: " + ", ".join(d.label() for d in self.downstream))
        if self.owners:
            lines.append("Owners: " + ", ".join(f"{o.name} ({o.source})" for o in self.owners))
        return "\n".join(lines).rstrip() + "\n"

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "latest_version": self.latest_version,
            "previous_version": self.previous_version,
            "verdict": self.verdict,
            "changes": [asdict(change) for change in self.changes],
            "affected": [
                {"table": table_name(a.node), "column": a.column, "change": a.change.kind}
                for a in self.affected
            ],
            "tables": list(self.tables),
            "downstream": [asdict(d) for d in self.downstream],
            "owners": [asdict(owner) for owner in self.owners],
        }


def table_name(node: Sequence[str]) -> str:
    """``<database>.<table>`` of an Iceberg table's key (``iceberg/<database>/<table>``)."""
    return ".".join(node[1:])
