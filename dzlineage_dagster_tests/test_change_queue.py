"""Changes found by events, not listings: CloudTrail's calls reach an SQS queue through
EventBridge rules (the sandbox emits them as AWS does), and `change_queue_sensor` requests the
sync of exactly the topics they name, at calls per change that do not grow with the registry.
"""

from __future__ import annotations

import inspect
import json
from collections import Counter
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from types import FunctionType

import pytest
from dagster import AssetRecordsFilter, DagsterInstance, Definitions, build_sensor_context

from dzlineage_dagster.assets.common import kafka_topics
from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.core.catalog.registry_cursor import Backoff
from dzlineage_dagster.core.changes.cloudtrail import read_message
from dzlineage_dagster.core.changes.queue_cursor import QueueCursor
from dzlineage_dagster.core.doctor import CHANGE_QUEUE_ACTIONS
from dzlineage_dagster.definitions import build_resources, defs
from dzlineage_dagster.jobs import CONNECTOR_TOPOLOGY_JOB
from dzlineage_dagster.sandbox.demo.change_queue import (
    MAX_RECEIVE_COUNT,
    QUEUE_NAME,
    create_change_queue,
)
from dzlineage_dagster.sandbox.demo.seed import seed_platform
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster.sensors import change_queue_tick
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster_tests.test_custom_types_and_sensor import register_topics
from dzlineage_dagster_tests.test_doctor import doctor, rows_of
from dzlineage_dagster_tests.test_least_privilege import IAM_DIRECTORY

RETRY_SETTINGS = ("sensor_retry_seconds", "sensor_retry_max_seconds")


class QueueSensor:
    """`change_queue_sensor`'s ticks, each with the cursor the last one left."""

    def __init__(self, platform, monkeypatch) -> None:
        self.platform = platform
        self.url = create_change_queue(platform.client("sqs"), platform.client("events"))
        monkeypatch.setenv("DZLINEAGE_CHANGE_QUEUE_URL", self.url)
        # No long poll in the tests: an idle tick answers at once.
        monkeypatch.setenv("DZLINEAGE_CHANGE_QUEUE_WAIT_SECONDS", "0")
        self.definitions = Definitions(
            assets=defs.assets, jobs=defs.jobs, sensors=defs.sensors, resources=build_resources()
        )
        self.cursor: str | None = None
        # The registry sensor's partitions: every topic of the registry is known.
        platform.instance.add_dynamic_partitions(kafka_topics.name, platform.registry_topics())

    def tick(self, now: datetime | None = None):
        """One tick (at ``now``, else the wall clock's time); its partition requests applied,
        its cursor kept (Dagster committed it)."""
        with build_sensor_context(
            instance=self.platform.instance,
            cursor=self.cursor,
            definitions=self.definitions,
            resources=self.definitions.resources,
        ) as context:
            resources = context.resources
            result = change_queue_tick(
                context,
                resources.lineage_sync,
                resources.change_queue,
                now or datetime.now(timezone.utc),
            )
        self.platform.apply_partition_requests(result)
        self.cursor = result.cursor
        return result

    def requested_topics(self, result) -> set[str]:
        keys = self.platform.instance.get_dynamic_partitions(kafka_topics.name)
        topics: set[str] = set()
        for request in result.run_requests or []:
            if request.job_name == "catalog_sync":
                start = keys.index(request.tags["dagster/asset_partition_range_start"])
                end = keys.index(request.tags["dagster/asset_partition_range_end"])
                topics |= set(keys[start : end + 1])
        return topics

    def run(self, result) -> list:
        """The tick's requested runs, executed in process."""
        return [
            self.definitions.resolve_job_def(request.job_name).execute_in_process(
                instance=self.platform.instance, tags=request.tags, raise_on_error=False
            )
            for request in result.run_requests or []
        ]

    def drain(self) -> None:
        """Delete every message on the queue, unread by the sensor (PurgeQueue would allow
        one a minute)."""
        sqs = self.platform.client("sqs")
        while messages := sqs.receive_message(QueueUrl=self.url, MaxNumberOfMessages=10).get(
            "Messages"
        ):
            for message in messages:
                sqs.delete_message(QueueUrl=self.url, ReceiptHandle=message["ReceiptHandle"])

    def messages_left(self) -> int:
        """Messages on the queue, in flight or not."""
        attributes = self.platform.client("sqs").get_queue_attributes(
            QueueUrl=self.url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return sum(int(v) for v in attributes.values())


def tick_calls(platform, sensor: QueueSensor):
    platform.control.clear_calls()
    result = sensor.tick()
    return result, Counter(
        {
            f"{service}.{operation}": n
            for (service, operation), n in platform.control.call_counts().items()
        }
    )


@pytest.mark.parametrize("registry_size", [20, 200])
def test_a_new_version_requests_exactly_its_topic_at_calls_that_do_not_grow_with_the_registry(
    platform, monkeypatch, registry_size
):
    register_topics(platform, registry_size - len(platform.registry_topics()))
    assert len(platform.registry_topics()) == registry_size
    sensor = QueueSensor(platform, monkeypatch)
    idle, calls = tick_calls(platform, sensor)
    assert idle.skip_reason and not idle.run_requests
    assert calls == {"sqs.ReceiveMessage": 1}

    platform.register_new_version("shop.sales.orders", "coupon_code")
    changed, calls = tick_calls(platform, sensor)
    assert sensor.requested_topics(changed) == {"shop.sales.orders"}
    # The change's calls, the same at any registry size: one receive, and GetSchema of the
    # topic's describing schema: its value schema first (the demo has none), then the schema
    # named as the topic (the demo's).
    assert calls == {"sqs.ReceiveMessage": 1, "glue.GetSchema": 2}

    # The next tick deletes the message, now that the run request is recorded.
    assert sensor.messages_left() == 1
    after, calls = tick_calls(platform, sensor)
    assert not after.run_requests
    assert calls == {"sqs.DeleteMessageBatch": 1, "sqs.ReceiveMessage": 1}
    assert sensor.messages_left() == 0


class InstanceReads:
    """Every read the sensor makes of the Dagster instance (its ``get_``, ``fetch_`` and ``has_``
    methods), with the partitions each names (``*`` for a read of every partition): the real
    instance's methods, wrapped to count, not replaced."""

    #: The instance's reads that load every partition's key or status.
    WHOLE_ESTATE = {
        "get_dynamic_partitions",
        "get_status_by_partition",
        "get_materialized_partitions",
    }

    def __init__(self, instance: DagsterInstance, monkeypatch) -> None:
        self.reads: list[tuple[str, tuple[str, ...]]] = []
        self.recording = False
        for name in dir(DagsterInstance):
            if name.startswith(("get_", "fetch_", "has_")) and isinstance(
                inspect.getattr_static(DagsterInstance, name), FunctionType
            ):
                monkeypatch.setattr(instance, name, self._counted(name, getattr(instance, name)))

    def _counted(self, name, read):
        def counted(*args, **kwargs):
            if self.recording:
                self.reads.append((name, self.partitions_named(name, [*args, *kwargs.values()])))
            return read(*args, **kwargs)

        return counted

    def partitions_named(self, name: str, arguments: list) -> tuple[str, ...]:
        if name in self.WHOLE_ESTATE:
            return ("*",)
        named: list[str] = []
        for argument in arguments:
            if isinstance(argument, AssetRecordsFilter):
                named += argument.asset_partitions or ["*"]
            elif isinstance(argument, str) and argument != kafka_topics.name:
                named.append(argument)
        return tuple(named)

    @contextmanager
    def recorded(self):
        self.reads = []
        self.recording = True
        try:
            yield self.reads
        finally:
            self.recording = False


def test_idle_and_one_change_ticks_read_only_the_named_topics_from_dagster_and_aws(
    platform, monkeypatch
):
    """An idle tick reads nothing of Dagster's partitions and makes one SQS call; a tick with
    one changed schema reads the partition state of that topic only (whether it exists, its
    stages' last planned materialization and run) and the same AWS calls, at 20 topics and
    at 200: nothing that grows with the estate (no list of every partition, no status of
    each)."""
    sensor = QueueSensor(platform, monkeypatch)
    reads = InstanceReads(platform.instance, monkeypatch)
    topic = "shop.sales.orders"
    # Its first event-driven sync, so that each size below sees a topic synced before.
    platform.register_new_version(topic, "warm_up")
    assert all(run.success for run in sensor.run(sensor.tick()))
    sensor.tick()

    measured = {}
    for size in (20, 200):
        added = [
            f"grown.public.table_{i:04d}" for i in range(len(platform.registry_topics()), size)
        ]
        for name in added:
            platform.create_table_topic(name, [])
        platform.instance.add_dynamic_partitions(kafka_topics.name, added)
        # The estate grew as the registry sensor's listing would see it; their events are not
        # this test's.
        sensor.drain()
        platform.register_new_version(topic, f"column_at_{size}")
        with reads.recorded() as changed_reads:
            changed, changed_calls = tick_calls(platform, sensor)
        assert sensor.requested_topics(changed) == {topic}
        assert all(run.success for run in sensor.run(changed))
        # The next tick deletes the message and sees the run's end (the topic was watched).
        with reads.recorded() as after_reads:
            _, after_calls = tick_calls(platform, sensor)
        with reads.recorded() as idle_reads:
            idle, idle_calls = tick_calls(platform, sensor)
        assert idle.skip_reason and not idle.run_requests
        assert idle_reads == [] and idle_calls == {"sqs.ReceiveMessage": 1}
        for name, partitions in changed_reads + after_reads:
            assert name not in InstanceReads.WHOLE_ESTATE and set(partitions) <= {topic}, name
        measured[size] = (
            Counter(name for name, _ in changed_reads),
            changed_calls,
            Counter(name for name, _ in after_reads),
            after_calls,
        )
    assert measured[20] == measured[200]
    assert "has_dynamic_partition" in measured[200][0]


def test_a_redelivered_change_requests_nothing_new(platform, monkeypatch):
    sensor = QueueSensor(platform, monkeypatch)
    platform.register_new_version("shop.sales.orders", "coupon_code")
    sqs = platform.client("sqs")
    # Read the event as delivered, then let the sensor have it.
    [message] = sqs.receive_message(QueueUrl=sensor.url)["Messages"]
    sqs.change_message_visibility(
        QueueUrl=sensor.url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
    )
    first = sensor.tick()
    assert sensor.requested_topics(first) == {"shop.sales.orders"}
    # SQS delivers at least once: the same event again.
    sqs.send_message(QueueUrl=sensor.url, MessageBody=message["Body"])
    again = sensor.tick()
    assert not again.run_requests and not again.dynamic_partitions_requests
    assert "1 changes" in again.skip_reason.skip_message
    sensor.tick()
    assert sensor.messages_left() == 0

    # A newer version of the same topic is a change of its own.
    platform.register_new_version("shop.sales.orders", "gift_note")
    assert sensor.requested_topics(sensor.tick()) == {"shop.sales.orders"}


def test_an_unreadable_message_is_reported_and_left_to_the_dead_letter_queue(
    platform, monkeypatch, capfd
):
    sensor = QueueSensor(platform, monkeypatch)
    platform.client("sqs").send_message(QueueUrl=sensor.url, MessageBody="not an event")
    result = sensor.tick()
    assert "1 unreadable messages" in result.skip_reason.skip_message
    # The tick's log (Dagster's, on stderr here) says which message and why.
    log = capfd.readouterr().err
    assert "(received 1 times) is unreadable, left on the queue for its redrive policy" in log
    assert "the body is not JSON" in log
    assert QueueCursor.from_text(sensor.cursor).pending == []
    sensor.tick()
    assert sensor.messages_left() == 1


def test_a_new_schema_becomes_a_partition_and_a_deleted_one_is_retired(platform, monkeypatch):
    sensor = QueueSensor(platform, monkeypatch)
    platform.create_table_topic("shop.sales.refunds", [])
    created = sensor.tick()
    assert sensor.requested_topics(created) == {"shop.sales.refunds"}
    assert "shop.sales.refunds" in platform.instance.get_dynamic_partitions(kafka_topics.name)

    glue = platform.client("glue")
    glue.delete_schema(SchemaId={"SchemaArn": platform.schema_arn("shop.sales.refunds")})
    deleted = sensor.tick()
    [retire] = deleted.run_requests
    assert retire.job_name == "retire_topics"
    assert "shop.sales.refunds" not in platform.instance.get_dynamic_partitions(kafka_topics.name)


def test_another_registrys_schema_is_ignored(platform, monkeypatch, capfd):
    sensor = QueueSensor(platform, monkeypatch)
    glue = platform.client("glue")
    glue.create_registry(RegistryName="elsewhere")
    glue.create_schema(
        RegistryId={"RegistryName": "elsewhere"},
        SchemaName="other.topic-value",
        DataFormat="AVRO",
        Compatibility="NONE",
        SchemaDefinition=json.dumps({"type": "record", "name": "r", "fields": []}),
    )
    result = sensor.tick()
    assert not result.run_requests
    assert "in registry elsewhere, not shop-cdc" in capfd.readouterr().err


def test_a_changed_glue_table_syncs_the_topics_whose_sink_writes_it(platform, monkeypatch):
    sensor = QueueSensor(platform, monkeypatch)
    glue = platform.client("glue")
    table = glue.get_table(DatabaseName="lakehouse", Name="sales_orders")["Table"]
    table_input = {
        key: table[key]
        for key in ("Name", "StorageDescriptor", "TableType", "Parameters")
        if key in table
    }
    table_input["Parameters"] = {**table_input.get("Parameters", {}), "comment": "changed"}
    glue.update_table(DatabaseName="lakehouse", TableInput=table_input)
    assert sensor.requested_topics(sensor.tick()) == {"shop.sales.orders"}


def test_a_changed_connector_observes_the_connector_topology(platform, monkeypatch):
    sensor = QueueSensor(platform, monkeypatch)
    connect = platform.client("kafkaconnect")
    [summary, *_] = connect.list_connectors()["connectors"]
    connect.delete_connector(connectorArn=summary["connectorArn"])
    result = sensor.tick()
    assert [r.job_name for r in result.run_requests] == [CONNECTOR_TOPOLOGY_JOB.name]


def test_the_listing_is_a_daily_safety_net_that_reports_what_the_events_missed(
    platform, monkeypatch, capfd
):
    sensor = QueueSensor(platform, monkeypatch)
    now = datetime.now(timezone.utc)
    listed = platform.tick(now=now, definitions=sensor.definitions)
    platform.control.clear_calls()
    waiting = platform.tick(listed.cursor, now + timedelta(minutes=1), sensor.definitions)
    assert waiting.skip_reason.skip_message.endswith("as a safety net, in 86340 s")
    assert not platform.control.call_counts()

    platform.register_new_version("shop.sales.orders", "coupon_code")
    for request in sensor.tick().run_requests:
        assert (
            sensor.definitions.resolve_job_def(request.job_name)
            .execute_in_process(instance=platform.instance, tags=request.tags)
            .success
        )
    # An event lost on its way (a rule changed, the queue purged): only the listing sees it.
    platform.register_new_version("shop.sales.payments", "fee")
    platform.client("sqs").purge_queue(QueueUrl=sensor.url)
    capfd.readouterr()
    day = platform.tick(listed.cursor, now + timedelta(days=1, seconds=1), sensor.definitions)
    assert "found 1 of 2 changed topics no event brought: shop.sales.payments" in (
        capfd.readouterr().err
    )
    assert sensor.requested_topics(day) == {"shop.sales.payments"}


def test_a_topic_whose_run_failed_is_synced_again_after_its_backoff(platform, monkeypatch):
    # Every injected throttle reaches the product (no botocore retry).
    monkeypatch.setenv("DZLINEAGE_MAX_ATTEMPTS", "1")
    sensor = QueueSensor(platform, monkeypatch)
    backoff = Backoff(*(LineageSettings.model_fields[f].default for f in RETRY_SETTINGS))
    platform.register_new_version("shop.sales.orders", "coupon_code")
    platform.control.set_faults(FaultRule(service="datazone", operation="CreateAsset", count=1))
    now = datetime.now(timezone.utc)
    [failed] = sensor.run(sensor.tick(now))
    assert not failed.success
    platform.control.clear_faults()

    # The next tick sees the failure: the topic waits its first backoff from then.
    seen = now + timedelta(seconds=30)
    waiting = sensor.tick(seen)
    assert not waiting.run_requests
    assert waiting.skip_reason.skip_message.endswith(
        f"1 failed topics wait to be synced again, the first in {backoff.delay(0):.0f} s"
    )
    assert not sensor.tick(seen + timedelta(seconds=backoff.delay(0) - 1)).run_requests
    retried = sensor.tick(seen + timedelta(seconds=backoff.delay(0)))
    assert sensor.requested_topics(retried) == {"shop.sales.orders"}
    assert all(run.success for run in sensor.run(retried))


def test_doctor_finds_the_queue_and_its_dead_letter_queue_or_says_what_to_do(
    platform, monkeypatch, capsys
):
    sensor = QueueSensor(platform, monkeypatch)
    [row] = rows_of(doctor(capsys)[1], "change-queue")
    assert row["status"] == "OK", row
    assert row["detail"].startswith("arn:aws:sqs:us-east-1:123456789012:dzlineage-changes: 0 ")
    assert (
        "dead-letter queue arn:aws:sqs:us-east-1:123456789012:dzlineage-changes-dlq"
        in (row["detail"])
    )

    platform.control.set_faults(FaultRule("sqs", "GetQueueAttributes", "access-denied"))
    [denied] = rows_of(doctor(capsys)[1], "change-queue")
    platform.control.clear_faults()
    assert denied["status"] == "FAIL"
    assert denied["fix"].startswith("allow sqs:GetQueueAttributes to the data side")
    assert denied["fix"].endswith("(as iam/change-queue-policy.json does)")

    monkeypatch.setenv("DZLINEAGE_CHANGE_QUEUE_URL", sensor.url.replace("changes", "nothing"))
    [missing] = rows_of(doctor(capsys)[1], "change-queue")
    assert missing["status"] == "FAIL"
    assert missing["fix"].startswith("create the queue with deploy/change-events.yaml")


def test_the_change_queue_policy_grants_what_the_sensor_and_doctor_call(
    platform, monkeypatch, capsys
):
    sensor = QueueSensor(platform, monkeypatch)
    platform.control.clear_calls()
    platform.register_new_version("shop.sales.orders", "coupon_code")
    sensor.tick()
    sensor.tick()
    doctor(capsys)
    # IAM authorizes DeleteMessageBatch as sqs:DeleteMessage (SQS's API reference).
    called = {
        f"sqs:{'DeleteMessage' if operation == 'DeleteMessageBatch' else operation}"
        for (service, operation) in platform.control.call_counts()
        if service == "sqs"
    }
    policy = json.loads((IAM_DIRECTORY / "change-queue-policy.json").read_text())
    [statement] = policy["Statement"]
    assert called == set(statement["Action"]) == CHANGE_QUEUE_ACTIONS


def test_the_headless_sync_from_the_queue_syncs_exactly_the_named_topics(
    platform, monkeypatch, capsys
):
    sensor = QueueSensor(platform, monkeypatch)
    platform.register_new_version("shop.sales.orders", "coupon_code")
    platform.control.clear_calls()
    capsys.readouterr()
    assert dzlineage(["sync", "--from-queue"]) == 0
    out = capsys.readouterr().out
    assert "shop.sales.orders  synced" in out
    assert "1 topics named by 1 messages, 0 failed" in out
    calls = platform.control.call_counts()
    assert ("glue", "ListSchemas") not in calls
    assert calls["sqs", "ReceiveMessage"] == 1 and calls["sqs", "DeleteMessageBatch"] == 1
    assert sensor.messages_left() == 0

    platform.control.clear_calls()
    assert dzlineage(["sync", "--from-queue"]) == 0
    assert "0 messages named no topic to sync" in capsys.readouterr().out
    assert platform.control.call_counts() == {("sqs", "ReceiveMessage"): 1}


def test_the_headless_sync_from_the_queue_lists_the_registry_for_a_table_change(
    platform, monkeypatch, capsys
):
    sensor = QueueSensor(platform, monkeypatch)
    glue = platform.client("glue")
    table = glue.get_table(DatabaseName="lakehouse", Name="sales_orders")["Table"]
    glue.update_table(
        DatabaseName="lakehouse",
        TableInput={k: table[k] for k in ("Name", "StorageDescriptor", "TableType", "Parameters")},
    )
    platform.control.clear_calls()
    assert dzlineage(["sync", "--from-queue"]) == 0
    assert platform.control.call_counts()["glue", "ListSchemas"] == 1
    assert f"{len(platform.registry_topics())} topics, 0 failed" in capsys.readouterr().out
    assert sensor.messages_left() == 0


def test_the_demo_seeded_with_its_change_queue_starts_with_an_empty_queue(sandbox):
    sandbox.control.reset()
    seeded = seed_platform(sandbox.endpoint_url, change_queue=True)
    sqs = sandbox.client("sqs")
    url = seeded["DZLINEAGE_CHANGE_QUEUE_URL"]
    # The seeding's own calls came before the rules: none of them is on the queue.
    assert "Messages" not in sqs.receive_message(QueueUrl=url)
    sandbox.client("glue").update_schema(
        SchemaId={
            "RegistryName": seeded["DZLINEAGE_REGISTRY_NAME"],
            "SchemaName": "shop.sales.orders",
        },
        Compatibility="FULL",
    )
    [message] = sqs.receive_message(QueueUrl=url)["Messages"]
    change = read_message(message["Body"], seeded["DZLINEAGE_REGISTRY_NAME"])
    assert (change.action, change.topic) == ("UpdateSchema", "shop.sales.orders")


def test_an_unreadable_message_reaches_the_dead_letter_queue_after_its_receives(
    platform, monkeypatch
):
    sensor = QueueSensor(platform, monkeypatch)
    sqs = platform.client("sqs")
    # Each tick sees the message again at once (the demo's queue hides it 300 s).
    sqs.set_queue_attributes(QueueUrl=sensor.url, Attributes={"VisibilityTimeout": "0"})
    sqs.send_message(QueueUrl=sensor.url, MessageBody='{"detail-type": "Scheduled Event"}')
    reported = [
        "0 ignored, 1 unreadable messages" in sensor.tick().skip_reason.skip_message
        for _ in range(MAX_RECEIVE_COUNT + 1)
    ]
    assert reported == [True] * MAX_RECEIVE_COUNT + [False]
    assert sensor.messages_left() == 0
    dead_letters = sqs.get_queue_url(QueueName=f"{QUEUE_NAME}-dlq")["QueueUrl"]
    [message] = sqs.receive_message(QueueUrl=dead_letters)["Messages"]
    assert message["Body"] == '{"detail-type": "Scheduled Event"}'
