"""The sandbox's second scope (``dzlineage sandbox --scopes two``): another team's CDC platform
(:data:`SECOND_PLATFORM`: its own MSK cluster, Glue Schema Registry, connectors on MSK Connect,
Glue database and, with ``--change-queue``, its own rules and queue of changes) in another
account and Region, reached by its own role, whose topics join the first platform's DataZone
domain: one deployment serving two registries (docs/many-registries.md).

The role trusts the deployment's account with its own external id, as each side's role does
(:mod:`~dzlineage_dagster.sandbox.demo.accounts`). Every service of the sandbox answers in the
account of the keys that signed the call, so the first scope's credentials see none of the
second's resources, and each account's CloudTrail events reach only its own rules and queue.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from dzlineage_dagster.sandbox.demo.accounts import create_trusted_role, role_session
from dzlineage_dagster.sandbox.demo.seed import (
    deployment_session,
    load_platform_spec,
    seed_data_side,
)

SECOND_PLATFORM = Path(__file__).with_name("second_platform.yaml")
#: The scopes' names: the demo platform's, then the second's.
FIRST_SCOPE, SECOND_SCOPE = "shop", "billing"
SECOND_ACCOUNT = "333333333333"
SECOND_REGION = "eu-west-1"
SECOND_ROLE_ARN = f"arn:aws:iam::{SECOND_ACCOUNT}:role/dzlineage-data"
SECOND_EXTERNAL_ID = "dzlineage-billing-sandbox"
#: The first platform's variables a scope names for itself, by scope key.
_SCOPE_VARIABLES = {
    "registry_name": "DZLINEAGE_REGISTRY_NAME",
    "msk_cluster_arn": "DZLINEAGE_MSK_CLUSTER_ARN",
    "glue_database": "DZLINEAGE_GLUE_DATABASE",
    "change_queue_url": "DZLINEAGE_CHANGE_QUEUE_URL",
}


def seed_second_scope(
    endpoint_url: str, first: Mapping[str, str], *, region: str, change_queue: bool = False
) -> dict[str, str]:
    """Seed :data:`SECOND_PLATFORM` as the second scope; ``first`` is what seeding the demo
    platform (in ``region``) returned. Returns ``DZLINEAGE_SCOPES`` naming both scopes, as
    one line of JSON (which is YAML: a shell and a dotenv reader take it alike)."""
    base = deployment_session(region)
    create_trusted_role(base, SECOND_ROLE_ARN, endpoint_url, SECOND_EXTERNAL_ID)
    session = role_session(
        base, SECOND_ROLE_ARN, endpoint_url, SECOND_EXTERNAL_ID, region_name=SECOND_REGION
    )
    spec = load_platform_spec(SECOND_PLATFORM)
    seeded = seed_data_side(session, endpoint_url, spec, change_queue=change_queue)
    second = {
        "name": SECOND_SCOPE,
        "region": SECOND_REGION,
        "role_arn": SECOND_ROLE_ARN,
        "role_external_id": SECOND_EXTERNAL_ID,
        "registry_name": spec.registry["name"],
        "msk_cluster_arn": seeded.cluster_arn,
        "glue_database": spec.catalog["database"],
        **({"change_queue_url": seeded.change_queue_url} if seeded.change_queue_url else {}),
    }
    # The first scope's data side is the deployment's (its Region, DZLINEAGE_DATA_ROLE_ARN).
    first_scope = {"name": FIRST_SCOPE, "region": region}
    first_scope.update(
        {key: first[name] for key, name in _SCOPE_VARIABLES.items() if name in first}
    )
    value = json.dumps({"scopes": [first_scope, second]})
    # Here, not at the top: the scopes' module imports dagster, which seeding never needs.
    from dzlineage_dagster.scopes import SCOPES_VARIABLE

    return {SCOPES_VARIABLE: value}
