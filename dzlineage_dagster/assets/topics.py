"""The three per-topic assets: registry schema -> DataZone asset -> lineage.

They are one multi-asset step so a run over many topics (the first sync of a whole registry)
is one process, and so each topic succeeds or fails on its own: every topic that made it gets
its own materialization with its own metadata; a failing topic gets none and is named in the
run's failure.
"""

from collections.abc import Iterator

from botocore.exceptions import BotoCoreError, ClientError
from dagster import (
    AssetCheckEvaluation,
    AssetExecutionContext,
    AssetKey,
    AssetMaterialization,
    AssetObservation,
    AssetSpec,
    BackfillPolicy,
    Failure,
    MetadataValue,
    TableColumnDep,
    TableColumnLineage,
    multi_asset,
)

from dzlineage_dagster.assets.common import GROUP, OWNERS, kafka_topics, table_schema
from dzlineage_dagster.assets.schema_change import SCHEMA_CHANGE_CHECK, schema_change_evaluation
from dzlineage_dagster.core.connectors.topics import TopicKind
from dzlineage_dagster.core.connectors.topology import Topology
from dzlineage_dagster.core.ownership.owners import InvalidOwner, Owner
from dzlineage_dagster.core.topic_states import NOT_CATALOGED
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sync.catalog.owners import datazone_owners
from dzlineage_dagster.sync.checks.authorization import check_authorization
from dzlineage_dagster.sync.checks.preflight import check_cluster, check_ownership
from dzlineage_dagster.sync.errors import SyncError, describe_error
from dzlineage_dagster.sync.lineage.impact import topic_impact
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.runner import Stage, TopicOutcome, sync_topics
from dzlineage_dagster.sync.stages.asset import AssetOutcome
from dzlineage_dagster.sync.stages.lineage import ENVELOPE_PREFIX, LineageOutcome, LineagePlan
from dzlineage_dagster.sync.stages.publish import Publication
from dzlineage_dagster.sync.stages.schema import SchemaSnapshot

REGISTRY_SCHEMA = AssetKey("registry_schema")
DATAZONE_TOPIC_ASSET = AssetKey("datazone_topic_asset")
TOPIC_LINEAGE = AssetKey("topic_lineage")
CONNECTOR_TOPOLOGY = AssetKey("connector_topology")
#: The Dagster asset that shows each sync stage's result per topic.
STAGE_ASSET_KEYS = {
    Stage.SCHEMA: REGISTRY_SCHEMA,
    Stage.ASSET: DATAZONE_TOPIC_ASSET,
    Stage.LINEAGE: TOPIC_LINEAGE,
}
STAGE_OF_ASSET_KEY = {key: stage for stage, key in STAGE_ASSET_KEYS.items()}
#: Failed topics a run's failure description names; its `failed_topics` metadata lists all.
FAILURES_DESCRIBED = 5

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
        deps=[DATAZONE_TOPIC_ASSET, CONNECTOR_TOPOLOGY],
        description=(
            "OpenLineage run events posted to DataZone, derived from the connectors: the source "
            "hop (source tables -> Debezium connector -> topic) and the sink hop (topic -> "
            "Iceberg sink connector -> tables), column lineage on both; each edge says whether "
            "an override, a connector or the naming convention decided it. Topics that carry "
            "no table rows (heartbeat, transaction, schema changes, from the configs) get none."
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
    context: AssetExecutionContext, lineage_sync: LineageSyncResource
) -> Iterator[AssetMaterialization | AssetObservation | AssetCheckEvaluation]:
    topics = list(context.partition_keys)
    # The partitions are the registry's topics as the sensor last listed them: a run over a
    # few looks those up by name instead of listing the whole registry.
    run = SyncRun.over_topics(
        lineage_sync,
        context.log,
        topics,
        context.instance.get_dynamic_partitions(kafka_topics.name),
    )
    stages = {STAGE_OF_ASSET_KEY[key] for key in context.selected_asset_keys}
    context.log.info(
        f"syncing {len(topics)} topics: {', '.join(STAGE_ASSET_KEYS[s].to_user_string() for s in Stage if s in stages)}"
    )
    if stages & {Stage.ASSET, Stage.LINEAGE}:
        # What the checks below and the topics' stages read first, at once: the topology is
        # built from the connectors and the registry; the authorization check reads the domain.
        run.prefetch(
            "cluster",
            "connectors",
            "registry_topics",
            *(["domain"] if Stage.ASSET in stages else []),
        )
        try:
            check_cluster(run)
            if Stage.ASSET in stages:
                check_ownership(run, topics)
                check_authorization(run, (), asset_writes=True)
        except SyncError as error:
            # A wrong cluster or project fails every topic the same way: say it once, try none.
            raise Failure(description=str(error)) from None
    failed: list[TopicOutcome] = []
    impact = SchemaChangeReporter(run)
    for outcome in sync_topics(run, topics, stages):
        yield from materializations(outcome, stages, run.topology)
        yield from impact.evaluations(outcome)
        if not outcome.ok:
            failed.append(outcome)
    if run.mappings.committed:
        forget_registry_digest(run)
    context.log.info(f"AWS API calls: {run.api_calls()}")
    if run.api_retries():
        context.log.warning(f"AWS API attempts retried: {run.api_retries()}")
    cost = api_cost_metadata(run)
    # The run's totals are known only now, after every topic's materializations went out:
    # they are one observation of the step's first asset, not a figure on each topic.
    yield AssetObservation(
        STAGE_ASSET_KEYS[next(s for s in Stage if s in stages)],
        description="AWS API calls this run made, and the attempts botocore retried, by operation",
        metadata=cost,
    )
    if failed:
        rows = "\n".join(
            f"| `{o.topic}` | {STAGE_ASSET_KEYS[o.failed_stage].to_user_string()} | {o.error} |"
            for o in failed
        )
        left_out = len(failed) - FAILURES_DESCRIBED
        raise Failure(
            description=(
                f"{len(failed)} of {len(topics)} topics failed: "
                + "; ".join(f"{o.topic}: {o.error}" for o in failed[:FAILURES_DESCRIBED])
                + (f"; and {left_out} more (failed_topics lists every one)" if left_out > 0 else "")
            ),
            metadata={
                "failed_topics": MetadataValue.md(
                    f"| topic | stage | error |\n|---|---|---|\n{rows}"
                ),
                **cost,
            },
        )


class SchemaChangeReporter:
    """The `schema_change_is_compatible` evaluation of each topic whose new schema version the
    run read: a version after the first, and not one the mapping already held (the asset stage
    found it unchanged, or the registry token said so). DataZone's owners are read once."""

    def __init__(self, run: SyncRun) -> None:
        self._run = run
        self._project_owners: tuple[Owner, ...] | None = None

    def evaluations(self, outcome: TopicOutcome) -> Iterator[AssetCheckEvaluation]:
        snapshot = outcome.schema
        if Stage.SCHEMA not in outcome.completed or snapshot is None or snapshot.version < 2:
            return
        if outcome.unchanged_by_token or (outcome.asset and outcome.asset.action == "unchanged"):
            return
        try:
            if self._project_owners is None:
                self._project_owners = datazone_owners(self._run)
            report = topic_impact(
                self._run, outcome.topic, self._project_owners, version=snapshot.version
            )
        except (SyncError, ClientError, BotoCoreError, InvalidOwner) as error:
            # The sync itself succeeded: the check waits for the next version or a manual run.
            self._run.log.warning(
                f"{outcome.topic}: {SCHEMA_CHANGE_CHECK} not evaluated: {describe_error(error)}"
            )
            return
        self._run.log.info(report.summary())
        yield schema_change_evaluation(report, REGISTRY_SCHEMA)


def forget_registry_digest(run: SyncRun) -> None:
    """After this run wrote mappings, the headless sync's registry digest no longer vouches
    for them (see `MappingStore.forget_digest`)."""
    try:
        run.mappings.forget_digest(run.registry_arn)
    except (ClientError, BotoCoreError) as error:
        run.log.warning(
            "the registry digest of `dzlineage sync` could not be dropped; a headless sync "
            "racing this run may skip topics whose mapping this run rewrote until the "
            f"registry changes or `dzlineage sync --reconcile`: {describe_error(error)}"
        )


def api_cost_metadata(run: SyncRun) -> dict[str, object]:
    """The run's AWS calls and botocore's retries by `service.Operation`, and their totals:
    the figures the `dzlineage sync` summary prints, from the same counters."""
    calls, retries = run.api_calls(), run.api_retries()
    return {
        "api_calls": MetadataValue.json(calls),
        "api_call_total": sum(calls.values()),
        "api_retries": MetadataValue.json(retries),
        "api_retry_total": sum(retries.values()),
    }


def materializations(
    outcome: TopicOutcome, stages: set[Stage], topology: Topology
) -> Iterator[AssetMaterialization]:
    """One materialization per selected stage the topic completed, with that stage's metadata."""
    done = outcome.completed & stages
    if Stage.SCHEMA in done:
        yield AssetMaterialization(
            REGISTRY_SCHEMA, partition=outcome.topic, metadata=schema_metadata(outcome.schema)
        )
    if Stage.ASSET in done:
        metadata = (
            asset_metadata(outcome.asset, outcome.publication)
            if outcome.asset is not None
            else {
                "action": NOT_CATALOGED.done,
                "reason": not_cataloged_reason(outcome.schema, topology),
            }
        )
        yield AssetMaterialization(DATAZONE_TOPIC_ASSET, partition=outcome.topic, metadata=metadata)
    if Stage.LINEAGE in done:
        yield AssetMaterialization(
            TOPIC_LINEAGE, partition=outcome.topic, metadata=lineage_metadata(outcome.lineage)
        )


def not_cataloged_reason(snapshot: SchemaSnapshot, topology: Topology) -> str:
    if snapshot.kind is TopicKind.OTHER_REGISTRY:
        return topology.lineage_for(snapshot.topic).reason
    return f"{snapshot.kind.value} topic: connector plumbing, not table data"


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
        "dagster/column_schema": table_schema(snapshot.columns),
    }


def asset_metadata(outcome: AssetOutcome, publication: Publication | None) -> dict[str, object]:
    record = outcome.record
    metadata: dict[str, object] = {
        "action": outcome.action,
        "datazone_asset_id": record.asset_id,
        "datazone_asset_revision": record.asset_revision,
        "asset_type_revision": record.asset_type_revision,
        "schema_version": record.schema_version,
        # The revision subscribers see in the catalog (empty: not published by the sync).
        "published_revision": record.published_revision,
    }
    if publication is not None:
        metadata["catalog"] = publication.summary
        metadata["listing_id"] = publication.listing_id
        metadata["listing_revision"] = publication.listing_revision
        metadata["listing_status"] = publication.status
    if outcome.url:
        metadata["datazone_asset_url"] = MetadataValue.url(outcome.url)
    return metadata


def lineage_metadata(outcome: LineageOutcome) -> dict[str, object]:
    """The topic's edges, where each came from, and its column lineage for Dagster's UI."""
    lineage, plan = outcome.lineage, outcome.plan
    metadata: dict[str, object] = {
        "edge": MetadataValue.md(outcome.summary),
        "mapping_origin": lineage.origin,
        "mapping_reason": lineage.reason,
        "events_posted": outcome.events_posted,
        "events_already_held": outcome.events_already_held,
        "source_tables": [t.qualified for t in lineage.source_tables],
        "tables": [str(t.ref) for t in lineage.tables],
        "jobs": [hop.job_label for hop in plan.hops],
        # What each destination (DZLINEAGE_LINEAGE_DESTINATIONS) took: 0, it held it already.
        "events_posted_to": dict(outcome.destinations)
        or {destination.name: 0 for destination in plan.destinations},
    }
    if plan.hops:
        rows = "\n".join(
            f"| {hop.side} | {', '.join(d.name for d in hop.inputs)} | `{hop.job_label}` | "
            f"{', '.join(d.name for d in hop.outputs)} | {hop.origin} |"
            for hop in plan.hops
        )
        metadata["edges"] = MetadataValue.md(
            f"| hop | inputs | job | outputs | origin |\n|---|---|---|---|---|\n{rows}"
        )
        metadata["openlineage_fingerprint"] = plan.fingerprint
    if lineage.tables:
        metadata["iceberg_table"] = str(lineage.tables[0].ref)
        metadata["output_source_identifier"] = outcome.output_source_identifier
    if lineage.ambiguous_reason:
        metadata["ambiguous_reason"] = lineage.ambiguous_reason
    if lineage.origin == "convention":
        metadata["mapping_is_guess"] = True
    if outcome.split:
        metadata["events_split"] = True
    if outcome.trimmed:
        metadata["column_facets_dropped"] = True
    if outcome.oversized_hops:
        metadata["oversized_hops"] = list(outcome.oversized_hops)
    column_lineage = dagster_column_lineage(plan)
    if column_lineage is not None:
        metadata["dagster/column_lineage"] = column_lineage
    return metadata


def dagster_column_lineage(plan: LineagePlan) -> TableColumnLineage | None:
    """Each Iceberg column <- the topic's field (the `registry_schema` asset's column)."""
    deps: dict[str, list[TableColumnDep]] = {}
    for hop in plan.hops:
        if hop.side != "sink":
            continue
        for output in hop.outputs:
            for column, refs in (output.column_lineage or {}).items():
                deps.setdefault(column, [])
                for ref in refs:
                    dep = TableColumnDep(REGISTRY_SCHEMA, ref.field.removeprefix(ENVELOPE_PREFIX))
                    if dep not in deps[column]:
                        deps[column].append(dep)
    return TableColumnLineage(deps_by_column=deps) if deps else None
