"""The retire stage: the assets of schemas that left the registry are unpublished from the
catalog, deprecated or deleted (per `deleted_schema_policy`), then their mappings are dropped."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Literal

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.catalog.reconcile import DEPRECATED_MARK
from dzlineage_dagster.core.mapping.ssm_names import MappingRecord
from dzlineage_dagster.sync.errors import SyncError, describe_error, error_code
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.stages.asset import client_token
from dzlineage_dagster.sync.stages.lineage import close_topic_lineage
from dzlineage_dagster.sync.stages.publish import unpublish_retired_asset


def removed_records(run: SyncRun, topics: Collection[str] | None = None) -> list[MappingRecord]:
    """This scope's mappings whose schema left the configured registry (of `topics`, if given).

    Only schemas of the configured registry count: a mapping of another registry (another
    sync's, sharing the domain, project and SSM prefix) is not "gone" because this registry
    does not list it.
    """
    live_arns = {info.schema_arn for info in run.registry_topics.values()}
    return [
        record
        for record in run.mappings.all().values()
        if run.in_registry(record)
        and record.schema_arn not in live_arns
        and (topics is None or record.topic in topics)
    ]


def retirement_hold(run: SyncRun, topics: Collection[str] | None = None) -> str | None:
    """Why retirement must not run now (one line), or None when it may.

    A registry that cannot be read, or that lists no schema at all, looks exactly like one
    whose schemas were all deleted: retiring then would empty the catalog. It takes the
    explicit `retire_when_registry_empty` setting to retire from an empty registry.
    """
    registry = run.settings.registry_name
    try:
        listed = run.registry_topics
        records = removed_records(run, topics)
    except (ClientError, BotoCoreError) as error:
        return (
            f"retirement held back: registry {registry} could not be read "
            f"({describe_error(error)}); no asset was retired"
        )
    if not listed and records and not run.settings.retire_when_registry_empty:
        return (
            f"retirement held back: registry {registry} lists no schemas, so all "
            f"{len(records)} mapped assets would be retired; set "
            "DZLINEAGE_RETIRE_WHEN_REGISTRY_EMPTY=true to confirm"
        )
    return None


def retire_removed_topics(run: SyncRun, topics: Collection[str] | None = None) -> dict[str, str]:
    """Topic -> what happened, for stored mappings whose schema left the registry.

    ``topics`` narrows it to those topics (the sensor's deleted partitions); the registry is
    listed again first, so a schema that came back in between is left alone. Nothing is
    retired while :func:`retirement_hold` says so (it is logged as a warning).
    """
    hold = retirement_hold(run, topics)
    if hold is not None:
        run.log.warning(hold)
        return {}
    results = {}
    for record in removed_records(run, topics):
        try:
            results[record.topic] = retire_topic_asset(run, record)
        except (ClientError, BotoCoreError, SyncError) as error:
            results[record.topic] = f"failed: {describe_error(error)}"
            run.log.error(f"topic {record.topic!r} could not be retired: {results[record.topic]}")
    return results


RetireAction = Literal[
    "deleted", "deprecated", "deleted and unpublished", "deprecated and unpublished", "already gone"
]


def retire_topic_asset(run: SyncRun, record: MappingRecord) -> RetireAction:
    """A schema left the registry: close its lineage jobs, take its asset out of the catalog,
    delete or deprecate it, then drop its mapping."""
    close_topic_lineage(run, record)
    datazone = run.resource.datazone.client()
    domain = run.settings.domain_id
    action: RetireAction
    try:
        asset = datazone.get_asset(domainIdentifier=domain, identifier=record.asset_id)
        # Unpublished first: a deleted asset's listing must not outlive it in the catalog.
        unpublished = unpublish_retired_asset(run, record, asset) is not None
        if run.settings.deleted_schema_policy == "delete":
            datazone.delete_asset(domainIdentifier=domain, identifier=record.asset_id)
            action = "deleted and unpublished" if unpublished else "deleted"
        else:
            note = f"{DEPRECATED_MARK}: schema {record.schema_arn} was deleted from the registry"
            if not (asset.get("description") or "").startswith(DEPRECATED_MARK):
                datazone.create_asset_revision(
                    domainIdentifier=domain,
                    identifier=record.asset_id,
                    name=asset["name"],
                    description=f"{note}. {asset.get('description') or ''}".strip()[:2048],
                    typeRevision=asset["typeRevision"],
                    formsInput=[_form_input(f) for f in asset.get("formsOutput", [])],
                    # A revision is a whole snapshot: terms it does not carry are detached.
                    **_glossary_terms(asset),
                    clientToken=client_token("deprecate", record.asset_id, asset["revision"]),
                )
            action = "deprecated and unpublished" if unpublished else "deprecated"
    except ClientError as error:
        if error_code(error) != "ResourceNotFoundException":
            raise
        action = "already gone"
    run.mappings.delete(record.schema_arn)
    return action


def _form_input(form_output: dict[str, Any]) -> dict[str, Any]:
    """A form as GetAsset returns it, in the shape CreateAssetRevision takes."""
    form = {"formName": form_output["formName"], "content": form_output.get("content", "{}")}
    for key in ("typeName", "typeRevision"):
        if form_output.get(key):
            form["typeIdentifier" if key == "typeName" else key] = form_output[key]
    return form


def _glossary_terms(asset: dict[str, Any]) -> dict[str, list[str]]:
    """The asset's glossary terms as CreateAssetRevision takes them (omitted when none: the
    API takes 1-20)."""
    terms = asset.get("glossaryTerms") or []
    return {"glossaryTerms": terms} if terms else {}
