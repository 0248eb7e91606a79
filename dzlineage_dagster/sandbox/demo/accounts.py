"""The two-account sandbox (``dzlineage sandbox --accounts two``): the data side (the Glue
Schema Registry, the Glue Data Catalog, MSK, MSK Connect) in one account, the governance side
(the DataZone domain, the SSM mapping) in another, as an enterprise lays them out.

The sandbox's own credentials stay a third account, the one the code runs in (a Dagster+
agent's, a cron host's): it reaches each side by assuming that side's role, as the project
does with ``DZLINEAGE_DATA_ROLE_ARN`` and ``DZLINEAGE_GOVERNANCE_ROLE_ARN``. moto's STS issues
an assumed role's keys in the role's account (``AssumeRole``: "The ARN can point to another
account, providing an opportunity to switch accounts"), and every service of the sandbox,
moto's and the project's emulators, answers a call in the account of the keys that signed it.
Each side's role exists in its account with a trust policy like ``iam/<side>-account-trust-
policy.json``: the deployment's account, with the side's external id, which the sandbox holds
AssumeRole to (:mod:`~dzlineage_dagster.sandbox.moto_patches.trust`).
"""

from __future__ import annotations

import json

import boto3

from dzlineage_dagster.boto3_sessions import new_session

#: The account of each side.
SIDE_ACCOUNTS = {"data": "111111111111", "governance": "222222222222"}
#: The session name the seeding assumes each side's role with (the project uses its own).
SEED_SESSION_NAME = "dzlineage-sandbox-seed"
#: The role AWS Organizations creates in a member account for its management account: what
#: an administrator assumes to set a new account up (here: to create the side's role).
SETUP_ROLE_NAME = "OrganizationAccountAccessRole"


def side_role_arn(side: str) -> str:
    return f"arn:aws:iam::{SIDE_ACCOUNTS[side]}:role/dzlineage-{side}"


def side_external_id(side: str) -> str:
    """The external id each side's trust policy asks for (any agreed string on AWS)."""
    return f"dzlineage-{side}-sandbox"


def side_environment() -> dict[str, str]:
    """The ``DZLINEAGE_<SIDE>_ROLE_ARN`` and ``_EXTERNAL_ID`` variables of both sides."""
    # Here, not at the top: the settings import dagster, which the sandbox alone never needs.
    from dzlineage_dagster.settings import side_role_variables

    environment: dict[str, str] = {}
    for side in SIDE_ACCOUNTS:
        variables = side_role_variables(side)
        environment[variables["role_arn"]] = side_role_arn(side)
        environment[variables["role_external_id"]] = side_external_id(side)
    return environment


def trust_policy(base: boto3.session.Session, endpoint_url: str, external_id: str | None) -> str:
    """A side role's trust policy: ``base``'s account may assume it with ``external_id``
    (None: without one, as the administrator's role of an account trusts its management
    account)."""
    deployment_account = base.client("sts", endpoint_url=endpoint_url).get_caller_identity()
    statement = {
        "Effect": "Allow",
        "Principal": {"AWS": f"arn:aws:iam::{deployment_account['Account']}:root"},
        "Action": "sts:AssumeRole",
    }
    if external_id is not None:
        statement["Condition"] = {"StringEquals": {"sts:ExternalId": external_id}}
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


def account_administrator(
    base: boto3.session.Session, side: str, endpoint_url: str
) -> boto3.Session:
    """A session as the administrator of ``side``'s account (:data:`SETUP_ROLE_NAME`)."""
    return _administrator(base, SIDE_ACCOUNTS[side], endpoint_url)


def _administrator(base: boto3.session.Session, account: str, endpoint_url: str) -> boto3.Session:
    return role_session(base, f"arn:aws:iam::{account}:role/{SETUP_ROLE_NAME}", endpoint_url)


def create_side_roles(base: boto3.session.Session, endpoint_url: str) -> None:
    """Each side's role in its account, trusting ``base``'s account with the side's external id."""
    for side in SIDE_ACCOUNTS:
        create_trusted_role(base, side_role_arn(side), endpoint_url, side_external_id(side))


def create_trusted_role(
    base: boto3.session.Session, role_arn: str, endpoint_url: str, external_id: str
) -> None:
    """The role ``role_arn`` in its account (made by that account's administrator), trusting
    ``base``'s account with ``external_id``."""
    account, role_name = role_arn.split(":")[4], role_arn.rsplit("/", 1)[1]
    iam = _administrator(base, account, endpoint_url).client("iam", endpoint_url=endpoint_url)
    # The administrator's own role exists, as AWS Organizations makes it in a member account:
    # once the account has roles, the sandbox refuses to assume one it lacks, as AWS does.
    try:
        iam.get_role(RoleName=SETUP_ROLE_NAME)
    except iam.exceptions.NoSuchEntityException:
        iam.create_role(
            RoleName=SETUP_ROLE_NAME,
            AssumeRolePolicyDocument=trust_policy(base, endpoint_url, external_id=None),
        )
    iam.create_role(
        RoleName=role_name,
        AssumeRolePolicyDocument=trust_policy(base, endpoint_url, external_id),
    )


def side_session(base: boto3.session.Session, side: str, endpoint_url: str) -> boto3.Session:
    """A session with ``side``'s role's credentials, assumed from ``base`` as the project does."""
    return role_session(base, side_role_arn(side), endpoint_url, side_external_id(side))


def role_session(
    base: boto3.session.Session,
    role_arn: str,
    endpoint_url: str,
    external_id: str | None = None,
    region_name: str | None = None,
) -> boto3.Session:
    """A session with ``role_arn``'s credentials, assumed from ``base`` (with ``external_id``
    where its trust policy asks for one), in ``region_name`` (default: ``base``'s)."""
    extra = {"ExternalId": external_id} if external_id else {}
    credentials = base.client("sts", endpoint_url=endpoint_url).assume_role(
        RoleArn=role_arn, RoleSessionName=SEED_SESSION_NAME, **extra
    )["Credentials"]
    return new_session(
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
        region_name=region_name or base.region_name,
    )
