"""A domain's units, authorization policy grants and project memberships, and the checks
DataZone makes with them before a project's type, glossary or asset is created.

What AWS documents, and how the sandbox reads it:

- Every domain has a root domain unit (GetDomain's ``rootDomainUnitId``); CreateDomainUnit adds
  units below it; a project lives in one (CreateProject's ``domainUnitId``, default the root).
- Custom form types, asset types and glossaries are created only by a project granted
  ``CREATE_FORM_TYPE`` / ``CREATE_ASSET_TYPE`` / ``CREATE_GLOSSARY`` on its domain unit (user
  guide, "Assign authorization policies to projects within a domain unit"). A grant with
  ``includeChildDomainUnits`` also applies in the units below ("cascade permissions"). Whether
  a grant on every ancestor is needed too no document says: the ``policy_ancestry`` switch
  (``cascade``, default; ``intersect``: the project's unit and every ancestor must grant it).
- Amazon SageMaker Unified Studio (``domainVersion`` V2) adds ``USE_ASSET_TYPE``: the projects
  (or domain units' projects) that may create assets, and asset revisions, of a custom asset
  type. The sandbox lets the type's owning project use it without one (it created it).
- In a V2 domain the caller's IAM principal must be a member of the project it writes for
  (CreateProjectMembership; the project's creator is its owner).
- Without them DataZone answers ``AccessDeniedException`` "User is not permitted to perform
  operation: <operation>" (the message DataZone gives, e.g. for CreateProjectMembership in
  aws-samples/data-mesh-datazone-cdk-cloudformation#18).

V1 domains without units below the root keep the sandbox's earlier behaviour: nothing is
checked, as every test written before domain units expects.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from moto.iam.models import iam_backends
from moto.sts.models import sts_backends

from dzlineage_dagster.sandbox.emulators.datazone.common import invalid, new_id, not_found
from dzlineage_dagster.sandbox.protocol.aws import AwsServiceError

#: The policy each gated operation needs, and its member of the grant's ``detail`` union.
CREATE_POLICIES = {
    "CreateFormType": ("CREATE_FORM_TYPE", "createFormType"),
    "CreateAssetType": ("CREATE_ASSET_TYPE", "createAssetType"),
    "CreateGlossary": ("CREATE_GLOSSARY", "createGlossary"),
}
_DETAIL_OF_POLICY = {
    **{policy: member for policy, member in CREATE_POLICIES.values()},
    "USE_ASSET_TYPE": "useAssetType",
}
#: Where a user's profile ids come from: one per IAM principal, stable across resets.
_PROFILE_NAMESPACE = uuid.UUID("6c1c3b0e-6f47-4a51-9d57-1c1f1c6a1d23")


def denied(operation: str) -> AwsServiceError:
    return AwsServiceError(
        "AccessDeniedException", f"User is not permitted to perform operation: {operation}"
    )


def user_profile_id(principal_arn: str) -> str:
    """The DataZone user id of an IAM principal (UserProfileId's uuid form)."""
    return str(uuid.uuid5(_PROFILE_NAMESPACE, principal_arn))


@dataclass
class DomainUnit:
    id: str
    name: str
    description: str | None
    parent_id: str | None
    created_at: datetime
    created_by: str

    def output(self, domain_id: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "domainId": domain_id,
            "name": self.name,
            "parentDomainUnitId": self.parent_id,
            "description": self.description,
            "owners": [],
            "createdAt": self.created_at,
            "lastUpdatedAt": self.created_at,
            "createdBy": self.created_by,
            "lastUpdatedBy": self.created_by,
        }


@dataclass
class PolicyGrant:
    id: str
    entity_type: str
    entity_id: str
    policy_type: str
    principal: dict[str, Any]
    detail: dict[str, Any]
    created_at: datetime
    created_by: str

    def output(self) -> dict[str, Any]:
        return {
            "principal": self.principal,
            "detail": self.detail,
            "createdAt": self.created_at,
            "createdBy": self.created_by,
            "grantId": self.id,
        }

    def names_project(self, project_id: str, chain: list[str]) -> bool:
        """Whether the grant's principal is the project, or every project of a unit of its
        ``chain`` (root first, its own unit last)."""
        principal = self.principal.get("project")
        if not principal:
            return False
        if "projectIdentifier" in principal:
            return principal["projectIdentifier"] == project_id
        unit_filter = (principal.get("projectGrantFilter") or {}).get("domainUnitFilter") or {}
        unit = unit_filter.get("domainUnit")
        if unit == chain[-1]:
            return True
        return bool(unit_filter.get("includeChildDomainUnits")) and unit in chain

    @property
    def cascades(self) -> bool:
        member = self.detail.get(_DETAIL_OF_POLICY.get(self.policy_type, ""), {}) or {}
        return bool(member.get("includeChildDomainUnits"))


@dataclass
class Authorization:
    """One domain's units, grants and memberships."""

    domain_version: str
    root: DomainUnit
    units: dict[str, DomainUnit] = field(default_factory=dict)
    #: Each project's domain unit.
    project_units: dict[str, str] = field(default_factory=dict)
    grants: list[PolicyGrant] = field(default_factory=list)
    #: Each project's members: user id -> designation.
    members: dict[str, dict[str, str]] = field(default_factory=dict)
    #: The user profiles the domain made for IAM principals: user id -> principal ARN.
    profiles: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.units.setdefault(self.root.id, self.root)

    @property
    def enforced(self) -> bool:
        return self.domain_version == "V2" or len(self.units) > 1

    # units

    def unit(self, identifier: str) -> DomainUnit:
        if identifier not in self.units:
            raise not_found(f"Domain unit {identifier} not found")
        return self.units[identifier]

    def create_unit(self, params: dict[str, Any], at: datetime, by: str) -> DomainUnit:
        parent = self.unit(params["parentDomainUnitIdentifier"])
        if any(u.parent_id == parent.id and u.name == params["name"] for u in self.units.values()):
            raise AwsServiceError(
                "ConflictException", f"Domain unit {params['name']} already exists"
            )
        unit = DomainUnit(new_id(), params["name"], params.get("description"), parent.id, at, by)
        self.units[unit.id] = unit
        return unit

    def children(self, parent_id: str) -> list[DomainUnit]:
        self.unit(parent_id)
        return [u for u in self.units.values() if u.parent_id == parent_id]

    def chain(self, unit_id: str) -> list[str]:
        """The unit's ancestors from the root, then the unit."""
        chain = [unit_id]
        while self.units[chain[0]].parent_id is not None:
            chain.insert(0, self.units[chain[0]].parent_id)
        return chain

    def place_project(self, project_id: str, unit_id: str | None) -> None:
        self.project_units[project_id] = self.unit(unit_id).id if unit_id else self.root.id

    # grants

    def add_grant(self, params: dict[str, Any], at: datetime, by: str) -> PolicyGrant:
        policy, entity_type = params["policyType"], params["entityType"]
        member = _DETAIL_OF_POLICY.get(policy)
        if member is None:
            raise invalid(f"The sandbox does not emulate the {policy} policy")
        if member not in params["detail"]:
            raise invalid(f"A {policy} grant takes the detail {member}")
        expected = "ASSET_TYPE" if policy == "USE_ASSET_TYPE" else "DOMAIN_UNIT"
        if entity_type != expected:
            raise invalid(f"A {policy} grant is on an entity of type {expected}")
        if entity_type == "DOMAIN_UNIT":
            self.unit(params["entityIdentifier"])
        grant = PolicyGrant(
            id=new_id(10),
            entity_type=entity_type,
            entity_id=params["entityIdentifier"],
            policy_type=policy,
            principal=params["principal"],
            detail=params["detail"],
            created_at=at,
            created_by=by,
        )
        self.grants.append(grant)
        return grant

    def grants_on(self, entity_type: str, entity_id: str, policy: str) -> list[PolicyGrant]:
        return [
            g
            for g in self.grants
            if (g.entity_type, g.entity_id, g.policy_type) == (entity_type, entity_id, policy)
        ]

    def remove_grant(self, params: dict[str, Any]) -> None:
        on = self.grants_on(params["entityType"], params["entityIdentifier"], params["policyType"])
        grant_id = params.get("grantIdentifier")
        self.grants = [
            g
            for g in self.grants
            if g not in on
            or (grant_id is not None and g.id != grant_id)
            or (grant_id is None and g.principal != params["principal"])
        ]

    # memberships

    def profile_of(self, principal_arn: str) -> str:
        """The user id of an IAM principal's profile, made the first time the domain meets it
        (a member added, a project created; DataZone makes profiles the same way)."""
        user_id = user_profile_id(principal_arn)
        self.profiles.setdefault(user_id, principal_arn)
        return user_id

    def add_member(self, project_id: str, user_id: str, designation: str) -> None:
        self.members.setdefault(project_id, {})[user_id] = designation

    def remove_member(self, project_id: str, user_id: str) -> None:
        self.members.get(project_id, {}).pop(user_id, None)

    # checks

    def require_create_policy(
        self, operation: str, project_id: str, caller: str, ancestry: str
    ) -> None:
        """AccessDeniedException unless the project may make what ``operation`` creates."""
        if not self.enforced:
            return
        self._require_member(operation, project_id, caller)
        policy, _ = CREATE_POLICIES[operation]
        chain = self.chain(self.project_units.get(project_id, self.root.id))

        def granted_on(unit: str, *, inherited: bool) -> bool:
            return any(
                g.names_project(project_id, chain) and (g.cascades or not inherited)
                for g in self.grants_on("DOMAIN_UNIT", unit, policy)
            )

        if ancestry == "intersect":
            allowed = all(granted_on(unit, inherited=False) for unit in chain)
        else:
            allowed = granted_on(chain[-1], inherited=False) or any(
                granted_on(unit, inherited=True) for unit in chain[:-1]
            )
        if not allowed:
            raise denied(operation)

    def require_asset_write(
        self,
        operation: str,
        project_id: str,
        caller: str,
        asset_type: str,
        type_owner: str | None,
    ) -> None:
        """AccessDeniedException unless the project may write assets of ``asset_type``: its
        caller a member (V2), and a USE_ASSET_TYPE grant unless the project owns the type."""
        if self.domain_version != "V2":
            return
        self._require_member(operation, project_id, caller)
        if type_owner is None or type_owner == project_id:
            return
        chain = self.chain(self.project_units.get(project_id, self.root.id))
        for grant in self.grants_on("ASSET_TYPE", asset_type, "USE_ASSET_TYPE"):
            unit = (grant.detail.get("useAssetType") or {}).get("domainUnitId")
            if grant.names_project(project_id, chain) or unit in chain:
                return
        raise denied(operation)

    def _require_member(self, operation: str, project_id: str, caller: str) -> None:
        if self.domain_version == "V2" and user_profile_id(caller) not in self.members.get(
            project_id, {}
        ):
            raise denied(operation)


_ACCESS_KEY = re.compile(r"Credential=([^/]+)/")


def caller_principal(authorization: str | None, account_id: str) -> str:
    """The IAM principal that signed a request, as DataZone knows it: moto's STS knows the
    access keys it handed out (AssumeRole: the role) and IAM the users' keys; any other key is
    moto's default caller (GetCallerIdentity's ``user/moto``)."""
    match = _ACCESS_KEY.search(authorization or "")
    key = match.group(1) if match else ""
    sts = sts_backends[account_id]["global"]
    assumed = sts.get_assumed_role_from_access_key(key)
    if assumed is not None:
        return assumed.role_arn
    user = iam_backends[account_id]["aws"].get_user_from_access_key_id(key)
    if user is not None:
        return user.arn
    return f"arn:aws:iam::{account_id}:user/moto"
