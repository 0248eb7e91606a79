"""The demo imports its Glue tables as DataZone assets, as a Glue data source run does: open a
table's asset and see what feeds it, the topic and the source table, under both readings of
where DataZone files OpenLineage's Glue naming (the product's naming lands on the ARN)."""

from __future__ import annotations

import json

from dzlineage_dagster.cli import main as dzlineage

GLUE_TABLE_ASSET_TYPE = "amazon.datazone.GlueTableAssetType"


def glue_table_assets(platform) -> dict[str, dict]:
    """The domain's Glue table assets by name, with their forms."""
    datazone = platform.client("datazone")
    pages = datazone.get_paginator("search").paginate(
        domainIdentifier=platform.settings.domain_id,
        searchScope="ASSET",
        filters={"filter": {"attribute": "typeIdentifier", "value": GLUE_TABLE_ASSET_TYPE}},
    )
    found = {}
    for item in (i["assetItem"] for page in pages for i in page["items"]):
        asset = datazone.get_asset(
            domainIdentifier=platform.settings.domain_id, identifier=item["identifier"]
        )
        found[asset["name"]] = asset
    return found


def test_the_demo_s_glue_table_assets_carry_their_arn_as_source_identifier(platform):
    region, account = platform.settings.msk_cluster_arn.split(":")[3:5]
    assets = glue_table_assets(platform)
    assert {"sales_orders", "orders_history", "daily_revenue"} <= set(assets)
    for name, asset in assets.items():
        assert asset["typeIdentifier"] == GLUE_TABLE_ASSET_TYPE
        forms = {f["formName"]: json.loads(f["content"]) for f in asset["formsOutput"]}
        arn = f"arn:aws:glue:{region}:{account}:table/lakehouse/{name}"
        assert forms["AssetCommonDetailsForm"]["sourceIdentifier"] == arn
        assert forms["GlueTableForm"]["tableArn"] == arn
        assert forms["GlueTableForm"]["columns"], name


def test_a_glue_table_asset_shows_its_topic_and_source_table_upstream(
    platform, glue_node_naming, capsys
):
    assert dzlineage(["sync"]) == 0
    capsys.readouterr()
    datazone = platform.client("datazone")
    assets = glue_table_assets(platform)
    fed = {
        "sales_orders": ("shop.sales.orders", "shop.sales.orders"),
        "inventory_customers": ("shop.inventory.customers", "shop.inventory.customers"),
        "orders_history": ("shop.archive.orders", "shop.sales.orders_archive_2025"),
    }
    for table, (topic, source) in fed.items():
        node = datazone.get_lineage_node(
            domainIdentifier=platform.settings.domain_id,
            identifier=f"amazon.datazone.asset/{assets[table]['id']}",
        )
        # asset <- table node <- sink run <- topic <- source run <- source table
        upstream = platform.upstream_source_identifiers(node, 5)
        assert any(s.endswith(f"/{topic}") and s.startswith("kafka://") for s in upstream), (
            glue_node_naming,
            table,
            upstream,
        )
        assert any(s.startswith("postgres://") and s.endswith(f"/{source}") for s in upstream), (
            glue_node_naming,
            table,
            upstream,
        )
    # A table no topic feeds shows nothing upstream.
    lonely = datazone.get_lineage_node(
        domainIdentifier=platform.settings.domain_id,
        identifier=f"amazon.datazone.asset/{assets['daily_revenue']['id']}",
    )
    assert lonely["upstreamNodes"] == []
