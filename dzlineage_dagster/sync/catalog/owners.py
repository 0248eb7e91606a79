"""A topic's owners, from DataZone and from where teams configure them (core/ownership/owners.py).

- DataZone: the project owning the topics' assets (GetProject), as ``team:<project name>``,
  and its members designated ``PROJECT_OWNER`` (ListProjectMemberships), by DataZone user id,
  but for the principal the product runs as.
  DataZone's entity owners (ListEntityOwners) exist for domain units only: the botocore model's
  ``DataZoneEntityType`` has the single value ``DOMAIN_UNIT``, so an asset's owners are its
  owning project's. Read once per run.
- The Glue Schema Registry: the schema's ``owner`` tag (GetTags on the schema ARN).
- The connectors: the ``dzlineage.owners`` key of the configuration of the Debezium connector
  writing the topic and of the sink connectors reading it.
"""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.ownership.owners import (
    CONNECTOR_OWNERS_KEY,
    OWNER_TAG,
    Owner,
    merge_owners,
    parse_owners,
)
from dzlineage_dagster.sync.run_state import SyncRun

PROJECT_OWNER_DESIGNATION = "PROJECT_OWNER"


def datazone_owners(run: SyncRun) -> tuple[Owner, ...]:
    """The owning project as a team, then its owners: the run's GetProject, one listing and one
    GetUserProfile per owner, for every topic of the run (they share the project).

    The principal the product itself runs as is no one to tell: DataZone makes whoever creates
    a project its owner, often the automation that set it up and now runs the sync (on the
    sandbox, the caller every client shares). It is left out (one GetCallerIdentity, only when
    an owner is an IAM principal); a person who is that principal is named by the schema's tag
    or a connector's key instead (docs/impact.md)."""
    settings = run.settings
    datazone = run.resource.datazone.client()
    members = run.resource.datazone.paginate(
        "datazone",
        "list_project_memberships",
        "members",
        domainIdentifier=settings.domain_id,
        projectIdentifier=settings.project_id,
    )
    people = [
        person_named(datazone, settings.domain_id, member["memberDetails"]["user"]["userId"])
        for member in members
        if member["designation"] == PROJECT_OWNER_DESIGNATION and "user" in member["memberDetails"]
    ]
    itself = own_principal(run) if any(name.startswith("arn:") for name in people) else None
    owners = [Owner(name, "datazone-project-owner") for name in people if name != itself]
    return (Owner(f"team:{run.project['name']}", "datazone-project"), *owners)


def own_principal(run: SyncRun) -> str | None:
    """The IAM principal the governance side's calls are made as (None when STS will not say)."""
    try:
        return run.governance_principal
    except (ClientError, BotoCoreError):
        return None


def person_named(datazone, domain_id: str, user_id: str) -> str:
    """A DataZone user as people know them: the IAM Identity Center user name, else the IAM
    principal's ARN (GetUserProfile's ``details``), else the user id."""
    try:
        profile = datazone.get_user_profile(domainIdentifier=domain_id, userIdentifier=user_id)
    except ClientError:
        return user_id
    details = profile.get("details") or {}
    return (
        (details.get("sso") or {}).get("username")
        or (details.get("iam") or {}).get("arn")
        or user_id
    )


def configured_owners(run: SyncRun, topic: str) -> tuple[Owner, ...]:
    """The owners the topic's schema tag and its connectors' configurations name."""
    found: list[tuple[Owner, ...]] = []
    listed = run.registry_topics.get(topic)
    if listed is not None:
        tags = run.resource.schema_registry.client().get_tags(ResourceArn=listed.schema_arn)
        value = (tags.get("Tags") or {}).get(OWNER_TAG)
        if value:
            found.append(parse_owners(value, f"glue-schema-tag:{OWNER_TAG}"))
    lineage = run.topology.lineage_for(topic)
    names = [lineage.source_connector, *lineage.sink_connectors]
    configs = {connector.name: connector.config for connector in run.topology.connectors}
    for name in dict.fromkeys(n for n in names if n):
        value = configs.get(name, {}).get(CONNECTOR_OWNERS_KEY)
        if value:
            found.append(parse_owners(value, f"connector:{name}"))
    return merge_owners(*found)


def topic_owners(run: SyncRun, topic: str, project: tuple[Owner, ...]) -> tuple[Owner, ...]:
    """Everyone to tell about the topic: its configured owners first, then DataZone's."""
    return merge_owners(configured_owners(run, topic), project)
