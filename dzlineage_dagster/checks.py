"""Invariants of the catalog, checked against AWS itself (each can fail)."""

import json
from collections import defaultdict
from collections.abc import Callable

from botocore.exceptions import BotoCoreError, ClientError
from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetCheckSeverity,
    MetadataValue,
    asset_check,
)

from dzlineage_dagster.assets.common import Advice, kafka_topics, scope_resource
from dzlineage_dagster.assets.schema_change import (
    SCHEMA_CHANGE_CHECK,
    SCHEMA_CHANGE_DESCRIPTION,
    schema_change_result,
)
from dzlineage_dagster.assets.topics import (
    CONNECTOR_TOPOLOGY,
    DATAZONE_TOPIC_ASSET,
    REGISTRY_SCHEMA,
    TOPIC_LINEAGE,
)
from dzlineage_dagster.core.catalog.forms import KAFKA_SCHEMA_FORM
from dzlineage_dagster.core.connectors import report as topology_report
from dzlineage_dagster.core.connectors.topics import TopicKind
from dzlineage_dagster.core.lineage.readback import ReadbackReport
from dzlineage_dagster.core.mapping.ssm_names import MappingRecord
from dzlineage_dagster.core.scopes import split_partition_key
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sync.catalog.owners import datazone_owners
from dzlineage_dagster.sync.errors import SyncError, describe_error
from dzlineage_dagster.sync.lineage.impact import topic_impact
from dzlineage_dagster.sync.lineage.readback import last_sync_readback
from dzlineage_dagster.sync.run_state import SyncRun


def _problems_result(
    problems: list[str],
    checked: int,
    what: str,
    advice: Advice,
    severity: AssetCheckSeverity = AssetCheckSeverity.ERROR,
    metadata: dict | None = None,
) -> AssetCheckResult:
    explained = advice.metadata() if problems else {}
    return AssetCheckResult(
        passed=not problems,
        severity=severity,
        description=(
            f"{len(problems)} of {checked} {what}: {_listed(problems)}"
            if problems
            else f"all {checked} {what} ok"
        ),
        metadata={
            **explained,
            "checked": checked,
            "problems": MetadataValue.json(problems[:100]),
            **(metadata or {}),
        },
    )


def _across_scopes(
    lineage_sync: LineageSyncResource, check: Callable[[SyncRun], tuple[list[str], int]]
) -> tuple[list[str], int]:
    """``check``'s problems and count over every scope (each problem named by its scope),
    each scope as it sees the platform (its registry, cluster, Glue database, Region and
    role); a scope AWS refuses is a problem of its own, not the end of the check."""
    if not lineage_sync.scopes:
        return check(SyncRun(lineage_sync))
    problems, checked = [], 0
    for scope in lineage_sync.scope_names:
        try:
            found, count = check(SyncRun(scope_resource(lineage_sync, scope)))
        except (ClientError, BotoCoreError, SyncError) as error:
            found, count = [f"not checked: {describe_error(error)}"], 0
        problems += [f"{scope}: {problem}" for problem in found]
        checked += count
    return problems, checked


def _scope_records(run: SyncRun) -> dict[str, MappingRecord]:
    """The mapping's records a check reads, read only; with scopes, those of the run's
    registry (the mapping holds every scope's, each keyed by its schema ARN)."""
    run.mappings.read_only = True  # the checks write nothing, not even a layout migration
    records = run.mappings.all()
    if run.resource.scopes:
        records = {arn: record for arn, record in records.items() if run.in_registry(record)}
    return records


def _listed(problems: list[str], shown: int = 3) -> str:
    """The first problems, for the one-line description the check's row shows."""
    more = f"; {len(problems) - shown} more in `problems`" if len(problems) > shown else ""
    return "; ".join(problems[:shown]) + more


MISSING_ASSETS = Advice(
    why=(
        "The topic's SSM mapping names a DataZone asset that is gone (deleted in the portal or "
        "by another tool): the topic has no asset in the catalog until it is put back."
    ),
    what_to_do=(
        "Run the `catalog_reconcile` job (or `dzlineage sync --reconcile`): it recreates or "
        "re-maps the asset of each topic listed."
    ),
)


@asset_check(
    asset=DATAZONE_TOPIC_ASSET,
    description="Every SSM mapping points at a DataZone asset that exists.",
)
def ssm_mappings_point_at_existing_assets(lineage_sync: LineageSyncResource) -> AssetCheckResult:
    problems, checked = _across_scopes(lineage_sync, _missing_assets)
    return _problems_result(problems, checked, "mappings", MISSING_ASSETS)


def _missing_assets(run: SyncRun) -> tuple[list[str], int]:
    records = _scope_records(run)
    client = run.resource.datazone.client()
    problems = []
    for record in records.values():
        try:
            client.get_asset(domainIdentifier=run.settings.domain_id, identifier=record.asset_id)
        except client.exceptions.ResourceNotFoundException:
            problems.append(f"{record.topic}: asset {record.asset_id} does not exist")
    return problems, len(records)


DUPLICATE_ASSETS = Advice(
    why=(
        "More than one asset of the project claims the schema: one made without an "
        "externalIdentifier (by hand or by another tool) names it in its KafkaSchemaForm, so "
        "the catalog shows the topic twice."
    ),
    what_to_do=(
        "Keep the asset the topic's SSM mapping names (the `datazone_asset_id` of its "
        "`datazone_topic_asset` partition) and delete the others in DataZone."
    ),
)


@asset_check(
    asset=DATAZONE_TOPIC_ASSET,
    description=(
        "No two DataZone assets of the project share a schema ARN (externalIdentifier, or the "
        "KafkaSchemaForm of an asset made without one)."
    ),
)
def no_two_assets_share_a_schema(lineage_sync: LineageSyncResource) -> AssetCheckResult:
    settings = lineage_sync.settings
    by_schema: dict[str, list[str]] = defaultdict(list)
    # DataZone refuses a repeated externalIdentifier, so a real duplicate is an asset made
    # without one (by hand, or by another tool) that names the schema only in its form.
    items = lineage_sync.datazone.paginate(
        "datazone",
        "search",
        "items",
        page_size=50,
        domainIdentifier=settings.domain_id,
        searchScope="ASSET",
        owningProjectIdentifier=settings.project_id,
        additionalAttributes=["FORMS"],
    )
    for item in (i["assetItem"] for i in items if "assetItem" in i):
        for arn in _schema_arns(item):
            by_schema[arn].append(item["identifier"])
    problems = [f"{arn}: {ids}" for arn, ids in by_schema.items() if len(ids) > 1]
    return _problems_result(problems, len(by_schema), "schemas with assets", DUPLICATE_ASSETS)


def _schema_arns(asset_item: dict) -> set[str]:
    """The schema ARNs a Search asset item claims: its externalIdentifier and its schema form's."""
    arns = {asset_item["externalIdentifier"]} if asset_item.get("externalIdentifier") else set()
    for form in asset_item.get("additionalAttributes", {}).get("formsOutput", []):
        if form.get("typeName") == KAFKA_SCHEMA_FORM.name:
            arn = json.loads(form.get("content") or "{}").get("schema_arn")
            if arn:
                arns.add(arn)
    return arns


MISSING_TABLES = Advice(
    why=(
        "The lineage points at Iceberg tables the Glue Data Catalog does not hold: the sink "
        "has not created them yet, or its routing names a table that does not exist."
    ),
    what_to_do=(
        "Compare the sink's routing (the `edges` of `connector_topology`) with the Glue "
        "database; pin a wrong edge with an override (`DZLINEAGE_LINEAGE_OVERRIDES`, "
        "docs/lineage.md). A table the sink creates later passes the next run."
    ),
)


@asset_check(
    asset=TOPIC_LINEAGE,
    description="Every Iceberg table the lineage points at exists in the Glue Data Catalog.",
)
def lineage_tables_exist_in_glue(lineage_sync: LineageSyncResource) -> AssetCheckResult:
    problems, checked = _across_scopes(lineage_sync, _missing_tables)
    return _problems_result(problems, checked, "lineage output tables", MISSING_TABLES)


def _missing_tables(run: SyncRun) -> tuple[list[str], int]:
    problems, checked = [], 0
    for topic in run.registry_topics:
        for table in run.topology.lineage_for(topic).tables:
            checked += 1
            # GetTable refuses such a name outright (ValidationException): report, don't ask.
            problem = table.ref.glue_name_problem
            if problem:
                problems.append(f"{topic} -> {problem}")
            elif not run.resource.data_catalog.table_exists(
                table.database, table.table, run.settings.glue_catalog_id
            ):
                problems.append(f"{topic} -> {table.ref}: no such Glue table")
    return problems, checked


UNLANDED_LINEAGE = Advice(
    why=(
        "DataZone did not file the lineage the last sync posted on the Glue table's node or "
        "the topic asset's node (or the read-back could not run, and says why)."
    ),
    what_to_do=(
        "Run the `catalog_reconcile` job (or `dzlineage sync --reconcile`): it re-posts "
        "missing or FAILED lineage. If a table's node still lacks its topic, see "
        "docs/lineage-nodes.md for how DataZone names the nodes."
    ),
)


@asset_check(
    asset=TOPIC_LINEAGE,
    description=(
        "The lineage the last sync posted landed on AWS's own nodes: GetLineageNode by each "
        "Glue table's ARN has its topic upstream, and each topic asset is linked to its topic's "
        "node (docs/lineage-nodes.md)."
    ),
)
def lineage_landed_on_datazone_nodes(lineage_sync: LineageSyncResource) -> AssetCheckResult:
    return _readback_result(lineage_sync, "datazone", UNLANDED_LINEAGE)


UNLANDED_GLUE_LINEAGE = Advice(
    why=(
        "The Glue Data Catalog's lineage graph does not show the lineage the last sync posted "
        "there: GetLineageNode by the Glue table's ARN lacks its topic upstream (or the "
        "read-back could not run, and says why). Glue processes events asynchronously and "
        "reports no status: an event it could not use is dropped silently."
    ),
    what_to_do=(
        "Run the `catalog_reconcile` job (or `dzlineage sync --reconcile`), which posts the "
        "lineage again; if the table's node still lacks its topic, see docs/glue-lineage.md "
        "for how Glue names the nodes."
    ),
)


@asset_check(
    asset=TOPIC_LINEAGE,
    description=(
        "Where DZLINEAGE_LINEAGE_DESTINATIONS names glue: the lineage the last sync posted "
        "landed in the Glue Data Catalog's lineage graph, GetLineageNode by each Glue table's "
        "ARN having its topic upstream (docs/glue-lineage.md). Passes, saying so, where glue "
        "is not a destination."
    ),
)
def lineage_landed_on_glue_nodes(lineage_sync: LineageSyncResource) -> AssetCheckResult:
    destinations = lineage_sync.settings.lineage_destinations
    if "glue" not in destinations:
        return AssetCheckResult(
            passed=True,
            description=(
                f"nothing to read back: the sync posts lineage to {', '.join(destinations)}, "
                "not to the Glue Data Catalog (DZLINEAGE_LINEAGE_DESTINATIONS)"
            ),
        )
    return _readback_result(lineage_sync, "glue", UNLANDED_GLUE_LINEAGE)


def _readback_result(
    lineage_sync: LineageSyncResource, graph: str, advice: Advice
) -> AssetCheckResult:
    reports: list[ReadbackReport] = []

    def read_back(run: SyncRun) -> tuple[list[str], int]:
        # With scopes, the topics of the run's registry's records (not another scope's).
        topics = [r.topic for r in _scope_records(run).values()] if run.resource.scopes else None
        report = last_sync_readback(run, topics, graph=graph)
        reports.append(report)
        # A read-back that could not run proves nothing: it fails, saying why.
        problems = [str(m) for m in report.mismatches]
        return problems + ([] if report.checked else [*report.notes]), report.tables + report.assets

    problems, checked = _across_scopes(lineage_sync, read_back)
    return _problems_result(
        problems,
        checked,
        "lineage landings",
        advice,
        metadata={
            "read-back": MetadataValue.text("\n".join(report.summary for report in reports)),
            "GetLineageNode calls": sum(report.calls for report in reports),
        },
    )


# --- the connector topology: drift and gaps the connector configs reveal ---------------------


CONVENTION_DRIFT = Advice(
    why=(
        "The naming convention would link these topics to other tables than their connectors "
        "(or overrides) do. The lineage follows the connectors, so it is right; the "
        "convention decides only topics no connector covers."
    ),
    what_to_do=(
        "Nothing while the connectors are right. To keep such an edge should its connector "
        "become unreadable, pin it with an override (`DZLINEAGE_LINEAGE_OVERRIDES`, "
        "docs/lineage.md)."
    ),
)


@asset_check(
    asset=CONNECTOR_TOPOLOGY,
    description=(
        "Drift: every table topic whose tables come from a connector or an override is where "
        "the naming convention would put it; an offender is a topic the convention would have "
        "linked to the wrong table (a warning: the connector is right, the convention is not)."
    ),
)
def connector_mapping_matches_convention(lineage_sync: LineageSyncResource) -> AssetCheckResult:
    def drift(run: SyncRun) -> tuple[list[str], int]:
        return topology_report.drift(run.topology, run.convention), _table_topics(run)

    problems, checked = _across_scopes(lineage_sync, drift)
    return _problems_result(
        problems, checked, "table topics", CONVENTION_DRIFT, AssetCheckSeverity.WARN
    )


UNSUNK_TOPICS = Advice(
    why=(
        "No Iceberg sink connector consumes these table topics: their rows reach no Iceberg "
        "table, and their lineage ends at the topic."
    ),
    what_to_do=(
        "Add each topic to an Iceberg sink's `topics` or `topics.regex`; a topic that is not "
        "meant for the lakehouse needs no sink, and its schema may leave the registry."
    ),
)


@asset_check(
    asset=CONNECTOR_TOPOLOGY,
    description="Every table topic is consumed by an Iceberg sink connector.",
)
def every_table_topic_has_a_sink(lineage_sync: LineageSyncResource) -> AssetCheckResult:
    def unsunk(run: SyncRun) -> tuple[list[str], int]:
        return topology_report.table_topics_without_sink(run.topology), _table_topics(run)

    problems, checked = _across_scopes(lineage_sync, unsunk)
    return _problems_result(problems, checked, "table topics", UNSUNK_TOPICS)


def _table_topics(run: SyncRun) -> int:
    return sum(1 for lineage in run.topology.lineages() if lineage.kind is TopicKind.TABLE)


UNFED_TABLES = Advice(
    why=(
        "No topic's sink writes these Iceberg tables, so DataZone shows nothing upstream of "
        "them: batch tables (legitimate, hence a warning) or tables of a retired topic."
    ),
    what_to_do=(
        "Nothing for a batch table. Otherwise route its topic to it in the sink, or add an "
        "override (`DZLINEAGE_LINEAGE_OVERRIDES`, docs/lineage.md)."
    ),
)


@asset_check(
    asset=CONNECTOR_TOPOLOGY,
    description=(
        "Every Iceberg table in the catalog's Glue database(s) (DZLINEAGE_GLUE_DATABASE and "
        "those the sinks write) is fed by a topic; a warning, since batch tables are legitimate."
    ),
)
def every_iceberg_table_is_fed_by_a_topic(lineage_sync: LineageSyncResource) -> AssetCheckResult:
    problems, checked = _across_scopes(lineage_sync, _unfed_tables)
    return _problems_result(
        problems, checked, "Iceberg tables", UNFED_TABLES, AssetCheckSeverity.WARN
    )


def _unfed_tables(run: SyncRun) -> tuple[list[str], int]:
    fed = topology_report.fed_tables(run.topology)
    databases = sorted({run.settings.glue_database, *(db for db, _ in fed)})
    problems, checked = [], 0
    for database in databases:
        for table in run.resource.data_catalog.tables(database, run.settings.glue_catalog_id):
            if (table.get("Parameters") or {}).get("table_type", "").upper() != "ICEBERG":
                continue
            checked += 1
            if (database.lower(), table["Name"].lower()) not in fed:
                problems.append(f"{database}.{table['Name']}: no topic feeds this Iceberg table")
    return problems, checked


AMBIGUOUS_EDGES = Advice(
    why=(
        "The connector configurations leave these edges undecided (each listed with the "
        "reason): the sync posts no lineage for them rather than a guess."
    ),
    what_to_do="Decide each with an override (`DZLINEAGE_LINEAGE_OVERRIDES`, docs/lineage.md).",
)


@asset_check(
    asset=CONNECTOR_TOPOLOGY,
    description=(
        "No lineage edge is ambiguous: every topic, include pattern and sink route the "
        "connector configs leave undecided is listed with the reason (add an override)."
    ),
)
def no_ambiguous_edges(lineage_sync: LineageSyncResource) -> AssetCheckResult:
    def ambiguous(run: SyncRun) -> tuple[list[str], int]:
        return topology_report.ambiguous_edges(run.topology), len(run.topology.topics)

    problems, checked = _across_scopes(lineage_sync, ambiguous)
    return _problems_result(problems, checked, "topics and patterns", AMBIGUOUS_EDGES)


UNKNOWN_CONNECTORS = Advice(
    why=(
        "These connectors are neither a Debezium relational source nor an Iceberg sink, so "
        "their configuration maps no topic to a table."
    ),
    what_to_do=(
        "Map their topics with overrides (`DZLINEAGE_LINEAGE_OVERRIDES`, docs/lineage.md); "
        "docs/scope.md lists the connectors understood."
    ),
)


@asset_check(
    asset=CONNECTOR_TOPOLOGY,
    description=(
        "Every connector's class is understood (a Debezium relational source or an Iceberg "
        "sink): the topics of any other connector are not mapped from its configuration."
    ),
)
def every_connector_is_understood(lineage_sync: LineageSyncResource) -> AssetCheckResult:
    def unknown(run: SyncRun) -> tuple[list[str], int]:
        return topology_report.unknown_connectors(run.topology), len(run.topology.connectors)

    problems, checked = _across_scopes(lineage_sync, unknown)
    return _problems_result(problems, checked, "connectors", UNKNOWN_CONNECTORS)


@asset_check(
    asset=REGISTRY_SCHEMA,
    name=SCHEMA_CHANGE_CHECK,
    partitions_def=kafka_topics,
    description=SCHEMA_CHANGE_DESCRIPTION,
)
def schema_change_is_compatible(
    context: AssetCheckExecutionContext, lineage_sync: LineageSyncResource
) -> AssetCheckResult:
    """One topic's partition, on demand (the catalog sync reports it for each new version)."""
    scope, topic = split_partition_key(context.partition_key)
    run = SyncRun(scope_resource(lineage_sync, scope), context.log)
    return schema_change_result(topic_impact(run, topic, datazone_owners(run)))


#: The checks of the whole catalog (the `catalog_checks` job); the per-topic
#: `schema_change_is_compatible` is partitioned and runs per topic, not in that job.
ALL_CHECKS = [
    ssm_mappings_point_at_existing_assets,
    no_two_assets_share_a_schema,
    lineage_tables_exist_in_glue,
    lineage_landed_on_datazone_nodes,
    lineage_landed_on_glue_nodes,
    connector_mapping_matches_convention,
    every_table_topic_has_a_sink,
    every_iceberg_table_is_fed_by_a_topic,
    no_ambiguous_edges,
    every_connector_is_understood,
]
