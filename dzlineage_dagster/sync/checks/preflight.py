"""What a run checks before it touches any topic: that the domain, the project, the registry
and the cluster the settings name exist and can be read, and that the schemas' assets are not
another project's.

A wrong setting would otherwise fail every topic the same way (a wrong cluster ARN in each
topic's asset stage), or, in a dry run, plan writes against a domain that does not exist. Here
it is one error naming the variable to fix.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.aws.concurrency import at_once
from dzlineage_dagster.core.connectors.topics import TopicKind
from dzlineage_dagster.core.doctor import DENIED_CODES, NOT_FOUND_CODES
from dzlineage_dagster.resources import AwsClientResource
from dzlineage_dagster.settings import (
    AWS_OPTION_VARIABLES,
    env_name,
    role_setting,
    shown,
    side_role_variables,
)
from dzlineage_dagster.sync.errors import SyncError, describe_error, error_code
from dzlineage_dagster.sync.run_state import SyncRun


def check_platform(run: SyncRun) -> None:
    """Raise one :class:`SyncError` naming every setting whose resource is missing or denied,
    a line each, so a run with several wrong settings is fixed in one go.

    Each check is a lookup the run makes anyway, once (GetDomain for the portal link, GetProject
    for the authorization check and the owners, the registry listing, the cluster description),
    so it costs no call more than a run that would have succeeded. They are made at once, then
    checked: a failed one is asked again, to name its setting. The project is checked only in
    a domain that exists (a missing domain has no project to find).
    """
    settings = run.settings
    resource = run.resource
    run.prefetch("domain", "project", "registry_topics", "cluster")

    def check_domain_and_project() -> None:
        _check(
            "domain_id",
            settings.domain_id,
            "DataZone domain",
            lambda: run.portal_url,
            resource.datazone,
        )
        _check(
            "project_id",
            settings.project_id,
            f"DataZone project in domain {settings.domain_id}",
            lambda: run.project,
            resource.datazone,
        )

    problems = []
    for check in (
        check_domain_and_project,
        partial(check_registry, run),
        partial(check_cluster, run),
    ):
        try:
            check()
        except SyncError as error:
            problems.append(str(error))
    if problems:
        raise SyncError("\n  ".join(problems))


def check_registry(run: SyncRun) -> None:
    """The registry whose schemas are the topics: its listing, named by its setting."""
    name = run.settings.registry_name
    reader = run.resource.schema_registry
    _check("registry_name", name, "Glue Schema Registry", lambda: run.registry_topics, reader)


def check_cluster(run: SyncRun) -> None:
    """The cluster every topic's asset and lineage need: one error for all of them."""
    arn = run.settings.msk_cluster_arn
    _check("msk_cluster_arn", arn, "MSK cluster", lambda: run.cluster, run.resource.msk)


def _check(
    field: str, value: str, what: str, look_up: Callable[[], Any], reader: AwsClientResource
) -> None:
    """Look up what ``field`` names with ``reader``'s credentials; a failure names the setting,
    and, for a resource missing or denied, the side whose credentials asked (a registry or a
    domain in another account answers exactly so: AWS looks in the caller's own account)."""
    try:
        look_up()
    except ClientError as error:
        if error.operation_name == "AssumeRole" and reader.side:
            raise SyncError(
                f"{env_name(field)}={shown(value)}: {what} could not be read: "
                f"{role_not_assumable(reader, reader.side)} ({describe_error(error)})"
            ) from None
        code = error_code(error)
        if code in NOT_FOUND_CODES:
            problem = "does not exist"
        elif code in DENIED_CODES:
            problem = "cannot be read: access denied"
        else:
            problem = "could not be read"
        if code in NOT_FOUND_CODES | DENIED_CODES and reader.side:
            own_role = side_role_variables(reader.side)["role_arn"]
            problem += (
                f" with {reader.credentials_label()}; if it is in another account, set "
                f"{own_role} to a role in that account"
            )
        raise SyncError(
            f"{env_name(field)}={shown(value)}: {what} {problem} ({describe_error(error)})"
        ) from None
    except BotoCoreError as error:
        raise SyncError(
            f"{env_name(field)}={shown(value)}: {what} could not be reached "
            f"({describe_error(error)})"
        ) from None


def role_not_assumable(reader: AwsClientResource, side: str) -> str:
    """What to change when AWS refused to let this identity assume the role of ``reader``, a
    resource of ``side``: the role's trust policy (with the side's external id) and this
    identity's own policy."""
    return (
        f"{reader.credentials_label()} cannot be assumed; its trust policy must trust this "
        f"identity with {_external_id_setting(side)} as its sts:ExternalId (as "
        f"iam/{side}-account-trust-policy.json does), and this identity's policy must allow "
        "sts:AssumeRole on the role (as iam/runner-policy.json does)"
    )


def _external_id_setting(side: str) -> str:
    """The variable of the external id sent with ``side``'s role: a role's own goes with it."""
    own = side_role_variables(side)
    if role_setting(side) == own["role_arn"]:
        return own["role_external_id"]
    return AWS_OPTION_VARIABLES["role_external_id"]


#: ListProjects' ``projectCategory`` of a domain's administration project, the one project
#: UpdateAssetOwner moves assets from or to.
ADMINISTRATION_CATEGORY = "ADMIN"

#: How many table topics the ownership check samples, whatever the registry's size: its cost
#: is one Search each, and one GetProject when it refuses.
OWNERSHIP_SAMPLE = 3


def check_ownership(run: SyncRun, topics: Sequence[str]) -> None:
    """Raise :class:`SyncError` when the schemas' assets belong to another project.

    DataZone allows one asset per ``externalIdentifier`` (the schema ARN) in a domain, so
    another project's asset makes every CreateAsset of this project fail. When each of the
    sampled table topics (the first, middle and last of ``topics``) has an asset and all of
    them belong to one other project, the settings name the wrong project, or the assets were
    never moved: one error names the owner and the transfers that would move them (one
    ListProjects finds the administration project they go through), before anything is
    written. A registry only some
    of whose schemas another project cataloged fails just those topics, by name.

    Search is the lookup: GetAsset documents an ``externalIdentifier`` identifier, but not how
    its ``externalIdentifer%2F`` prefix is encoded, and the sandbox does not answer it. Search
    finding another project's asset is evidence; not finding one proves nothing, so this check
    only ever refuses on what it found.
    """
    table_topics = [t for t in topics if run.topology.lineage_for(t).kind is TopicKind.TABLE]
    if not table_topics:
        return
    last = len(table_topics) - 1
    sample = [table_topics[i] for i in sorted({0, last // 2, last})][:OWNERSHIP_SAMPLE]
    owners = set(at_once(*(partial(_owning_project, run, topic) for topic in sample)))
    if len(owners) != 1:
        return
    [owner] = owners
    settings = run.settings
    if owner is None or owner == settings.project_id:
        return
    raise SyncError(
        f"{env_name('project_id')}={settings.project_id!r}: the assets of registry "
        f"{settings.registry_name}'s schemas belong to project {_project_label(run, owner)} "
        f"(all {len(sample)} sampled: {', '.join(sample)}), and DataZone allows one asset per "
        f"schema in domain {settings.domain_id}; nothing was written. To keep syncing them, set "
        f"{env_name('project_id')}={owner}; to move them to project {settings.project_id}, "
        f"{_move_steps(run, owner)}, then sync (docs/scope.md: 'Moving the assets to another project')"
    )


def _move_steps(run: SyncRun, owner: str) -> str:
    """How to move the assets from ``owner`` to the settings' project: DataZone's
    UpdateAssetOwner moves an asset only from or to the domain's administration project."""
    target = run.settings.project_id
    transfer = "transfer each asset with UpdateAssetOwner (aws datazone update-asset-owner)"
    administration = administration_project(run)
    if administration is None:
        return (
            f"{transfer} to the domain's administration project, then from it to project "
            f"{target} (no administration project was found: DataZone moves an asset only from "
            "or to it)"
        )
    if administration["id"] == owner:
        return f"{transfer} from the domain's administration project to project {target}"
    if administration["id"] == target:
        return f"{transfer} to it (the domain's administration project)"
    return (
        f"{transfer} to the domain's administration project {administration['name']!r} "
        f"({administration['id']}), then from it to project {target}"
    )


def administration_project(run: SyncRun) -> dict[str, Any] | None:
    """The domain's administration project (ListProjects, category ``ADMIN``); None when there
    is none the caller can see."""
    try:
        projects = run.resource.datazone.client().list_projects(
            domainIdentifier=run.settings.domain_id, projectCategory=ADMINISTRATION_CATEGORY
        )["items"]
    except ClientError:
        return None
    return projects[0] if projects else None


def _owning_project(run: SyncRun, topic: str) -> str | None:
    """The project owning the asset whose externalIdentifier is the topic's schema ARN."""
    arn = run.registry_topics[topic].schema_arn
    items = run.resource.datazone.search_assets(run.settings.domain_id, text=arn)
    return next(
        (i.get("owningProjectId") for i in items if i.get("externalIdentifier") == arn), None
    )


def _project_label(run: SyncRun, project_id: str) -> str:
    """``'name' (id)``; the id alone when the project cannot be read (not a member, say)."""
    try:
        project = run.resource.datazone.client().get_project(
            domainIdentifier=run.settings.domain_id, identifier=project_id
        )
    except ClientError:
        return project_id
    return f"{project['name']!r} ({project_id})"
