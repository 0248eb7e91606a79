"""The `schema_change_is_compatible` check of a topic's partition, as Dagster shows it: the
impact report (sync/lineage/impact.py) with a severity by compatibility.

Breaking (a column removed or renamed, a type Iceberg cannot promote, nullability tightened,
enum symbols removed): failed, ERROR. Additive (columns or symbols added, promotions): failed,
WARN, so a new column is seen before a consumer relies on it. Nothing changed: passed. The
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

from dzlineage_dagster.core.schemas.impact import ImpactReport

SCHEMA_CHANGE_CHECK = "schema_change_is_compatible"
SCHEMA_CHANGE_DESCRIPTION = (
    "The topic's latest schema version against the one before: ERROR when it breaks the Iceberg "
    "tables written from it (column removed or renamed, a type Iceberg cannot promote, "
    "nullability tightened, enum symbols removed), WARN when it is additive, passed when no "
    "column changed. Names the Iceberg columns reached through column lineage, the assets "
    "downstream of the tables (Dagster keys, DataZone lineage nodes) and the owners to notify "
    "(docs/impact.md)."
)


def schema_change_result(report: ImpactReport) -> AssetCheckResult:
    return AssetCheckResult(
        passed=report.verdict == "none",
        severity=(
            AssetCheckSeverity.ERROR if report.verdict == "breaking" else AssetCheckSeverity.WARN
        ),
        description=report.summary(),
        metadata=_metadata(report),
    )


def schema_change_evaluation(report: ImpactReport, asset_key: AssetKey) -> AssetCheckEvaluation:
    """The same result as an evaluation of the topic's partition, for the sync to log."""
    result = schema_change_result(report)
    return AssetCheckEvaluation(
        asset_key=asset_key,
        check_name=SCHEMA_CHANGE_CHECK,
        passed=result.passed,
        metadata=result.metadata,
        severity=result.severity,
        description=result.description,
        partition=report.topic,
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
