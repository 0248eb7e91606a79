"""The three per-topic assets: registry schema -> DataZone asset -> lineage.

They are one multi-asset step so a run over many topics (the first sync of a whole registry)
is one process, and so each topic succeeds or fails on its own: every topic that made it gets
its own materialization with its own metadata; a failing topic gets none and is named in the
run's failure.
"""

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

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

from dzlineage_dagster.assets.common import (
    GROUP,
    OWNERS,
    kafka_topics,
    scope_resource,
    table_schema,
)
from dzlineage_dagster.assets.custom_types import (
    CUSTOM_TYPES_KEY,
    ensure_types,
    types_materialization,
)
from dzlineage_dagster.assets.schema_change import SCHEMA_CHANGE_CHECK, schema_change_evaluation
from dzlineage_dagster.core.connectors.topics import TopicKind
from dzlineage_dagster.core.connectors.topology import Topology
from dzlineage_dagster.core.ownership.owners import InvalidOwner, Owner
from dzlineage_dagster.core.scopes import keys_by_scope, partition_key
from dzlineage_dagster.core.topic_states import NOT_CATALOGED
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.scopes import in_scope_terms
from dzlineage_dagster.sync.catalog.owners import datazone_owners
from dzlineage_dagster.sync.checks.authorization import check_authorization
from dzlineage_dagster.sync.checks.preflight import (
    check_cluster,
    check_ownership,
    check_registry,
)
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
        deps=[REGISTRY_SCHEMA, CUSTOM_TYPES_KEY],
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
    keys = list(context.partition_keys)
    stages = {STAGE_OF_ASSET_KEY[key] for key in context.selected_asset_keys}
    context.log.info(
        f"syncing {len(keys)} topics: {', '.join(STAGE_ASSET_KEYS[s].to_user_string() for s in Stage if s in stages)}"
    )
    # The partitions are the registries' topics as the sensors last listed them: a run over a
    # few looks those up by name instead of listing the whole registry.
    known = keys_by_scope(context.instance.get_dynamic_partitions(kafka_topics.name))
    syncs = ScopeSyncs(context, lineage_sync, stages)
    for scope, topics in keys_by_scope(keys).items():
        yield from syncs.sync(scope, topics, known.get(scope, []))
    calls, retries = syncs.api_calls()
    context.log.info(f"AWS API calls: {calls}")
    if retries:
        context.log.warning(f"AWS API attempts retried: {retries}")
    cost = api_cost_metadata(calls, retries)
    # The run's totals are known only now, after every topic's materializations went out:
    # they are one observation of the step's first asset, not a figure on each topic.
    yield AssetObservation(
        STAGE_ASSET_KEYS[next(s for s in Stage if s in stages)],
        description="AWS API calls this run made, and the attempts botocore retried, by operation",
        metadata=cost,
    )
    if syncs.failed:
        raise syncs.failure(len(keys), cost)


@dataclass(frozen=True)
class FailedTopic:
    """A topic the run could not sync: its partition key, the stage it failed in, and why."""

    key: str
    stage: str
    error: str


class ScopeSyncs:
    """The run's topics scope by scope, each a :class:`SyncRun` with its scope's settings,
    Region and role. A scope that cannot start (its cluster, the project's ownership or
    authorization, a key naming no scope) fails its own topics only; the others still sync."""

    def __init__(
        self, context: AssetExecutionContext, lineage_sync: LineageSyncResource, stages: set[Stage]
    ) -> None:
        self.context, self.lineage_sync, self.stages = context, lineage_sync, stages
        self.runs: list[SyncRun] = []
        self.failed: list[FailedTopic] = []
        #: Per scope that could not start: why, and how many topics it left untried.
        self.not_started: dict[str | None, tuple[str, int]] = {}
        self._types_ensured = False

    def sync(
        self, scope: str | None, topics: list[str], known: list[str]
    ) -> Iterator[AssetMaterialization | AssetCheckEvaluation]:
        """Sync ``topics`` of ``scope`` (``known``: the scope's partitions, its topics)."""
        try:
            run = SyncRun.over_topics(
                scope_resource(self.lineage_sync, scope), self.context.log, topics, known
            )
            self.runs.append(run)
            self._preflight(run, topics)
        except (SyncError, ClientError, BotoCoreError) as error:
            if scope is None and not self.lineage_sync.scopes:
                # The one registry's wrong cluster or project fails every topic the same
                # way: say it once, try none.
                if isinstance(error, SyncError):
                    raise Failure(description=str(error)) from None
                raise
            self._not_started(scope, topics, describe_error(error))
            return
        if Stage.ASSET in self.stages and not self._types_ensured:
            # DataZone's side is shared: its custom types are ensured once a run.
            self._types_ensured = True
            types = types_materialization(self.context, self.context.instance, ensure_types(run))
            if types is not None:
                yield types
        impact = SchemaChangeReporter(run)
        for outcome in sync_topics(run, topics, self.stages):
            key = partition_key(scope, outcome.topic)
            yield from materializations(outcome, self.stages, run.topology, key)
            yield from impact.evaluations(outcome, key)
            if not outcome.ok:
                stage = STAGE_ASSET_KEYS[outcome.failed_stage].to_user_string()
                self.failed.append(FailedTopic(key, stage, str(outcome.error)))
        if run.mappings.committed:
            forget_registry_digest(run)

    def _preflight(self, run: SyncRun, topics: list[str]) -> None:
        if not self.stages & {Stage.ASSET, Stage.LINEAGE}:
            return
        # What the checks below and the topics' stages read first, at once: the topology is
        # built from the connectors and the registry; the authorization check reads the domain.
        run.prefetch(
            "cluster",
            "connectors",
            "registry_topics",
            *(["domain"] if Stage.ASSET in self.stages else []),
        )
        check_registry(run)
        check_cluster(run)
        if Stage.ASSET in self.stages:
            check_ownership(run, topics)
            check_authorization(run, (), asset_writes=True)

    def _not_started(self, scope: str | None, topics: list[str], error: str) -> None:
        if scope:
            # Said in the scope's terms: its msk_cluster_arn, its role_arn, as written in
            # DZLINEAGE_SCOPES, not the variables its settings stand in for.
            config = next((c for c in self.lineage_sync.scopes if c.name == scope), None)
            error = f"scope {scope}: {in_scope_terms(config, error)}"
        self.context.log.error(f"{error}: its {len(topics)} topics were not synced")
        self.not_started[scope] = (error, len(topics))
        self.failed += [FailedTopic(partition_key(scope, t), "preflight", error) for t in topics]

    def api_calls(self) -> tuple[dict[str, int], dict[str, int]]:
        """The run's AWS calls and botocore's retries by operation, over every scope's
        resources (DataZone's side, which the scopes share, counted once)."""
        resources = {id(aws): aws for run in self.runs for aws in run.resource.aws_resources}
        calls: Counter[str] = Counter()
        retries: Counter[str] = Counter()
        for aws in resources.values():
            calls.update(aws.api_calls)
            retries.update(aws.api_retries)
        return dict(sorted(calls.items())), dict(sorted(retries.items()))

    def failure(self, topics: int, cost: dict[str, object]) -> Failure:
        """The run's failure: each scope that could not start said once, then the topics that
        failed; ``failed_topics`` lists every failed topic by its partition key."""
        said = [f"{error} ({count} topics not tried)" for error, count in self.not_started.values()]
        said += [f"{f.key}: {f.error}" for f in self.failed if f.stage != "preflight"]
        rows = "\n".join(f"| `{f.key}` | {f.stage} | {f.error} |" for f in self.failed)
        left_out = len(said) - FAILURES_DESCRIBED
        return Failure(
            description=(
                f"{len(self.failed)} of {topics} topics failed: "
                + "; ".join(said[:FAILURES_DESCRIBED])
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

    def evaluations(self, outcome: TopicOutcome, partition: str) -> Iterator[AssetCheckEvaluation]:
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
        yield schema_change_evaluation(report, REGISTRY_SCHEMA, partition)


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


def api_cost_metadata(calls: dict[str, int], retries: dict[str, int]) -> dict[str, object]:
    """The run's AWS calls and botocore's retries by `service.Operation`, and their totals:
    the figures the `dzlineage sync` summary prints, from the same counters."""
    return {
        "api_calls": MetadataValue.json(calls),
        "api_call_total": sum(calls.values()),
        "api_retries": MetadataValue.json(retries),
        "api_retry_total": sum(retries.values()),
    }


def materializations(
    outcome: TopicOutcome, stages: set[Stage], topology: Topology, partition: str
) -> Iterator[AssetMaterialization]:
    """One materialization per selected stage the topic completed, with that stage's metadata,
    of the topic's ``partition``."""
    done = outcome.completed & stages
    if Stage.SCHEMA in done:
        yield AssetMaterialization(
            REGISTRY_SCHEMA, partition=partition, metadata=schema_metadata(outcome.schema)
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
        yield AssetMaterialization(DATAZONE_TOPIC_ASSET, partition=partition, metadata=metadata)
    if Stage.LINEAGE in done:
        yield AssetMaterialization(
            TOPIC_LINEAGE, partition=partition, metadata=lineage_metadata(outcome.lineage)
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
