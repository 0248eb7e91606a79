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

import logging
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TextIO

from botocore.exceptions import BotoCoreError, ClientError

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
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.catalog.custom_types import ensure_custom_types
from dzlineage_dagster.sync.checks.authorization import check_authorization
from dzlineage_dagster.sync.checks.preflight import check_ownership, check_platform
from dzlineage_dagster.sync.errors import SyncError, describe_error
from dzlineage_dagster.sync.run_state import RegistryByName, SyncRun
from dzlineage_dagster.sync.runner import sync_topics


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


#: ReceiveMessage calls of one `dzlineage sync --from-queue`: up to 1,000 messages; a longer
#: backlog is read by the next run.
MAX_RECEIVES_PER_SYNC = 100


def run_queue_sync(
    settings: LineageSettings, *, out: TextIO, aws_options: dict[str, dict[str, Any]]
) -> int:
    """`dzlineage sync --from-queue`: drain the change queue and sync exactly the topics its
    events name, read by name (no listing); exit 0 when every one synced. A connector's or a
    Glue table's change, or a topic whose schemas left the registry, needs the whole picture
    (the topology over every topic, retirement): then the ordinary sync runs, listing the
    registry. The messages are deleted only after a sync with no failure; otherwise they come
    back after the queue's visibility timeout, and the next run syncs them again."""
    from dzlineage_dagster.sync.headless import run_headless_sync, start_run

    log = logging.getLogger("dzlineage.sync")
    url = settings.change_queue_url
    if not url:
        print(
            "dzlineage sync --from-queue: set DZLINEAGE_CHANGE_QUEUE_URL (docs/change-events.md)",
            file=sys.stderr,
        )
        return 1
    queue = ChangeQueueResource(**aws_options.get("data", {}))
    try:
        batch = read_queue(
            queue,
            url,
            settings.change_queue_wait_seconds,
            settings.registry_name,
            MAX_RECEIVES_PER_SYNC,
        )
        for line in batch.unreadable_lines():
            log.warning(line)
        for ignored in batch.ignored:
            log.info(f"event {ignored.event_id} ignored: {ignored.reason}")
        run = start_run(settings, log, aws_options)
        changed = describe_topics(
            run.resource.schema_registry, settings.registry_name, batch.schema_changes
        )
    except (SyncError, ClientError, BotoCoreError, ValueError) as error:
        print(f"dzlineage sync: could not start: {describe_error(error)}", file=sys.stderr)
        return 1
    removed = sorted(topic for topic, token in changed.tokens.items() if token is None)
    others = [c for c in batch.changes if not isinstance(c, SchemaChange)]
    if others or removed:
        log.info(
            f"{len(others)} connector or Glue table changes, {len(removed)} topics whose schemas "
            "left the registry: syncing the whole registry (listed), as without a queue"
        )
        code = run_headless_sync(settings, dry_run=False, out=out, aws_options=aws_options)
    else:
        topics = sorted(topic for topic, token in changed.tokens.items() if token)
        named = SyncRun(run.resource, log, topic_names=topics)
        code = sync_named_topics(named, out, len(batch.handles))
    if code == 0:
        for failure in queue.delete(url, batch.handles):
            log.warning(f"a handled message was not deleted ({failure}); it comes back once")
    return code


def sync_named_topics(run: SyncRun, out: TextIO, messages: int) -> int:
    """The sync of the run's topics only, each read by name; a line per topic, a summary."""
    topics = list(run.registry_topics)
    if not topics:
        calls = sum(run.api_calls().values())
        print(
            f"{messages} messages named no topic to sync; {calls} AWS API calls besides the "
            "queue's",
            file=out,
        )
        return 0
    try:
        check_platform(run)
        ensure_custom_types(run)
        check_ownership(run, topics)
        check_authorization(run, (), asset_writes=True)
    except (SyncError, ClientError, BotoCoreError, ValueError) as error:
        print(f"dzlineage sync: could not start: {describe_error(error)}", file=sys.stderr)
        return 1
    failed = 0
    for outcome in sorted(sync_topics(run, topics), key=lambda o: o.topic):
        failed += not outcome.ok
        state = "synced" if outcome.ok else f"failed in {outcome.failed_stage}: {outcome.error}"
        print(f"{outcome.topic}  {state}  {outcome.catalog_summary}", file=out)
    calls = sum(run.api_calls().values())
    print(
        f"\n{len(topics)} topics named by {messages} messages, {failed} failed, {calls} AWS API "
        "calls besides the queue's",
        file=out,
    )
    return 1 if failed else 0
