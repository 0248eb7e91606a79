"""Which DataZone authorization policy grants and project membership the product needs in a
domain, and which of them are missing, decided from the answers DataZone gave (GetDomain,
GetProject, GetDomainUnit, ListPolicyGrants, ListProjectMemberships). No AWS call here.

What AWS documents (DataZone API reference: AddPolicyGrant, ListPolicyGrants, ManagedPolicyType;
user guide "Domain units and authorization policies"; SageMaker Unified Studio admin guide
"Domain units and authorization policies"):

- A project creates metadata form types and custom asset types (and glossaries) only with the
  ``CREATE_FORM_TYPE`` / ``CREATE_ASSET_TYPE`` (``CREATE_GLOSSARY``) policy granted to it on a
  domain unit (AddPolicyGrant, entity type ``DOMAIN_UNIT``, principal
  ``{project: {projectDesignation, projectIdentifier}}``).
- A grant's ``includeChildDomainUnits`` "specifies whether the policy grant is applied to child
  domain units": the guides' "cascade permissions". Read so, a grant on the project's own unit,
  or on an ancestor with ``includeChildDomainUnits``, is enough (:data:`CASCADE`). Whether an
  ancestor's grant is *also required* (every unit from the root down to the project's must grant
  it: :data:`INTERSECT`) no AWS document says; the product works under both readings: it stops
  only on what is missing under both, and the grants it asks for satisfy both.
- Amazon SageMaker Unified Studio domains (``domainVersion`` ``V2``) add ``USE_ASSET_TYPE``
  (entity type ``ASSET_TYPE``): which projects may create assets of a custom asset type. The
  project owning the type needs none.
- The caller's IAM principal must be a member of the project whose resources it writes
  (CreateProjectMembership; an IAM-based V2 domain maps an IAM role to one project).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CREATE_FORM_TYPE = "CREATE_FORM_TYPE"
CREATE_ASSET_TYPE = "CREATE_ASSET_TYPE"
CREATE_GLOSSARY = "CREATE_GLOSSARY"
USE_ASSET_TYPE = "USE_ASSET_TYPE"

#: Each managed policy's member of AddPolicyGrant's ``detail`` union (PolicyGrantDetail).
DETAIL_MEMBERS = {
    CREATE_FORM_TYPE: "createFormType",
    CREATE_ASSET_TYPE: "createAssetType",
    CREATE_GLOSSARY: "createGlossary",
    USE_ASSET_TYPE: "useAssetType",
}

#: The readings of an ancestor's grant (see the module docstring).
CASCADE = "cascade"
INTERSECT = "intersect"

#: The designation the product's grants name: the project's owners (ProjectDesignation).
GRANT_DESIGNATION = "OWNER"

_ASSUMED_ROLE = re.compile(r"^arn:(aws[^:]*):sts::(\d{12}):assumed-role/([^/]+)/.+$")
_STS_USER = re.compile(r"^arn:(aws[^:]*):sts::(\d{12}):user/(.+)$")


def iam_principal(caller_arn: str) -> str:
    """The IAM principal DataZone knows a caller by (GetCallerIdentity's ARN): an assumed role's
    session is its role (``arn:aws:iam::<account>:role/<name>``), as DataZone's IAM user
    profiles and project memberships name it."""
    assumed = _ASSUMED_ROLE.match(caller_arn)
    if assumed:
        partition, account, role = assumed.groups()
        return f"arn:{partition}:iam::{account}:role/{role}"
    user = _STS_USER.match(caller_arn)
    if user:
        partition, account, name = user.groups()
        return f"arn:{partition}:iam::{account}:user/{name}"
    return caller_arn


def enforces_policies(domain_version: str | None, child_units_exist: bool) -> bool:
    """Whether DataZone checks the create policies in this domain: always in a SageMaker Unified
    Studio (V2) domain, in a V1 domain once it has domain units below its root."""
    return domain_version == "V2" or child_units_exist


def grant_covers(grant: Mapping[str, Any], project_id: str, project_chain: Sequence[str]) -> bool:
    """Whether a ListPolicyGrants member (of one policy) names the project, whose domain unit
    chain (root first, its own unit last) is ``project_chain``: the project by id, or every
    project of a unit through ``projectGrantFilter``."""
    principal = (grant.get("principal") or {}).get("project")
    if not principal:
        return False
    if principal.get("projectIdentifier"):
        return principal["projectIdentifier"] == project_id
    unit_filter = (principal.get("projectGrantFilter") or {}).get("domainUnitFilter")
    if not unit_filter:
        return False
    if unit_filter["domainUnit"] == project_chain[-1]:
        return True
    return bool(unit_filter.get("includeChildDomainUnits")) and (
        unit_filter["domainUnit"] in project_chain
    )


def _cascades(grant: Mapping[str, Any], policy: str) -> bool:
    detail = (grant.get("detail") or {}).get(DETAIL_MEMBERS[policy]) or {}
    return bool(detail.get("includeChildDomainUnits"))


def units_lacking(
    policy: str,
    project_id: str,
    chain: Sequence[str],
    grants_by_unit: Mapping[str, Sequence[Mapping[str, Any]]],
    reading: str,
) -> list[str]:
    """The units of ``chain`` (root first, the project's unit last) on which a grant of
    ``policy`` to the project is missing under ``reading``; empty when it is authorized."""
    covering = {
        unit
        for unit in chain
        if any(grant_covers(g, project_id, chain) for g in grants_by_unit.get(unit, ()))
    }
    if reading == INTERSECT:
        return [unit for unit in chain if unit not in covering]
    own = chain[-1]
    inherited = any(
        grant_covers(g, project_id, chain) and _cascades(g, policy)
        for unit in chain[:-1]
        for g in grants_by_unit.get(unit, ())
    )
    return [] if own in covering or inherited else [own]


@dataclass(frozen=True)
class MissingGrant:
    """A policy grant the project lacks, with the call that adds it."""

    policy: str
    entity_type: str
    entity_id: str
    project_id: str
    domain_id: str
    #: What the grant is on, for people: ``domain unit 'Sales' (abc)`` or ``asset type X``.
    where: str
    #: Missing under both readings (DataZone refuses for sure), or only under ``intersect``.
    certain: bool = True

    def detail(self) -> dict[str, Any]:
        if self.policy == USE_ASSET_TYPE:
            return {"useAssetType": {}}
        return {DETAIL_MEMBERS[self.policy]: {"includeChildDomainUnits": True}}

    def principal(self) -> dict[str, Any]:
        return {
            "project": {
                "projectDesignation": GRANT_DESIGNATION,
                "projectIdentifier": self.project_id,
            }
        }

    def add_policy_grant_input(self) -> dict[str, Any]:
        """AddPolicyGrant's input for this grant."""
        return {
            "domainIdentifier": self.domain_id,
            "entityType": self.entity_type,
            "entityIdentifier": self.entity_id,
            "policyType": self.policy,
            "principal": self.principal(),
            "detail": self.detail(),
        }

    def cli_command(self) -> str:
        """The ``aws datazone add-policy-grant`` line an administrator runs to add it."""
        return " ".join(
            [
                "aws datazone add-policy-grant",
                f"--domain-identifier {self.domain_id}",
                f"--entity-type {self.entity_type}",
                f"--entity-identifier {self.entity_id}",
                f"--policy-type {self.policy}",
                f"--principal {shlex.quote(json.dumps(self.principal(), separators=(',', ':')))}",
                f"--detail {shlex.quote(json.dumps(self.detail(), separators=(',', ':')))}",
            ]
        )

    def describe(self) -> str:
        reading = "" if self.certain else " (needed where DataZone requires every ancestor's grant)"
        return (
            f"policy {self.policy} is not granted to project {self.project_id} on {self.where}"
            f"{reading}; add it: {self.cli_command()}"
        )


def missing_unit_grants(
    policy: str,
    domain_id: str,
    project_id: str,
    chain: Sequence[str],
    unit_names: Mapping[str, str],
    grants_by_unit: Mapping[str, Sequence[Mapping[str, Any]]],
) -> list[MissingGrant]:
    """The grants of ``policy`` that make the project authorized under both readings: each unit
    lacking one under :data:`INTERSECT`, marked ``certain`` where :data:`CASCADE` lacks it too."""
    certain = set(units_lacking(policy, project_id, chain, grants_by_unit, CASCADE))
    return [
        MissingGrant(
            policy=policy,
            entity_type="DOMAIN_UNIT",
            entity_id=unit,
            project_id=project_id,
            domain_id=domain_id,
            where=f"domain unit {unit_names.get(unit, unit)!r} ({unit})",
            certain=unit in certain,
        )
        for unit in units_lacking(policy, project_id, chain, grants_by_unit, INTERSECT)
    ]


def asset_type_use_missing(
    domain_id: str,
    project_id: str,
    chain: Sequence[str],
    asset_type: str,
    owning_project_id: str | None,
    grants: Sequence[Mapping[str, Any]],
) -> MissingGrant | None:
    """The USE_ASSET_TYPE grant the project lacks to create assets of ``asset_type``, owned by
    ``owning_project_id``; None when it owns the type or a grant covers it (the project, or a
    unit of its chain through ``useAssetType.domainUnitId``)."""
    if owning_project_id in (None, project_id):
        return None
    for grant in grants:
        if grant_covers(grant, project_id, chain):
            return None
        unit = ((grant.get("detail") or {}).get("useAssetType") or {}).get("domainUnitId")
        if unit and unit in chain:
            return None
    return MissingGrant(
        policy=USE_ASSET_TYPE,
        entity_type="ASSET_TYPE",
        entity_id=asset_type,
        project_id=project_id,
        domain_id=domain_id,
        where=f"asset type {asset_type} (owned by project {owning_project_id})",
    )


def is_member(memberships: Sequence[Mapping[str, Any]], user_id: str) -> bool:
    """Whether ListProjectMemberships' members hold the user (by its DataZone user id)."""
    return any(
        ((m.get("memberDetails") or {}).get("user") or {}).get("userId") == user_id
        for m in memberships
    )


def membership_command(domain_id: str, project_id: str, principal_arn: str) -> str:
    """The ``aws datazone create-project-membership`` line that makes the principal a member."""
    member = shlex.quote(f'{{"userIdentifier":"{principal_arn}"}}')
    return (
        f"aws datazone create-project-membership --domain-identifier {domain_id} "
        f"--project-identifier {project_id} --member {member} --designation PROJECT_CONTRIBUTOR"
    )
