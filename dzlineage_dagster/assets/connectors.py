"""The connector topology: every connector the platform runs, and the lineage it decides.

It is observed, not materialized: MSK Connect (or Kafka Connect) holds it and this project only
reads it, as Dagster's observable source assets model state kept elsewhere. Its data version is
the connectors' digest. So the per-topic lineage downstream of it is not shown "Unsynced" merely
because it was read: Dagster derives staleness from a materializable parent's materializations
(a never-materialized parent is "a new input", a later one "a new materialization"), and the
sync re-derives, through the connector sensor, exactly the topics whose edges a changed
configuration moves.
"""

import hashlib
import json
from collections.abc import Iterator

from botocore.exceptions import BotoCoreError, ClientError
from dagster import (
    AssetExecutionContext,
    AssetSpec,
    DataVersion,
    Failure,
    MetadataValue,
    ObserveResult,
    multi_observable_source_asset,
)

from dzlineage_dagster.assets.common import GROUP, OWNERS, scope_resource
from dzlineage_dagster.core.connectors.report import (
    ambiguous_edges,
    connector_role,
    converter_registries_label,
    edge_rows,
    markdown_table,
    openlineage_namespace_fix,
    openlineage_without_kafka_namespace,
    refused_connectors,
    unknown_connectors,
)
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sync.errors import SyncError, describe_error
from dzlineage_dagster.sync.run_state import SyncRun

CONNECTOR_TOPOLOGY_SPEC = AssetSpec(
    "connector_topology",
    group_name=GROUP,
    owners=OWNERS,
    kinds={"kafka", "debezium", "iceberg"},
    description=(
        "Every connector from MSK Connect (ListConnectors + DescribeConnector) or, with "
        "DZLINEAGE_KAFKA_CONNECT_URL, a Kafka Connect REST endpoint, parsed into source table "
        "-> topic -> Iceberg table edges (override > connector > naming convention). Shows "
        "the Debezium sources, the Iceberg sinks, the resolved edges with their origin, and "
        "what could not be resolved, with the reason. Observed (read from the connectors, "
        "not made here); its data version is the connectors' digest."
    ),
)


@multi_observable_source_asset(specs=[CONNECTOR_TOPOLOGY_SPEC], name="connector_topology")
def connector_topology(
    context: AssetExecutionContext, lineage_sync: LineageSyncResource
) -> Iterator[ObserveResult]:
    if not lineage_sync.scopes:
        run = SyncRun(lineage_sync, context.log)
        yield ObserveResult(
            asset_key=CONNECTOR_TOPOLOGY_SPEC.key,
            data_version=DataVersion(run.connectors_digest),
            metadata=topology_metadata(run),
        )
        return
    # Every scope's connectors, each metadata entry named by its scope: one observation of the
    # platform, whose data version moves when any scope's connectors do. A scope whose
    # connectors cannot be read is named, and fails the run after the others are observed.
    digests, metadata, unreadable = {}, {}, {}
    for scope in lineage_sync.scope_names:
        try:
            run = SyncRun(scope_resource(lineage_sync, scope), context.log)
            digests[scope] = run.connectors_digest
            metadata.update({f"{scope}/{k}": v for k, v in topology_metadata(run).items()})
        except (ClientError, BotoCoreError, SyncError) as error:
            unreadable[scope] = describe_error(error)
            digests[scope] = f"unreadable: {unreadable[scope]}"
    combined = hashlib.sha256(json.dumps(digests, sort_keys=True).encode()).hexdigest()
    yield ObserveResult(
        asset_key=CONNECTOR_TOPOLOGY_SPEC.key,
        data_version=DataVersion(combined),
        metadata={**metadata, "unreadable_scopes": MetadataValue.json(unreadable)},
    )
    if unreadable:
        raise Failure(
            description="the connectors of "
            + "; ".join(f"scope {scope}: {why}" for scope, why in unreadable.items())
        )


def topology_metadata(run: SyncRun) -> dict[str, object]:
    """What the observation shows of ``run``'s connectors and the lineage they decide."""
    topology = run.topology
    connectors = markdown_table(
        ("connector", "class", "understood as", "registries (key / value)"),
        (
            (
                c.name,
                c.connector_class,
                connector_role(topology, c),
                converter_registries_label(c),
            )
            for c in topology.connectors
        ),
    )
    edges = edge_rows(topology)
    unresolved = ambiguous_edges(topology)
    unknown = unknown_connectors(topology)
    refused = refused_connectors(topology)
    unknown_namespace = [
        f"- {name}: its own OpenLineage names its topics kafka://unknown:unknown; "
        f"{openlineage_namespace_fix(name)}"
        for name in openlineage_without_kafka_namespace(topology.connectors)
    ]
    return {
        "connectors": MetadataValue.md(connectors),
        "connector_count": len(topology.connectors),
        "sources": [s.name for s in topology.sources],
        "sinks": [s.name for s in topology.sinks],
        "edges": MetadataValue.md(
            markdown_table(("source tables", "topic", "tables", "origin", "connectors"), edges)
        ),
        "edge_count": len(edges),
        "special_topics": MetadataValue.json(
            {topic: kind.value for topic, kind in sorted(topology.special_topics().items())}
        ),
        "unresolved": MetadataValue.md("\n".join(f"- {u}" for u in unresolved) or "none"),
        "unresolved_count": len(unresolved),
        "unknown_connectors": MetadataValue.md("\n".join(f"- {u}" for u in unknown) or "none"),
        "refused_connectors": MetadataValue.md("\n".join(f"- {r}" for r in refused) or "none"),
        "refused_connector_count": len(refused),
        "openlineage_unknown_namespace": MetadataValue.md("\n".join(unknown_namespace) or "none"),
        "api_calls": MetadataValue.json(run.api_calls()),
    }
