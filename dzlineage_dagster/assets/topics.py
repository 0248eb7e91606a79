"""The three per-topic assets: registry schema -> DataZone asset -> lineage.

They are one multi-asset step so a run over many topics (the first sync of a whole registry)
is one process, and so each topic succeeds or fails on its own: every topic that made it gets
its own materialization with its own metadata; a failing topic gets none and is named in the
run's failure.
"""

from collections.abc import Iterator

from dagster import (
    AssetExecutionContext,
    AssetKey,
    AssetMaterialization,
    AssetSpec,
    BackfillPolicy,
    Failure,
    MetadataValue,
    TableColumn,
    TableColumnConstraints,
    TableSchema,
    multi_asset,
)

from dzlineage_dagster.assets.common import GROUP, OWNERS, kafka_topics
from dzlineage_dagster.resources import CatalogResource
from dzlineage_dagster.sync.environment import SyncEnvironment
from dzlineage_dagster.sync.runner import Stage, TopicOutcome, sync_topics
from dzlineage_dagster.sync.stages import AssetOutcome, LineageOutcome, SchemaSnapshot

REGISTRY_SCHEMA = AssetKey(Stage.SCHEMA.value)
DATAZONE_TOPIC_ASSET = AssetKey(Stage.ASSET.value)
TOPIC_LINEAGE = AssetKey(Stage.LINEAGE.value)

TOPIC_ASSET_SPECS = [
    AssetSpec(
        REGISTRY_SCHEMA,
        description=(
            "The topic's schema in the Glue Schema Registry: ARN, registry, latest version, "
            "compatibility, data format, and the columns of its rows (a Debezium envelope's "
            "`after` record) parsed with fastavro."
        ),
        kinds={"glue", "kafka", "avro"},
        skippable=True,
    ),
    AssetSpec(
        DATAZONE_TOPIC_ASSET,
        deps=[REGISTRY_SCHEMA, AssetKey("datazone_custom_types")],
        description=(
            "The topic's DataZone asset (`KafkaTopicAssetType`): created for a new schema, "
            "revised only when the schema version or form content changed; schema ARN -> asset "
            "id remembered in SSM Parameter Store."
        ),
        kinds={"datazone", "ssm"},
        skippable=True,
    ),
    AssetSpec(
        TOPIC_LINEAGE,
        deps=[DATAZONE_TOPIC_ASSET],
        description=(
            "OpenLineage START/COMPLETE run events posted to DataZone for the edge topic -> "
            "Iceberg table (schema facets on both). Topics that carry no table rows "
            "(heartbeat, transaction, schema changes) get no edge."
        ),
        kinds={"datazone", "openlineage", "iceberg"},
        skippable=True,
    ),
]


@multi_asset(
    specs=[spec.replace_attributes(group_name=GROUP, owners=OWNERS) for spec in TOPIC_ASSET_SPECS],
    partitions_def=kafka_topics,
    can_subset=True,
    backfill_policy=BackfillPolicy.single_run(),
    name="kafka_topic_catalog",
)
def kafka_topic_catalog(
    context: AssetExecutionContext, catalog: CatalogResource
) -> Iterator[AssetMaterialization]:
    env = SyncEnvironment.of(catalog, context.log)
    stages = {Stage(key.path[-1]) for key in context.selected_asset_keys}
    topics = list(context.partition_keys)
    context.log.info(f"syncing {len(topics)} topics: {', '.join(s.value for s in sorted(stages))}")
    failed: list[TopicOutcome] = []
    for outcome in sync_topics(env, topics, stages):
        yield from materializations(outcome, stages)
        if not outcome.ok:
            failed.append(outcome)
    context.log.info(f"AWS API calls: {env.api_calls()}")
    if failed:
        rows = "\n".join(f"| `{o.topic}` | {o.failed_stage.value} | {o.error} |" for o in failed)
        raise Failure(
            description=(
                f"{len(failed)} of {len(topics)} topics failed: "
                + "; ".join(f"{o.topic}: {o.error}" for o in failed[:5])
            ),
            metadata={
                "failed_topics": MetadataValue.md(
                    f"| topic | stage | error |\n|---|---|---|\n{rows}"
                ),
                "api_calls": MetadataValue.json(env.api_calls()),
            },
        )


def materializations(outcome: TopicOutcome, stages: set[Stage]) -> Iterator[AssetMaterialization]:
    """One materialization per stage the topic completed, with that stage's metadata."""
    if outcome.schema is not None and Stage.SCHEMA in stages:
        yield AssetMaterialization(
            REGISTRY_SCHEMA, partition=outcome.topic, metadata=schema_metadata(outcome.schema)
        )
    asset_stage_done = outcome.schema is not None and outcome.failed_stage not in (
        Stage.SCHEMA,
        Stage.ASSET,
    )
    if Stage.ASSET in stages and asset_stage_done:
        metadata = (
            asset_metadata(outcome.asset)
            if outcome.asset is not None
            else {
                "action": "not cataloged",
                "reason": f"{outcome.schema.kind.value} topic: connector plumbing, not table data",
            }
        )
        yield AssetMaterialization(DATAZONE_TOPIC_ASSET, partition=outcome.topic, metadata=metadata)
    if outcome.lineage is not None:
        yield AssetMaterialization(
            TOPIC_LINEAGE, partition=outcome.topic, metadata=lineage_metadata(outcome.lineage)
        )


def schema_metadata(snapshot: SchemaSnapshot) -> dict[str, object]:
    return {
        "schema_arn": snapshot.schema_arn,
        "schema_name": snapshot.schema_name,
        "registry": snapshot.registry_name,
        "schema_version": snapshot.version,
        "compatibility": snapshot.compatibility,
        "data_format": snapshot.data_format,
        "topic_kind": snapshot.kind.value,
        "debezium_envelope": snapshot.debezium_envelope,
        "dagster/column_schema": TableSchema(
            columns=[
                TableColumn(
                    name=column.name,
                    type=column.type,
                    description=column.description,
                    constraints=TableColumnConstraints(nullable=column.nullable),
                )
                for column in snapshot.columns
            ]
        ),
    }


def asset_metadata(outcome: AssetOutcome) -> dict[str, object]:
    record = outcome.record
    metadata: dict[str, object] = {
        "action": outcome.action,
        "datazone_asset_id": record.asset_id,
        "datazone_asset_revision": record.asset_revision,
        "asset_type_revision": record.asset_type_revision,
        "schema_version": record.schema_version,
    }
    if outcome.url:
        metadata["datazone_asset_url"] = MetadataValue.url(outcome.url)
    return metadata


def lineage_metadata(outcome: LineageOutcome) -> dict[str, object]:
    mapping = outcome.mapping
    metadata: dict[str, object] = {
        "edge": MetadataValue.md(outcome.summary),
        "mapping_origin": mapping.origin,
        "mapping_reason": mapping.reason,
        "events_posted": 2 if outcome.posted else 0,
    }
    if mapping.table is not None:
        metadata["iceberg_table"] = str(mapping.table)
        metadata["output_source_identifier"] = outcome.output_source_identifier
        metadata["openlineage_run_id"] = outcome.run_id
    if mapping.is_guess:
        metadata["mapping_is_guess"] = True
    if outcome.columns_dropped:
        metadata["column_facets_dropped"] = True
    return metadata
