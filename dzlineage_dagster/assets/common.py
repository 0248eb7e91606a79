"""What the assets, checks and sensors share."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dagster import (
    DynamicPartitionsDefinition,
    MetadataValue,
    TableColumn,
    TableColumnConstraints,
    TableSchema,
)

from dzlineage_dagster.core.schemas.avro import Column

#: One partition per Kafka topic, managed by the registry sensor.
kafka_topics = DynamicPartitionsDefinition(name="kafka_topics")

GROUP = "datazone_lineage"
OWNERS = ["team:data-platform"]


@dataclass(frozen=True)
class Advice:
    """What a check's failure means and what to do about it, shown on the check's page in
    Dagster's UI beside the problems (the metadata entries `why` and `what to do`)."""

    why: str
    what_to_do: str

    def metadata(self) -> dict[str, MetadataValue]:
        # Text, which the UI's metadata table shows in full (Markdown is behind a click).
        return {
            "why": MetadataValue.text(self.why),
            "what to do": MetadataValue.text(self.what_to_do),
        }


def table_schema(columns: Iterable[Column]) -> TableSchema:
    """Columns as Dagster's ``dagster/column_schema`` shows them."""
    return TableSchema(
        columns=[
            TableColumn(
                name=column.name,
                type=column.type,
                # Dagster's columns are flat: nested fields' docs and enum symbols go here.
                description=column.full_description(),
                constraints=TableColumnConstraints(nullable=column.nullable),
            )
            for column in columns
        ]
    )
