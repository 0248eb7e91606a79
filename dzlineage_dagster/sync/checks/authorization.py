"""Whether the settings' project may write what the sync writes in its DataZone domain: the
authorization policy grants and the project membership a SageMaker Unified Studio (V2) domain,
or a V1 domain with domain units, requires (decided in :mod:`~dzlineage_dagster.core.aws.authorization`).

Without them DataZone refuses the first type creation with ``AccessDeniedException``, and,
in a V2 domain, every topic's asset write. Checked before anything is written, a missing grant
or membership stops the run once, naming the policy, the domain unit, the project and the
``aws datazone`` line that adds it; ``dzlineage grant-policies --apply`` adds the grants for an
administrator. No command of the product adds a membership: the principal to add is the
sync's, and whoever adds it is a project owner with other credentials (``--apply`` run as the
owner would make the owner the member), so the problem names the exact
``aws datazone create-project-membership`` line, with the sync's principal in it.

:func:`authorization_problems` is the read-only check (``dzlineage doctor`` calls it);
:func:`check_authorization` is the sync's stop.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.aws.authorization import (
    CREATE_ASSET_TYPE,
    CREATE_FORM_TYPE,
    MissingGrant,
    asset_type_use_missing,
    enforces_policies,
    is_member,
    membership_command,
    missing_unit_grants,
)
from dzlineage_dagster.core.catalog.forms import KAFKA_TOPIC_ASSET_TYPE
from dzlineage_dagster.core.doctor import DENIED_CODES, allow_fix, iam_action
from dzlineage_dagster.sync.checks.preflight import role_not_assumable
from dzlineage_dagster.sync.errors import SyncError, describe_error, error_code
from dzlineage_dagster.sync.run_state import SyncRun

#: The policies the sync's type creations need (it creates no glossary).
TYPE_POLICIES = (CREATE_FORM_TYPE, CREATE_ASSET_TYPE)


@dataclass(frozen=True)
class AuthorizationProblem:
    """Something DataZone will refuse the sync, or that could not be checked."""

    message: str
    #: DataZone refuses for sure (False: only under one reading, or not checkable).
    certain: bool
    #: The grant that fixes it, when a grant does.
    grant: MissingGrant | None = None
    #: The ``aws datazone create-project-membership`` line that fixes it, when a membership does.
    membership: str | None = None
    #: What to allow, when AWS denied a read the check needs.
    allow: str | None = None

    @property
    def fix(self) -> str:
        """The command that fixes it and who runs it."""
        if self.grant is not None:
            return (
                f"{self.grant.cli_command()} (or `dzlineage grant-policies --apply`, as a "
                "domain or domain unit owner)"
            )
        if self.membership is not None:
            return f"as an owner of the project: {self.membership}"
        return self.allow or "see docs/sagemaker-unified-studio.md"


def who_fixes(problems: Collection[AuthorizationProblem]) -> str:
    """The sentence that ends a refusal: who adds what (no membership is added by
    ``grant-policies --apply``)."""
    steps = []
    if any(p.grant is not None for p in problems):
        steps.append(
            "An administrator can add the missing grants with `dzlineage grant-policies "
            "--apply` (docs/sagemaker-unified-studio.md)"
        )
    if any(p.membership is not None for p in problems):
        steps.append(
            "a project owner adds the membership with the `aws datazone "
            "create-project-membership` line above (no dzlineage command adds one)"
        )
    return ("; ".join(steps) or "See docs/sagemaker-unified-studio.md") + ", then sync again"


def authorization_problems(
    run: SyncRun,
    creating: Collection[str] = TYPE_POLICIES,
    *,
    asset_writes: bool = True,
) -> list[AuthorizationProblem]:
    """What the project lacks to create types by the ``creating`` policies and, with
    ``asset_writes``, to create and revise topic assets; read-only.

    Calls, in a domain that checks nothing (V1 without domain units): GetDomain (shared with
    the run's portal link) and, when ``creating``, one ListDomainUnitsForParent. Otherwise
    GetProject, a GetDomainUnit per unit of the project's chain and a ListPolicyGrants per
    policy and unit; in a V2 domain with ``asset_writes`` also GetCallerIdentity, GetUserProfile,
    ListProjectMemberships, GetAssetType and, for another project's asset type, a
    ListPolicyGrants.
    """
    try:
        return _problems(run, creating, asset_writes)
    except (ClientError, BotoCoreError) as error:
        return [
            AuthorizationProblem(
                f"the project's DataZone authorization could not be checked "
                f"({describe_error(error)}); the sync goes on and DataZone decides",
                certain=False,
                allow=_what_to_allow(run, error),
            )
        ]


def _what_to_allow(run: SyncRun, error: Exception) -> str | None:
    """What to change when AWS denied a read of the check: the governance role's trust policy
    (STS AssumeRole, made before the read), or the DataZone action (every read of the check is
    DataZone's but the caller's identity, which no policy can deny)."""
    if not isinstance(error, ClientError) or error_code(error) not in DENIED_CODES:
        return None
    datazone = run.resource.datazone
    if error.operation_name == "AssumeRole":
        return role_not_assumable(datazone, "governance")
    action = iam_action(f"datazone.{error.operation_name}")
    return allow_fix(action, datazone.credentials_label(), "governance")


def check_authorization(
    run: SyncRun, creating: Collection[str] = TYPE_POLICIES, *, asset_writes: bool = True
) -> list[AuthorizationProblem]:
    """Raise one :class:`SyncError` naming every grant or membership DataZone will certainly
    refuse; log the others as warnings and return them (see :func:`refusal_explained`)."""
    problems = authorization_problems(run, creating, asset_writes=asset_writes)
    uncertain = [p for p in problems if not p.certain]
    for problem in uncertain:
        run.log.warning(problem.message)
    certain = [p for p in problems if p.certain]
    if not certain:
        return uncertain
    settings = run.settings
    raise SyncError(
        f"DataZone domain {settings.domain_id} will refuse project {settings.project_id} "
        f"what the sync writes; nothing was written. {_numbered(certain)} {who_fixes(certain)}"
    )


@contextmanager
def refusal_explained(
    run: SyncRun, uncertain: Collection[AuthorizationProblem], created: Collection[str]
) -> Iterator[None]:
    """DataZone's AccessDeniedException on a write the check let through, as one SyncError
    naming the grants only the stricter reading of an ancestor's grant needs (``uncertain``)."""
    datazone = run.resource.datazone.client()
    try:
        yield
    except datazone.exceptions.AccessDeniedException as error:
        if any(p.grant is not None for p in uncertain):
            why = (
                "though its own domain unit grants it: this domain wants the grant on every "
                f"ancestor domain unit too. {_numbered(uncertain)}"
            )
        else:
            why = _numbered(uncertain) or "though no grant or membership was found missing."
        raise SyncError(
            f"DataZone refused project {run.settings.project_id} ({describe_error(error)}) "
            f"{why} Created before the refusal: {', '.join(created) or 'nothing'}. "
            f"{who_fixes(uncertain)}"
        ) from None


def _numbered(problems: Collection[AuthorizationProblem]) -> str:
    return " ".join(f"({n}) {p.message}." for n, p in enumerate(problems, 1))


def _problems(
    run: SyncRun, creating: Collection[str], asset_writes: bool
) -> list[AuthorizationProblem]:
    datazone = run.resource.datazone.client()
    settings = run.settings
    domain = run.domain
    version, root = domain.get("domainVersion"), domain.get("rootDomainUnitId")
    v2 = version == "V2"
    if not root or not (v2 or creating):
        return []
    if not enforces_policies(version, v2 or _has_child_units(datazone, settings.domain_id, root)):
        return []
    unit = run.project.get("domainUnitId") or root
    chain, names = _unit_chain(datazone, settings.domain_id, unit)
    problems: list[AuthorizationProblem] = []
    if v2 and (creating or asset_writes):
        problems += _membership_problems(run)
    for policy in creating:
        grants = {
            unit: _grants(datazone, settings.domain_id, "DOMAIN_UNIT", unit, policy)
            for unit in chain
        }
        for missing in missing_unit_grants(
            policy, settings.domain_id, settings.project_id, chain, names, grants
        ):
            problems.append(AuthorizationProblem(missing.describe(), missing.certain, missing))
    if v2 and asset_writes:
        problems += _asset_type_use_problems(run, chain)
    return problems


def _has_child_units(datazone: Any, domain_id: str, root: str) -> bool:
    units = datazone.list_domain_units_for_parent(
        domainIdentifier=domain_id, parentDomainUnitIdentifier=root, maxResults=1
    )
    return bool(units["items"])


def _unit_chain(datazone: Any, domain_id: str, unit_id: str) -> tuple[list[str], dict[str, str]]:
    """The project's domain unit and its ancestors, root first, and their names."""
    chain: list[str] = []
    names: dict[str, str] = {}
    current: str | None = unit_id
    while current is not None and current not in names:
        unit = datazone.get_domain_unit(domainIdentifier=domain_id, identifier=current)
        names[current] = unit["name"]
        chain.insert(0, current)
        current = unit.get("parentDomainUnitId")
    return chain, names


def _grants(
    datazone: Any, domain_id: str, entity_type: str, entity_id: str, policy: str
) -> list[dict[str, Any]]:
    pages = datazone.get_paginator("list_policy_grants").paginate(
        domainIdentifier=domain_id,
        entityType=entity_type,
        entityIdentifier=entity_id,
        policyType=policy,
    )
    return [grant for page in pages for grant in page["grantList"]]


def _membership_problems(run: SyncRun) -> list[AuthorizationProblem]:
    datazone = run.resource.datazone.client()
    settings = run.settings
    principal = run.governance_principal
    profile = datazone.get_user_profile(
        domainIdentifier=settings.domain_id, userIdentifier=principal, type="IAM"
    )
    pages = datazone.get_paginator("list_project_memberships").paginate(
        domainIdentifier=settings.domain_id, projectIdentifier=settings.project_id
    )
    if is_member([m for page in pages for m in page["members"]], profile["id"]):
        return []
    command = membership_command(settings.domain_id, settings.project_id, principal)
    return [
        AuthorizationProblem(
            f"the sync's IAM principal {principal} is not a member of project "
            f"{settings.project_id} (a SageMaker Unified Studio domain writes only for a project "
            f"the caller belongs to; an IAM-based domain maps one IAM role to one project); a "
            f"project owner adds it: {command}",
            certain=True,
            membership=command,
        )
    ]


def _asset_type_use_problems(run: SyncRun, chain: list[str]) -> list[AuthorizationProblem]:
    datazone = run.resource.datazone.client()
    settings = run.settings
    name = KAFKA_TOPIC_ASSET_TYPE.name
    try:
        asset_type = datazone.get_asset_type(domainIdentifier=settings.domain_id, identifier=name)
    except datazone.exceptions.ResourceNotFoundException:
        return []  # the sync creates it, owned by the project: no grant needed
    owner = asset_type.get("owningProjectId")
    grants = _grants(datazone, settings.domain_id, "ASSET_TYPE", name, "USE_ASSET_TYPE")
    missing = asset_type_use_missing(
        settings.domain_id, settings.project_id, chain, name, owner, grants
    )
    return [] if missing is None else [AuthorizationProblem(missing.describe(), True, missing)]


def add_missing_grants(run: SyncRun, problems: Collection[AuthorizationProblem]) -> list[str]:
    """Add each problem's grant with AddPolicyGrant (an administrator's call: the domain unit's
    owner or the domain's); the grants added, described."""
    datazone = run.resource.datazone.client()
    added = []
    for problem in problems:
        if problem.grant is not None:
            grant_id = datazone.add_policy_grant(**problem.grant.add_policy_grant_input())[
                "grantId"
            ]
            added.append(f"{problem.grant.policy} on {problem.grant.where} (grant {grant_id})")
    return added
