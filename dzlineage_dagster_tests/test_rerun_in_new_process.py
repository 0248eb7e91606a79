"""The next run is a new process: what makes a rerun idempotent must not depend on the process.

Python's ``hash()`` of a string changes with PYTHONHASHSEED, which is random per process, so a
token built with it would pass every test that reruns inside one process and still post
duplicate lineage in production. Hence pinned literals, and reruns as separate processes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import pytest

from dzlineage_dagster.core.lineage.openlineage import deterministic_run_id, lineage_client_token
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster_tests.platform import fresh_platform

SYNC_COMMAND = [sys.executable, "-m", "dzlineage_dagster.cli", "sync"]
RUN_ID = "0190b1a2-0000-7000-8000-000000000001"


def test_lineage_client_token_is_the_pinned_sha256_of_run_and_event_type():
    # sha256("0190b1a2-0000-7000-8000-000000000001\nSTART"), computed once and written down.
    assert lineage_client_token(RUN_ID, "START") == (
        "9a1628c092f4dc15c82d1b697b8059a38dc1645a6ad3ff223ab2fbd2ab7298cb"
    )
    assert lineage_client_token(RUN_ID, "COMPLETE") == (
        "dbf08fef48f5b0ee86ce20e2bb8de648fcf3fbe9cd29fabdea5bd24ae0fe70f0"
    )


def test_deterministic_run_id_is_a_pinned_uuid5():
    assert deterministic_run_id("ns", "iceberg-sink.shop.public.orders", "1") == (
        "a02d377b-cab6-5d4d-a5b2-ef407f50c999"
    )


@pytest.mark.parametrize(
    "expression",
    [
        f"lineage_client_token({RUN_ID!r}, 'START')",
        "deterministic_run_id('ns', 'job', 'arn:aws:glue:us-east-1:1:schema/r/t', '3')",
    ],
)
def test_two_processes_with_different_hash_seeds_agree(expression):
    program = (
        "from dzlineage_dagster.core.lineage.openlineage import deterministic_run_id, "
        f"lineage_client_token; print({expression})"
    )
    answers = {
        subprocess.run(
            [sys.executable, "-c", program],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert len(answers) == 1, answers


@pytest.fixture
def platform(sandbox, monkeypatch):
    platform = fresh_platform(sandbox, monkeypatch)
    yield platform
    sandbox.control.clear_faults()


def lineage_events_by_run_and_type(platform) -> Counter[tuple[str, str]]:
    """(runId, eventType) -> how many events DataZone holds for it."""
    datazone = platform.client("datazone")
    pages = datazone.get_paginator("list_lineage_events").paginate(
        domainIdentifier=platform.settings.domain_id
    )
    return Counter(
        (summary["runId"], summary["eventType"])
        for page in pages
        for item in page["items"]
        for summary in [item["eventSummary"]["openLineageRunEventSummary"]]
    )


def dzlineage_sync(platform, hash_seed: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        SYNC_COMMAND,
        env={
            **os.environ,
            **platform.environment,
            "PYTHONHASHSEED": hash_seed,
            "DZLINEAGE_MAX_ATTEMPTS": "1",
        },
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_rerun_in_a_new_process_replays_the_lineage_the_crashed_run_posted(platform):
    # The first process posts the first hop's COMPLETE (one event per hop), then every later
    # lineage post fails: it dies holding a posted event and no record of it in SSM.
    platform.control.set_faults(
        FaultRule(service="datazone", operation="PostLineageEvent", kind="server-error", skip=1)
    )
    crashed = dzlineage_sync(platform, hash_seed="1")
    assert crashed.returncode == 1, crashed.stdout + crashed.stderr
    after_crash = lineage_events_by_run_and_type(platform)
    assert list(after_crash.values()) == [1]
    [(crashed_run_id, crashed_type)] = after_crash
    assert crashed_type == "COMPLETE"

    platform.control.clear_faults()
    platform.control.clear_calls()
    rerun = dzlineage_sync(platform, hash_seed="2")
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr

    events = lineage_events_by_run_and_type(platform)
    run_ids = {run_id for run_id, _ in events}
    # Every hop once: one COMPLETE per run, the crashed run's event not repeated.
    assert events == Counter({(run_id, "COMPLETE"): 1 for run_id in run_ids})
    assert crashed_run_id in run_ids
    posts = [c for c in platform.control.calls() if c.operation == "PostLineageEvent"]
    # The rerun posted every hop's event (the one it repeated was answered by replay).
    assert len(posts) == len(run_ids)
    assert len(run_ids) > 1

    platform.control.clear_calls()
    idle = dzlineage_sync(platform, hash_seed="3")
    assert idle.returncode == 0, idle.stdout + idle.stderr
    assert lineage_events_by_run_and_type(platform) == events
    assert not [c for c in platform.control.calls() if c.operation == "PostLineageEvent"]
