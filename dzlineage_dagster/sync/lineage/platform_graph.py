"""The platform graph read from AWS the way the sync reads it: the state of the platform-graph
component (:mod:`dzlineage_dagster.components.platform_graph`).

One :class:`~dzlineage_dagster.sync.run_state.SyncRun` gives the connectors, the registry and
the topology (the same lookups the sync makes); per topic with an edge, its latest schema
(GetSchema + GetSchemaVersion, :func:`read_schema`) and the hops the sync would post
(:func:`topic_hops`) give the columns and the column lineage; one GetTables per Glue database
the sinks write gives the Iceberg tables' columns; the mapping records give each topic's
DataZone asset page; owners (sync/catalog/owners.py): the topic's configured owners (its schema's
`owner` tag, its connectors' `dzlineage.owners`) and the owning DataZone project.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import suppress
from datetime import datetime, timezone

from dzlineage_dagster.core.connectors.topology import TopicLineage
from dzlineage_dagster.core.identity.glue import glue_dataset
from dzlineage_dagster.core.lineage.graph import source_identifier
from dzlineage_dagster.core.lineage.openlineage import (
    FieldRef,
    glue_source_identifier,
)
from dzlineage_dagster.core.lineage.platform_graph import (
    AssetPath,
    ColumnDep,
    PlatformGraphState,
    TopicGraph,
    glue_table_columns,
    iceberg_table_key,
    platform_nodes,
    source_table_key,
    topic_key,
    topology_digest,
)
from dzlineage_dagster.core.lineage.relay_events import PlatformDatasets
from dzlineage_dagster.core.ownership.owners import Owner, dagster_owners
from dzlineage_dagster.sync.catalog.owners import datazone_owners, topic_owners
from dzlineage_dagster.sync.errors import SyncError
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.stages.lineage import ENVELOPE_PREFIX, topic_hops
from dzlineage_dagster.sync.stages.schema import SchemaSnapshot, read_schema


def live_digest(run: SyncRun) -> str:
    """The digest of the topology as it is now: ListConnectors (or one Kafka Connect GET) and
    ListSchemas, nothing per topic."""
    tokens = {topic: listed.change_token for topic, listed in run.registry_topics.items()}
    return topology_digest(run.connectors_digest, tokens)


def read_platform_graph(run: SyncRun) -> PlatformGraphState:
    digest = live_digest(run)
    owners = datazone_owners(run)
    graphs = []
    for lineage in run.topology.lineages():
        if lineage.sources or lineage.sinks:
            graphs.append(_topic_graph(run, lineage, owners))
    databases = {edge.table.database for g in graphs for edge in g.lineage.sinks}
    table_columns = {
        iceberg_table_key(database, table["Name"]): glue_table_columns(table)
        for database in sorted(databases)
        for table in run.resource.data_catalog.tables(database)
    }
    nodes = platform_nodes(graphs, table_columns)
    run.log.info(
        f"platform graph: {len(nodes)} nodes from {len(graphs)} topics with edges; "
        f"API calls {run.api_calls()}"
    )
    return PlatformGraphState(
        digest, datetime.now(timezone.utc).isoformat(), nodes, run.connectors_digest
    )


#: Where a Debezium connector's OpenLineage runs are filed (its docs' "OpenLineage job mapping":
#: this property, else ``topic.prefix``).
DEBEZIUM_JOB_NAMESPACE_PROPERTY = "openlineage.integration.job.namespace"


def platform_datasets(run: SyncRun) -> PlatformDatasets:
    """The platform's own lineage nodes, named as the sync names them: every topic of the
    registry and of the topology (:meth:`SyncRun.topic_dataset`), every table of the Glue
    database and of the databases the sinks write (GetTables, once each) and every table the
    sinks route to, and every source table a Debezium connector captures. What the relay
    reports as unmapped and what `trace` labels by its short name are measured against it."""
    topology, settings = run.topology, run.settings
    lineages = topology.lineages()
    topics = {*run.registry_topics, *(lineage.topic for lineage in lineages)}
    identities = {source_identifier(*run.topic_dataset(topic)) for topic in topics}
    arn = settings.msk_cluster_arn.split(":")
    region, account = arn[3], settings.glue_table_account(arn[4])
    sink_tables = {(e.table.database, e.table.table) for lineage in lineages for e in lineage.sinks}
    for database in sorted({settings.glue_database, *(db for db, _ in sink_tables)}):
        sink_tables |= {(database, table) for table in run.table_names(database)}
    for database, table in sink_tables:
        with suppress(ValueError):  # a table no Glue ARN can name: no node of the graph
            identities.add(glue_source_identifier(region, account, database, table))
    for lineage in lineages:
        for edge in lineage.sources:
            with suppress(ValueError):  # a connector without database.hostname names none
                identities.add(source_identifier(*run.source_table_dataset(edge.table)))
    configs = {connector.name: connector.config for connector in topology.connectors}
    debezium_jobs = {
        configs.get(source.name, {}).get(DEBEZIUM_JOB_NAMESPACE_PROPERTY) or source.topic_prefix: (
            source.name
        )
        for source in topology.sources
    }
    return PlatformDatasets(
        frozenset(identities),
        frozenset(topics),
        debezium_jobs,
        run.cluster.bootstrap_brokers.split(",")[0].strip() or None,
        run.kafka_cluster,
    )


def _topic_graph(
    run: SyncRun, lineage: TopicLineage, project_owners: tuple[Owner, ...]
) -> TopicGraph:
    topic = lineage.topic
    owners = dagster_owners(topic_owners(run, topic, project_owners))
    if topic not in run.registry_topics:
        # An override names it, the registry has no schema: its edges, no columns.
        return TopicGraph(lineage, owners=owners)
    try:
        snapshot = read_schema(run, topic)
        hops = topic_hops(run, snapshot, lineage)
    except SyncError as error:
        run.log.warning(f"{topic}: drawn without columns: {error}")
        return TopicGraph(lineage, owners=owners)
    keys = _dataset_keys(run, snapshot, lineage)
    source_lineage: dict[str, tuple[ColumnDep, ...]] = {}
    table_lineage: dict[AssetPath, dict[str, tuple[ColumnDep, ...]]] = {}
    for hop in hops:
        for output in hop.outputs:
            columns = _column_deps(output.column_lineage or {}, keys)
            if hop.side == "source":
                source_lineage.update(columns)
            else:
                table_lineage[keys[(output.namespace, output.name)]] = columns
    record = run.mappings.get(snapshot.schema_arn)
    return TopicGraph(
        lineage,
        columns=snapshot.columns,
        source_column_lineage=source_lineage,
        table_column_lineage=table_lineage,
        owners=owners,
        url=run.asset_url(record.asset_id) if record and record.asset_id else None,
        facts={
            "schema_arn": snapshot.schema_arn,
            "schema_version": str(snapshot.version),
            "data_format": snapshot.data_format,
            "compatibility": snapshot.compatibility,
        },
    )


def _dataset_keys(
    run: SyncRun, snapshot: SchemaSnapshot, lineage: TopicLineage
) -> dict[tuple[str, str], AssetPath]:
    """The topic's OpenLineage datasets (as its hops name them) -> their asset keys."""
    keys = {run.topic_dataset(lineage.topic): topic_key(lineage.topic)}
    for edge in lineage.sources:
        dataset = run.source_table_dataset(edge.table)
        keys[dataset] = source_table_key(edge.table)
    for edge in lineage.sinks:
        dataset = glue_dataset(
            snapshot.region, snapshot.account_id, edge.table.database, edge.table.table
        )
        keys[dataset] = iceberg_table_key(edge.table.database, edge.table.table)
    return keys


def _column_deps(
    column_lineage: Mapping[str, list[FieldRef]], keys: Mapping[tuple[str, str], AssetPath]
) -> dict[str, tuple[ColumnDep, ...]]:
    """A hop output's ``columnLineage`` with row column names (no envelope prefix) and keys."""
    return {
        column.removeprefix(ENVELOPE_PREFIX): tuple(
            ColumnDep(keys[(ref.namespace, ref.name)], ref.field.removeprefix(ENVELOPE_PREFIX))
            for ref in refs
        )
        for column, refs in column_lineage.items()
    }
