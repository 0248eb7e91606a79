"""sts ``AssumeRole`` held to the role's trust policy, as AWS holds it.

moto issues credentials for any role ARN ("the role does not need to exist"), so a wrong
external id, the most common mistake of a cross-account setup, would pass in the sandbox and
fail on AWS. Here a role the sandbox knows (made with CreateRole in its account) is assumed
only when a statement of its trust policy allows ``sts:AssumeRole`` to a principal of the
caller's account and, where it has an ``sts:ExternalId`` condition, the call's ``ExternalId``
equals it; otherwise AWS's answer: ``AccessDenied``, "User: ... is not authorized to perform:
sts:AssumeRole on resource: <role ARN>" (IAM User Guide, "How to use an external ID when
granting access to your AWS resources to a third party"; STS API reference, AssumeRole).
A role missing from another account that has roles (one the sandbox seeded: ``--accounts
two``, ``--scopes two``) is refused as AWS refuses it, with the same ``AccessDenied``, so a
scope's mistyped ``role_arn`` fails in the sandbox as it would on AWS; in the caller's own
account, or one without roles, a role the sandbox was never told about is still assumed as
moto does, so a test may name any role there. Other condition keys and explicit denies are
not evaluated.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

from moto.iam.exceptions import NotFoundException
from moto.iam.models import iam_backends
from werkzeug.wrappers import Response

from dzlineage_dagster.sandbox.protocol.aws import aws_error_response


def refuse_untrusted_assume_role(call: Any) -> Response | None:
    """AccessDenied when the role's trust policy does not let the caller assume it, or when
    another account has roles but not this one; None lets moto answer (a role of the caller's
    account or of one without roles, or one that trusts the caller)."""
    params = {k: v[0] for k, v in parse_qs(call.request.get_data(as_text=True)).items()}
    role_arn = params.get("RoleArn", "")
    parts = role_arn.split(":")
    if len(parts) < 6:
        return None  # moto's own validation answers a malformed ARN
    try:
        iam = iam_backends[parts[4]][parts[1]]
        role = iam.get_role_by_arn(role_arn)
    except KeyError:
        return None
    except NotFoundException:
        if parts[4] == call.account_id or not iam.get_roles():
            return None
        return _denied(call.account_id, role_arn)
    statements = json.loads(role.assume_role_policy_document).get("Statement", [])
    if isinstance(statements, dict):
        statements = [statements]
    if any(_trusts(s, call.account_id, params.get("ExternalId")) for s in statements):
        return None
    return _denied(call.account_id, role_arn)


def _denied(caller_account: str, role_arn: str) -> Response:
    # AWS answers a role that does not exist as one that does not trust the caller: the
    # caller learns nothing of another account's roles.
    return aws_error_response(
        "sts",
        "AccessDenied",
        f"User: arn:aws:iam::{caller_account}:user/moto is not authorized to perform: "
        f"sts:AssumeRole on resource: {role_arn}",
        403,
    )


def _trusts(statement: dict[str, Any], caller_account: str, external_id: str | None) -> bool:
    actions = statement.get("Action", [])
    if statement.get("Effect") != "Allow" or "sts:AssumeRole" not in _listed(actions):
        return False
    principals = _listed((statement.get("Principal") or {}).get("AWS", []))
    if not any(p == "*" or caller_account in (p, *p.split(":")[4:5]) for p in principals):
        return False
    expected = (statement.get("Condition") or {}).get("StringEquals", {}).get("sts:ExternalId")
    return expected is None or expected == external_id


def _listed(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)
