"""What a topic's schema version breaks downstream, read from AWS: the one home of the answer
`dzlineage impact` prints and the `schema_change_is_compatible` check reports.

The version is compared with the one before it (GetSchemaVersion twice,
:func:`~dzlineage_dagster.core.schemas.impact.compare_columns`); each change is followed to the
Iceberg columns written from it: the sink writes a table column from the topic column of its
name (the sync's sink-hop column lineage), among the columns the table has in the Glue Data
Catalog (GetTable). Downstream of each table: its Dagster asset key (docs/dagster-graph.md) and
the datasets a lineage graph (DataZone's, or with ``graph="glue"`` the Glue Data Catalog's)
shows written by the runs reading the table's node (sync/lineage/nodes.py: GetLineageNode by
the table's ARN, then once per node beyond it). Owners: sync/catalog/owners.py.
"""

from __future__ import annotations

from dzlineage_dagster.core.connectors.topology import SinkEdge
from dzlineage_dagster.core.lineage.openlineage import DatasetSpec, sink_hop_column_lineage
from dzlineage_dagster.core.lineage.platform_graph import (
    glue_table_columns,
    iceberg_table_key,
    topic_key,
)
from dzlineage_dagster.core.lineage.readback import glue_table_arn
from dzlineage_dagster.core.ownership.owners import Owner
from dzlineage_dagster.core.schemas.avro import parse_row_schema
from dzlineage_dagster.core.schemas.impact import (
    DownstreamAsset,
    ImpactReport,
    affected_columns,
    compare_columns,
)
from dzlineage_dagster.core.schemas.json_schema import parse_json_row_schema
from dzlineage_dagster.resources.glue_schema_registry import AVAILABLE
from dzlineage_dagster.sync.catalog.owners import topic_owners
from dzlineage_dagster.sync.errors import SyncError
from dzlineage_dagster.sync.lineage.nodes import lineage_reader
from dzlineage_dagster.sync.run_state import SyncRun

#: The registry's data formats whose versions are read into columns.
ROW_PARSERS = {"AVRO": parse_row_schema, "JSON": parse_json_row_schema}


def topic_impact(
    run: SyncRun,
    topic: str,
    project_owners: tuple[Owner, ...],
    version: int | None = None,
    graph: str = "datazone",
) -> ImpactReport:
    """The changes of the topic's ``version`` (its latest when None) against the one before,
    the Iceberg columns and downstream assets they reach (in ``graph``'s lineage), and the
    owners to tell.
    ``project_owners`` are DataZone's (:func:`~dzlineage_dagster.sync.catalog.owners.datazone_owners`,
    read once for many topics)."""
    listed = run.registry_topics[topic]
    registry = run.resource.schema_registry
    parse = ROW_PARSERS.get(registry.get_schema(listed.schema_arn).get("DataFormat", "AVRO"))
    if parse is None:
        raise SyncError(f"{topic}: only AVRO and JSON schemas are read into columns")
    latest = registry.get_schema_version(listed.schema_arn, version)
    number = int(latest["VersionNumber"])
    # What readers had before: the version before it, unless the registry refused that one
    # (Status FAILURE, never served): then the newest AVAILABLE one before it.
    previous = registry.get_schema_version(listed.schema_arn, number - 1) if number > 1 else None
    if previous is not None and previous.get("Status", AVAILABLE) != AVAILABLE:
        earlier = [n for n in registry.available_versions(listed.schema_arn) if n < number]
        previous = registry.get_schema_version(listed.schema_arn, earlier[-1]) if earlier else None
    if previous is None:
        return ImpactReport(topic, number)
    old_columns = parse(previous["SchemaDefinition"]).columns
    changes = compare_columns(old_columns, parse(latest["SchemaDefinition"]).columns)
    lineage = run.topology.lineage_for(topic)
    topic_spec = DatasetSpec(*topic_key(topic), old_columns)
    glue = run.resource.data_catalog.client()
    column_lineage = {}
    for edge in lineage.sinks:
        try:
            table = glue.get_table(DatabaseName=edge.table.database, Name=edge.table.table)
        except glue.exceptions.EntityNotFoundException:
            continue  # no table yet: nothing reads a column of it
        written = sink_hop_column_lineage(
            glue_table_columns(table["Table"]), topic_spec, field_prefix=""
        )
        column_lineage[iceberg_table_key(edge.table.database, edge.table.table)] = {
            column: [((ref.namespace, ref.name), ref.field) for ref in refs]
            for column, refs in written.items()
        }
    return ImpactReport(
        topic,
        number,
        previous_version=int(previous["VersionNumber"]),
        changes=tuple(changes),
        affected=tuple(affected_columns(changes, topic_key(topic), column_lineage)),
        tables=tuple(str(table.ref) for table in lineage.tables),
        downstream=downstream_assets(run, latest["SchemaArn"], lineage.sinks, graph),
        owners=topic_owners(run, topic, project_owners),
    )


def downstream_assets(
    run: SyncRun, schema_arn: str, sinks: tuple[SinkEdge, ...], graph: str = "datazone"
) -> tuple[DownstreamAsset, ...]:
    """Per table the sinks write: its Dagster key, and ``graph``'s nodes downstream of it: the
    datasets written by the job runs that read the table (its downstream nodes are those runs;
    one that is not a run is DataZone's view of the table itself, its catalog asset's node, not
    a reader). Nothing from the graph while it has no node for the table (lineage not posted)."""
    region, account_id = schema_arn.split(":")[3:5]
    # DataZone's current view, as the sync's read-back asks for it; each node read once for
    # all the tables (two sinks of a topic often feed the same readers).
    lineage = lineage_reader(run, graph, current=True)
    found: list[DownstreamAsset] = []
    for edge in sinks:
        database, table = edge.table.database, edge.table.table
        name = f"{database}.{table}"
        found.append(DownstreamAsset(name, "dagster", "/".join(iceberg_table_key(database, table))))
        arn = glue_table_arn(region, run.settings.glue_table_account(account_id), database, table)
        table_node = lineage.node(arn)
        if table_node is None:
            continue
        written = lineage.datasets_beyond(table_node, "downstream", through_runs_only=True)
        for node in {node.id: node for node, _job in written}.values():
            found.append(DownstreamAsset(name, graph, node.name, node.id, node.type_name or None))
    return tuple(found)
