"""What the assets, checks and sensors share."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dagster import (
    AddDynamicPartitionsRequest,
    DagsterInstance,
    DeleteDynamicPartitionsRequest,
    DynamicPartitionsDefinition,
    MetadataValue,
    TableColumn,
    TableColumnConstraints,
    TableSchema,
)

from dzlineage_dagster.core.schemas.avro import Column
from dzlineage_dagster.core.scopes import SCOPE_TAG, partition_key, split_partition_key
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sync.errors import SyncError

#: One partition per Kafka topic, managed by the registry sensor; with scopes, one per topic of
#: each scope, keyed ``<scope>/<topic>`` (core/scopes.py).
kafka_topics = DynamicPartitionsDefinition(name="kafka_topics")

GROUP = "datazone_lineage"
OWNERS = ["team:data-platform"]


@dataclass(frozen=True)
class ScopePartitions:
    """One scope's share of the ``kafka_topics`` partitions, said in its topics' names: what a
    scope's sensors and jobs read and request (None: the deployment's one registry, whose
    keys are the bare topic names)."""

    scope: str | None = None

    def key(self, topic: str) -> str:
        return partition_key(self.scope, topic)

    def keys(self, topics: Iterable[str]) -> list[str]:
        return [self.key(topic) for topic in topics]

    def topic(self, key: str) -> str:
        return split_partition_key(key)[1]

    def topics(self, instance: DagsterInstance) -> list[str]:
        """The scope's topics among the partitions, in the partitions' order."""
        keys = instance.get_dynamic_partitions(kafka_topics.name)
        if self.scope is None:
            return list(keys)
        return [topic for scope, topic in map(split_partition_key, keys) if scope == self.scope]

    def add_request(self, topics: Iterable[str]) -> AddDynamicPartitionsRequest:
        return kafka_topics.build_add_request(self.keys(topics))

    def delete_request(self, topics: Iterable[str]) -> DeleteDynamicPartitionsRequest:
        return kafka_topics.build_delete_request(self.keys(topics))

    @property
    def tags(self) -> dict[str, str]:
        """The tags of a run in this scope (none without scopes)."""
        return {} if self.scope is None else {SCOPE_TAG: self.scope}


#: The deployment's one registry, when no scopes are configured.
UNSCOPED = ScopePartitions()


def scope_resource(lineage_sync: LineageSyncResource, scope: str | None) -> LineageSyncResource:
    """``lineage_sync`` as ``scope`` sees it, for a partition key's or a run tag's scope;
    :class:`SyncError` when the deployment has no such scope (a key left from before
    DZLINEAGE_SCOPES, or from a scope since removed)."""
    if scope is None and lineage_sync.scopes:
        raise SyncError(
            "a bare topic names no scope: with DZLINEAGE_SCOPES set, each partition key is "
            "<scope>/<topic> and each run of a scope is tagged dzlineage/scope (a bare key is "
            "left from before the scopes: delete it)"
        )
    try:
        return lineage_sync.for_scope(scope)
    except KeyError as error:
        raise SyncError(str(error.args[0])) from None


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
