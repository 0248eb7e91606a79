"""A call on another account's Glue Data Catalog (``CatalogId``) passes only when that
catalog's resource policy grants the caller, as on AWS.

AWS Glue developer guide, "Granting cross-account access"
(https://docs.aws.amazon.com/glue/latest/dg/cross-account-access.html): with the Glue method,
an administrator of the owning account A attaches a resource policy to A's Data Catalog
(``glue:PutResourcePolicy``) that grants account B the operations, and B's administrator grants
its identities them in IAM; "the identity needs permission from both the resource owner
(account A) and its parent account (account B)". (The IAM side is the least-privilege tests'
business; a same-account call needs no resource policy.) An access by assuming a role in A is
a same-account call and needs none either.

The sandbox's evaluation, kinder than IAM's in two ways it says so: a principal naming a role
or user matches any caller of that account (the sandbox knows the caller's account, not its
role), and statements with a ``Condition`` are skipped.
"""

from __future__ import annotations

import json
from fnmatch import fnmatchcase
from typing import Any

from moto.glue.models import glue_backends


def catalog_resources(region: str, catalog: str, params: dict[str, Any]) -> list[str]:
    """The ARNs a call on the catalog touches: the catalog, and its database and table when
    the call names them (``GetTables``: every table of the database)."""
    base = f"arn:aws:glue:{region}:{catalog}"
    arns = [f"{base}:catalog"]
    database = params.get("DatabaseName") or (
        params.get("Name") if "DatabaseName" not in params else None
    )
    database = database or (params.get("DatabaseInput") or {}).get("Name")
    if database:
        arns.append(f"{base}:database/{database}")
    if "DatabaseName" in params:
        table = params.get("Name") or (params.get("TableInput") or {}).get("Name") or "*"
        arns.append(f"{base}:table/{params['DatabaseName']}/{table}")
    return arns


def _listed(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


def _principal_matches(principal: Any, caller: str) -> bool:
    if principal == "*":
        return True
    names = _listed(principal.get("AWS")) if isinstance(principal, dict) else []
    for name in names:
        if name in ("*", caller) or (name.startswith("arn:") and name.split(":")[4] == caller):
            return True
    return False


def _statement_matches(statement: dict, caller: str, action: str, resource: str) -> bool:
    return (
        "Condition" not in statement
        and _principal_matches(statement.get("Principal"), caller)
        and any(fnmatchcase(action.lower(), a.lower()) for a in _listed(statement.get("Action")))
        and any(fnmatchcase(resource, r) for r in _listed(statement.get("Resource")))
    )


def denied_resource(
    policy_json: str | None, caller: str, action: str, resources: list[str]
) -> str | None:
    """The first of ``resources`` the policy does not let ``caller`` (an account id) do
    ``action`` on (an explicit Deny wins), or None when it allows them all."""
    statements = _listed(json.loads(policy_json).get("Statement")) if policy_json else []
    for resource in resources:
        matching = [s for s in statements if _statement_matches(s, caller, action, resource)]
        if not any(s.get("Effect") == "Allow" for s in matching) or any(
            s.get("Effect") == "Deny" for s in matching
        ):
            return resource
    return None


def cross_account_denial(
    region: str, caller: str, catalog: str, operation: str, body: bytes
) -> str | None:
    """AWS's AccessDeniedException message when ``catalog``'s resource policy does not grant
    ``caller`` this call, else None."""
    try:
        params = json.loads(body or b"{}")
    except ValueError:
        params = {}
    policy = glue_backends[catalog][region].get_resource_policy().get("PolicyInJson")
    action = f"glue:{operation}"
    resource = denied_resource(policy, caller, action, catalog_resources(region, catalog, params))
    if resource is None:
        return None
    return (
        f"User: arn:aws:iam::{caller}:root is not authorized to perform: {action} on resource: "
        f"{resource} because no resource-based policy allows the {action} action"
    )
