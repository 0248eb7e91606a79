"""Invariants of the catalog, checked against AWS itself (each can fail)."""

from collections import defaultdict

from dagster import AssetCheckResult, AssetCheckSeverity, MetadataValue, asset_check

from dzlineage_dagster.assets.topics import DATAZONE_TOPIC_ASSET, TOPIC_LINEAGE
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sync.run_state import SyncRun


def _problems_result(problems: list[str], checked: int, what: str) -> AssetCheckResult:
    return AssetCheckResult(
        passed=not problems,
        severity=AssetCheckSeverity.ERROR,
        description=f"{len(problems)} of {checked} {what}"
        if problems
        else f"all {checked} {what} ok",
        metadata={"checked": checked, "problems": MetadataValue.json(problems[:100])},
    )


@asset_check(
    asset=DATAZONE_TOPIC_ASSET,
    description="Every SSM mapping points at a DataZone asset that exists.",
)
def ssm_mappings_point_at_existing_assets(lineage_sync: LineageSyncResource) -> AssetCheckResult:
    run = SyncRun(lineage_sync)
    run.mappings.read_only = True  # the checks write nothing, not even a layout migration
    records = run.mappings.all()
    client = lineage_sync.datazone.client()
    problems = []
    for record in records.values():
        try:
            client.get_asset(
                domainIdentifier=lineage_sync.settings.domain_id, identifier=record.asset_id
            )
        except client.exceptions.ResourceNotFoundException:
            problems.append(f"{record.topic}: asset {record.asset_id} does not exist")
    return _problems_result(problems, len(records), "mappings")


@asset_check(
    asset=DATAZONE_TOPIC_ASSET,
    description="No two DataZone assets of the project share a schema ARN (externalIdentifier).",
)
def no_two_assets_share_a_schema(lineage_sync: LineageSyncResource) -> AssetCheckResult:
    settings = lineage_sync.settings
    by_schema: dict[str, list[str]] = defaultdict(list)
    items = lineage_sync.datazone.search_assets(
        settings.domain_id, owning_project_id=settings.project_id
    )
    for item in items:
        if item.get("externalIdentifier"):
            by_schema[item["externalIdentifier"]].append(item["identifier"])
    problems = [f"{arn}: {ids}" for arn, ids in by_schema.items() if len(ids) > 1]
    return _problems_result(problems, len(by_schema), "schemas with assets")


@asset_check(
    asset=TOPIC_LINEAGE,
    description="Every Iceberg table the lineage points at exists in the Glue Data Catalog.",
)
def lineage_tables_exist_in_glue(lineage_sync: LineageSyncResource) -> AssetCheckResult:
    run = SyncRun(lineage_sync)
    problems, checked = [], 0
    for topic in run.registry_topics:
        table = run.mapper.map_topic(topic).table
        if table is None:
            continue
        checked += 1
        if not lineage_sync.data_catalog.table_exists(table.database, table.table):
            problems.append(f"{topic} -> {table}: no such Glue table")
    return _problems_result(problems, checked, "lineage output tables")


ALL_CHECKS = [
    ssm_mappings_point_at_existing_assets,
    no_two_assets_share_a_schema,
    lineage_tables_exist_in_glue,
]
