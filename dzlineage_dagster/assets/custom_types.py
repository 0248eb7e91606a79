"""The DataZone custom types every topic asset is built on."""

from dagster import AssetExecutionContext, Failure, MaterializeResult, MetadataValue, asset

from dzlineage_dagster.assets.common import GROUP, OWNERS
from dzlineage_dagster.core.catalog.forms import KAFKA_TOPIC_ASSET_TYPE
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sync.catalog.custom_types import CUSTOM_FORM_TYPES, ensure_custom_types
from dzlineage_dagster.sync.errors import SyncError
from dzlineage_dagster.sync.run_state import SyncRun


@asset(
    group_name=GROUP,
    owners=OWNERS,
    kinds={"datazone", "smithy"},
    description=(
        "DataZone form types `KafkaSchemaFormType` and `MskSourceReferenceFormType` (Smithy, "
        f"from one Python definition) and the asset type `{KAFKA_TOPIC_ASSET_TYPE.name}`. "
        "Idempotent: an unchanged definition makes no write; a changed one makes a new revision "
        "that later topic assets use."
    ),
)
def datazone_custom_types(
    context: AssetExecutionContext, lineage_sync: LineageSyncResource
) -> MaterializeResult:
    try:
        outcome = ensure_custom_types(SyncRun(lineage_sync, context.log))
    except SyncError as error:
        # A missing DataZone grant or membership, or a refused revision: said once, as it is.
        raise Failure(description=str(error)) from None
    for created in outcome.created:
        context.log.info(f"created {created}")
    rows = "\n".join(f"| `{name}` | {rev} |" for name, rev in outcome.revisions.items())
    return MaterializeResult(
        metadata={
            "revisions": MetadataValue.md(f"| type | revision |\n|---|---|\n{rows}"),
            "created": MetadataValue.json(outcome.created),
            "smithy": MetadataValue.md(
                "\n\n".join(f"```smithy\n{form.smithy_model()}\n```" for form in CUSTOM_FORM_TYPES)
            ),
            "asset_type_revision": outcome.revisions[KAFKA_TOPIC_ASSET_TYPE.name],
        }
    )
