"""Invariants of the catalog, checked against AWS itself (each can fail)."""

from collections import defaultdict

from dagster import AssetCheckResult, AssetCheckSeverity, MetadataValue, asset_check

from dzlineage_dagster.assets.topics import DATAZONE_TOPIC_ASSET, TOPIC_LINEAGE
from dzlineage_dagster.resources import CatalogResource
from dzlineage_dagster.sync.environment import SyncEnvironment


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
def ssm_mappings_point_at_existing_assets(catalog: CatalogResource) -> AssetCheckResult:
    env = SyncEnvironment.of(catalog)
    client = catalog.datazone.client()
    problems = []
    for record in env.stored_records.values():
        try:
            client.get_asset(domainIdentifier=env.settings.domain_id, identifier=record.asset_id)
        except client.exceptions.ResourceNotFoundException:
            problems.append(f"{record.topic}: asset {record.asset_id} does not exist")
    return _problems_result(problems, len(env.stored_records), "mappings")


@asset_check(
    asset=DATAZONE_TOPIC_ASSET,
    description="No two DataZone assets of the project share a schema ARN (externalIdentifier).",
)
def no_two_assets_share_a_schema(catalog: CatalogResource) -> AssetCheckResult:
    settings = catalog.settings
    by_schema: dict[str, list[str]] = defaultdict(list)
    items = catalog.datazone.search_assets(
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
def lineage_tables_exist_in_glue(catalog: CatalogResource) -> AssetCheckResult:
    env = SyncEnvironment.of(catalog)
    problems, checked = [], 0
    for topic in env.registry_topics:
        table = env.mapper.map_topic(topic).table
        if table is None:
            continue
        checked += 1
        if not catalog.registry.table_exists(table.database, table.table):
            problems.append(f"{topic} -> {table}: no such Glue table")
    return _problems_result(problems, checked, "lineage output tables")


ALL_CHECKS = [
    ssm_mappings_point_at_existing_assets,
    no_two_assets_share_a_schema,
    lineage_tables_exist_in_glue,
]
