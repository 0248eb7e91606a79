"""The DataZone form types and the Kafka-topic asset type, defined once and kept current.

Types are immutable in DataZone: a changed model is a new revision. So each definition is
compared with the latest revision and created only when it differs; an unchanged definition
costs reads only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dzlineage_dagster.core.forms import (
    KAFKA_SCHEMA_FORM,
    KAFKA_TOPIC_ASSET_TYPE,
    MSK_SOURCE_REFERENCE_FORM,
    FormTypeDefinition,
)
from dzlineage_dagster.sync.run_state import SyncRun

CUSTOM_FORM_TYPES: tuple[FormTypeDefinition, ...] = (KAFKA_SCHEMA_FORM, MSK_SOURCE_REFERENCE_FORM)


@dataclass
class CustomTypesOutcome:
    revisions: dict[str, str] = field(default_factory=dict)
    created: list[str] = field(default_factory=list)


def _latest(call: Any, not_found: type[Exception], **params: Any) -> dict[str, Any] | None:
    try:
        return call(**params)
    except not_found:
        return None


def ensure_custom_types(run: SyncRun) -> CustomTypesOutcome:
    datazone = run.resource.datazone.client()
    domain, project = run.settings.domain_id, run.settings.project_id
    missing = datazone.exceptions.ResourceNotFoundException
    outcome = CustomTypesOutcome()

    for form in CUSTOM_FORM_TYPES:
        model = form.smithy_model()
        current = _latest(
            datazone.get_form_type, missing, domainIdentifier=domain, formTypeIdentifier=form.name
        )
        if (
            current is not None
            and current.get("model", {}).get("smithy", "").strip() == model.strip()
        ):
            outcome.revisions[form.name] = current["revision"]
            continue
        created = datazone.create_form_type(
            domainIdentifier=domain,
            name=form.name,
            description=form.description,
            model={"smithy": model},
            owningProjectIdentifier=project,
            status="ENABLED",
        )
        outcome.revisions[form.name] = created["revision"]
        outcome.created.append(f"{form.name} revision {created['revision']}")

    for part in KAFKA_TOPIC_ASSET_TYPE.forms:
        if part.type_name not in outcome.revisions:
            outcome.revisions[part.type_name] = _managed_revision(datazone, domain, part.type_name)
    wanted_forms = KAFKA_TOPIC_ASSET_TYPE.forms_input(outcome.revisions)
    asset_type = KAFKA_TOPIC_ASSET_TYPE.name
    current = _latest(
        datazone.get_asset_type, missing, domainIdentifier=domain, identifier=asset_type
    )
    if current is not None and _asset_type_forms(current) == wanted_forms:
        outcome.revisions[asset_type] = current["revision"]
    else:
        created = datazone.create_asset_type(
            domainIdentifier=domain,
            name=asset_type,
            description=KAFKA_TOPIC_ASSET_TYPE.description,
            formsInput=wanted_forms,
            owningProjectIdentifier=project,
        )
        outcome.revisions[asset_type] = created["revision"]
        outcome.created.append(f"{asset_type} revision {created['revision']}")
    run.use_asset_type_revision(outcome.revisions[asset_type])
    return outcome


def _managed_revision(datazone: Any, domain: str, type_name: str) -> str:
    """Latest revision of a form type DataZone itself ships (``amazon.datazone.*``)."""
    return datazone.get_form_type(domainIdentifier=domain, formTypeIdentifier=type_name)["revision"]


def _asset_type_forms(asset_type: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """An asset type's forms in the shape CreateAssetType takes them, for comparison."""
    return {
        name: {
            "typeIdentifier": form["typeName"],
            "typeRevision": form["typeRevision"],
            "required": form.get("required", False),
        }
        for name, form in asset_type.get("formsOutput", {}).items()
    }
