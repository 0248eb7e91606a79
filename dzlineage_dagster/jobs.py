"""The jobs: the catalog sync over topic partitions, and retiring deleted topics."""

from dagster import (
    AssetSelection,
    Config,
    DefaultScheduleStatus,
    Failure,
    MetadataValue,
    OpExecutionContext,
    ScheduleDefinition,
    define_asset_job,
    job,
    op,
)

from dzlineage_dagster.assets.connectors import connector_topology
from dzlineage_dagster.assets.custom_types import datazone_custom_types
from dzlineage_dagster.assets.topics import kafka_topic_catalog
from dzlineage_dagster.checks import ALL_CHECKS
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.stages.retire import retire_removed_topics

CATALOG_SYNC_JOB = define_asset_job(
    "catalog_sync",
    # The catalog checks read every mapping and table: they run in their own job, not after
    # each sync of a few changed topics.
    selection=AssetSelection.assets(datazone_custom_types, kafka_topic_catalog).without_checks(),
    description=(
        "The main job: custom types, then for each selected topic its registry schema, its "
        "DataZone asset and its lineage, in one run however many topics it covers."
    ),
)

CONNECTOR_TOPOLOGY_JOB = define_asset_job(
    "connector_topology_refresh",
    selection=AssetSelection.assets(connector_topology).without_checks(),
    description="Reads every connector and shows the lineage they decide (connector_topology).",
)

CATALOG_CHECKS_JOB = define_asset_job(
    "catalog_checks",
    selection=AssetSelection.checks(*ALL_CHECKS),
    description=(
        "Checks the whole catalog against AWS: mappings, duplicates, lineage tables, and the "
        "connector topology (drift, unconsumed topics, unfed tables, ambiguous edges, "
        "connectors not understood)."
    ),
)

catalog_checks_schedule = ScheduleDefinition(
    name="catalog_checks_daily",
    job=CATALOG_CHECKS_JOB,
    cron_schedule="0 6 * * *",
    default_status=DefaultScheduleStatus.STOPPED,
    description="Runs the catalog checks every morning (turn on in the UI).",
)


class RetireTopicsConfig(Config):
    topics: list[str]


@op(description="Retire the DataZone assets of topics whose schemas left the registry.")
def retire_topic_assets(
    context: OpExecutionContext,
    config: RetireTopicsConfig,
    lineage_sync: LineageSyncResource,
) -> None:
    results = retire_removed_topics(SyncRun(lineage_sync, context.log), config.topics)
    for topic, result in results.items():
        context.log.info(f"{topic}: {result}")
    failed = {t: r for t, r in results.items() if r.startswith("failed")}
    if failed:
        raise Failure(
            description=f"{len(failed)} topics could not be retired",
            metadata={"failed": MetadataValue.json(failed)},
        )


@job(name="retire_topics", description=retire_topic_assets.description)
def retire_topics_job() -> None:
    retire_topic_assets()


RETIRE_TOPICS_JOB = retire_topics_job


def retire_run_config(topics: list[str]) -> dict:
    return {"ops": {"retire_topic_assets": {"config": {"topics": topics}}}}
