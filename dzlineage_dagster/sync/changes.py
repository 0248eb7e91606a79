"""The change queue as a source of changed topics: what `change_queue_sensor` and
`dzlineage sync --from-queue` both read.

Listing the registry and draining the EventBridge -> SQS queue are two sources of the same
thing, the topics that changed and why; this module is the queue's. It reads a batch of
messages (:func:`read_queue`) and says, for each topic the schema events name, what the registry
holds now (:func:`describe_topics`: GetSchema of that topic only, so calls per change do not
depend on the registry's size). The sensor turns that into run requests and partitions; the
headless sync into a sync of those topics.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from dzlineage_dagster.core.changes.cloudtrail import (
    ConnectorChange,
    Ignored,
    SchemaChange,
    TableChange,
    UnreadableMessage,
    read_message,
    schema_arn_parts,
)
from dzlineage_dagster.core.connectors.topics import topic_name_problem
from dzlineage_dagster.resources.change_queue import SQS_BATCH, ChangeQueueResource
from dzlineage_dagster.resources.glue_schema_registry import GlueSchemaRegistryResource
from dzlineage_dagster.sync.run_state import RegistryByName


@dataclass
class QueueBatch:
    """What was read from the queue: the changes, and the messages that may be deleted."""

    changes: list[SchemaChange | ConnectorChange | TableChange] = field(default_factory=list)
    ignored: list[Ignored] = field(default_factory=list)
    #: Receipt handles of the messages read (changes and ignored ones).
    handles: list[str] = field(default_factory=list)
    #: (message id, times received, why) of the messages left to the redrive policy.
    unreadable: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def schema_changes(self) -> list[SchemaChange]:
        return [c for c in self.changes if isinstance(c, SchemaChange)]

    def unreadable_lines(self) -> list[str]:
        return [
            f"message {message_id} (received {received} times) is unreadable, left on the queue "
            f"for its redrive policy (the dead-letter queue after maxReceiveCount): {why}"
            for message_id, received, why in self.unreadable
        ]


def read_queue(
    queue: ChangeQueueResource, url: str, wait: int, registry: str, max_receives: int
) -> QueueBatch:
    """Up to ``max_receives`` ReceiveMessage calls of 10 messages; an answer of fewer ends it
    (the queue is drained, or only an empty queue made the call wait ``wait`` seconds)."""
    batch = QueueBatch()
    for _ in range(max_receives):
        messages = queue.receive(url, wait)
        for message in messages:
            try:
                change = read_message(message.get("Body", ""), registry)
            except UnreadableMessage as error:
                received = message.get("Attributes", {}).get("ApproximateReceiveCount", "?")
                batch.unreadable.append((message["MessageId"], received, str(error)))
                continue
            (batch.ignored if isinstance(change, Ignored) else batch.changes).append(change)
            batch.handles.append(message["ReceiptHandle"])
        if len(messages) < SQS_BATCH:
            break
    return batch


@dataclass
class ChangedTopics:
    #: Topic -> its change token now (schema ARN, UpdatedTime and latest version); None when
    #: none of its schemas is left in the registry.
    tokens: dict[str, str | None] = field(default_factory=dict)
    ignored: list[Ignored] = field(default_factory=list)


def describe_topics(
    registry: GlueSchemaRegistryResource, registry_name: str, changes: Iterable[SchemaChange]
) -> ChangedTopics:
    """What the registry holds now of each topic the ``changes`` name, one look per topic: its
    describing schema by name (value, else named as the topic, else key: GetSchema 1 to 3
    times), a version id first resolved to its schema (GetSchemaVersion). What it says now, not
    what the event said, decides: events arrive out of order."""
    found = ChangedTopics()
    for change in changes:
        schema_name = change.schema_name
        if not schema_name:
            arn = registry.schema_arn_of_version(change.schema_version_id)
            if arn is None:
                continue  # the version is gone: its deletion is an event of its own
            other, schema_name, _ = schema_arn_parts(arn, change.action)
            if other != registry_name:
                found.ignored.append(
                    Ignored(change.event_id, f"{change.action} in registry {other}")
                )
                continue
        topic = SchemaChange(
            change.action, change.event_id, change.event_time, registry_name, schema_name
        ).topic
        problem = topic_name_problem(topic, schema_name)
        if problem:
            found.ignored.append(Ignored(change.event_id, f"{schema_name}: {problem}"))
            continue
        if topic in found.tokens:
            continue  # two events of one topic: one look at it
        described = RegistryByName([topic], lambda name: registry.schema_named(registry_name, name))
        info = described.get(topic)
        if info is None:
            found.tokens[topic] = None
            continue
        latest = described.answers[info.schema_arn].get("LatestSchemaVersion")
        found.tokens[topic] = f"{info.change_token}@v{latest}"
    return found
