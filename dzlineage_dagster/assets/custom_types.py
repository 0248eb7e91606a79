"""The DataZone custom types every topic asset is built on.

The catalog sync makes sure of them itself (the topic assets' step) and records a
materialization of ``datazone_custom_types`` only when it created a type or none was recorded
yet: the topic assets depend on the types, and a materialization of them at every sync would
show every topic synced before as "Unsynced" (the topic assets are materialized by events, which
carry no data provenance, so Dagster compares materialization times).
"""

from dagster import (
    AssetExecutionContext,
    AssetKey,
    AssetMaterialization,
    DagsterInstance,
    Failure,
    MaterializeResult,
    MetadataValue,
    asset,
)

from dzlineage_dagster.assets.common import GROUP, OWNERS
from dzlineage_dagster.core.catalog.forms import KAFKA_TOPIC_ASSET_TYPE
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sync.catalog.custom_types import (
    CUSTOM_FORM_TYPES,
    CustomTypesOutcome,
    ensure_custom_types,
)
from dzlineage_dagster.sync.errors import SyncError
from dzlineage_dagster.sync.run_state import SyncRun

CUSTOM_TYPES_KEY = AssetKey("datazone_custom_types")


@asset(
    group_name=GROUP,
    owners=OWNERS,
    kinds={"datazone", "smithy"},
    description=(
        "DataZone form types `KafkaSchemaFormType` and `MskSourceReferenceFormType` (Smithy, "
        f"from one Python definition) and the asset type `{KAFKA_TOPIC_ASSET_TYPE.name}`. "
        "Idempotent: an unchanged definition makes no write; a changed one makes a new revision "
        "that later topic assets use. The catalog sync makes sure of them before the topics "
        "and records a materialization here only when a type was created."
    ),
)
def datazone_custom_types(
    context: AssetExecutionContext, lineage_sync: LineageSyncResource
) -> MaterializeResult:
    outcome = ensure_types(SyncRun(lineage_sync, context.log))
    return MaterializeResult(metadata=custom_types_metadata(context, outcome))


def ensure_types(run: SyncRun) -> CustomTypesOutcome:
    """:func:`ensure_custom_types`, a refusal (a missing DataZone grant or membership, a
    refused revision) said once, as it is."""
    try:
        return ensure_custom_types(run)
    except SyncError as error:
        raise Failure(description=str(error)) from None


def types_materialization(
    context: AssetExecutionContext, instance: DagsterInstance, outcome: CustomTypesOutcome
) -> AssetMaterialization | None:
    """The materialization the catalog sync records of the types: when it created one, or
    when none is recorded yet (the topic assets would read "a new input" without it)."""
    if not outcome.created and instance.get_latest_materialization_event(CUSTOM_TYPES_KEY):
        return None
    return AssetMaterialization(CUSTOM_TYPES_KEY, metadata=custom_types_metadata(context, outcome))


def custom_types_metadata(context: AssetExecutionContext, outcome: CustomTypesOutcome) -> dict:
    for created in outcome.created:
        context.log.info(f"created {created}")
    rows = "\n".join(f"| `{name}` | {rev} |" for name, rev in outcome.revisions.items())
    return {
        "revisions": MetadataValue.md(f"| type | revision |\n|---|---|\n{rows}"),
        "created": MetadataValue.json(outcome.created),
        "smithy": MetadataValue.md(
            "\n\n".join(f"```smithy\n{form.smithy_model()}\n```" for form in CUSTOM_FORM_TYPES)
        ),
        "asset_type_revision": outcome.revisions[KAFKA_TOPIC_ASSET_TYPE.name],
    }
