"""Whether a form type or asset type revision that others may have extended still holds what
the product needs, and, when it does not, the next revision: the product's part put back into
it, everyone else's kept.

The product needs, of a form type, each of its fields with its Smithy type, searchable where
the product's is; of the asset type, each of its forms at the form type revision the product
uses, required where the product's is. Anything more is others' and is fine, except what the
product cannot fill: a required field or form that is not the product's. A revision the product
makes keeps those as optional (it must be able to create assets), and says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dzlineage_dagster.core.catalog.forms import AssetTypeDefinition, FormTypeDefinition
from dzlineage_dagster.core.catalog.smithy import SmithyModel


@dataclass(frozen=True)
class TypeFit:
    """How a type's latest revision fits the product's definition."""

    #: What the product needs and the revision lacks, or has that the product can't fill; empty
    #: when the revision can be used as it is.
    problems: tuple[str, ...]
    #: Fields or forms of others that the revision has and a new revision keeps.
    kept: tuple[str, ...]

    @property
    def usable(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class FormTypeFit(TypeFit):
    #: The model to create when the revision is not usable: the latest one, with its structure
    #: holding the product's fields and others' (optional).
    next_model: str


@dataclass(frozen=True)
class AssetTypeFit(TypeFit):
    #: CreateAssetType's ``formsInput`` when the revision is not usable.
    next_forms: dict[str, dict[str, object]]


def form_type_fit(definition: FormTypeDefinition, latest_model: str) -> FormTypeFit:
    """How the latest revision's model (``model.smithy``) fits ``definition``.

    A model that can't be read is not usable, and the next revision is the product's own.
    """
    try:
        model = SmithyModel(latest_model)
        structure = model.structure(definition.name)
    except ValueError as error:
        problem = f"its model can't be read ({error}); the next revision is the product's alone"
        return FormTypeFit((problem,), (), definition.smithy_model())
    problems = []
    for field in definition.fields:
        member = structure.members.get(field.name)
        if member is None:
            problems.append(f"{field.name} is missing")
        elif member.target != field.smithy_type:
            problems.append(
                f"{field.name} is a {member.target}, the product's a {field.smithy_type}"
            )
        elif member.has("required") and not field.required:
            problems.append(f"{field.name} is required, the product may leave it out")
        elif field.searchable and not member.has("searchable"):
            problems.append(f"{field.name} is not searchable")
    product_fields = {field.name for field in definition.fields}
    others = [m for name, m in structure.members.items() if name not in product_fields]
    problems += [
        f"{m.name} is required and not the product's, so the product can't fill it"
        for m in others
        if m.has("required")
    ]
    members = [field.smithy_member() for field in definition.fields]
    for member in others:
        required = tuple(t.span for t in member.traits if t.name == "required")
        text = model.source(member.span, without=required)
        members.append(
            "\n".join(f"    {line.strip()}" for line in text.splitlines() if line.strip())
        )
    body = "\n\n".join(members)
    root = f"structure {structure.name} {{\n{body}\n}}"
    next_model = model.text[: structure.span.start] + root + model.text[structure.span.end :]
    kept = tuple(_kept_name(m.name, m.has("required")) for m in others) + tuple(
        name for name in model.shapes if name != structure.name
    )
    return FormTypeFit(tuple(problems), kept, next_model.strip() + "\n")


def asset_type_fit(
    definition: AssetTypeDefinition,
    latest_forms: Mapping[str, Mapping[str, object]],
    type_revisions: Mapping[str, str],
) -> AssetTypeFit:
    """How the latest revision's forms (in CreateAssetType's ``formsInput`` shape) fit
    ``definition``, whose form types the product uses at ``type_revisions`` (by type name)."""
    wanted = definition.forms_input(type_revisions)
    problems = []
    for name, form in wanted.items():
        found = latest_forms.get(name)
        if found is None:
            problems.append(f"form {name} is missing")
        elif (found["typeIdentifier"], found["typeRevision"]) != (
            form["typeIdentifier"],
            form["typeRevision"],
        ):
            problems.append(
                f"form {name} is {found['typeIdentifier']} revision {found['typeRevision']}, "
                f"the product uses revision {form['typeRevision']}"
            )
        elif form["required"] and not found.get("required"):
            problems.append(f"form {name} is optional, the product's is required")
    others = {name: dict(form) for name, form in latest_forms.items() if name not in wanted}
    problems += [
        f"form {name} is required and not the product's, so the product can't fill it"
        for name, form in others.items()
        if form.get("required")
    ]
    next_forms = {**{n: {**f, "required": False} for n, f in others.items()}, **wanted}
    kept = tuple(_kept_name(name, bool(form.get("required"))) for name, form in others.items())
    return AssetTypeFit(tuple(problems), kept, next_forms)


def _kept_name(name: str, required: bool) -> str:
    return f"{name} (as optional)" if required else name
