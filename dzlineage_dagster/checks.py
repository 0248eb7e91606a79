"""Invariants of the catalog, checked against AWS itself (each can fail)."""

import json
from collections import defaultdict

from dagster import AssetCheckResult, AssetCheckSeverity, MetadataValue, asset_check

from dzlineage_dagster.assets.topics import DATAZONE_TOPIC_ASSET, TOPIC_LINEAGE
from dzlineage_dagster.core.forms import KAFKA_SCHEMA_FORM
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
    records = SyncRun(lineage_sync).mappings.all()
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
    return _problems_result(problems, len(by_schema), "schemas with assets")


def _schema_arns(asset_item: dict) -> set[str]:
    """The schema ARNs a Search asset item claims: its externalIdentifier and its schema form's."""
    arns = {asset_item["externalIdentifier"]} if asset_item.get("externalIdentifier") else set()
    for form in asset_item.get("additionalAttributes", {}).get("formsOutput", []):
        if form.get("typeName") == KAFKA_SCHEMA_FORM.name:
            arn = json.loads(form.get("content") or "{}").get("schema_arn")
            if arn:
                arns.add(arn)
    return arns


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
