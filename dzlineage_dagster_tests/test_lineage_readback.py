"""The sync reads its lineage back from DataZone's nodes: a Glue table's ARN node must have its
topic upstream and a topic asset must be linked to its topic's node. It passes with the
product's Glue naming and fails, naming the node expected and the one found, when the naming is
deliberately wrong (OpenLineage's Glue naming, which DataZone's documented rule files beside
the table's ARN)."""

from __future__ import annotations

import re

from dzlineage_dagster.checks import lineage_landed_on_datazone_nodes
from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.core.identity.glue import openlineage_glue_name
from dzlineage_dagster.core.lineage.openlineage import DatasetSpec
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sync.stages import lineage as lineage_stage

#: The demo's topics with lineage: 7 topics, each one Iceberg table and one asset.
DEMO_LANDINGS = 7


def readback_line(out: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith("lineage read-back:")]
    return line


def check(platform):
    return lineage_landed_on_datazone_nodes(
        lineage_sync=LineageSyncResource.with_settings(platform.settings)
    )


def test_a_sync_reads_its_lineage_back_and_finds_it_landed(platform, glue_node_naming, capsys):
    assert dzlineage(["sync"]) == 0
    out = capsys.readouterr().out
    # The cost: GetLineageNode of the topic's node, its table's ARN and its asset's node.
    assert readback_line(out) == (
        f"lineage read-back: all landed ({DEMO_LANDINGS} tables, {DEMO_LANDINGS} topic assets "
        f"of {DEMO_LANDINGS} topics, {3 * DEMO_LANDINGS} GetLineageNode calls)"
    )
    assert "ERROR" not in out
    result = check(platform)
    assert result.passed, result.metadata["problems"]
    assert result.metadata["GetLineageNode calls"].value == 3 * DEMO_LANDINGS


def openlineage_glue_spec(region, account, database, table, columns=None, column_lineage=None):
    """The naming the product used before: OpenLineage's own Glue naming as the dataset."""
    return DatasetSpec(
        *openlineage_glue_name(region, account, database, table), columns, column_lineage
    )


def test_the_read_back_fails_when_the_glue_naming_is_wrong_and_passes_once_right(
    platform, glue_node_naming, monkeypatch, capsys
):
    """The old naming lands beside the ARN under the documented reading: the read-back and the
    check fail, naming both nodes. The colon-join reading files it under the ARN, hiding it."""
    region, account = platform.settings.msk_cluster_arn.split(":")[3:5]
    arn = f"arn:aws:glue:{region}:{account}:table/lakehouse/sales_orders"
    beside = f"arn:aws:glue:{region}:{account}/table/lakehouse/sales_orders"
    with monkeypatch.context() as wrong:
        wrong.setattr(lineage_stage, "glue_table_spec", openlineage_glue_spec)
        if glue_node_naming == "colon-join":
            assert dzlineage(["sync"]) == 0
            assert "all landed" in readback_line(capsys.readouterr().out)
            assert check(platform).passed
            return
        assert dzlineage(["sync"]) == 1
        # The check reads back what the last sync posted (the plan it would post again).
        result = check(platform)
    assert not result.passed
    assert any(beside in problem for problem in result.metadata["problems"].value)
    out = capsys.readouterr().out
    assert readback_line(out).startswith(f"lineage read-back: {DEMO_LANDINGS} mismatches")
    (error,) = [line for line in out.splitlines() if "sales_orders" in line and "ERROR" in line]
    assert re.fullmatch(
        rf"ERROR shop\.sales\.orders: expected the Glue table's node {re.escape(arn)} with "
        rf"the topic kafka://\S+/shop\.sales\.orders upstream; found no node by that ARN; "
        rf"the topic's runs feed {re.escape(beside)}",
        error,
    ), error

    # The product's naming (a new code version, which a reconcile stands for here: the
    # registry did not change): the changed datasets re-post every hop, and it lands.
    assert dzlineage(["sync", "--reconcile"]) == 0
    assert "all landed" in readback_line(capsys.readouterr().out)
    assert check(platform).passed
