"""Which Iceberg table a topic feeds: one small interface, several ways to answer it.

The Iceberg sink routes records by content, so the true answer comes from the connectors'
configuration (a later mapper). The naming convention here is the fallback: it is a guess, and
every answer it gives says so (``origin="convention"``), so the UI and the run logs can flag it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal, Protocol

from dzlineage_dagster.core.connectors.topics import TopicKind, classify_topic, split_table_topic

MappingOrigin = Literal["override", "connector", "convention", "none"]

#: botocore's Glue model: a database's and a table's name (``NameString``) take 1 to 255
#: characters; GetTable and CreateTable refuse a longer one with a ValidationException.
MAX_GLUE_NAME_LENGTH = 255


@dataclass(frozen=True)
class TableRef:
    """An Iceberg table in the Glue Data Catalog."""

    database: str
    table: str

    def __str__(self) -> str:
        return f"{self.database}.{self.table}"

    @property
    def glue_name_problem(self) -> str | None:
        """Why the Glue Data Catalog can hold no such table (a name part too long), or None.

        A lineage edge to it would point at a node no Glue table can ever join, so the caller
        reports this instead of posting it.
        """
        too_long = [
            f"its {part} name has {len(name)} characters"
            for part, name in (("database", self.database), ("table", self.table))
            if len(name) > MAX_GLUE_NAME_LENGTH
        ]
        if not too_long:
            return None
        full = str(self)
        # The name is the problem, so it is shown, but not 500 characters of it.
        shown = full if len(full) <= 80 else f"{full[:60]}...{full[-12:]}"
        return (
            f"Iceberg table {shown}: {' and '.join(too_long)}, more than the Glue Data "
            f"Catalog's {MAX_GLUE_NAME_LENGTH}"
        )


@dataclass(frozen=True)
class TopicTableMapping:
    """The answer for one topic: the table (None when the topic feeds none) and why."""

    topic: str
    table: TableRef | None
    origin: MappingOrigin
    reason: str

    @property
    def is_guess(self) -> bool:
        return self.origin == "convention"


class TopicTableMapper(Protocol):
    def map_topic(self, topic: str) -> TopicTableMapping: ...


@dataclass(frozen=True)
class NamingConventionMapper:
    """Guess the table from the topic name: ``<prefix>.<schema>.<table>`` -> a pattern.

    ``table_pattern`` may use ``{prefix}``, ``{database}``, ``{schema}`` and ``{table}``; parts the
    topic lacks are empty. Non-table topics (heartbeat, transaction, schema changes, connector
    internals) map to no table.
    """

    database: str
    table_pattern: str = "{schema}_{table}"
    topic_prefixes: Collection[str] = ()

    def map_topic(self, topic: str) -> TopicTableMapping:
        kind = classify_topic(topic, topic_prefixes=self.topic_prefixes)
        if kind is not TopicKind.TABLE:
            return TopicTableMapping(
                topic, None, "none", f"{kind.value} topic: carries no table rows"
            )
        parts = split_table_topic(topic)
        table = self.table_pattern.format(
            prefix=parts.prefix or "",
            database=parts.database or "",
            schema=parts.schema or "",
            table=parts.table,
        ).strip("_")
        return TopicTableMapping(
            topic,
            TableRef(self.database, table.lower()),
            "convention",
            f"guessed from the topic name by the pattern {self.table_pattern!r}; "
            "no connector configuration maps this topic",
        )
