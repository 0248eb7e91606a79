"""The `schema_change_is_compatible` check of a topic's partition, as Dagster shows it: the
impact report (sync/lineage/impact.py) with a severity by compatibility.

Breaking (a column removed or renamed, a type Iceberg cannot promote, nullability tightened,
enum symbols removed): failed, ERROR, with why and what to do. Additive (columns or symbols
added, promotions): passed, as the check's name says (the Iceberg sink evolves the tables to
match), its description naming the new columns and its metadata the tables, downstream assets
and owners they reach, so a new column is seen before a consumer relies on it. Nothing
changed: passed. The
catalog sync reports it for each topic whose new version it read (assets/topics.py); the check
itself (checks.py) re-evaluates one partition on demand.
"""

from dagster import (
    AssetCheckEvaluation,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetKey,
    MetadataValue,
)

from dzlineage_dagster.assets.common import Advice
from dzlineage_dagster.core.schemas.impact import ImpactReport

SCHEMA_CHANGE_CHECK = "schema_change_is_compatible"
SCHEMA_CHANGE_DESCRIPTION = (
    "The topic's latest schema version against the one before: ERROR when it breaks the Iceberg "
    "tables written from it (column removed or renamed, a type Iceberg cannot promote, "
    "nullability tightened, enum symbols removed); passed when it is additive (the sink adds "
    "the columns; the description names them) or no column changed. Names the Iceberg columns reached through column lineage, the assets "
    "downstream of the tables (Dagster keys, DataZone lineage nodes) and the owners to notify "
    "(docs/impact.md)."
)


BREAKING_CHANGE = Advice(
    why=(
        "The new schema version changes columns in a way the Iceberg sink's schema evolution "
        "cannot follow (it only adds columns, promotes types and makes columns optional): the "
        "tables in `affected_columns` stop receiving those columns' values, and the assets in "
        "`downstream_assets` read them."
    ),
    what_to_do=(
        "Tell the `owners`; register a version that keeps the old columns (add, don't rename "
        "or remove), or migrate the Iceberg tables and their readers first (docs/impact.md)."
    ),
)


def schema_change_result(report: ImpactReport) -> AssetCheckResult:
    breaking = report.verdict == "breaking"
    return AssetCheckResult(
        passed=not breaking,
        severity=AssetCheckSeverity.ERROR,
        description=report.summary(),
        metadata={**(BREAKING_CHANGE.metadata() if breaking else {}), **_metadata(report)},
    )


def schema_change_evaluation(
    report: ImpactReport, asset_key: AssetKey, partition: str
) -> AssetCheckEvaluation:
    """The same result as an evaluation of the topic's ``partition``, for the sync to log."""
    result = schema_change_result(report)
    return AssetCheckEvaluation(
        asset_key=asset_key,
        check_name=SCHEMA_CHANGE_CHECK,
        passed=result.passed,
        metadata=result.metadata,
        severity=result.severity,
        description=result.description,
        partition=partition,
    )


def _metadata(report: ImpactReport) -> dict[str, object]:
    document = report.to_json()
    return {
        "verdict": report.verdict,
        "versions": report.versions,
        "impact": MetadataValue.md(report.markdown()),
        "changes": MetadataValue.json(document["changes"]),
        "affected_columns": MetadataValue.json(document["affected"]),
        "downstream_assets": MetadataValue.json(document["downstream"]),
        "owners": MetadataValue.json(document["owners"]),
    }
