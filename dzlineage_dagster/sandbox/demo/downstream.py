"""The demo's second code location: a team's own asset downstream of a CDC Iceberg table.

It depends on ``lakehouse.sales_orders`` by the platform graph's key alone (docs/dagster-graph.md),
from a code location of its own, as a team's Spark or dbt project would: Dagster's asset graph
draws source table -> topic -> Iceberg table -> ``daily_revenue`` across both locations.
"""

from dagster import AssetKey, AssetSpec, Definitions

from dzlineage_dagster.core.lineage.platform_graph import iceberg_table_key

daily_revenue = AssetSpec(
    key="daily_revenue",
    deps=[AssetKey(list(iceberg_table_key("lakehouse", "sales_orders")))],
    group_name="shop_analytics",
    kinds={"spark", "iceberg"},
    owners=["team:shop-analytics"],
    description=(
        "Revenue and order count per day, aggregated nightly by the analytics team's Spark job "
        "from the CDC table lakehouse.sales_orders into the Iceberg table lakehouse.daily_revenue."
    ),
    metadata={"dagster/table_name": "lakehouse.daily_revenue"},
)

defs = Definitions(assets=[daily_revenue])
