"""The state of one DataZone domain: its projects, types, assets and lineage, the lookups the
operations share, and the check of an asset revision's forms against its asset type."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dzlineage_dagster.sandbox.emulators.datazone.access.authorization import (
    Authorization,
    DomainUnit,
)
from dzlineage_dagster.sandbox.emulators.datazone.catalog.listings import Listings
from dzlineage_dagster.sandbox.emulators.datazone.catalog.ownership import (
    ADMIN_CATEGORY,
    OwnershipTransfers,
)
from dzlineage_dagster.sandbox.emulators.datazone.catalog.records import (
    Asset,
    AssetTypeRevision,
    Form,
    FormTypeRevision,
    Project,
    TypeRef,
    managed_types,
    revision_of,
)
from dzlineage_dagster.sandbox.emulators.datazone.common import invalid, not_found
from dzlineage_dagster.sandbox.emulators.datazone.lineage import LineageGraph
from dzlineage_dagster.sandbox.protocol.aws import AwsServiceError


@dataclass
class Domain:
    id: str
    name: str
    description: str | None
    arn: str
    portal_url: str
    root_domain_unit_id: str
    execution_role: str
    service_role: str | None
    domain_version: str
    tags: dict[str, str]
    kms_key: str | None
    single_sign_on: dict[str, Any] | None
    created_at: datetime
    projects: dict[str, Project] = field(default_factory=dict)
    form_types: dict[str, list[FormTypeRevision]] = field(init=False)
    asset_types: dict[str, list[AssetTypeRevision]] = field(init=False)
    assets: dict[str, Asset] = field(default_factory=dict)
    lineage: LineageGraph = field(default_factory=LineageGraph)
    listings: Listings = field(default_factory=Listings)
    transfers: OwnershipTransfers = field(default_factory=OwnershipTransfers)
    authorization: Authorization = field(init=False)

    def __post_init__(self) -> None:
        # Every domain is born with the managed amazon.datazone.* types.
        self.form_types, self.asset_types = managed_types(self.created_at)
        root = DomainUnit(self.root_domain_unit_id, self.name, None, None, self.created_at, "")
        self.authorization = Authorization(self.domain_version, root)

    def output(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "rootDomainUnitId": self.root_domain_unit_id,
            "name": self.name,
            "description": self.description,
            "singleSignOn": self.single_sign_on,
            "domainExecutionRole": self.execution_role,
            "arn": self.arn,
            "kmsKeyIdentifier": self.kms_key,
            "status": "AVAILABLE",
            "portalUrl": self.portal_url,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.created_at,
            "tags": self.tags,
            "domainVersion": self.domain_version,
            "serviceRole": self.service_role,
        }

    def project(self, identifier: str) -> Project:
        if identifier not in self.projects:
            raise not_found(f"Project {identifier} not found in domain {self.id}")
        return self.projects[identifier]

    def administration_project(self) -> Project | None:
        return next((p for p in self.projects.values() if p.category == ADMIN_CATEGORY), None)

    def asset(self, identifier: str) -> Asset:
        if identifier not in self.assets:
            raise not_found(
                "The given Asset doesn't exist. Try creating Asset before accessing it."
            )
        return self.assets[identifier]

    def local_name(self, type_identifier: str) -> str:
        """A type's name: identifiers may carry the domain id as a prefix (``dzd_x.MyType``)."""
        return type_identifier.removeprefix(f"{self.id}.")

    def form_type(self, identifier: str, revision: str | None) -> FormTypeRevision | None:
        return revision_of(self.form_types.get(self.local_name(identifier), []), revision)

    def asset_type(self, identifier: str, revision: str | None) -> AssetTypeRevision | None:
        return revision_of(self.asset_types.get(self.local_name(identifier), []), revision)

    def unknown_form_type(self, name: str, revision: str | None) -> AwsServiceError:
        return invalid(f"Object type Form#{self.id}#{name} with version {revision} not found")

    def checked_forms(
        self, asset_type: AssetTypeRevision, forms_input: list[dict[str, Any]]
    ) -> Iterator[Form]:
        """The forms of an asset revision, each checked against its type and content model."""
        names = [form["formName"] for form in forms_input]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise invalid(f"Forms {duplicates} are given more than once")
        missing = [n for n, e in asset_type.forms.items() if e.required and n not in names]
        if missing:
            raise invalid(f"Asset type {asset_type.name} requires the forms {missing}")
        for form_input in forms_input:
            form_type = self._form_type_for(asset_type, form_input)
            content = form_input.get("content") or "{}"
            try:
                parsed = json.loads(content)
            except ValueError as error:
                raise invalid(f"Form {form_input['formName']} content is not JSON") from error
            errors = form_type.model.content_errors(form_input["formName"], parsed)
            if errors:
                raise invalid(", ".join(errors))
            yield Form(form_input["formName"], form_type.ref, content)

    def _form_type_for(
        self, asset_type: AssetTypeRevision, form_input: dict[str, Any]
    ) -> FormTypeRevision:
        name = form_input["formName"]
        given_type, given_revision = (
            form_input.get("typeIdentifier"),
            form_input.get("typeRevision"),
        )
        declared = asset_type.forms.get(name)
        if declared is None:
            # A form the asset type does not declare is attached as it is given.
            if not given_type:
                raise invalid(f"Form {name} is not in asset type {asset_type.name}: give its type")
            type_name, revision = self.local_name(given_type), given_revision
        else:
            given = TypeRef(
                self.local_name(given_type or declared.type.name),
                given_revision or declared.type.revision,
            )
            if given != declared.type:
                expected, provided = declared.type.qualified(self.id), given.qualified(self.id)
                raise invalid(f"Form {name} expected form {expected} but was provided {provided}")
            type_name, revision = given.name, given.revision
        form_type = self.form_type(type_name, revision)
        if form_type is None:
            raise self.unknown_form_type(type_name, revision)
        return form_type
