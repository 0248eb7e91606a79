"""Who may post what through the relay: the product's own job namespaces are refused to every
key, each producer's key writes only its namespaces, keys rotate without a restart (a key file,
a Secrets Manager secret), another account's Glue tables are refused, ``/status`` needs a key.

The relay is built in process from its settings (as ``dzlineage relay`` and the Lambda build
it) with the sandbox's real clients; requests go through :meth:`Relay.route`, the one entry
both front ends use."""

from __future__ import annotations

import json
import os

import pytest
from openlineage.client.event_v2 import InputDataset, OutputDataset

from benchmarks.relay_process import API_KEY
from dzlineage_dagster.core.lineage.downstream import asset_job
from dzlineage_dagster.core.lineage.openlineage import hop_job
from dzlineage_dagster.relay.build import build_relay
from dzlineage_dagster.relay.service import LINEAGE_PATH, Relay
from dzlineage_dagster.relay.settings import RelaySettings, RelaySettingsError
from dzlineage_dagster_tests.relay.conftest import events_per_run
from dzlineage_dagster_tests.relay.events import glue_symlinked_output, run_event, to_json

SPARK_KEY = "spark-team-key-0123456789abcdef"
AIRFLOW_KEY = "airflow-key-0123456789abcdef"
#: The product's sink job of the demo's orders topic, as the sync names it.
SINK_JOB = hop_job("shop-iceberg-sink", "shop.sales.orders")


@pytest.fixture
def platform_env(module_platform, monkeypatch):
    for name, value in module_platform.environment.items():
        monkeypatch.setenv(name, value)
    return module_platform


def relay_with(**settings: str) -> Relay:
    environ = {**os.environ, **{f"DZLINEAGE_{k.upper()}": v for k, v in settings.items()}}
    return build_relay(RelaySettings.from_env(environ), with_spool=False, environ=environ)


def post(relay: Relay, body: bytes, key: str | None = API_KEY) -> tuple[int, dict]:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    answer = relay.route("POST", LINEAGE_PATH, lambda name: headers.get(name.lower()), body)
    return answer.status, answer.body


def get(relay: Relay, path: str, key: str | None = API_KEY) -> tuple[int, dict]:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    answer = relay.route("GET", path, lambda name: headers.get(name.lower()), b"")
    return answer.status, answer.body


def keys_document(**producers: tuple[str, list[str]]) -> str:
    return json.dumps(
        {
            name: {"key": key, "namespaces": namespaces}
            for name, (key, namespaces) in producers.items()
        }
    )


def test_a_run_under_the_products_own_jobs_is_refused_with_403_naming_the_namespace(
    platform_env,
):
    """The forgery of issue 37: a COMPLETE under the product's sink job claiming the topic
    feeds another table. Refused to the all-namespaces key, and the graph is untouched."""
    relay = relay_with(relay_api_key=API_KEY)
    settings = platform_env.settings
    forged = run_event(
        job=SINK_JOB,
        inputs=[InputDataset("kafka://anything:9098", "shop.sales.orders")],
        outputs=[OutputDataset(f"arn:aws:glue:us-east-1:{'1' * 12}:table", "lakehouse/revenue")],
    )
    stand_in_job = hop_job("iceberg-sink", "shop.sales.orders", settings.job_namespace)
    dagster_job = asset_job("team_location", ["team", "revenue"])
    for job in (SINK_JOB, stand_in_job, dagster_job):
        event = run_event(job=job)
        status, answer = post(relay, to_json(event).encode())
        assert status == 403, answer
        assert repr(job[0]) in answer["error"] and "reserved" in answer["error"]
        assert events_per_run(platform_env)[(str(event.run.runId), "COMPLETE")] == 0
    status, answer = post(relay, to_json(forged).encode())
    assert status == 403 and "'kafka-connect' is reserved" in answer["error"]
    status, body = get(relay, "/status")
    assert status == 200
    assert body["details"]["refused_reserved_namespace"] == 4
    assert body["details"]["rejected_403"] == 4


def test_each_producers_key_writes_only_its_namespaces_and_a_key_file_change_needs_no_restart(
    platform_env, tmp_path
):
    keys_file = tmp_path / "relay-keys.json"
    keys_file.write_text(keys_document(spark=(SPARK_KEY, ["spark", "spark-*"])))
    relay = relay_with(relay_api_key=API_KEY, relay_keys_file=str(keys_file))

    assert post(relay, to_json(run_event(job=("spark", "a"))).encode(), SPARK_KEY)[0] == 200
    assert post(relay, to_json(run_event(job=("spark-emr", "b"))).encode(), SPARK_KEY)[0] == 200
    status, answer = post(relay, to_json(run_event(job=("airflow", "c"))).encode(), SPARK_KEY)
    assert status == 403
    assert (
        "producer 'spark' may write job namespaces spark, spark-*, not 'airflow'"
        in (answer["error"])
    )
    # The single key of DZLINEAGE_RELAY_API_KEY still writes any namespace not reserved.
    assert post(relay, to_json(run_event(job=("airflow", "c"))).encode(), API_KEY)[0] == 200
    assert post(relay, to_json(run_event(job=("airflow", "d"))).encode(), AIRFLOW_KEY)[0] == 401

    # Rotation: spark's key replaced, airflow added, in place; the running relay takes it.
    rotated = SPARK_KEY.replace("0123", "9876")
    keys_file.write_text(
        keys_document(spark=(rotated, ["spark"]), airflow=(AIRFLOW_KEY, ["airflow"]))
    )
    os.utime(keys_file, ns=(1, 1))  # a change however fast the write followed the last one
    assert post(relay, to_json(run_event(job=("spark", "a"))).encode(), SPARK_KEY)[0] == 401
    assert post(relay, to_json(run_event(job=("spark", "a"))).encode(), rotated)[0] == 200
    assert post(relay, to_json(run_event(job=("airflow", "d"))).encode(), AIRFLOW_KEY)[0] == 200

    # A broken edit keeps the last good keys and says so in /status.
    keys_file.write_text("{not json")
    assert post(relay, to_json(run_event(job=("airflow", "e"))).encode(), AIRFLOW_KEY)[0] == 200
    status, body = get(relay, "/status", AIRFLOW_KEY)
    assert status == 200 and "DZLINEAGE_RELAY_KEYS_FILE" in body["last_error"]
    assert body["producers"] == ["DZLINEAGE_RELAY_API_KEY", "airflow", "spark"]
    assert SPARK_KEY not in json.dumps(body) and AIRFLOW_KEY not in json.dumps(body)


def test_keys_from_a_secrets_manager_secret_are_read_again_after_their_ttl(platform_env):
    secrets = platform_env.client("secretsmanager")
    secret = secrets.create_secret(
        Name="dzlineage/relay-keys-test",
        SecretString=keys_document(spark=(SPARK_KEY, ["spark"])),
    )["ARN"]
    relay = relay_with(relay_keys_secret=secret, relay_keys_ttl_seconds="0.01")
    assert post(relay, to_json(run_event(job=("spark", "a"))).encode(), SPARK_KEY)[0] == 200
    assert post(relay, to_json(run_event(job=("airflow", "a"))).encode(), SPARK_KEY)[0] == 403

    secrets.put_secret_value(
        SecretId=secret, SecretString=keys_document(airflow=(AIRFLOW_KEY, ["airflow"]))
    )
    relay.keys.clock = lambda: float("inf")  # the TTL has passed
    assert post(relay, to_json(run_event(job=("spark", "a"))).encode(), SPARK_KEY)[0] == 401
    assert post(relay, to_json(run_event(job=("airflow", "a"))).encode(), AIRFLOW_KEY)[0] == 200


def test_a_key_document_that_cannot_be_used_stops_the_start_naming_it(platform_env, tmp_path):
    keys_file = tmp_path / "keys.json"
    keys_file.write_text(json.dumps({"spark": {"key": "short", "namespaces": ["spark"]}}))
    with pytest.raises(RelaySettingsError, match="producer 'spark' needs a \"key\" of at least"):
        relay_with(relay_keys_file=str(keys_file))
    keys_file.write_text(
        keys_document(a=(SPARK_KEY, ["a"]), b=(AIRFLOW_KEY, ["b"])).replace(AIRFLOW_KEY, SPARK_KEY)
    )
    with pytest.raises(RelaySettingsError, match="producers 'a' and 'b' have the same key"):
        relay_with(relay_keys_file=str(keys_file))
    with pytest.raises(RelaySettingsError, match=r"DZLINEAGE_RELAY_KEYS_FILE=.*cannot be read"):
        relay_with(relay_keys_file=str(tmp_path / "missing.json"))


def test_a_glue_table_of_an_account_outside_the_platforms_is_refused(platform_env):
    """By default the platform's accounts (the cluster's, the Glue catalog's) may be named."""
    relay = relay_with(relay_api_key=API_KEY)
    own = platform_env.settings.msk_cluster_arn.split(":")[4]
    other = "999999999999"
    for account, expected in ((own, 200), (other, 403)):
        outputs = [glue_symlinked_output("s3://lake/t", "us-east-1", account, "lakehouse", "t")]
        event = run_event(outputs=outputs)
        status, answer = post(relay, to_json(event).encode())
        assert status == expected, answer
    assert f"account '{other}'" in answer["error"]
    assert "outputs[0].facets.symlinks.identifiers[0]" in answer["error"]
    project_named = run_event(
        inputs=[InputDataset(f"arn:aws:glue:us-east-1:{other}:table", "db/t")]
    )
    status, answer = post(relay, to_json(project_named).encode())
    assert status == 403 and "inputs[0]" in answer["error"]
    assert get(relay, "/status")[1]["details"]["refused_glue_account"] == 2

    # Listed accounts replace the default; empty turns the check off.
    listed = relay_with(relay_api_key=API_KEY, relay_glue_accounts=f"{other}, {own}")
    assert post(listed, to_json(project_named).encode())[0] == 200
    unchecked = relay_with(relay_api_key=API_KEY, relay_glue_accounts="")
    assert post(unchecked, to_json(run_event(inputs=project_named.inputs)).encode())[0] == 200
    with pytest.raises(RelaySettingsError, match="DZLINEAGE_RELAY_GLUE_ACCOUNTS"):
        relay_with(relay_glue_accounts="12345")


def test_status_needs_a_key_and_healthz_says_nothing_else(platform_env):
    relay = relay_with(relay_api_key=API_KEY)
    assert get(relay, "/status", key=None)[0] == 401
    assert get(relay, "/status", key="wrong-key-0123456789")[0] == 401
    assert get(relay, "/healthz", key=None) == (200, {"status": "ok"})
