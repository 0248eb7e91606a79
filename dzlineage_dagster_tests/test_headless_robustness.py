"""`dzlineage sync` under wrong settings, denied access, faults, garbage and signals: a clear
error (one, before any topic, when the whole run cannot work; one per topic otherwise, naming
it), the other topics complete, nothing half written, and a rerun converges."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dzlineage_dagster.core.mapping.ssm_names import is_digest_parameter
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster_tests.crash_platform import (
    catalog_state,
    headless_sync,
    seed_small,
    write_small_platform,
)
from dzlineage_dagster_tests.platform import READ_PREFIXES
from dzlineage_dagster_tests.waits import HANG_GUARD_SECONDS


@pytest.fixture(scope="module")
def small_spec(tmp_path_factory) -> Path:
    return write_small_platform(tmp_path_factory.mktemp("headless"))


@pytest.fixture
def small(sandbox, small_spec, monkeypatch) -> dict[str, str]:
    environment = seed_small(sandbox, small_spec, monkeypatch)
    yield environment
    sandbox.control.clear_faults()


def _calls(sandbox) -> list[tuple[str, str]]:
    return [(c.service, c.operation or "") for c in sandbox.control.calls()]


def _writes(sandbox) -> list[tuple[str, str]]:
    return [c for c in _calls(sandbox) if not c[1].startswith(READ_PREFIXES)]


def _sync_process(environment: dict[str, str], **settings: str) -> subprocess.Popen:
    """`dzlineage sync` in a child process, as an operator runs it."""
    return subprocess.Popen(
        [sys.executable, "-m", "dzlineage_dagster.cli", "sync"],
        env={**os.environ, **environment, **settings},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_until_held(sandbox, process: subprocess.Popen) -> None:
    """Until the sandbox holds one of the process's calls (a ``hold`` fault rule)."""
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    while not sandbox.control.held():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)


def _converged(environment) -> None:
    state = catalog_state(environment)
    assert state.assets and set(state.assets.values()) == {1}, state.assets
    assert set(state.lineage_events.values()) == {1}, state.lineage_events
    assert all(exists and run for _, exists, run in state.mappings.values()), state.mappings
    assert set(state.mappings) == set(state.assets)


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        (
            "DZLINEAGE_MSK_CLUSTER_ARN",
            "arn:aws:kafka:us-east-1:123456789012:cluster/gone/0000-1",
            "MSK cluster does not exist",
        ),
        ("DZLINEAGE_DOMAIN_ID", "dzd_nosuchdomain", "DataZone domain does not exist"),
        ("DZLINEAGE_PROJECT_ID", "nosuchproject", "DataZone project in domain"),
        ("DZLINEAGE_REGISTRY_NAME", "no-such-registry", "Glue Schema Registry does not exist"),
    ],
)
@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "sync"])
def test_a_missing_domain_project_registry_or_cluster_is_one_error_before_any_topic(
    sandbox, small, capsys, variable, value, says, dry_run
):
    from dzlineage_dagster.sync.headless import run_headless_sync

    environment = {**small, variable: value}
    code = run_headless_sync(LineageSettings.from_env(environment), dry_run=dry_run, out=sys.stdout)
    captured = capsys.readouterr()
    assert code == 1
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"dzlineage sync: could not start: {variable}={value!r}: "
    ), captured.err
    assert says in lines[0]
    assert captured.out == ""
    assert _writes(sandbox) == []
    assert ("glue", "GetSchema") not in _calls(sandbox), "a topic was tried"


def test_several_wrong_settings_are_named_in_one_error_a_line_each(sandbox, small, capsys):
    from dzlineage_dagster.sync.headless import run_headless_sync

    wrong = {
        "DZLINEAGE_DOMAIN_ID": "dzd_nosuchdomain",
        "DZLINEAGE_REGISTRY_NAME": "no-such-registry",
        "DZLINEAGE_MSK_CLUSTER_ARN": "arn:aws:kafka:us-east-1:123456789012:cluster/gone/0000-1",
    }
    environment = {**small, **wrong}
    code = run_headless_sync(LineageSettings.from_env(environment), dry_run=False, out=sys.stdout)
    captured = capsys.readouterr()
    assert code == 1
    lines = captured.err.strip().splitlines()
    # The project is not blamed: a domain that does not exist has no project to find.
    assert [
        line.split("=", 1)[0].removeprefix("dzlineage sync: could not start: ").strip()
        for line in lines
    ] == list(wrong), captured.err
    assert lines[0].startswith("dzlineage sync: could not start: DZLINEAGE_DOMAIN_ID=")
    assert all(line.startswith("  DZLINEAGE_") for line in lines[1:]), captured.err
    assert _writes(sandbox) == []
    assert ("glue", "GetSchema") not in _calls(sandbox), "a topic was tried"


def test_access_denied_on_the_domain_is_one_error_naming_it(sandbox, small, capsys):
    from dzlineage_dagster.sync.headless import run_headless_sync

    sandbox.control.set_faults(FaultRule("datazone", "GetDomain", "access-denied"))
    code = run_headless_sync(LineageSettings.from_env(small), dry_run=False, out=sys.stdout)
    err = capsys.readouterr().err
    assert code == 1
    assert "DZLINEAGE_DOMAIN_ID" in err and "access denied" in err and "AccessDenied" in err
    assert _writes(sandbox) == []


def test_access_denied_on_the_projects_assets_fails_each_topic_by_name_and_writes_no_mapping(
    sandbox, small
):
    sandbox.control.set_faults(FaultRule("datazone", "CreateAsset", "access-denied"))
    code, output = headless_sync(small)
    assert code == 1
    failed = [line for line in output.splitlines() if "FAILED" in line]
    assert failed and all("AccessDeniedException" in line for line in failed), output
    assert all(line.split()[0].startswith("shop.") for line in failed), output
    # The one parameter written is the list of failed topics, for the next sync to retry.
    assert not catalog_state(small).mappings, "a half-done topic was recorded"
    sandbox.control.clear_faults()
    assert headless_sync(small)[0] == 0
    _converged(small)


@pytest.mark.parametrize("kind", ["throttle", "server-error", "unavailable", "reset"])
def test_transient_faults_on_every_write_are_retried_reported_and_converge(sandbox, small, kind):
    writes = ["CreateFormType", "CreateAssetType", "CreateAsset", "PostLineageEvent"]
    sandbox.control.set_faults(
        *(FaultRule("datazone", operation, kind, count=2) for operation in writes),
        FaultRule("ssm", "PutParameter", kind, count=2),
    )
    code, output = headless_sync(small)
    assert code == 0, output
    summary = output.strip().splitlines()[-1]
    assert "retried (" in summary and "datazone.CreateAsset 2" in summary, summary
    assert "ssm.PutParameter 2" in summary, summary
    _converged(small)


def test_faults_beyond_the_retries_are_given_up_on_by_name_and_a_rerun_converges(sandbox, small):
    sandbox.control.set_faults(FaultRule("datazone", "PostLineageEvent", "unavailable"))
    code, output = headless_sync(small)
    assert code == 1
    assert "FAILED" in output and "PostLineageEvent failed: ServiceUnavailableException" in output
    assert "retried (" in output.strip().splitlines()[-1]
    sandbox.control.clear_faults()
    assert headless_sync(small)[0] == 0
    _converged(small)


def test_a_garbage_mapping_parameter_is_ignored_with_a_warning_and_repaired(sandbox, small, caplog):
    assert headless_sync(small)[0] == 0
    ssm = sandbox.client("ssm")
    settings = LineageSettings.from_env(small)
    [parameter] = [
        p
        for p in ssm.get_parameters_by_path(Path=settings.ssm_prefix, Recursive=True)["Parameters"]
        if not is_digest_parameter(settings.ssm_prefix, p["Name"])
    ]
    ssm.put_parameter(Name=parameter["Name"], Value="{hand edited", Overwrite=True, Type="String")
    # The accepted trade-off: an idle sync whose registry digest matches repairs no mapping
    # (its version sweep reads a slice of them, and warns about this one when it is in the
    # slice); the reconcile (which reads everything) warns and repairs.
    code, output = headless_sync(small)
    assert code == 0 and "nothing to do" in output, output
    caplog.clear()
    code, output = headless_sync(small, reconcile=True)
    assert code == 0, output
    # "mapping parameter" (one-per-topic layout) or "mapping bucket" (packed)
    assert f"ignoring unreadable mapping parameter {parameter['Name']}" in caplog.text or (
        f"ignoring unreadable mapping bucket {parameter['Name']}" in caplog.text
    )
    _converged(small)


def test_sigterm_mid_run_prints_what_was_done_and_exits_non_zero_without_a_traceback(
    sandbox, small
):
    # One topic at a time: the first topic's schema read is held; SIGTERM arrives while it
    # waits, before the second topic starts.
    sandbox.control.set_faults(FaultRule("glue", "GetSchema", "hold", count=1))
    process = _sync_process(small, DZLINEAGE_CONCURRENCY="1")
    try:
        _wait_until_held(sandbox, process)
        process.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        sandbox.control.clear_faults()  # the held read is dropped: botocore retries it
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 128 + signal.SIGTERM, (out, err)
    assert "Traceback" not in out + err
    assert "SIGTERM: stopping after the topic at hand" in err
    summary = out.strip().splitlines()[-1]
    assert "stopped by SIGTERM after 1 of 2 topics" in summary, out
    assert "a rerun syncs the rest" in summary
    assert headless_sync(small)[0] == 0
    _converged(small)


def test_a_dagster_run_with_a_wrong_cluster_fails_once_before_any_topic(platform, monkeypatch):
    monkeypatch.setenv(
        "DZLINEAGE_MSK_CLUSTER_ARN", "arn:aws:kafka:us-east-1:123456789012:cluster/gone/0000-1"
    )
    result = platform.sync()
    assert not result.success
    [failure] = result.get_step_failure_events()
    message = failure.step_failure_data.user_failure_data.description
    assert message.startswith("DZLINEAGE_MSK_CLUSTER_ARN='arn:aws:kafka:us-east-1:"), message
    assert "MSK cluster does not exist" in message
    assert platform.control.call_counts().get(("glue", "GetSchema"), 0) == 0, "a topic was tried"


PROTOBUF_DEFINITION = 'syntax = "proto3";\nmessage Order { int64 id = 1; string status = 2; }\n'


def test_bad_and_other_format_schemas_fail_or_catalog_by_topic_while_others_complete(
    sandbox, small, caplog
):
    caplog.set_level(logging.INFO)
    glue = sandbox.client("glue")
    registry = {"RegistryName": small["DZLINEAGE_REGISTRY_NAME"]}

    def register(name: str, data_format: str, definition: str) -> None:
        glue.create_schema(
            RegistryId=registry, SchemaName=name, DataFormat=data_format,
            Compatibility="NONE", SchemaDefinition=definition,
        )  # fmt: skip

    # The registry (like fastavro) lets a field name with a dash through; Avro forbids it.
    broken = {"type": "record", "name": "broken", "fields": [{"name": "bad-name", "type": "int"}]}
    register("shop.inventory.broken", "AVRO", json.dumps(broken))
    register("shop.sales.refunds", "JSON", json.dumps(JSON_REFUNDS))
    register("shop.sales.shipments", "PROTOBUF", PROTOBUF_DEFINITION)
    register("shop.sales.notes", "JSON", json.dumps({"type": "string"}))

    code, output = headless_sync(small)
    assert code == 1
    rows = {line.split()[0]: line for line in output.splitlines()[2:] if line.strip()}
    assert "FAILED" in rows["shop.inventory.broken"] and "not valid Avro" in output
    assert "FAILED" in rows["shop.sales.notes"] and "no `properties`" in rows["shop.sales.notes"]
    for topic in ("shop.inventory.customers", "shop.sales.refunds", "shop.sales.shipments"):
        assert "created" in rows[topic], rows[topic]
    assert "shop.sales.shipments: columns from message Order" in caplog.text

    state = catalog_state(small)
    mapped_topics = {topic for topic, _, _ in state.mappings.values()}
    assert mapped_topics == {
        "shop.inventory.customers",
        "shop.sales.refunds",
        "shop.sales.shipments",
    }
    assert set(state.assets.values()) == {1} and len(state.assets) == 3

    # The JSON topic's asset lists the JSON Schema's columns.
    settings = LineageSettings.from_env(small)
    datazone = sandbox.client("datazone")
    [item] = [
        i["assetItem"]
        for i in datazone.search(
            domainIdentifier=settings.domain_id, searchScope="ASSET", searchText="refunds",
            owningProjectIdentifier=settings.project_id,
        )["items"]
        if i["assetItem"]["name"].endswith("refunds")
    ]  # fmt: skip
    asset = datazone.get_asset(domainIdentifier=settings.domain_id, identifier=item["identifier"])
    table_form = next(
        f
        for f in asset["formsOutput"]
        if f["typeName"] == "amazon.datazone.RelationalTableFormType"
    )
    names = [c["columnName"] for c in json.loads(table_form["content"])["columns"]]
    assert names == ["id", "order_id", "amount"]


JSON_REFUNDS = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "order_id": {"type": "integer"},
        "amount": {"type": ["number", "null"], "description": "refunded amount"},
    },
    "required": ["id", "order_id"],
}


def test_a_registry_deleted_mid_run_fails_the_remaining_topics_by_name_without_a_traceback(
    sandbox, small
):
    import threading

    # One topic at a time, in name order: the second topic's schema read waits while the
    # registry is deleted under the run (with threads, either topic's read may come second).
    sandbox.control.set_faults(FaultRule("glue", "GetSchema", "hold", count=1, skip=1))
    one_at_a_time = {**small, "DZLINEAGE_CONCURRENCY": "1"}
    result: dict[str, object] = {}
    worker = threading.Thread(
        target=lambda: result.update(
            zip(("code", "out"), headless_sync(one_at_a_time), strict=True)
        )
    )
    worker.start()
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    while not sandbox.control.held():
        assert worker.is_alive() and time.monotonic() < deadline
        time.sleep(0.02)
    sandbox.client("glue").delete_registry(
        RegistryId={"RegistryName": small["DZLINEAGE_REGISTRY_NAME"]}
    )
    sandbox.control.clear_faults()  # the held read is dropped; its retry finds no schema
    worker.join(timeout=120)
    assert result["code"] == 1
    output = str(result["out"])
    failed = [line for line in output.splitlines() if "FAILED" in line]
    assert [line.split()[0] for line in failed] == ["shop.inventory.customers"], output
    assert "EntityNotFoundException" in failed[0]
    assert "Traceback" not in output
    assert catalog_state(small).mappings == {}, "a topic was half recorded"


def test_a_slow_registry_listing_does_not_hold_the_run_s_other_start_up_reads(sandbox, small):
    import threading

    # The registry's listing is held: the run's other start-up lookups (the cluster, the
    # project) are answered meanwhile, as they are made at once, not one after the other.
    sandbox.control.set_faults(FaultRule("glue", "ListSchemas", "hold", count=1))
    result: dict[str, object] = {}
    worker = threading.Thread(
        target=lambda: result.update(zip(("code", "out"), headless_sync(small), strict=True))
    )
    worker.start()
    try:
        deadline = time.monotonic() + HANG_GUARD_SECONDS
        while not sandbox.control.held():
            assert worker.is_alive() and time.monotonic() < deadline
            time.sleep(0.02)
        answered_meanwhile = {("kafka", "DescribeClusterV2"), ("datazone", "GetProject")}
        while not answered_meanwhile <= set(_calls(sandbox)):
            assert time.monotonic() < deadline, (
                f"held by the listing: {answered_meanwhile - set(_calls(sandbox))}"
            )
            time.sleep(0.02)
        assert sandbox.control.held(), "the listing was let go before the others were answered"
    finally:
        sandbox.control.release_held()
        worker.join(timeout=120)
    assert result["code"] == 0, result["out"]
    _converged(small)


def test_a_second_ctrl_c_stops_at_once_while_a_start_up_lookup_hangs(sandbox, small):
    # The start's lookups are made on other threads; "stop now" must not wait for one whose
    # answer never comes (the sandbox holds the registry listing until told otherwise).
    sandbox.control.set_faults(FaultRule("glue", "ListSchemas", "hold", count=1))
    process = _sync_process(small)
    try:
        _wait_until_held(sandbox, process)
        deadline = time.monotonic() + HANG_GUARD_SECONDS
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is not None, "still waiting for the held listing"
        assert sandbox.control.held(), "the listing was answered: the test proves nothing"
        out, err = process.communicate(timeout=10)
    finally:
        sandbox.control.clear_faults()
        if process.poll() is None:
            process.kill()
    assert process.returncode == 128 + signal.SIGINT, (out, err)
    assert "stopped before any topic was synced" in err
    assert "Traceback" not in out + err
