"""The DataZone form types and the Kafka-topic asset type, defined once and kept current.

Types are immutable in DataZone: a changed model is a new revision. Others may extend the
product's types (a team's optional field on a form type, its own form on the asset type): the
latest revision is used as it is whenever it holds what the product needs
(:mod:`~dzlineage_dagster.core.type_extension`), so a satisfied type costs reads only. Only a
revision that lacks the product's part gets a new one, built from it: others' fields and forms
are kept, and a WARNING says what was put back.

Whether DataZone makes that new revision is ambiguous: CloudFormation and AWS's Data Solutions
Framework call ``CreateFormType``/``CreateAssetType`` again for one, while the API reference
says a name is unique in the domain and lists ``ConflictException``. When DataZone refuses, the
sync stops there, before any asset write, with an error naming the type, what its latest
revision lacks and what to do.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from dzlineage_dagster.core.forms import (
    KAFKA_SCHEMA_FORM,
    KAFKA_TOPIC_ASSET_TYPE,
    MSK_SOURCE_REFERENCE_FORM,
    FormTypeDefinition,
)
from dzlineage_dagster.core.type_extension import TypeFit, asset_type_fit, form_type_fit
from dzlineage_dagster.sync.errors import SyncError, describe_error
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
        current = _latest(
            datazone.get_form_type, missing, domainIdentifier=domain, formTypeIdentifier=form.name
        )
        model = form.smithy_model()
        if current is not None:
            fit = form_type_fit(form, current.get("model", {}).get("smithy", ""))
            if fit.usable:
                outcome.revisions[form.name] = current["revision"]
                continue
            model = fit.next_model
        with _revision_refused(run, "form", form.name, current, fit if current else None):
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
        if current is not None:
            _warn_put_back(run, form.name, current["revision"], created["revision"], fit)

    for part in KAFKA_TOPIC_ASSET_TYPE.forms:
        if part.type_name not in outcome.revisions:
            outcome.revisions[part.type_name] = _managed_revision(datazone, domain, part.type_name)
    asset_type = KAFKA_TOPIC_ASSET_TYPE.name
    current = _latest(
        datazone.get_asset_type, missing, domainIdentifier=domain, identifier=asset_type
    )
    forms_input = KAFKA_TOPIC_ASSET_TYPE.forms_input(outcome.revisions)
    if current is not None:
        pinned = _asset_type_forms(current)
        revisions = {
            **outcome.revisions,
            **_usable_pinned_revisions(datazone, domain, pinned, outcome.revisions),
        }
        fit = asset_type_fit(KAFKA_TOPIC_ASSET_TYPE, pinned, revisions)
        forms_input = fit.next_forms
    if current is not None and fit.usable:
        outcome.revisions[asset_type] = current["revision"]
    else:
        with _revision_refused(run, "asset", asset_type, current, fit if current else None):
            created = datazone.create_asset_type(
                domainIdentifier=domain,
                name=asset_type,
                description=KAFKA_TOPIC_ASSET_TYPE.description,
                formsInput=forms_input,
                owningProjectIdentifier=project,
            )
        outcome.revisions[asset_type] = created["revision"]
        outcome.created.append(f"{asset_type} revision {created['revision']}")
        if current is not None:
            _warn_put_back(run, asset_type, current["revision"], created["revision"], fit)
    run.use_asset_type_revision(outcome.revisions[asset_type])
    return outcome


@contextmanager
def _revision_refused(
    run: SyncRun, kind: str, type_name: str, current: dict[str, Any] | None, fit: TypeFit | None
) -> Iterator[None]:
    """DataZone's ConflictException on a changed type's re-creation, as a SyncError that says
    what to do (a first creation's conflict is another writer's race: it propagates)."""
    datazone = run.resource.datazone.client()
    try:
        yield
    except datazone.exceptions.ConflictException as error:
        if current is None or fit is None:
            raise
        raise SyncError(
            f"DataZone refused a new revision of {kind} type {type_name} in domain "
            f"{run.settings.domain_id} ({describe_error(error)}): its latest revision "
            f"{current['revision']} lacks what the product needs ({'; '.join(fit.problems)}). "
            f"Nothing was written to the catalog. Add that to the type with the tool that "
            f"manages it (the sync adopts any latest revision that holds it), then sync again"
        ) from None


def _warn_put_back(run: SyncRun, type_name: str, latest: str, created: str, fit: TypeFit) -> None:
    kept = f"; it keeps {', '.join(fit.kept)}" if fit.kept else ""
    run.log.warning(
        f"{type_name}: revision {latest} lacks what the product needs ({'; '.join(fit.problems)}); "
        f"created revision {created} from it with the product's part put back{kept}"
    )


def _usable_pinned_revisions(
    datazone: Any, domain: str, pinned: dict[str, dict[str, Any]], settled: dict[str, str]
) -> dict[str, str]:
    """The custom form type revisions the asset type pins that hold the product's fields,
    though they are not the ones ``settled`` on (one GetFormType each): the asset type may keep
    pinning them."""
    usable = {}
    for part in KAFKA_TOPIC_ASSET_TYPE.forms:
        form = next((f for f in CUSTOM_FORM_TYPES if f.name == part.type_name), None)
        entry = pinned.get(part.form_name)
        if form is None or entry is None or entry["typeIdentifier"] != form.name:
            continue
        revision = str(entry["typeRevision"])
        if revision == settled.get(form.name):
            continue
        model = datazone.get_form_type(
            domainIdentifier=domain, formTypeIdentifier=form.name, revision=revision
        )["model"]["smithy"]
        if form_type_fit(form, model).usable:
            usable[form.name] = revision
    return usable


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


@dataclass(frozen=True)
class TypeState:
    """A custom type as the domain holds it, read only: its latest revision (None: absent, the
    first sync creates it) and how that revision fits the product (None when absent)."""

    kind: str
    name: str
    revision: str | None
    fit: TypeFit | None


def inspect_custom_types(run: SyncRun) -> list[TypeState]:
    """What :func:`ensure_custom_types` would find, with reads only (GetFormType per custom form
    type and for DataZone's managed ones the asset type uses, GetAssetType, and GetFormType of
    the revisions the asset type pins): for ``dzlineage doctor``."""
    datazone = run.resource.datazone.client()
    domain = run.settings.domain_id
    missing = datazone.exceptions.ResourceNotFoundException
    states, revisions = [], {}
    for form in CUSTOM_FORM_TYPES:
        current = _latest(
            datazone.get_form_type, missing, domainIdentifier=domain, formTypeIdentifier=form.name
        )
        fit = None if current is None else form_type_fit(form, current["model"]["smithy"])
        states.append(TypeState("form", form.name, current and current["revision"], fit))
        if fit is not None and fit.usable:
            revisions[form.name] = current["revision"]
    asset_type = KAFKA_TOPIC_ASSET_TYPE.name
    current = _latest(
        datazone.get_asset_type, missing, domainIdentifier=domain, identifier=asset_type
    )
    fit = None
    if current is not None:
        pinned = _asset_type_forms(current)
        custom = {f.name for f in CUSTOM_FORM_TYPES}
        for part in KAFKA_TOPIC_ASSET_TYPE.forms:
            if part.type_name in revisions:
                continue
            if part.type_name not in custom:
                revisions[part.type_name] = _managed_revision(datazone, domain, part.type_name)
            elif part.form_name in pinned:
                # The form type's own row reports its problem: the asset type is judged on
                # the rest.
                revisions[part.type_name] = str(pinned[part.form_name]["typeRevision"])
        pinned_usable = _usable_pinned_revisions(datazone, domain, pinned, revisions)
        wanted = {**revisions, **pinned_usable}
        if {part.type_name for part in KAFKA_TOPIC_ASSET_TYPE.forms} <= set(wanted):
            fit = asset_type_fit(KAFKA_TOPIC_ASSET_TYPE, pinned, wanted)
        else:
            fit = TypeFit(
                ("a form type it needs is absent; a new revision follows its creation",), ()
            )
    states.append(TypeState("asset", asset_type, current and current["revision"], fit))
    return states
