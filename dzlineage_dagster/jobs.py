"""The jobs: the catalog sync over topic partitions, and retiring deleted topics."""

from dagster import (
    AssetSelection,
    Config,
    Failure,
    MetadataValue,
    OpExecutionContext,
    define_asset_job,
    job,
    op,
)

from dzlineage_dagster.assets.common import kafka_topics
from dzlineage_dagster.assets.custom_types import datazone_custom_types
from dzlineage_dagster.assets.topics import kafka_topic_catalog
from dzlineage_dagster.resources import (
    DataZoneResource,
    MskResource,
    ParameterStoreResource,
    SchemaRegistryResource,
)
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.environment import SyncEnvironment
from dzlineage_dagster.sync.retire import retire_removed_topics

CATALOG_SYNC_JOB = define_asset_job(
    "catalog_sync",
    selection=AssetSelection.assets(datazone_custom_types, kafka_topic_catalog),
    description=(
        "The main job: custom types, then for each selected topic its registry schema, its "
        "DataZone asset and its lineage, in one run however many topics it covers."
    ),
)


class RetireTopicsConfig(Config):
    topics: list[str]


@op(description="Retire the DataZone assets of topics whose schemas left the registry.")
def retire_topic_assets(
    context: OpExecutionContext,
    config: RetireTopicsConfig,
    settings: LineageSettings,
    registry: SchemaRegistryResource,
    parameters: ParameterStoreResource,
    datazone: DataZoneResource,
    msk: MskResource,
) -> None:
    env = SyncEnvironment(settings, registry, parameters, datazone, msk, log=context.log)
    results = retire_removed_topics(env, config.topics)
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
