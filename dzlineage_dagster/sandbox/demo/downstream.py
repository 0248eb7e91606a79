"""The demo's second code location: a team's own asset downstream of a CDC Iceberg table.

It depends on ``lakehouse.sales_orders`` by the platform graph's key alone (docs/dagster-graph.md),
from a code location of its own, as a team's Spark or dbt project would: Dagster's asset graph
draws source table -> topic -> Iceberg table -> ``daily_revenue`` across both locations. Its
group is opted in to the downstream lineage sensor, so each materialization is posted to
DataZone too: topic -> ``lakehouse.sales_orders`` -> ``lakehouse.daily_revenue``. The demo
materializes it once, as soon as the location loads and while it was never materialized (an
automation sensor, running by default), so the whole chain is in DataZone without a click
(``dzlineage orphans`` then names no unfed table). Each materialization also posts to the Glue
Data Catalog's lineage what Amazon EMR posts for the Spark job that writes the table
(:mod:`~dzlineage_dagster.sandbox.demo.spark_lineage`), so Glue's graph, too, runs on from
``lakehouse.sales_orders`` to ``lakehouse.daily_revenue``.
"""

from dagster import (
    AssetKey,
    AssetSelection,
    AutomationCondition,
    AutomationConditionSensorDefinition,
    DefaultSensorStatus,
    Definitions,
    MaterializeResult,
    asset,
)

from dzlineage_dagster.core.lineage.platform_graph import iceberg_table_key
from dzlineage_dagster.definitions import build_resources
from dzlineage_dagster.downstream_lineage import downstream_lineage_sensor
from dzlineage_dagster.sandbox.commands import DOWNSTREAM_LOCATION
from dzlineage_dagster.sandbox.demo.spark_lineage import post_spark_lineage_from_environment

SALES_ORDERS = AssetKey(list(iceberg_table_key("lakehouse", "sales_orders")))


@asset(
    key="daily_revenue",
    deps=[SALES_ORDERS],
    group_name="shop_analytics",
    kinds={"spark", "iceberg"},
    owners=["team:shop-analytics"],
    metadata={"dagster/table_name": "lakehouse.daily_revenue"},
    # Its dependency is another location's external table, never materialized here, so
    # Dagster's on_missing (which waits for every dependency) would never start it.
    automation_condition=AutomationCondition.missing() & ~AutomationCondition.in_progress(),
)
def daily_revenue() -> MaterializeResult:
    """Revenue and order count per day, aggregated nightly by the analytics team's Spark job
    from the CDC table lakehouse.sales_orders into the Iceberg table lakehouse.daily_revenue.

    The demo's platform carries no rows, so the demo runs no Spark: materializing records the
    run, which is what its lineage in DataZone is posted from, and posts to Glue's lineage
    what EMR's OpenLineage listener would for the job's write."""
    post_spark_lineage_from_environment()
    return MaterializeResult(metadata={"source_table": "lakehouse.sales_orders"})


defs = Definitions(
    assets=[daily_revenue],
    sensors=[
        downstream_lineage_sensor(
            groups=["shop_analytics"],
            code_location=DOWNSTREAM_LOCATION,
            default_status=DefaultSensorStatus.RUNNING,
        ),
        AutomationConditionSensorDefinition(
            "shop_analytics_automation",
            target=AssetSelection.assets(daily_revenue),
            default_status=DefaultSensorStatus.RUNNING,
        ),
    ],
    resources=build_resources(),
)
