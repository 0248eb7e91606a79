"""The Glue Data Catalog's lineage graph, read as DataZone's is (docs/glue-lineage.md): `trace`,
`orphans` and `impact` with ``--graph glue``, the Glue read-back (the sync's, which reads again
while Glue is still processing, and the asset check's, which does not wait) and doctor's Glue
rows, over the sandbox's Glue lineage API and real boto3 clients.

The graph is the one AWS would hold on the demo: the sync's two hops per topic (posted to Glue
as they are to DataZone), AWS's own ``glue_manual`` job for every table the demo made with
CreateTable, and a Spark job of the kind EMR reports, ``lakehouse.sales_orders`` ->
``lakehouse.daily_revenue``.
"""

from __future__ import annotations

import json
import logging

import pytest

from dzlineage_dagster.checks import lineage_landed_on_glue_nodes
from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sandbox.demo.spark_lineage import post_spark_lineage
from dzlineage_dagster.sandbox.server.app import Sandbox
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.headless import start_run
from dzlineage_dagster.sync.lineage.readback import last_sync_readback
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster_tests.conftest import RunningSandbox, SandboxControl
from dzlineage_dagster_tests.test_doctor import assert_advice_is_real, doctor, rows_of
from dzlineage_dagster_tests.test_impact_cli import register_breaking_version

BOTH = "datazone,glue"
SPARK_JOB = "default.daily_revenue.append_data_exec_v1.lakehouse_daily_revenue"


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = dzlineage(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def table_arn(platform, table: str) -> str:
    region, account = platform.settings.msk_cluster_arn.split(":")[3:5]
    return f"arn:aws:glue:{region}:{account}:table/lakehouse/{table}"


def post_spark_run(platform) -> None:
    """What EMR's OpenLineage listener posts for the demo's nightly Spark job
    (``lakehouse.sales_orders`` -> ``lakehouse.daily_revenue``), as the demo posts it."""
    region, account = platform.settings.msk_cluster_arn.split(":")[3:5]
    post_spark_lineage(platform.client("glue"), region, account)


def post_to_both(platform, monkeypatch) -> None:
    """Both destinations, for the commands (the environment) and the checks (the settings)."""
    monkeypatch.setenv("DZLINEAGE_LINEAGE_DESTINATIONS", BOTH)
    platform.environment["DZLINEAGE_LINEAGE_DESTINATIONS"] = BOTH


@pytest.fixture
def glue_graph(platform, monkeypatch, capsys):
    """The demo synced with both destinations, its lineage in Glue's graph beside AWS's own
    and the Spark job's."""
    post_to_both(platform, monkeypatch)
    code, out, err = run_cli(capsys, "sync")
    assert code == 0, err
    assert "lineage read-back in glue: all landed" in out
    post_spark_run(platform)
    return platform


def test_trace_glue_from_daily_revenue_upstream_reaches_the_postgres_source_table(
    glue_graph, capsys
):
    code, out, err = run_cli(
        capsys, "trace", "lakehouse.daily_revenue", "--graph", "glue", "--format", "json"
    )
    assert code == 0, err
    graph = json.loads(out)
    kinds = {node["kind"] for node in graph["nodes"]}
    assert {"glue_table", "topic", "source_table"} <= kinds
    ids = {node["id"] for node in graph["nodes"]}
    sales_orders = table_arn(glue_graph, "sales_orders")
    [source] = [n["id"] for n in graph["nodes"] if n["kind"] == "source_table"]
    assert source.startswith("postgres://") and source.endswith("/shop.sales.orders")
    jobs = {(e["upstream"], e["downstream"]): e["job"] for e in graph["edges"]}
    assert jobs[(sales_orders, table_arn(glue_graph, "daily_revenue"))] == SPARK_JOB
    # AWS's own job beside the product's: the table's S3 location -> glue_manual -> table.
    manual = [(up, job) for (up, down), job in jobs.items() if down == sales_orders]
    assert any(job == "glue_manual.lakehouse.sales_orders" for _, job in manual), manual
    assert any(up.startswith("s3://") for up, _ in manual) and any(
        up.startswith("kafka://") for up, _ in manual
    )
    assert len(ids) == len(graph["nodes"])
    # The column lineage of the Spark job's hop, from its dataset's form.
    code, out, _ = run_cli(
        capsys, "trace", "lakehouse.daily_revenue", "--graph", "glue", "--columns"
    )
    assert code == 0 and "revenue <- total" in out


def test_glue_has_no_node_history_and_a_graph_not_posted_to_is_named(
    glue_graph, capsys, monkeypatch
):
    code, _, err = run_cli(capsys, "trace", "shop.sales.orders", "--graph", "glue", "--history")
    assert code == 2 and "ListLineageNodeHistory" in err
    monkeypatch.setenv("DZLINEAGE_LINEAGE_DESTINATIONS", "datazone")
    for command in (["trace", "shop.sales.orders"], ["orphans"], ["impact", "shop.sales.orders"]):
        code, out, err = run_cli(capsys, *command, "--graph", "glue")
        assert code == 2 and out == "", command
        assert "DZLINEAGE_LINEAGE_DESTINATIONS names glue" in err, err


def test_orphans_in_glue_count_a_table_fed_only_by_its_own_creation_as_unfed(glue_graph, capsys):
    # A table made with CreateTable: AWS draws its S3 location -> glue_manual -> it, no feed.
    glue_graph.client("glue").create_table(
        DatabaseName="lakehouse",
        TableInput={"Name": "scratch", "StorageDescriptor": {"Location": "s3://lake/scratch/"}},
    )
    code, out, err = run_cli(capsys, "orphans", "--graph", "glue", "--format", "json")
    assert code == 0, err
    found = json.loads(out)
    unfed = set(found["tables_without_upstream"])
    assert table_arn(glue_graph, "scratch") in unfed
    assert table_arn(glue_graph, "sales_orders") not in unfed
    assert table_arn(glue_graph, "daily_revenue") not in unfed  # the Spark job feeds it
    code, out, _ = run_cli(capsys, "orphans", "--format", "json")
    datazone = json.loads(out)
    # What feeds the CDC tables is the same in both graphs; the Spark job is only in Glue's.
    assert unfed == set(datazone["tables_without_upstream"]) - {
        table_arn(glue_graph, "daily_revenue")
    }
    assert found["topics_without_downstream_table"] == datazone["topics_without_downstream_table"]


def test_impact_glue_names_the_spark_jobs_table_downstream(glue_graph, capsys):
    register_breaking_version(glue_graph)
    code, out, err = run_cli(
        capsys, "impact", "shop.sales.orders", "--graph", "glue", "--format", "json"
    )
    assert code == 3, err
    (report,) = json.loads(out)
    glue = [d for d in report["downstream"] if d["system"] == "glue"]
    assert [d["name"] for d in glue] == ["lakehouse.daily_revenue"], report["downstream"]
    code, out, _ = run_cli(capsys, "impact", "shop.sales.orders", "--format", "json")
    (report,) = json.loads(out)
    assert {d["system"] for d in report["downstream"]} == {"dagster"}


def check(platform):
    return lineage_landed_on_glue_nodes(
        lineage_sync=LineageSyncResource.with_settings(platform.settings)
    )


def test_the_glue_check_passes_saying_why_where_glue_is_no_destination(platform):
    result = check(platform)
    assert result.passed and "not to the Glue Data Catalog" in result.description


def test_the_glue_check_reads_back_each_table(glue_graph):
    result = check(glue_graph)
    assert result.passed, result.metadata["problems"]
    assert "lineage read-back in glue: all landed" in result.metadata["read-back"].value
    # No asset in Glue's graph: the topic's node and each table's ARN, nothing more.
    run = SyncRun(LineageSyncResource.with_settings(glue_graph.settings))
    report = last_sync_readback(run, graph="glue")
    assert (report.assets, report.calls) == (0, report.topics + report.tables)


@pytest.fixture
def slow_glue(monkeypatch):
    """A sandbox of its own whose Glue processes each lineage event 30 seconds after taking
    it: long after a demo sync has posted its last event."""
    from dzlineage_dagster_tests.platform import fresh_platform

    with Sandbox(glue_lineage_processing_seconds=30) as server:
        running = RunningSandbox(server.endpoint_url, SandboxControl(server.endpoint_url))
        platform = fresh_platform(running, monkeypatch)
        post_to_both(platform, monkeypatch)
        yield platform


def test_the_read_back_waits_out_glues_processing_and_the_check_does_not(
    slow_glue, capsys, monkeypatch
):
    # A sync that does not read back (so that Glue is still processing its events after it).
    monkeypatch.setenv("DZLINEAGE_GLUE_LINEAGE_READBACK_WAIT_SECONDS", "0")
    code, out, err = run_cli(capsys, "sync")
    assert code == 0, err
    assert "lineage read-back in glue" not in out
    # Right after the posts Glue has built nothing: the check, which does not wait, fails,
    # naming the node it expected.
    result = check(slow_glue)
    assert not result.passed
    assert "expected the topic's lineage node" in result.description
    # The sync's read-back (the same reads) reads again until the landings match: once
    # processed.
    run = start_run(LineageSettings.from_env(), logging.getLogger("test"))
    report = last_sync_readback(run, graph="glue", wait_seconds=60)
    assert report.ok, report.mismatches
    # More than one round of reads (a round is the topic's node and its tables' a topic).
    assert report.calls > report.topics + report.tables
    assert check(slow_glue).passed


def test_doctor_checks_glues_permissions_and_that_lineage_landed(glue_graph, capsys):
    code, rows = doctor(capsys)
    assert code == 0, [r for r in rows if r["status"] != "OK"]
    [reads] = rows_of(rows, "glue-lineage")
    assert reads["status"] == "OK" and "PostLineageEvent is allowed" in reads["detail"]
    [landed] = rows_of(rows, "glue-lineage-landed")
    assert landed["status"] == "OK" and "all landed" in landed["detail"]
    for operation in ("PostLineageEvent", "GetLineageNode"):
        glue_graph.control.set_faults(FaultRule("glue", operation, "access-denied"))
        code, rows = doctor(capsys)
        assert code == 1
        failed = [r for r in rows if r["status"] == "FAIL"]
        assert {r["check"] for r in failed} == {"glue-lineage"}, failed
        [row] = failed
        assert row["detail"].startswith(f"glue.{operation} failed: AccessDeniedException")
        assert row["fix"].startswith(f"allow glue:{operation} to the data side")
        assert "(as iam/glue-lineage-policy.json does)" in row["fix"]
        assert_advice_is_real(failed)
        [skipped] = rows_of(rows, "glue-lineage-landed")
        assert skipped["status"] == "WARN" and "needs glue-lineage" in skipped["detail"]
        glue_graph.control.clear_faults()


def test_a_read_back_glue_denies_names_the_permission_to_allow_once(platform, monkeypatch, capsys):
    # The posts are allowed, GetLineageNode is not: the sync's lineage landed (as far as it
    # knows) but its read-back cannot look, and says which permission would let it.
    post_to_both(platform, monkeypatch)
    platform.control.set_faults(FaultRule("glue", "GetLineageNode", "access-denied"))
    code, out, err = run_cli(capsys, "sync")
    assert code == 0, err
    [line] = [line for line in out.splitlines() if line.startswith("lineage read-back in glue")]
    assert line.startswith(
        "lineage read-back in glue: not checked (GetLineageNode failed: AccessDeniedException: "
    ), line
    assert line.count("GetLineageNode failed") == 1, line
    assert "allow glue:GetLineageNode to the data side's credentials" in line
    assert "iam/glue-lineage-policy.json" in line


def test_doctor_names_every_glue_lineage_action_denied_in_one_run(glue_graph, capsys):
    # A role with neither action: one doctor run names both, not one per rerun.
    glue_graph.control.set_faults(
        FaultRule("glue", "GetLineageNode", "access-denied"),
        FaultRule("glue", "PostLineageEvent", "access-denied"),
    )
    code, rows = doctor(capsys)
    assert code == 1
    failed = [r for r in rows if r["status"] == "FAIL"]
    assert sorted(r["fix"].split(" to ")[0] for r in failed) == [
        "allow glue:GetLineageNode",
        "allow glue:PostLineageEvent",
    ], failed
    assert {r["check"] for r in failed} == {"glue-lineage"}
    assert_advice_is_real(failed)
