"""The relay says what it could not map: a dataset that is none of the platform's nodes is
logged once, counted per event in /status with examples, and, when asked, an event naming a
platform topic under a namespace that is not the cluster's is refused naming the fix."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError
from openlineage.client.event_v2 import OutputDataset

from benchmarks.relay_process import API_KEY, relay_environment, running_relay
from dzlineage_dagster.core.lineage.relay_events import PlatformDatasets, UnmappedDataset
from dzlineage_dagster.relay.platform.datasets import (
    MAX_EXAMPLES,
    MAX_IDENTITIES,
    PlatformCache,
    UnmappedReport,
)
from dzlineage_dagster_tests.relay.conftest import events_per_run, refused_start
from dzlineage_dagster_tests.relay.events import debezium_events, run_event, to_json

TOPIC = "shop.sales.orders"
UNKNOWN = f"kafka://unknown:unknown/{TOPIC}"
CONNECTOR = "shop-debezium-source"
SOURCE = (
    "postgres://shop-db.cluster-c8a1b2c3d4e5.us-east-1.rds.amazonaws.com:5432",
    "shop.sales.orders",
)
BOOTSTRAP_PROPERTY = "openlineage.integration.dataset.kafka.bootstrap.servers"


def iam_broker(platform) -> str:
    brokers = platform.client("kafka").get_bootstrap_brokers(
        ClusterArn=platform.settings.msk_cluster_arn
    )
    return brokers["BootstrapBrokerStringSaslIam"].split(",")[0]


#: The job namespace of a Debezium connector the platform does not run (a replica's, on a
#: Kafka Connect of its own): its ``kafka://unknown:unknown`` cannot be tied to the cluster.
#: (The platform's own connector's is renamed: relay/test_relay_kafka_identity.py.)
OTHER_DEBEZIUM = "shop-replica"


def debezium_topic_event(namespace: str = "kafka://unknown:unknown"):
    """Debezium's RUNNING event for the topic, its connector naming no bootstrap servers."""
    return debezium_events(
        topic_prefix=OTHER_DEBEZIUM, task_id="0", source=SOURCE, topic=(namespace, TOPIC)
    )[1]


def spark_s3_event():
    return run_event(outputs=[OutputDataset("s3://someone-elses-bucket", "/exports/daily")])


def entry(status: dict, identity: str) -> dict:
    (found,) = [d for d in status["unmapped"]["datasets"] if d["dataset"] == identity]
    return found


def test_an_unmapped_dataset_is_logged_once_counted_per_event_and_forwarded(
    module_platform, tmp_path
):
    environment = relay_environment(module_platform.environment, DZLINEAGE_RELAY_API_KEY=API_KEY)
    with running_relay(environment, tmp_path / "spool.db") as relay:
        transport = relay.transport()
        debezium = [debezium_topic_event(), debezium_topic_event()]
        answers = [transport.emit(event).json() for event in debezium]
        spark = transport.emit(spark_s3_event()).json()
        # The platform's own topic, as the sync names it: nothing to report.
        own = transport.emit(debezium_topic_event(f"kafka://{iam_broker(module_platform)}")).json()
        status = relay.status()
        stderr = relay.stop()
    assert [a["status"] for a in answers] == ["forwarded", "forwarded"]
    assert [a["unmapped"] for a in answers] == [[UNKNOWN], [UNKNOWN]]
    assert own["status"] == "forwarded" and "unmapped" not in own

    found = entry(status, UNKNOWN)
    assert found["count"] == 2
    assert f"names the platform's topic {TOPIC} under kafka://unknown:unknown" in found["reason"]
    assert found["fix"] == (
        f"set {BOOTSTRAP_PROPERTY}={iam_broker(module_platform)} on the Debezium connector of "
        f"job {OTHER_DEBEZIUM}.{OTHER_DEBEZIUM}.0"
    )
    assert [e["job"] for e in found["examples"]] == [f"{OTHER_DEBEZIUM}.{OTHER_DEBEZIUM}.0"] * 2
    assert {e["runId"] for e in found["examples"]} == {e.run.runId for e in debezium}
    assert stderr.count(f"unmapped dataset {UNKNOWN} ") == 1, stderr

    # A dataset of no concern to the platform is counted, with its reason, and never has a fix.
    assert spark["status"] == "forwarded"
    foreign = entry(status, "s3://someone-elses-bucket//exports/daily")
    assert foreign["count"] == 1 and "fix" not in foreign
    assert "none of the platform's datasets" in foreign["reason"]
    assert status["unmapped"]["events"] == 3
    assert status["unmapped"]["platform"]["error"] is None
    assert status["details"]["unmapped_datasets"] == 3


@pytest.fixture(scope="module")
def refusing_relay(module_platform, tmp_path_factory):
    environment = relay_environment(
        module_platform.environment,
        DZLINEAGE_RELAY_API_KEY=API_KEY,
        DZLINEAGE_RELAY_REFUSE_UNMAPPED_TOPICS="true",
    )
    with running_relay(environment, tmp_path_factory.mktemp("refusing") / "spool.db") as relay:
        yield relay
        relay.stop()


def test_refusal_on_answers_422_naming_the_debezium_property_and_forwards_nothing(
    module_platform, refusing_relay
):
    event = debezium_topic_event()
    code, answer = refusing_relay.post(to_json(event).encode())
    assert code == 422, answer
    assert f"{UNKNOWN} names the platform's topic" in answer["error"]
    assert (
        f"set {BOOTSTRAP_PROPERTY}={iam_broker(module_platform)} on the Debezium connector of "
        f"job {OTHER_DEBEZIUM}.{OTHER_DEBEZIUM}.0" in answer["error"]
    )
    assert events_per_run(module_platform)[(event.run.runId, "RUNNING")] == 0
    status = refusing_relay.status()
    assert entry(status, UNKNOWN)["count"] >= 1
    assert status["details"]["refused_unmapped_topic"] >= 1


def test_refusal_names_the_broker_aliases_setting_for_a_foreign_broker(
    module_platform, refusing_relay
):
    event = debezium_topic_event("kafka://kafka-cluster-prod:9092")
    code, answer = refusing_relay.post(to_json(event).encode())
    assert code == 422, answer
    assert (
        "if kafka-cluster-prod:9092 is a broker of the cluster, add it to "
        "DZLINEAGE_KAFKA_BROKER_ALIASES" in answer["error"]
    )


def test_refusal_never_refuses_a_dataset_foreign_to_the_platform(module_platform, refusing_relay):
    event = spark_s3_event()
    code, answer = refusing_relay.post(to_json(event).encode())
    assert code == 200 and answer["status"] == "forwarded", answer
    assert answer["unmapped"] == ["s3://someone-elses-bucket//exports/daily"]
    assert events_per_run(module_platform)[(event.run.runId, "COMPLETE")] == 1


def test_refusal_off_forwards_the_same_event(module_platform, tmp_path):
    """The default: the event DataZone would get a parallel node from is forwarded (200)."""
    environment = relay_environment(module_platform.environment, DZLINEAGE_RELAY_API_KEY=API_KEY)
    with running_relay(environment, tmp_path / "spool.db") as relay:
        event = debezium_topic_event()
        code, answer = relay.post(to_json(event).encode())
        relay.stop()
    assert code == 200 and answer["status"] == "forwarded", answer
    assert events_per_run(module_platform)[(event.run.runId, "RUNNING")] == 1


def test_refusal_without_the_syncs_settings_stops_the_start_naming_them(module_platform, tmp_path):
    environment = relay_environment(
        module_platform.environment,
        DZLINEAGE_RELAY_API_KEY=API_KEY,
        DZLINEAGE_RELAY_REFUSE_UNMAPPED_TOPICS="true",
    )
    del environment["DZLINEAGE_REGISTRY_NAME"]
    stderr = refused_start(environment, tmp_path)
    assert "DZLINEAGE_RELAY_REFUSE_UNMAPPED_TOPICS=true needs the sync's settings" in stderr
    assert "DZLINEAGE_REGISTRY_NAME" in stderr


def test_a_platform_read_that_fails_names_the_setting_to_fix(module_platform, tmp_path):
    """A registry name that names no registry: the refusal cannot start, and says which
    setting is wrong as the sync does, not only that ListSchemas failed."""
    environment = relay_environment(
        module_platform.environment,
        DZLINEAGE_RELAY_API_KEY=API_KEY,
        DZLINEAGE_RELAY_REFUSE_UNMAPPED_TOPICS="true",
        DZLINEAGE_REGISTRY_NAME="no-such-registry",
    )
    stderr = refused_start(environment, tmp_path)
    assert (
        "they cannot be read: DZLINEAGE_REGISTRY_NAME='no-such-registry': Glue Schema Registry "
        "does not exist"
    ) in stderr


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_platforms_datasets_are_read_once_per_ttl_and_a_failed_read_keeps_the_last():
    answers = [
        PlatformDatasets(frozenset({"a"})),
        ClientError({"Error": {"Code": "Throttling"}}, "X"),
    ]

    def read() -> PlatformDatasets:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    clock = FakeClock()
    cache = PlatformCache(read, ttl_seconds=300, clock=clock)
    first = cache.current()
    clock.now = 299
    assert cache.current() is first and cache.reads == 1
    clock.now = 300
    assert cache.current() is first, "a failed read keeps the last answer"
    assert cache.status()["error"].startswith("ClientError: An error occurred (Throttling)")
    assert cache.status() | {"error": None} == {
        "datasets": 1,
        "reads": 2,
        "ttl_seconds": 300,
        "error": None,
    }


def test_the_report_keeps_a_bounded_number_of_identities_and_examples():
    report = UnmappedReport()
    for index in range(MAX_IDENTITIES + 5):
        for run in range(MAX_EXAMPLES + 2):
            report.note(UnmappedDataset(f"s3://b/{index}", "foreign"), {"runId": str(run)})
    status = report.status()
    assert status["identities"] == MAX_IDENTITIES
    assert status["events"] == (MAX_IDENTITIES + 5) * (MAX_EXAMPLES + 2)
    assert status["unlisted_events"] == 5 * (MAX_EXAMPLES + 2)
    assert {len(d["examples"]) for d in status["datasets"]} == {MAX_EXAMPLES}
    assert {d["count"] for d in status["datasets"]} == {MAX_EXAMPLES + 2}
