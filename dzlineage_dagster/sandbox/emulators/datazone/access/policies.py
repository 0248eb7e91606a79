"""The DataZone operations on domain units, policy grants, project memberships and user
profiles, on the state of :mod:`~dzlineage_dagster.sandbox.emulators.datazone.access.authorization`.

A mixin of :class:`~dzlineage_dagster.sandbox.emulators.datazone.emulator.DataZoneEmulator`: its
handlers find the domain as every other operation does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from dzlineage_dagster.sandbox.emulators.datazone.access.authorization import (
    Authorization,
    caller_principal,
)
from dzlineage_dagster.sandbox.emulators.datazone.catalog.records import AssetTypeRevision
from dzlineage_dagster.sandbox.emulators.datazone.common import invalid, not_found, now
from dzlineage_dagster.sandbox.emulators.datazone.domain import Domain
from dzlineage_dagster.sandbox.protocol.aws import RestJsonService
from dzlineage_dagster.sandbox.server.ambiguities import Ambiguities


class PolicyOperations:
    _service: RestJsonService
    _request: threading.local
    ambiguities: Ambiguities
    user_id: str
    account_id: str
    _domain: Callable[..., Domain]

    @property
    def _caller(self) -> str:
        """The IAM principal of the request being answered (see ``DataZoneEmulator.handle``)."""
        return getattr(self._request, "caller", None) or caller_principal(None, self.account_id)

    def authorize_creation(self, domain: Domain, operation: str, project_id: str) -> None:
        """AccessDeniedException unless the project holds the policy ``operation`` needs."""
        domain.authorization.require_create_policy(
            operation, project_id, self._caller, self.ambiguities.policy_ancestry
        )

    def authorize_asset_write(
        self, domain: Domain, operation: str, project_id: str, asset_type: AssetTypeRevision
    ) -> None:
        domain.authorization.require_asset_write(
            operation, project_id, self._caller, asset_type.name, asset_type.owning_project_id
        )

    def policy_handlers(self) -> dict[str, Callable[[dict[str, Any]], Any]]:
        return {
            "CreateDomainUnit": self._create_domain_unit,
            "GetDomainUnit": self._get_domain_unit,
            "ListDomainUnitsForParent": self._list_domain_units_for_parent,
            "AddPolicyGrant": self._add_policy_grant,
            "ListPolicyGrants": self._list_policy_grants,
            "RemovePolicyGrant": self._remove_policy_grant,
            "CreateProjectMembership": self._create_project_membership,
            "ListProjectMemberships": self._list_project_memberships,
            "DeleteProjectMembership": self._delete_project_membership,
            "GetUserProfile": self._get_user_profile,
        }

    def _authorization(self, params: dict[str, Any]) -> tuple[Domain, Authorization]:
        domain = self._domain(params)
        return domain, domain.authorization

    def _create_domain_unit(self, params: dict[str, Any]) -> dict[str, Any]:
        domain, authorization = self._authorization(params)
        unit = authorization.create_unit(params, now(), self.user_id)
        ancestors = authorization.chain(unit.id)[:-1]
        return {**unit.output(domain.id), "ancestorDomainUnitIds": ancestors}

    def _get_domain_unit(self, params: dict[str, Any]) -> dict[str, Any]:
        domain, authorization = self._authorization(params)
        return authorization.unit(params["identifier"]).output(domain.id)

    def _list_domain_units_for_parent(self, params: dict[str, Any]) -> dict[str, Any]:
        _, authorization = self._authorization(params)
        children = authorization.children(params["parentDomainUnitIdentifier"])
        page, next_token = self._service.page(children, params, default_size=50)
        return {"items": [{"name": u.name, "id": u.id} for u in page], "nextToken": next_token}

    def _add_policy_grant(self, params: dict[str, Any]) -> dict[str, Any]:
        _, authorization = self._authorization(params)
        return {"grantId": authorization.add_grant(params, now(), self.user_id).id}

    def _list_policy_grants(self, params: dict[str, Any]) -> dict[str, Any]:
        _, authorization = self._authorization(params)
        grants = authorization.grants_on(
            params["entityType"], params["entityIdentifier"], params["policyType"]
        )
        page, next_token = self._service.page(grants, params, default_size=50)
        return {"grantList": [g.output() for g in page], "nextToken": next_token}

    def _remove_policy_grant(self, params: dict[str, Any]) -> None:
        _, authorization = self._authorization(params)
        authorization.remove_grant(params)

    def _create_project_membership(self, params: dict[str, Any]) -> None:
        domain, authorization = self._authorization(params)
        project = domain.project(params["projectIdentifier"])
        member = _member_id(authorization, params["member"])
        authorization.add_member(project.id, member, params["designation"])

    def _list_project_memberships(self, params: dict[str, Any]) -> dict[str, Any]:
        domain, authorization = self._authorization(params)
        project = domain.project(params["projectIdentifier"])
        members = sorted(authorization.members.get(project.id, {}).items())
        page, next_token = self._service.page(members, params, default_size=50)
        items = [
            {"memberDetails": {"user": {"userId": user}}, "designation": designation}
            for user, designation in page
        ]
        return {"members": items, "nextToken": next_token}

    def _delete_project_membership(self, params: dict[str, Any]) -> None:
        domain, authorization = self._authorization(params)
        project = domain.project(params["projectIdentifier"])
        authorization.remove_member(project.id, _member_id(authorization, params["member"]))

    def _get_user_profile(self, params: dict[str, Any]) -> dict[str, Any]:
        """By the principal's ARN or by the user id (the botocore model's userIdentifier takes
        both); a user id the domain never made a profile for is not found."""
        domain, authorization = self._authorization(params)
        identifier = params["userIdentifier"]
        if identifier.startswith("arn:"):
            user_id, arn = authorization.profile_of(identifier), identifier
        elif identifier in authorization.profiles:
            user_id, arn = identifier, authorization.profiles[identifier]
        else:
            raise not_found(f"User profile {identifier} not found in domain {domain.id}")
        return {
            "domainId": domain.id,
            "id": user_id,
            "type": "IAM",
            "status": "ACTIVATED",
            "details": {"iam": {"arn": arn}},
        }


def _member_id(authorization: Authorization, member: dict[str, Any]) -> str:
    """A Member's DataZone user id: given, or an IAM principal's ARN resolved to its profile."""
    if "groupIdentifier" in member:
        raise invalid("The sandbox emulates user members only")
    identifier = member["userIdentifier"]
    return authorization.profile_of(identifier) if identifier.startswith("arn:") else identifier
