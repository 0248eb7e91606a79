"""Nothing is lost: the spool while DataZone fails, restarts, and a full spool."""

from __future__ import annotations

import signal
from contextlib import closing

from openlineage.client.event_v2 import OutputDataset, RunState

from benchmarks.relay_process import relay_environment, running_relay
from dzlineage_dagster.core.lineage.relay_events import client_token, compact_json, parse_event
from dzlineage_dagster.relay.spool import Spool
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster_tests.relay.conftest import events_per_run
from dzlineage_dagster_tests.relay.events import run_event, to_json

DATAZONE_DOWN = FaultRule(service="datazone", operation="PostLineageEvent", kind="server-error")


def runs_of(count: int) -> list:
    """START and COMPLETE of ``count`` runs, in the order a producer sends them."""
    events = []
    for index in range(count):
        start = run_event(state=RunState.START, outputs=[OutputDataset("s3://lake", f"t{index}")])
        complete = run_event(
            state=RunState.COMPLETE,
            run_id=start.run.runId,
            outputs=[OutputDataset("s3://lake", f"t{index}")],
        )
        events += [start, complete]
    return events


def test_while_datazone_fails_the_relay_accepts_and_after_a_restart_delivers_each_once(
    module_platform, tmp_path
):
    platform = module_platform
    spool = tmp_path / "spool.db"
    environment = relay_environment(platform.environment)
    events = runs_of(15)
    delivered_before = run_event(outputs=[OutputDataset("s3://lake", "killed_mid_delivery")])
    try:
        with running_relay(environment, spool) as relay:
            transport = relay.transport(compression="gzip")
            assert transport.emit(delivered_before).json()["status"] == "forwarded"
            platform.control.set_faults(DATAZONE_DOWN)
            answers = [transport.emit(event) for event in events]
            # Producers hear 2xx, and DataZone has none of it.
            assert {a.status_code for a in answers} == {202}
            status = relay.status()
            assert (status["spooled"], status["spool_depth"]) == (30, 30)
            assert "InternalServerException" in status["last_error"]
            relay.stop()
    finally:
        platform.control.clear_faults()
    assert not {e.run.runId for e in events} & {run for run, _ in events_per_run(platform)}
    # A relay killed between DataZone's answer and the spool's delete leaves a delivered event
    # in the spool (first in line): the restart posts it again with its clientToken.
    received = parse_event(to_json(delivered_before))
    with closing(Spool(spool, max_events=100)) as left_over:
        assert left_over.add(client_token(received), compact_json(received.document))

    platform.control.clear_calls()
    with running_relay(environment, spool) as relay:
        status = relay.wait_until(lambda s: s["spool_depth"] == 0)
        assert status["forwarded"] == 31 and status["details"]["forwarded_from_spool"] == 31
        relay.stop()
    delivered = events_per_run(platform)
    for event in [delivered_before, *events]:
        assert delivered[(event.run.runId, event.eventType.value)] == 1
    assert platform.control.call_counts()[("datazone", "PostLineageEvent")] == 31


def test_backoff_is_capped_so_delivery_resumes_soon_after_an_outage(module_platform, tmp_path):
    platform = module_platform
    environment = relay_environment(platform.environment, DZLINEAGE_RELAY_MAX_BACKOFF_SECONDS="1")
    events = runs_of(3)
    platform.control.set_faults(DATAZONE_DOWN)
    try:
        with running_relay(environment, tmp_path / "spool.db") as relay:
            transport = relay.transport()
            assert {transport.emit(e).status_code for e in events} == {202}
            # After 8 failed attempts an uncapped backoff (0.05 s doubling) would wait 6.4 s.
            during = relay.wait_until(
                lambda s: s["details"].get("failed_delivery_attempts", 0) >= 8
            )
            platform.control.clear_faults()
            after = relay.wait_until(lambda s: s["spool_depth"] == 0)
            relay.stop()
    finally:
        platform.control.clear_faults()
    assert during["details"]["failed_delivery_attempts"] >= 8
    assert 0 < during["backoff_seconds"] <= 1.0
    assert after["spool_depth"] == 0 and after["forwarded"] == 6
    assert after["backoff_seconds"] == 0.0
    delivered = events_per_run(platform)
    assert all(delivered[(e.run.runId, e.eventType.value)] == 1 for e in events)


def test_a_full_spool_answers_503_so_producers_keep_their_own_retries(module_platform, tmp_path):
    platform = module_platform
    environment = relay_environment(platform.environment, DZLINEAGE_RELAY_SPOOL_MAX_EVENTS="3")
    platform.control.set_faults(DATAZONE_DOWN)
    try:
        with running_relay(environment, tmp_path / "spool.db") as relay:
            answers = [relay.post(to_json(e).encode(), api_key=None) for e in runs_of(2)]
            relay.stop()
    finally:
        platform.control.clear_faults()
    assert [status for status, _ in answers] == [202, 202, 202, 503]
    assert "maximum of 3" in answers[-1][1]["error"]


def test_an_event_datazone_refuses_for_good_is_422_or_leaves_the_spool_for_the_rejected_table(
    module_platform, tmp_path
):
    platform = module_platform
    spool = tmp_path / "spool.db"
    environment = relay_environment(platform.environment)
    refused = FaultRule(service="datazone", operation="PostLineageEvent", kind="invalid")
    first, second = runs_of(1)
    try:
        with running_relay(environment, spool) as relay:
            platform.control.set_faults(refused)
            status, answer = relay.post(to_json(first).encode(), api_key=None)
            assert status == 422 and "ValidationException" in answer["error"]
            platform.control.set_faults(DATAZONE_DOWN)
            assert relay.post(to_json(second).encode(), api_key=None)[0] == 202
            platform.control.set_faults(refused)  # the worker's next attempt is refused
            final = relay.wait_until(lambda s: s["spool_depth"] == 0)
            relay.stop()
    finally:
        platform.control.clear_faults()
    assert final["details"]["refused_by_datazone"] == 2
    with closing(Spool(spool, max_events=10)) as left:
        assert (len(left), left.rejected_count()) == (0, 1)


def test_a_relay_started_as_a_background_job_stops_on_sigint(module_platform, tmp_path):
    # A shell's `dzlineage relay &` (or nohup) starts it with SIGINT ignored; `kill -INT` must
    # still stop it cleanly, spool closed and counts printed, as Ctrl-C does at a terminal.
    environment = relay_environment(module_platform.environment)
    with running_relay(environment, tmp_path / "spool.db", sigint_ignored=True) as relay:
        stderr = relay.stop(signal.SIGINT)
    assert "dzlineage relay stopped" in stderr
