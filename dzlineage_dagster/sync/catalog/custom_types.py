"""The DataZone form types and the Kafka-topic asset type, defined once and kept current.

Types are immutable in DataZone: a changed model is a new revision. Others may extend the
product's types (a team's optional field on a form type, its own form on the asset type): the
latest revision is used as it is whenever it holds what the product needs
(:mod:`~dzlineage_dagster.core.catalog.type_extension`), so a satisfied type costs reads only. Only a
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
from functools import partial
from typing import Any

from dzlineage_dagster.core.aws.authorization import CREATE_ASSET_TYPE, CREATE_FORM_TYPE
from dzlineage_dagster.core.aws.concurrency import at_once
from dzlineage_dagster.core.catalog.forms import (
    KAFKA_SCHEMA_FORM,
    KAFKA_TOPIC_ASSET_TYPE,
    MSK_SOURCE_REFERENCE_FORM,
    FormTypeDefinition,
)
from dzlineage_dagster.core.catalog.type_extension import TypeFit, asset_type_fit, form_type_fit
from dzlineage_dagster.sync.checks.authorization import check_authorization, refusal_explained
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


@dataclass
class _FormPlan:
    form: FormTypeDefinition
    current: dict[str, Any] | None
    fit: TypeFit | None

    @property
    def creates(self) -> bool:
        return self.fit is None or not self.fit.usable


@dataclass
class CustomTypesPlan:
    """What :func:`ensure_custom_types` will create, read before anything is written."""

    forms: list[_FormPlan]
    #: The latest revisions of the managed (``amazon.datazone.*``) form types the asset type uses.
    managed_revisions: dict[str, str]
    asset_type: dict[str, Any] | None
    #: The asset type's fit, when no form type is created (a new form revision changes it).
    asset_fit: TypeFit | None

    @property
    def creates_forms(self) -> bool:
        return any(form.creates for form in self.forms)

    @property
    def policies(self) -> tuple[str, ...]:
        """The DataZone policies the creations need (see :mod:`~dzlineage_dagster.sync.checks.authorization`)."""
        creates_asset_type = (
            self.creates_forms or self.asset_fit is None or not self.asset_fit.usable
        )
        return (CREATE_FORM_TYPE,) * self.creates_forms + (CREATE_ASSET_TYPE,) * creates_asset_type


def plan_custom_types(run: SyncRun) -> CustomTypesPlan:
    """Read the types as they are (GetFormType, GetAssetType): what a sync would create."""
    datazone = run.resource.datazone.client()
    domain = run.settings.domain_id
    missing = datazone.exceptions.ResourceNotFoundException
    custom = {form.name for form in CUSTOM_FORM_TYPES}
    managed_names = [p.type_name for p in KAFKA_TOPIC_ASSET_TYPE.forms if p.type_name not in custom]
    # Every read is independent of the others: made at once, they cost one call's latency.
    answers = at_once(
        *(
            partial(
                _latest,
                datazone.get_form_type,
                missing,
                domainIdentifier=domain,
                formTypeIdentifier=form.name,
            )
            for form in CUSTOM_FORM_TYPES
        ),
        *(partial(_managed_revision, datazone, domain, name) for name in managed_names),
        partial(
            _latest,
            datazone.get_asset_type,
            missing,
            domainIdentifier=domain,
            identifier=KAFKA_TOPIC_ASSET_TYPE.name,
        ),
    )
    custom_count = len(CUSTOM_FORM_TYPES)
    currents, revisions, asset_type = answers[:custom_count], answers[custom_count:-1], answers[-1]
    forms = [
        _FormPlan(form, current, _form_fit(form, current))
        for form, current in zip(CUSTOM_FORM_TYPES, currents, strict=True)
    ]
    managed = dict(zip(managed_names, revisions, strict=True))
    plan = CustomTypesPlan(forms, managed, asset_type, None)
    if not plan.creates_forms:
        revisions = {f.form.name: f.current["revision"] for f in forms if f.current}
        plan.asset_fit = _asset_type_fit(run, asset_type, {**revisions, **managed})
    return plan


def ensure_custom_types(run: SyncRun) -> CustomTypesOutcome:
    """Create what :func:`plan_custom_types` finds missing, once the project's DataZone
    authorization for it is checked: a missing grant stops here, before any type is created."""
    plan = plan_custom_types(run)
    uncertain = check_authorization(run, plan.policies, asset_writes=False) if plan.policies else []
    outcome = CustomTypesOutcome()
    with refusal_explained(run, uncertain, outcome.created):
        _create_planned_types(run, plan, outcome)
    run.use_asset_type_revision(outcome.revisions[KAFKA_TOPIC_ASSET_TYPE.name])
    return outcome


def _create_planned_types(run: SyncRun, plan: CustomTypesPlan, outcome: CustomTypesOutcome) -> None:
    datazone = run.resource.datazone.client()
    domain, project = run.settings.domain_id, run.settings.project_id

    for planned in plan.forms:
        if not planned.creates:
            outcome.revisions[planned.form.name] = planned.current["revision"]
    # The form types do not depend on each other: created at once. Each records itself as it
    # is made, so a refusal of one still names the others created before it.
    creating = [planned for planned in plan.forms if planned.creates]
    try:
        at_once(*(partial(_create_form_type, run, planned, outcome) for planned in creating))
    finally:
        # A revision put over someone's latest one is said even when another creation failed.
        for planned in creating:
            revision = outcome.revisions.get(planned.form.name)
            if planned.current is not None and revision is not None:
                _warn_put_back(
                    run, planned.form.name, planned.current["revision"], revision, planned.fit
                )

    outcome.revisions.update(plan.managed_revisions)
    asset_type, current = KAFKA_TOPIC_ASSET_TYPE.name, plan.asset_type
    fit = _asset_type_fit(run, current, outcome.revisions) if plan.creates_forms else plan.asset_fit
    if fit is not None and fit.usable:
        outcome.revisions[asset_type] = current["revision"]
    else:
        forms_input = (
            fit.next_forms
            if fit is not None
            else KAFKA_TOPIC_ASSET_TYPE.forms_input(outcome.revisions)
        )
        with _revision_refused(run, "asset", asset_type, current, fit):
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


def _create_form_type(run: SyncRun, planned: _FormPlan, outcome: CustomTypesOutcome) -> None:
    form, current, fit = planned.form, planned.current, planned.fit
    model = fit.next_model if fit is not None else form.smithy_model()
    with _revision_refused(run, "form", form.name, current, fit):
        created = run.resource.datazone.client().create_form_type(
            domainIdentifier=run.settings.domain_id,
            name=form.name,
            description=form.description,
            model={"smithy": model},
            owningProjectIdentifier=run.settings.project_id,
            status="ENABLED",
        )
    outcome.revisions[form.name] = created["revision"]
    outcome.created.append(f"{form.name} revision {created['revision']}")


def _asset_type_fit(
    run: SyncRun, current: dict[str, Any] | None, revisions: dict[str, str]
) -> TypeFit | None:
    """How the asset type's latest revision fits the product, given the form type revisions
    settled on; None when there is no asset type yet."""
    if current is None:
        return None
    datazone = run.resource.datazone.client()
    pinned = _asset_type_forms(current)
    usable = _usable_pinned_revisions(datazone, run.settings.domain_id, pinned, revisions)
    return asset_type_fit(KAFKA_TOPIC_ASSET_TYPE, pinned, {**revisions, **usable})


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


def _form_fit(form: FormTypeDefinition, current: dict[str, Any] | None) -> TypeFit | None:
    return form_type_fit(form, current.get("model", {}).get("smithy", "")) if current else None


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
