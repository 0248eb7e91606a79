"""The jobs: the catalog sync over topic partitions, and retiring deleted topics."""

from botocore.exceptions import BotoCoreError, ClientError
from dagster import (
    AssetSelection,
    Config,
    DefaultScheduleStatus,
    Failure,
    MetadataValue,
    OpExecutionContext,
    Output,
    ScheduleDefinition,
    define_asset_job,
    in_process_executor,
    job,
    op,
)

from dzlineage_dagster.assets.common import scope_resource
from dzlineage_dagster.assets.connectors import connector_topology
from dzlineage_dagster.assets.topics import kafka_topic_catalog
from dzlineage_dagster.checks import schema_change_is_compatible
from dzlineage_dagster.core.scopes import SCOPE_TAG, keys_by_scope, partition_key
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sync.catalog.custom_types import ensure_custom_types
from dzlineage_dagster.sync.catalog.reconcile import apply_repairs, inspect_catalog
from dzlineage_dagster.sync.errors import SyncError, describe_error
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.runner import sync_topics
from dzlineage_dagster.sync.stages.retire import retire_removed_topics

CATALOG_SYNC_JOB = define_asset_job(
    "catalog_sync",
    # The catalog checks read every mapping and table: they run in their own job, not after
    # each sync of a few changed topics.
    selection=AssetSelection.assets(kafka_topic_catalog).without_checks(),
    description=(
        "The main job: custom types, then for each selected topic its registry schema, its "
        "DataZone asset and its lineage, in one run however many topics it covers."
    ),
)

CONNECTOR_TOPOLOGY_JOB = define_asset_job(
    "connector_topology_refresh",
    selection=AssetSelection.assets(connector_topology).without_checks(),
    description=(
        "Reads every connector and shows the lineage they decide: an observation of "
        "connector_topology, its data version the connectors' digest."
    ),
)

CATALOG_CHECKS_JOB = define_asset_job(
    "catalog_checks",
    # Every check of the code location but the per-topic one: the platform graph component's
    # staleness check too, which is not among ALL_CHECKS.
    selection=AssetSelection.all_asset_checks()
    - AssetSelection.checks(schema_change_is_compatible),
    # One process for all eleven: each reads AWS for a second or two, while a process of its own
    # (the default executor) costs seconds of start-up on a small machine.
    executor_def=in_process_executor,
    description=(
        "Checks the whole catalog against AWS: mappings, duplicates, lineage tables, the "
        "connector topology (drift, unconsumed topics, unfed tables, ambiguous edges, "
        "connectors not understood) and whether the platform graph is current."
    ),
)

catalog_checks_schedule = ScheduleDefinition(
    name="catalog_checks_daily",
    job=CATALOG_CHECKS_JOB,
    cron_schedule="0 6 * * *",
    default_status=DefaultScheduleStatus.STOPPED,
    description=(
        "Runs the catalog checks every morning (turn on in the UI); the sensor "
        "catalog_checks_after_first_sync runs them once after the first sync."
    ),
)


class RetireTopicsConfig(Config):
    #: The topics' partition keys (``<scope>/<topic>`` with scopes).
    topics: list[str]


@op(description="Retire the DataZone assets of topics whose schemas left the registry.")
def retire_topic_assets(
    context: OpExecutionContext,
    config: RetireTopicsConfig,
    lineage_sync: LineageSyncResource,
) -> None:
    results = {}
    # Each scope's topics with its own settings; a scope that cannot be reached fails its own.
    for scope, topics in keys_by_scope(config.topics).items():
        try:
            run = SyncRun(scope_resource(lineage_sync, scope), context.log)
            retired = retire_removed_topics(run, topics)
        except SyncError as error:
            retired = dict.fromkeys(topics, f"failed: {error}")
        results.update({partition_key(scope, topic): r for topic, r in retired.items()})
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


def retire_run_config(keys: list[str]) -> dict:
    """The retire_topics run config of the topics of these partition keys."""
    return {"ops": {"retire_topic_assets": {"config": {"topics": keys}}}}


class ReconcileConfig(Config):
    dry_run: bool = False


@op(
    description=(
        "Compare DataZone (Search by the topic asset type, with forms) with the registry and the "
        "SSM mapping, and repair: recreate or re-map deleted assets, fix mappings that name "
        "another topic's asset or another domain, adopt assets by externalIdentifier, restore "
        "deprecated assets whose schema is back, re-post missing or FAILED lineage. "
        "`dry_run` lists the repairs and writes nothing."
    )
)
def reconcile_catalog(
    context: OpExecutionContext, config: ReconcileConfig, lineage_sync: LineageSyncResource
) -> Output[None]:
    # The run's scope (its tag), or every scope in turn; one whose reconcile fails (AWS
    # refuses its account) is named in the failure, the others still reconciled.
    tagged = context.run.tags.get(SCOPE_TAG)
    scopes = [tagged] if tagged else lineage_sync.scope_names
    if scopes == [None]:
        return reconcile_scope(context, config, SyncRun(lineage_sync, context.log))
    failed, metadata = {}, {}
    for scope in scopes:
        try:
            run = SyncRun(scope_resource(lineage_sync, scope), context.log)
            result = reconcile_scope(context, config, run)
        except (Failure, SyncError, ClientError, BotoCoreError) as error:
            failed[scope] = (
                error.description if isinstance(error, Failure) else describe_error(error)
            )
            context.log.error(f"scope {scope}: {failed[scope]}")
            continue
        metadata.update({f"{scope}/{key}": value for key, value in result.metadata.items()})
    if failed:
        raise Failure(
            description=f"{len(failed)} of {len(scopes)} scopes failed: "
            + "; ".join(f"{scope}: {why}" for scope, why in failed.items()),
            metadata=metadata,
        )
    return Output(None, metadata=metadata)


def reconcile_scope(
    context: OpExecutionContext, config: ReconcileConfig, run: SyncRun
) -> Output[None]:
    """Reconcile the catalog with one registry's topics (``run``'s)."""
    if config.dry_run:
        run.mappings.read_only = True
    report = inspect_catalog(run)
    for topic, kind, detail in report.rows():
        context.log.info(f"{topic}: {kind}: {detail}")
    failed = {}
    if not config.dry_run and report.repairs:
        ensure_custom_types(run)
        apply_repairs(run, report)
        for outcome in sync_topics(run, report.topics):
            report.results[outcome.topic] = (
                outcome.asset.action if outcome.ok and outcome.asset else outcome.error or "done"
            )
            if not outcome.ok:
                failed[outcome.topic] = outcome.error
    metadata = {
        "repairs": MetadataValue.json(
            [{"topic": t, "repair": k, "detail": d} for t, k, d in report.rows()]
        ),
        "repair_count": len(report.repairs),
        "dry_run": config.dry_run,
        "topic_assets_read": report.assets_seen,
        "search_pages": report.search_pages,
        "lineage_event_pages": report.lineage_pages,
    }
    if failed:
        raise Failure(
            description=f"{len(failed)} repairs failed", metadata={**metadata, "failed": failed}
        )
    return Output(None, metadata=metadata)


@job(name="catalog_reconcile", description=reconcile_catalog.description)
def catalog_reconcile_job() -> None:
    reconcile_catalog()


CATALOG_RECONCILE_JOB = catalog_reconcile_job

catalog_reconcile_schedule = ScheduleDefinition(
    name="catalog_reconcile_weekly",
    job=CATALOG_RECONCILE_JOB,
    cron_schedule="0 5 * * 0",
    default_status=DefaultScheduleStatus.STOPPED,
    description=(
        "Reconciles the catalog with DataZone every Sunday morning (off by default: turn on in "
        "the UI). It writes repairs; the catalog checks stay read-only."
    ),
)
