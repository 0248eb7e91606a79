"""The sandbox's reading of a Glue Data Catalog resource policy for another account's call."""

from __future__ import annotations

import json

from dzlineage_dagster.sandbox.moto_patches.glue_catalog_policy import (
    catalog_resources,
    denied_resource,
)

BASE = "arn:aws:glue:us-east-1:333333333333"
TABLE_READ = catalog_resources(
    "us-east-1", "333333333333", {"DatabaseName": "lake", "Name": "orders"}
)


def policy(*statements: dict) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def allow(principal: str, resources: list[str], effect: str = "Allow") -> dict:
    return {
        "Effect": effect,
        "Principal": {"AWS": principal},
        "Action": "glue:Get*",
        "Resource": resources,
    }


def test_a_get_table_touches_the_catalog_the_database_and_the_table():
    assert [
        f"{BASE}:catalog",
        f"{BASE}:database/lake",
        f"{BASE}:table/lake/orders",
    ] == TABLE_READ


def test_every_resource_must_be_granted_to_the_callers_account():
    everything = [f"{BASE}:catalog", f"{BASE}:database/lake", f"{BASE}:table/lake/*"]
    granted = policy(allow("arn:aws:iam::111111111111:root", everything))
    assert denied_resource(granted, "111111111111", "glue:GetTable", TABLE_READ) is None
    assert denied_resource(granted, "222222222222", "glue:GetTable", TABLE_READ) == TABLE_READ[0]
    assert denied_resource(granted, "111111111111", "glue:DeleteTable", TABLE_READ)
    no_table = policy(allow("111111111111", everything[:2]))
    assert denied_resource(no_table, "111111111111", "glue:GetTable", TABLE_READ) == TABLE_READ[2]
    assert denied_resource(None, "111111111111", "glue:GetTable", TABLE_READ) == TABLE_READ[0]


def test_an_explicit_deny_wins():
    everything = [f"{BASE}:*"]
    both = policy(allow("*", everything), allow("111111111111", everything, effect="Deny"))
    assert denied_resource(both, "111111111111", "glue:GetTable", TABLE_READ) == TABLE_READ[0]
    assert denied_resource(both, "222222222222", "glue:GetTable", TABLE_READ) is None
