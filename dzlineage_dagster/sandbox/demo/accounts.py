"""The two-account sandbox (``dzlineage sandbox --accounts two``): the data side (the Glue
Schema Registry, the Glue Data Catalog, MSK, MSK Connect) in one account, the governance side
(the DataZone domain, the SSM mapping) in another, as an enterprise lays them out.

The sandbox's own credentials stay a third account, the one the code runs in (a Dagster+
agent's, a cron host's): it reaches each side by assuming that side's role, as the project
does with ``DZLINEAGE_DATA_ROLE_ARN`` and ``DZLINEAGE_GOVERNANCE_ROLE_ARN``. moto's STS issues
an assumed role's keys in the role's account (``AssumeRole``: "The ARN can point to another
account, providing an opportunity to switch accounts"), and every service of the sandbox,
moto's and the project's emulators, answers a call in the account of the keys that signed it.
"""

from __future__ import annotations

import boto3

#: The account of each side.
SIDE_ACCOUNTS = {"data": "111111111111", "governance": "222222222222"}
#: The session name the seeding assumes each side's role with (the project uses its own).
SEED_SESSION_NAME = "dzlineage-sandbox-seed"


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


def side_session(base: boto3.session.Session, side: str, endpoint_url: str) -> boto3.Session:
    """A session with ``side``'s role's credentials, assumed from ``base`` as the project does."""
    credentials = base.client("sts", endpoint_url=endpoint_url).assume_role(
        RoleArn=side_role_arn(side),
        RoleSessionName=SEED_SESSION_NAME,
        ExternalId=side_external_id(side),
    )["Credentials"]
    return boto3.session.Session(
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
        region_name=base.region_name,
    )
