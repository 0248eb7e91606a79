"""A sync killed at any AWS call boundary, then rerun, ends exactly where an uninterrupted sync
ends: one asset per table topic, a valid mapping each, every lineage edge once, no lineage
event posted twice. Also two syncs started at the same moment leave no duplicate: two
`dzlineage sync`s, and a `catalog_sync` Dagster run with a `dzlineage sync` made to meet at
each decision (both hold there until the other arrived).

The kill is real: the sync runs in a forked child process, the sandbox holds the chosen call
(before the backend sees it, or after it processed it) and the test SIGKILLs the child while it
waits; the rerun is an ordinary `dzlineage sync` in this process.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from dagster import DagsterInstance

from dzlineage_dagster.assets.common import kafka_topics
from dzlineage_dagster.core.mapping.ssm_names import MappingRecord
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.headless import run_headless_sync
from dzlineage_dagster_tests.crash_platform import (
    catalog_state,
    headless_sync,
    seed_small,
    write_small_platform,
)
from dzlineage_dagster_tests.platform import READ_PREFIXES, DemoPlatform
from dzlineage_dagster_tests.stored_mapping import stored_mappings
from dzlineage_dagster_tests.test_catalog_operators import rows_of

WRITE_SERVICES = ("datazone", "ssm")


@pytest.fixture(scope="module")
def small_spec(tmp_path_factory) -> Path:
    return write_small_platform(tmp_path_factory.mktemp("crash"))


def _sync_in_child(environment: dict[str, str]) -> None:
    os.environ.update(environment)
    code, _ = headless_sync(environment)
    os._exit(code)


def _write_calls(records) -> list[tuple[str, str]]:
    return [
        (r.service, r.operation)
        for r in records
        if r.service in WRITE_SERVICES and not (r.operation or "").startswith(READ_PREFIXES)
    ]


def _kill_at(sandbox, environment: dict[str, str], rule: FaultRule) -> None:
    """Start a sync in a child process, SIGKILL it while the sandbox holds the ruled call."""
    sandbox.control.set_faults(rule)
    child = multiprocessing.get_context("fork").Process(
        target=_sync_in_child, args=(environment,), daemon=True
    )
    child.start()
    deadline = time.monotonic() + 60
    while not sandbox.control.held():
        assert child.is_alive(), f"the sync ended before {rule.operation} #{rule.skip + 1}"
        assert time.monotonic() < deadline, "the ruled call never came"
        time.sleep(0.01)
    os.kill(child.pid, signal.SIGKILL)
    child.join(timeout=30)
    sandbox.control.clear_faults()  # releases the held call: dropped (hold) or answered (after)


def seed_in_layout(sandbox, small_spec, monkeypatch, layout: str) -> dict[str, str]:
    """The small platform, synced with the mapping in ``layout`` (DZLINEAGE_SSM_MAPPING_LAYOUT)."""
    monkeypatch.setenv("DZLINEAGE_SSM_MAPPING_LAYOUT", layout)
    return {**seed_small(sandbox, small_spec, monkeypatch), "DZLINEAGE_SSM_MAPPING_LAYOUT": layout}


LAYOUTS = pytest.mark.parametrize("layout", ["per-topic", "packed"])


@pytest.mark.skipif(sys.platform == "win32", reason="needs fork")
@LAYOUTS
def test_a_sync_killed_at_every_write_boundary_then_rerun_converges(
    sandbox, small_spec, monkeypatch, layout
):
    environment = seed_in_layout(sandbox, small_spec, monkeypatch, layout)
    assert headless_sync(environment)[0] == 0
    expected = catalog_state(environment)
    writes = _write_calls(sandbox.control.calls())
    assert len(expected.assets) == 1 and set(expected.assets.values()) == {1}
    assert set(expected.listed_at_latest.values()) == {True}, "the asset is not published"
    assert len(writes) >= 7, writes

    # Killed before write k+1 leaves AWS as killed after write k (no write between them), so
    # the distinct boundaries are: before the first write, and after each write.
    first_service, first_operation = writes[0]
    cases = [(0, "hold", FaultRule(first_service, first_operation, "hold", count=1))]
    for index, (service, operation) in enumerate(writes):
        earlier = writes[:index].count((service, operation))
        rule = FaultRule(service, operation, "hold-after", count=1, skip=earlier)
        cases.append((index, "hold-after", rule))
    diverged = []
    for index, kind, rule in cases:
        environment = seed_in_layout(sandbox, small_spec, monkeypatch, layout)
        _kill_at(sandbox, environment, rule)
        code, output = headless_sync(environment)
        state = catalog_state(environment)
        if code != 0 or _comparable(state) != _comparable(expected):
            diverged.append((index, kind, rule.operation, code, output, state))
    assert not diverged, diverged


def _comparable(state) -> tuple:
    """The state without what each seed generates anew (asset ids, the brokers in the topic
    namespace, hence the run ids): schema ARNs and dataset names come from the seed file."""
    return (
        state.assets,
        {
            arn: (topic, exists, run is not None)
            for arn, (topic, exists, run) in state.mappings.items()
        },
        sorted(state.lineage_events.values()),
        sorted(
            ((source.rsplit("/", 1)[-1], target.rsplit("/", 1)[-1]), count)
            for (source, target), count in state.edges.items()
        ),
        state.listed_at_latest,
    )


@LAYOUTS
def test_two_syncs_started_at_the_same_moment_leave_no_duplicate(
    sandbox, small_spec, monkeypatch, layout
):
    environment = seed_in_layout(sandbox, small_spec, monkeypatch, layout)
    context = multiprocessing.get_context("fork")
    children = [
        context.Process(target=_sync_in_child, args=(environment,), daemon=True) for _ in range(2)
    ]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=120)
    # One of them may lose a race DataZone settles (a ConflictException on the schema ARN):
    # a rerun converges, and nothing is duplicated either way.
    code, output = headless_sync(environment)
    assert code == 0, output
    state = catalog_state(environment)
    assert len(state.assets) == 1 and set(state.assets.values()) == {1}, state.assets
    assert set(state.lineage_events.values()) == {1}, state.lineage_events
    assert set(state.edges.values()) == {1}, state.edges
    assert all(exists for _, exists, _ in state.mappings.values()), state.mappings


def _sync_in_child_to_file(environment: dict[str, str], output: str) -> None:
    os.environ.update(environment)
    code, printed = headless_sync(environment)
    Path(output).write_text(f"{code}\n{printed}")
    os._exit(code)


#: Where the two racing syncs are made to meet, in the order each sync reaches them: each
#: call's answer is held until the other sync made the same call, so both decided on the same
#: view of AWS. The authorization check of the types to create (each sync read every type at
#: once before it, saw none, and creates them all), creating the topic's asset, posting its
#: first lineage hop, writing its mapping.
RACE_POINTS = (
    ("datazone", "ListDomainUnitsForParent"),
    ("datazone", "CreateAsset"),
    ("datazone", "PostLineageEvent"),
    ("ssm", "PutParameter"),
)


def _release_in_pairs(sandbox, seen: list[tuple[str, ...]], deadline: float) -> None:
    """At each race point, wait until both syncs are held there, note it, release them."""
    for _ in RACE_POINTS:
        while time.monotonic() < deadline:
            held = sandbox.control.held()
            if len(held) == 2:
                seen.append(tuple(f"{h['service']}.{h['operation']}:{h['stage']}" for h in held))
                sandbox.control.release_held()
                break
            time.sleep(0.01)
    sandbox.control.clear_faults()  # a point not reached in time: let the syncs finish


@pytest.mark.skipif(sys.platform == "win32", reason="needs fork")
def test_a_dagster_run_and_a_cli_sync_racing_on_a_fresh_platform_leave_no_duplicate(
    sandbox, small_spec, monkeypatch, tmp_path
):
    environment = seed_small(sandbox, small_spec, monkeypatch)
    platform = DemoPlatform(sandbox, environment, DagsterInstance.ephemeral())
    platform.instance.add_dynamic_partitions(kafka_topics.name, platform.registry_topics())
    sandbox.control.set_faults(
        *(
            FaultRule(service, operation, "hold-after", count=2)
            for service, operation in RACE_POINTS
        )
    )
    met: list[tuple[str, ...]] = []
    releaser = threading.Thread(
        target=_release_in_pairs, args=(sandbox, met, time.monotonic() + 90), daemon=True
    )
    releaser.start()
    cli_output = tmp_path / "cli.txt"
    cli = multiprocessing.get_context("fork").Process(
        target=_sync_in_child_to_file, args=(environment, str(cli_output)), daemon=True
    )
    cli.start()
    run = platform.sync()
    cli.join(timeout=120)
    releaser.join(timeout=5)

    assert met == [(f"{s}.{o}:after",) * 2 for s, o in RACE_POINTS], met
    cli_code, cli_printed = cli_output.read_text().split("\n", 1)
    assert cli_code == "0", cli_printed
    assert run.success, [e.message for e in run.all_events if e.is_failure]
    # Both made "the" asset: the second CreateAsset carried the same client token (the same
    # content from the same registry), so DataZone answered it with the first one's asset.
    dagster_action = {
        m.partition: m.metadata["action"].value
        for m in run.asset_materializations_for_node("kafka_topic_catalog")
        if m.asset_key.path == ["datazone_topic_asset"] and "datazone_asset_id" in m.metadata
    }
    # Which of the two says "replayed" depends on AWS's clock: a call that left a second after
    # the other's made the asset was answered with it (DataZone's Date header); sent in the
    # same second, both say "created". Never neither.
    [cli_action] = re.findall(r"^shop\.inventory\.customers +(\S+)", cli_printed, re.M)
    actions = [dagster_action.get("shop.inventory.customers"), cli_action]
    assert set(actions) <= {"created", "replayed"} and "created" in actions, actions

    state = catalog_state(environment)
    assert len(state.assets) == 1 and set(state.assets.values()) == {1}, state.assets
    assert set(state.lineage_events.values()) == {1}, state.lineage_events
    assert set(state.edges.values()) == {1}, state.edges
    assert set(state.mappings) == set(state.assets), state.mappings
    assert all(exists and run_id for _, exists, run_id in state.mappings.values()), state.mappings

    # Settled: a third sync that reads every topic's mapping (a Dagster run: no registry
    # digest) and a reconcile that checks each against DataZone write nothing.
    sandbox.control.clear_calls()
    assert platform.sync().success
    assert _write_calls(sandbox.control.calls()) == []
    code, output = headless_sync(environment, reconcile=True)
    assert code == 0 and "reconcile: nothing to repair" in output, output
    # Its only write is the registry digest every complete headless sync records.
    assert _write_calls(sandbox.control.calls()) == [("ssm", "PutParameter")], output


def test_a_dagster_run_with_an_older_view_writing_after_the_cli_does_not_leave_it_idle(
    sandbox, small_spec, monkeypatch
):
    """The Dagster run reads schema version n and creates the asset; meanwhile version n+1 is
    registered and a `dzlineage sync` adopts the asset, revises it to n+1, maps it and records
    its registry digest; then the Dagster run maps the asset as of version n (SSM keeps the
    last write). The next headless sync must not trust its digest over that record."""
    environment = seed_small(sandbox, small_spec, monkeypatch)
    platform = DemoPlatform(sandbox, environment, DagsterInstance.ephemeral())
    platform.instance.add_dynamic_partitions(kafka_topics.name, platform.registry_topics())
    topic = "shop.inventory.customers"
    sandbox.control.set_faults(FaultRule("datazone", "CreateAsset", "hold-after", count=1))
    cli: dict[str, tuple[int, str]] = {}

    def newer_sync_while_the_run_is_held() -> None:
        deadline = time.monotonic() + 60
        while not sandbox.control.held() and time.monotonic() < deadline:
            time.sleep(0.01)
        platform.register_new_version(topic, "added_meanwhile")
        cli["first"] = headless_sync(environment)
        sandbox.control.clear_faults()  # the Dagster run goes on with its older view

    newer = threading.Thread(target=newer_sync_while_the_run_is_held, daemon=True)
    newer.start()
    run = platform.sync()
    newer.join(timeout=60)
    assert run.success and cli["first"][0] == 0, cli
    assert f"{topic}   adopted" in cli["first"][1], cli["first"][1]
    [older_version] = [
        m.metadata["schema_version"].value
        for m in run.asset_materializations_for_node("kafka_topic_catalog")
        if m.asset_key.path == ["datazone_topic_asset"] and m.partition == topic
    ]
    schema_arn = platform.schema_arn(topic)
    latest = platform.client("glue").get_schema(SchemaId={"SchemaArn": schema_arn})
    assert older_version == latest["LatestSchemaVersion"] - 1
    assert _mapping_record(environment, schema_arn).schema_version == older_version

    code, output = headless_sync(environment)
    assert code == 0, output
    assert "nothing to do" not in output, "the digest vouched for a mapping written after it"
    state = catalog_state(environment)
    assert len(state.assets) == 1 and set(state.assets.values()) == {1}, state.assets
    record = _mapping_record(environment, schema_arn)
    assert record.schema_version == latest["LatestSchemaVersion"], record
    asset = platform.client("datazone").get_asset(
        domainIdentifier=platform.settings.domain_id, identifier=record.asset_id
    )
    assert record.asset_revision == asset["revision"], (record, asset["revision"])
    sandbox.control.clear_calls()
    code, output = headless_sync(environment)
    assert code == 0 and "nothing to do" in output, output
    # Idle: nothing is written (the version sweep's slice is the clock's, not a stored position).
    assert _write_calls(sandbox.control.calls()) == []


def _mapping_record(environment: dict[str, str], schema_arn: str) -> MappingRecord:
    return stored_mappings(LineageSettings.from_env(environment))[schema_arn]


def test_two_syncs_racing_on_one_revision_report_it_once_and_publish_it_once(platform):
    """Both syncs read the asset's revision 1 and revise it with the same content, so the
    same client token: the second CreateAssetRevision, sent once the first one's revision
    existed, is answered with that revision. Only the sync whose call made it says
    `revised`; the other says `replayed`, and its publication (the same client token) is
    DataZone's one listing change, `already published`."""
    topic = "shop.sales.orders"
    first = io.StringIO()
    assert run_headless_sync(platform.settings, dry_run=False, out=first) == 0, first.getvalue()
    platform.register_new_version(topic, "coupon")
    # The held sync has read the asset's latest revision and waits to revise it.
    platform.control.set_faults(FaultRule("datazone", "GetAsset", "hold-after", count=1))
    held_out = io.StringIO()
    held = threading.Thread(
        target=run_headless_sync,
        args=(platform.settings,),
        kwargs={"dry_run": False, "out": held_out},
        daemon=True,
    )
    held.start()
    while not platform.control.held():
        time.sleep(0.01)
    other_out = io.StringIO()
    assert run_headless_sync(platform.settings, dry_run=False, out=other_out) == 0
    # AWS dates its answers in whole seconds: the held sync's request leaves more than a
    # second after the other's revision was made.
    time.sleep(1.5)
    platform.control.release_held()
    held.join()

    [made] = rows_of(other_out.getvalue(), topic)
    [replayed] = rows_of(held_out.getvalue(), topic)
    assert made[1:] == ["revised", made[2]] and made[2].startswith("published r2 "), made
    assert replayed[1] == "replayed", held_out.getvalue()
    assert replayed[2].startswith("already published r2 "), replayed
    listing = platform.client("datazone").get_asset(
        domainIdentifier=platform.settings.domain_id,
        identifier=stored_mappings(platform.settings)[platform.schema_arn(topic)].asset_id,
    )
    assert listing["revision"] == "2"
