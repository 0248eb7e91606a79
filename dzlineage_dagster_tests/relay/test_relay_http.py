"""The relay process as producers meet it: openlineage-python's HTTP transport, keys, bad input."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest
import requests
from openlineage.client.event_v2 import InputDataset, OutputDataset
from openlineage.client.facet_v2 import RunFacet

from benchmarks.relay_process import (
    API_KEY,
    relay_environment,
    running_relay,
)
from dzlineage_dagster.core.lineage.relay_events import CANONICAL_NAME_FACET, TRIMMED_FACET
from dzlineage_dagster_tests.openlineage_spec import validate_openlineage_event
from dzlineage_dagster_tests.relay.conftest import (
    create_glue_table,
    datazone_calls,
    events_per_run,
    posted_event,
    refused_start,
)
from dzlineage_dagster_tests.relay.events import glue_symlinked_output, run_event, to_json

MAX_BODY = 1_000_000


@pytest.fixture(scope="module")
def relay(module_platform, tmp_path_factory):
    environment = relay_environment(
        module_platform.environment,
        DZLINEAGE_RELAY_API_KEY=API_KEY,
        DZLINEAGE_RELAY_MAX_BODY_BYTES=str(MAX_BODY),
    )
    with running_relay(environment, tmp_path_factory.mktemp("relay") / "spool.db") as process:
        yield process
        process.stop()


def brokers(platform) -> dict[str, str]:
    answer = platform.client("kafka").get_bootstrap_brokers(
        ClusterArn=platform.settings.msk_cluster_arn
    )
    return {k: v for k, v in answer.items() if k.startswith("BootstrapBroker")}


def node(platform, source_identifier: str) -> dict:
    return platform.client("datazone").get_lineage_node(
        domainIdentifier=platform.settings.domain_id, identifier=source_identifier
    )


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_openlineage_http_transport_posts_through_the_relay_into_datazones_graph(
    module_platform, relay, compression
):
    """A Spark job reads a topic through a TLS broker and writes a Glue-symlinked S3 table."""
    tls_broker = brokers(module_platform)["BootstrapBrokerStringTls"].split(",")[1]
    graph_broker = brokers(module_platform)["BootstrapBrokerStringSaslIam"].split(",")[0]
    table = f"spark_out_{compression}"
    create_glue_table(module_platform, "lakehouse", table, f"s3://lake/warehouse/{table}")
    event = run_event(
        inputs=[InputDataset(f"kafka://{tls_broker}", "shop.sales.orders")],
        outputs=[
            glue_symlinked_output(
                f"s3://lake/warehouse/{table}", "us-east-1", "123456789012", "lakehouse", table
            )
        ],
    )
    response = relay.transport(compression=compression).emit(event)
    answer = response.json()
    assert answer["status"] == "forwarded", answer
    assert len(answer["renamed"]) == 2

    table_node = node(
        module_platform, f"arn:aws:glue:us-east-1:123456789012:table/lakehouse/{table}"
    )
    (run_reference,) = table_node["upstreamNodes"]
    run_node = node(module_platform, run_reference["id"])
    assert run_node["sourceIdentifier"] == f"spark.nightly_revenue/{event.run.runId}"
    (topic_reference,) = run_node["upstreamNodes"]
    topic_node = node(module_platform, topic_reference["id"])
    assert topic_node["sourceIdentifier"] == f"kafka://{graph_broker}/shop.sales.orders"

    forwarded = posted_event(module_platform, answer["id"])
    validate_openlineage_event(json.dumps(forwarded))
    original = forwarded["inputs"][0]["facets"][CANONICAL_NAME_FACET]
    assert original["originalNamespace"] == f"kafka://{tls_broker}"


def test_a_producers_retry_reaches_datazone_once(module_platform, relay):
    event = run_event(outputs=[OutputDataset("s3://lake", "retried")])
    first, second = (relay.transport().emit(event).json() for _ in range(2))
    assert first["clientToken"] == second["clientToken"]
    assert first["id"] == second["id"]
    assert events_per_run(module_platform)[(event.run.runId, "COMPLETE")] == 1


def test_wrong_key_gets_401_garbage_400_and_neither_reaches_datazone(module_platform, relay):
    before = relay.status()
    module_platform.control.clear_calls()
    event = run_event(outputs=[OutputDataset("s3://lake", "never")])
    with pytest.raises(requests.HTTPError) as refused:
        relay.transport(api_key="not-the-key").emit(event)
    assert refused.value.response.status_code == 401
    assert relay.post(to_json(event).encode(), api_key=None)[0] == 401

    status, answer = relay.post(b"{this is not json")
    assert status == 400 and "not JSON" in answer["error"]
    broken = json.loads(to_json(event))
    broken["run"]["runId"] = "run-42"
    status, answer = relay.post(json.dumps(broken).encode())
    assert status == 400 and "run.runId" in answer["error"]
    status, answer = relay.post(b"\x1f\x8b not gzip", headers={"Content-Encoding": "gzip"})
    assert status == 400 and "gzip" in answer["error"]

    assert datazone_calls(module_platform) == 0
    after = relay.status()
    assert after["rejected"] - before["rejected"] == 5
    assert after["forwarded"] == before["forwarded"]


def test_dataset_and_job_events_are_accepted_dropped_and_counted(module_platform, relay):
    module_platform.control.clear_calls()
    base = {
        "eventTime": "2026-06-01T12:00:00Z",
        "producer": "https://github.com/apache/airflow",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
    }
    status, answer = relay.post(
        json.dumps({**base, "dataset": {"namespace": "s3://a", "name": "b"}}).encode()
    )
    assert status == 200 and answer["status"] == "dropped" and "RunEvents only" in answer["reason"]
    status, answer = relay.post(
        json.dumps({**base, "job": {"namespace": "airflow", "name": "dag"}}).encode()
    )
    assert status == 200 and answer["status"] == "dropped"
    assert datazone_calls(module_platform) == 0
    details = relay.status()["details"]
    assert details["dropped_dataset_events"] >= 1 and details["dropped_job_events"] >= 1


def test_an_event_over_datazones_limit_arrives_trimmed_and_a_body_over_the_limit_gets_413(
    module_platform, relay
):
    event = run_event(outputs=[OutputDataset("s3://lake", "huge_facets")])
    event.run.facets = {
        "sparkPlan": RunFacet().with_additional_properties(plan="p" * 400_000),
        "small": RunFacet().with_additional_properties(note="kept"),
    }
    answer = relay.transport(compression="gzip").emit(event).json()
    assert answer["trimmedFacets"] == ["run.facets.sparkPlan"]
    forwarded = posted_event(module_platform, answer["id"])
    assert "sparkPlan" not in forwarded["run"]["facets"]
    assert forwarded["run"]["facets"]["small"]["note"] == "kept"
    assert forwarded["run"]["facets"][TRIMMED_FACET]["removedFacets"][0]["bytes"] > 400_000
    validate_openlineage_event(json.dumps(forwarded))

    event.run.facets = {"sparkPlan": RunFacet().with_additional_properties(plan="p" * MAX_BODY)}
    assert relay.post(to_json(event).encode())[0] == 413
    # A small gzip body that decodes to more than the limit is refused the same way.
    bomb = gzip.compress(to_json(event).encode())
    assert len(bomb) < MAX_BODY
    assert relay.post(bomb, headers={"Content-Encoding": "gzip"})[0] == 413


def test_the_relay_refuses_a_non_loopback_address_without_a_key(module_platform, tmp_path):
    environment = relay_environment(module_platform.environment)
    stderr = refused_start(environment, tmp_path, "--host", "0.0.0.0")
    assert "DZLINEAGE_RELAY_API_KEY" in stderr


def test_without_the_relay_extra_the_command_says_which_extra_to_install(tmp_path):
    hide_werkzeug = (
        "import sys; sys.modules['werkzeug'] = None; "
        "from dzlineage_dagster.cli import main; sys.exit(main(['relay']))"
    )
    result = subprocess.run(
        [sys.executable, "-c", hide_werkzeug], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "dzlineage relay: needs the `relay` extra (werkzeug): pip install 'dzlineage-dagster[relay]'"
    ]


def test_a_cluster_whose_brokers_cannot_be_read_stops_the_start_naming_the_setting(
    module_platform, tmp_path
):
    unknown = module_platform.settings.msk_cluster_arn.rsplit("/", 1)[0] + "/no-such-cluster"
    environment = relay_environment(module_platform.environment, DZLINEAGE_MSK_CLUSTER_ARN=unknown)
    stderr = refused_start(environment, tmp_path)
    assert f"DZLINEAGE_MSK_CLUSTER_ARN={unknown}" in stderr
    assert "DZLINEAGE_RELAY_KAFKA_NAMESPACE=false" in stderr
