"""The catalog's records: form and asset types, assets, projects, and the managed
``amazon.datazone.*`` types every domain is born with.

Form and asset types are immutable: creating one again with the same model returns the latest
revision, a changed model adds revision n+1 (:func:`add_revision`). Every asset type carries
the optional ``AssetCommonDetailsForm``, whose ``sourceIdentifier`` links an asset to lineage.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, TypeVar

from dzlineage_dagster.sandbox.emulators.datazone.catalog.smithy_forms import FormModel

MANAGED_PREFIX = "amazon.datazone."
COMMON_DETAILS_FORM = "AssetCommonDetailsForm"
COMMON_DETAILS_FORM_TYPE = "amazon.datazone.AssetCommonDetailsFormType"

_COLUMNS_SMITHY = """
list Columns { member: Column }
structure Column {
    @required
    columnName: String
    @required
    dataType: String
    description: String
}
"""
# The managed types every domain is born with, at the revisions real domains show.
_MANAGED_FORM_TYPES: dict[str, tuple[str, str]] = {
    COMMON_DETAILS_FORM_TYPE: (
        "6",
        """
        structure AssetCommonDetailsFormType {
            sourceIdentifier: String
            readMe: String
            customProperties: CustomProperties
        }
        map CustomProperties { key: String, value: String }
        """,
    ),
    "amazon.datazone.GlueTableFormType": (
        "13",
        """
        structure GlueTableFormType {
            catalogId: String
            region: String
            tableArn: String
            @required
            databaseName: String
            @required
            tableName: String
            tableDescription: String
            sourceClassification: String
            compressionType: String
            columns: Columns
        }
        """
        + _COLUMNS_SMITHY,
    ),
    "amazon.datazone.RelationalTableFormType": (
        "1",
        """
        structure RelationalTableFormType {
            @required
            tableName: String
            tableDescription: String
            columns: Columns
        }
        """
        + _COLUMNS_SMITHY,
    ),
}
_MANAGED_ASSET_TYPES: dict[str, tuple[str, dict[str, tuple[str, bool]]]] = {
    "amazon.datazone.GlueTableAssetType": (
        "24",
        {"GlueTableForm": ("amazon.datazone.GlueTableFormType", True)},
    ),
    "amazon.datazone.RelationalTableAssetType": (
        "1",
        {"RelationalTableForm": ("amazon.datazone.RelationalTableFormType", True)},
    ),
}


@dataclass(frozen=True)
class TypeRevision:
    """What form type and asset type revisions have in common."""

    name: str
    revision: str
    owning_project_id: str | None  # None for the managed types
    description: str | None
    created_at: datetime
    created_by: str

    @property
    def ref(self) -> TypeRef:
        return TypeRef(self.name, self.revision)


@dataclass(frozen=True)
class FormTypeRevision(TypeRevision):
    smithy: str
    model: FormModel
    status: str


@dataclass(frozen=True)
class TypeRef:
    """A form type at one revision."""

    name: str
    revision: str

    def output(self) -> dict[str, str]:
        return {"typeName": self.name, "typeRevision": self.revision}

    def qualified(self, domain_id: str) -> str:
        """As DataZone's messages name it: ``amazon.datazone#GlueTableFormType@13``."""
        if self.name.startswith(MANAGED_PREFIX):
            return f"amazon.datazone#{self.name.removeprefix(MANAGED_PREFIX)}@{self.revision}"
        return f"{domain_id}#{self.name}@{self.revision}"


@dataclass(frozen=True)
class FormEntry:
    """A form an asset type declares."""

    type: TypeRef
    required: bool

    def output(self) -> dict[str, Any]:
        return {**self.type.output(), "required": self.required}


@dataclass(frozen=True)
class AssetTypeRevision(TypeRevision):
    forms: dict[str, FormEntry]


@dataclass(frozen=True)
class Form:
    """A form of an asset revision."""

    name: str
    type: TypeRef
    content: str

    def output(self) -> dict[str, str]:
        return {"formName": self.name, **self.type.output(), "content": self.content}


@dataclass(frozen=True)
class AssetRevision:
    revision: str
    name: str
    description: str | None
    type_revision: str
    forms: tuple[Form, ...]
    glossary_terms: tuple[str, ...]
    created_at: datetime
    created_by: str


@dataclass
class Asset:
    id: str
    owning_project_id: str
    type_name: str
    external_identifier: str | None
    lineage_node_id: str
    revisions: list[AssetRevision]

    @property
    def latest(self) -> AssetRevision:
        return self.revisions[-1]

    def source_identifier(self) -> str | None:
        """What links the asset to lineage: ``AssetCommonDetailsForm.sourceIdentifier``."""
        for form in self.latest.forms:
            if form.type.name == COMMON_DETAILS_FORM_TYPE:
                return json.loads(form.content or "{}").get("sourceIdentifier")
        return None


@dataclass(frozen=True)
class Project:
    id: str
    name: str
    description: str | None
    glossary_terms: tuple[str, ...]
    created_at: datetime
    created_by: str
    #: ``ADMIN`` for the domain's administration project (CreateProject's projectCategory).
    category: str | None = None


class _Revisioned(Protocol):
    @property
    def revision(self) -> str: ...


R = TypeVar("R", bound=_Revisioned)


def revision_of(history: list[R], revision: str | None) -> R | None:
    """The revision named in ``history`` (the latest when ``revision`` is None)."""
    if not history:
        return None
    if revision is None:
        return history[-1]
    return next((r for r in history if r.revision == revision), None)


def add_revision(history: list[R], is_same: Callable[[R], bool], build: Callable[[str], R]) -> R:
    """Types are immutable: the latest revision if it is the same, else a new revision n+1."""
    if history and is_same(history[-1]):
        return history[-1]
    number = int(history[-1].revision) + 1 if history else 1
    history.append(build(str(number)))
    return history[-1]


def with_common_details(entries: dict[str, FormEntry]) -> dict[str, FormEntry]:
    """Every asset type carries the optional AssetCommonDetailsForm, as DataZone adds it."""
    revision = _MANAGED_FORM_TYPES[COMMON_DETAILS_FORM_TYPE][0]
    common = FormEntry(TypeRef(COMMON_DETAILS_FORM_TYPE, revision), required=False)
    return {COMMON_DETAILS_FORM: common, **entries}


def managed_types(
    created_at: datetime,
) -> tuple[dict[str, list[FormTypeRevision]], dict[str, list[AssetTypeRevision]]]:
    """The managed form types and asset types of a domain created at ``created_at``."""

    def managed(name: str, revision: str) -> dict[str, Any]:
        return {
            "name": name,
            "revision": revision,
            "owning_project_id": None,
            "description": None,
            "created_at": created_at,
            "created_by": "SYSTEM",
        }

    form_types = {
        name: [
            FormTypeRevision(
                smithy=smithy,
                model=FormModel.parse(smithy, name),
                status="ENABLED",
                **managed(name, revision),
            )
        ]
        for name, (revision, smithy) in _MANAGED_FORM_TYPES.items()
    }
    asset_types = {}
    for name, (revision, forms) in _MANAGED_ASSET_TYPES.items():
        entries = {
            form_name: FormEntry(TypeRef(type_name, _MANAGED_FORM_TYPES[type_name][0]), required)
            for form_name, (type_name, required) in forms.items()
        }
        asset_types[name] = [
            AssetTypeRevision(forms=with_common_details(entries), **managed(name, revision))
        ]
    return form_types, asset_types
