"""The benchmarks at a few topics: their structure and the invariants the numbers must show.

No timing is asserted: only what the exact call log and DataZone's contents say.
"""

from __future__ import annotations

import json

import pytest

from benchmarks import bench_sync, change_events
from benchmarks.published_quotas import published_quota_figures, sandbox_quota_spec
from benchmarks.quota_bound import quota_floor
from benchmarks.report import fault_table, size_table, verdicts
from benchmarks.scenarios import (
    FIRST_SYNC,
    IDLE_RERUN,
    NEW_VERSION,
    SCENARIOS,
    FaultPlan,
    bench_faults,
    bench_system,
    probe_literal_delimiter,
)
from benchmarks.synthetic_platform import platform_document, synthetic_topics, write_platform_file
from benchmarks.systems import SYSTEM_NAMES
from dzlineage_dagster.core.aws.quotas import AWS_QUOTAS
from dzlineage_dagster.sandbox.server.faults import CallRecord
from dzlineage_dagster.sandbox.server.pacing import Quotas

TOPICS = 5


@pytest.fixture(scope="module")
def cells(sandbox):
    """Every system through the three scenarios once, on its own fresh platform."""
    found = {}
    for system in SYSTEM_NAMES:
        for cell in bench_system(sandbox, system, TOPICS).cells:
            found[(system, cell.scenario)] = cell
    return found


def test_every_system_runs_every_scenario_and_keeps_one_current_asset_per_schema(cells):
    assert sorted(cells) == sorted((s, scenario) for s in SYSTEM_NAMES for scenario in SCENARIOS)
    for (system, scenario), cell in cells.items():
        assert cell.measurement.outcome.ok, (system, scenario, cell.measurement.outcome)
        assert cell.catalog.schemas == TOPICS
        assert cell.catalog.ok, (system, scenario, cell.catalog)
        assert cell.measurement.calls.total == sum(cell.measurement.calls.by_service.values())
        json.dumps(cell.to_json())


def test_the_sensors_idle_tick_lists_schemas_and_sweeps_a_slice_of_versions(cells):
    calls = cells[("sensor+job", IDLE_RERUN)].measurement.calls
    # The version sweep: the slice's GetSchema and its mapping records (sync/catalog/version_sweep.py).
    assert set(calls.by_operation) == {"glue.ListSchemas", "glue.GetSchema", "ssm.GetParameters"}
    assert calls.writes == 0


@pytest.mark.parametrize("system", ["sensor+job", "sync"])
def test_an_idle_rerun_writes_nothing(cells, system):
    # The sensor keeps its version sweep's position in its cursor; `dzlineage sync` keeps none
    # (its slice is the run's minute's).
    assert cells[(system, IDLE_RERUN)].measurement.calls.writes == 0


def test_the_baseline_reads_every_schema_and_posts_every_edge_again_when_idle(cells):
    operations = cells[("baseline", IDLE_RERUN)].measurement.calls.by_operation
    assert operations["glue.GetSchema"] == TOPICS
    assert operations["glue.GetSchemaVersion"] == TOPICS
    assert operations["datazone.PostLineageEvent"] == TOPICS
    assert "datazone.CreateAsset" not in operations
    # Random client tokens: every run adds one more event per edge.
    assert cells[("baseline", IDLE_RERUN)].catalog.max_events_per_edge == 2


@pytest.mark.parametrize("system", SYSTEM_NAMES)
def test_a_new_schema_version_revises_exactly_one_asset(cells, system):
    operations = cells[(system, NEW_VERSION)].measurement.calls.by_operation
    assert operations.get("datazone.CreateAssetRevision") == 1
    assert "datazone.CreateAsset" not in operations


def test_the_first_sync_creates_one_asset_per_schema_in_every_system(cells):
    for system in SYSTEM_NAMES:
        operations = cells[(system, FIRST_SYNC)].measurement.calls.by_operation
        assert operations["datazone.CreateAsset"] == TOPICS, system


def test_the_report_puts_the_systems_side_by_side(cells):
    table = size_table(list(cells.values()))
    assert all(system in table.splitlines()[1] for system in SYSTEM_NAMES)
    assert all(scenario in table for scenario in SCENARIOS)
    lines = verdicts(list(cells.values()))
    assert [line.split(":")[0] for line in lines] == list(SCENARIOS)


def test_the_references_own_delimiter_is_refused_at_put_parameter_and_duplicates(sandbox):
    probe = probe_literal_delimiter(sandbox)
    assert ":" in probe.parameter_name
    for run in probe.runs:
        assert not run.outcome.ok
        assert "PutParameter" in run.outcome.detail
        assert "ValidationException" in run.outcome.detail
    # Each run created the first schema's asset before its mapping failed.
    assert probe.catalog.duplicated_schemas == 1
    assert probe.catalog.lineage_events == 0


def test_the_fault_scenario_counts_injected_throttles(sandbox):
    result = bench_faults(sandbox, "baseline", TOPICS, FaultPlan(0.3))
    first = result.runs[0].measurement
    assert first.calls.injected > 0
    assert result.to_json()["plan"]["rate"] == 0.3
    assert result.system in fault_table([result])


def test_reruns_after_failed_lineage_posts_never_duplicate_dzlineage_events(sandbox):
    # Seed 3: the reruns converge within the three runs (seeds 0 and 6 leave an edge missing).
    plan = FaultPlan(0.3, operation="PostLineageEvent", attempts_per_call=1, seed=3)
    result = bench_faults(sandbox, "sync", TOPICS, plan)
    assert result.runs[0].measurement.calls.injected > 0
    for fault_run in result.runs:
        assert fault_run.catalog.schemas_with_one_asset == TOPICS
        # Never a second event for an edge (one COMPLETE per hop), whichever run it is.
        assert fault_run.catalog.max_events_per_edge <= 1
    # The reruns finish the job: every edge, with exactly its one COMPLETE.
    final = result.runs[-1]
    assert final.converged, final.catalog
    assert final.catalog.edges_present == final.catalog.edges_expected == TOPICS
    assert final.catalog.min_events_per_edge == final.catalog.max_events_per_edge == 1


def test_the_platform_file_is_one_the_seeder_accepts(tmp_path):
    spec = write_platform_file(platform_document(7), tmp_path / "platform.yaml")
    topics = synthetic_topics(7)
    assert [spec.topic(t) for t in spec.source_tables] == [t.topic for t in topics]
    glue_tables = {t.from_topic: t.name for t in spec.glue_tables}
    assert all(glue_tables[t.topic] == t.glue_table for t in topics)


def test_the_command_saves_raw_numbers(tmp_path, capsys):
    saved = tmp_path / "raw.json"
    arguments = ["--topics", "2", "--systems", "baseline", "sync", "--no-faults"]
    quota = ["--quota-topics", "2", "--quota-systems", "sync"]
    assert bench_sync.main([*arguments, *quota, "--json", str(saved)]) == 0
    raw = json.loads(saved.read_text())
    assert len(raw["cells"]) == 2 * len(SCENARIOS)
    assert {cell["system"] for cell in raw["cells"]} == {"baseline", "sync"}
    out = capsys.readouterr().out
    assert "N = 2 topics" in out
    assert "calls / reference design's, first sync: sync" in out
    [paced] = raw["quota_bound"]
    first = paced["first_sync"]
    # By default the sandbox enforces AWS's figures as typed in benchmarks/aws_quotas.json, and
    # the floor is reckoned at them. The busiest bucket of two topics' first sync: at this N
    # the connectors' reads (a constant per run, at an assumed 10 TPS) can outweigh the
    # DataZone writes.
    assert paced["sandbox_quotas"] == "published"
    rates = {op: figure.tps for figure in published_quota_figures() for op in figure.operations}
    assert first["floor_bucket"].split(".")[0] in ("datazone", "kafkaconnect")
    # The headless sync reads its lineage back while it posts: 3 GetLineageNode a topic, a
    # bucket that competes for the floor (the busiest one) instead of adding to it.
    assert first["readback_calls"] == 3 * 2
    assert first["readback_floor_seconds"] == 3 * 2 / rates["datazone.GetLineageNode"]
    assert first["floor_seconds"] == pytest.approx(
        first["floor_calls"] / rates[first["floor_bucket"]], abs=0.01
    )
    assert first["floor_seconds"] >= first["readback_floor_seconds"]
    assert paced["catalog"]["schemas_with_one_asset"] == 2
    assert paced["idle_rerun"]["calls"] < first["calls"]


def test_the_sandbox_can_be_given_quotas_that_disagree_with_the_code(tmp_path):
    """``--sandbox-quotas``: the sandbox enforces figures of the benchmark's own, and the
    floor is reckoned at them, not at the product's pacing table (which paces CreateAsset at
    20 TPS: at 1 TPS the sandbox throttles it, and it sets the floor)."""
    saved = tmp_path / "raw.json"
    arguments = ["--topics", "2", "--systems", "sync", "--no-faults", "--json", str(saved)]
    quota = ["--quota-topics", "2", "--quota-systems", "sync"]
    own = ["--sandbox-quotas", "datazone.CreateAsset=1"]
    assert bench_sync.main([*arguments, *quota, *own]) == 0
    [paced] = json.loads(saved.read_text())["quota_bound"]
    assert paced["sandbox_quotas"] == "datazone.CreateAsset=1"
    first = paced["first_sync"]
    assert AWS_QUOTAS["datazone.CreateAsset"].rate == 20
    assert first["floor_bucket"] == "datazone.CreateAsset"
    assert first["floor_seconds"] == first["floor_calls"] / 1


def test_the_published_quota_figures_name_their_page_and_reach_the_sandbox_as_typed():
    """Each figure of benchmarks/aws_quotas.json cites an AWS page or says ``assumed``; SSM's
    reads share one bucket there, as AWS publishes them, and the sandbox parses the text."""
    figures = published_quota_figures()
    assert all(
        f.source == "assumed" or f.source.startswith("https://docs.aws.amazon.com/")
        for f in figures
    )
    by_operation = {op: figure for figure in figures for op in figure.operations}
    assert by_operation["datazone.PostLineageEvent"].source == "assumed"
    assert "datazone-limits" in by_operation["datazone.CreateAsset"].source
    enforced = Quotas.parse(sandbox_quota_spec("published"))
    assert enforced.rates == {op: figure.tps for op, figure in by_operation.items()}
    reads = {
        enforced.buckets_of[f"ssm.{op}"]
        for op in ("GetParameter", "GetParameters", "GetParametersByPath")
    }
    assert len(reads) == 1
    assert enforced.buckets_of["datazone.CreateAsset"] != enforced.buckets_of["datazone.Search"]


def test_the_floor_is_the_busiest_bucket_the_read_back_s_included():
    """Reads of one shared bucket count together; the read-back's GetLineageNode reads while
    the sync writes, so its bucket competes for the floor instead of adding to it."""
    rates = {"ssm.GetParameters": 40, "ssm.GetParametersByPath": 40, "datazone.GetLineageNode": 20}
    buckets = {
        "ssm.GetParameters": "ssm-reads",
        "ssm.GetParametersByPath": "ssm-reads",
        "datazone.GetLineageNode": "datazone.GetLineageNode",
    }

    def calls(operation: str, count: int, throttled: bool = False) -> list[CallRecord]:
        service, name = operation.split(".")
        return [CallRecord(0, service, name, 200, False, throttled)] * count

    sync = [
        *calls("ssm.GetParameters", 60),
        *calls("ssm.GetParametersByPath", 20),
        *calls("ssm.GetParameters", 500, throttled=True),
    ]
    floor = quota_floor([*sync, *calls("datazone.GetLineageNode", 30)], rates, buckets)
    assert (floor.bucket, floor.calls, floor.seconds) == ("ssm-reads", 80, 2.0)
    assert (floor.readback_calls, floor.readback_seconds) == (30, 1.5)
    floor = quota_floor([*sync, *calls("datazone.GetLineageNode", 60)], rates, buckets)
    assert (floor.bucket, floor.calls, floor.seconds) == ("datazone.GetLineageNode", 60, 3.0)


def test_the_change_events_benchmark_shows_an_idle_queue_tick_as_one_call_and_no_storage(sandbox):
    """``benchmarks/change_events.py`` at a few topics, each step in a process of its own: the
    change found by its event costs its receive and GetSchema, by the listing the pages; the
    queue's idle tick is one ReceiveMessage and reads nothing from Dagster's storage."""
    result = change_events.measure_size(sandbox, 20, lambda message: None)
    detection = result["events: detection"]
    # GetSchema of the topic's value schema (the synthetic platform has none), then of the
    # schema named as the topic.
    assert detection["calls"] == {"sqs.ReceiveMessage": 1, "glue.GetSchema": 2}
    [request] = detection["requests"]
    topic = request["tags"]["dagster/asset_partition_range_start"]
    assert request["tags"]["dagster/asset_partition_range_end"] == topic
    assert all(result["events: run"]["succeeded"]) and all(result["listing: run"]["succeeded"])
    idle = result["events: idle"]
    assert idle["calls"] == {"sqs.ReceiveMessage": 1} and idle["storage"] == {}
    assert result["listing: detection"]["calls"]["glue.ListSchemas"] == 1
    table = change_events.table([result])
    assert "| idle tick: AWS calls | " in table and "| listing 20 | events 20 |" in table
