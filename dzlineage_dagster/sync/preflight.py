"""What a run checks before it touches any topic: that the domain, the project, the registry
and the cluster the settings name exist and can be read.

A wrong setting would otherwise fail every topic the same way (a wrong cluster ARN in each
topic's asset stage), or, in a dry run, plan writes against a domain that does not exist. Here
it is one error naming the variable to fix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.settings import env_name
from dzlineage_dagster.sync.errors import SyncError, describe_error, error_code
from dzlineage_dagster.sync.run_state import SyncRun

#: Error codes by which AWS says that the named thing is not there.
NOT_FOUND_CODES = frozenset(
    {"ResourceNotFoundException", "NotFoundException", "EntityNotFoundException"}
)
DENIED_CODES = frozenset({"AccessDeniedException", "AccessDenied", "UnauthorizedException"})


def check_platform(run: SyncRun) -> None:
    """Raise :class:`SyncError` naming the first setting whose resource is missing or denied.

    Each check is a lookup the run makes anyway (GetDomain for the portal link, the registry
    listing, the cluster description) except GetProject, so it costs one call more than a run
    that would have succeeded.
    """
    settings = run.settings
    datazone = run.resource.datazone.client()
    _check("domain_id", settings.domain_id, "DataZone domain", lambda: run.portal_url)
    _check(
        "project_id",
        settings.project_id,
        f"DataZone project in domain {settings.domain_id}",
        lambda: datazone.get_project(
            domainIdentifier=settings.domain_id, identifier=settings.project_id
        ),
    )
    _check(
        "registry_name",
        settings.registry_name,
        "Glue Schema Registry",
        lambda: run.registry_topics,
    )
    check_cluster(run)


def check_cluster(run: SyncRun) -> None:
    """The cluster every topic's asset and lineage need: one error for all of them."""
    arn = run.settings.msk_cluster_arn
    _check("msk_cluster_arn", arn, "MSK cluster", lambda: run.cluster)


def _check(field: str, value: str, what: str, look_up: Callable[[], Any]) -> None:
    try:
        look_up()
    except ClientError as error:
        code = error_code(error)
        if code in NOT_FOUND_CODES:
            problem = "does not exist"
        elif code in DENIED_CODES:
            problem = "cannot be read: access denied"
        else:
            problem = "could not be read"
        raise SyncError(
            f"{env_name(field)}={value!r}: {what} {problem} ({describe_error(error)})"
        ) from None
    except BotoCoreError as error:
        raise SyncError(
            f"{env_name(field)}={value!r}: {what} could not be reached ({describe_error(error)})"
        ) from None
