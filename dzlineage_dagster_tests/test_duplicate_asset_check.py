"""The duplicate-asset check against a duplicate DataZone really lets exist.

DataZone refuses a second asset with the same externalIdentifier, so a duplicate of a topic's
asset is one made without it: by hand in the portal, or by another tool (the reference design
sets none), carrying the schema ARN only in its KafkaSchemaForm. The check must see those.
"""

from __future__ import annotations

import json

import pytest

from dzlineage_dagster.definitions import defs
from dzlineage_dagster_tests.platform import fresh_platform
from dzlineage_dagster_tests.test_catalog_sync import topic_assets

CHECK = "no_two_assets_share_a_schema"


@pytest.fixture
def platform(sandbox, monkeypatch):
    return fresh_platform(sandbox, monkeypatch)


def duplicate_by_hand(platform, asset_id: str, name: str) -> str:
    """A copy of the asset's forms in a new asset without externalIdentifier; its id."""
    datazone = platform.client("datazone")
    domain = platform.settings.domain_id
    original = datazone.get_asset(domainIdentifier=domain, identifier=asset_id)
    forms = [
        {
            "formName": form["formName"],
            "typeIdentifier": form["typeName"],
            "typeRevision": form["typeRevision"],
            "content": form["content"],
        }
        for form in original["formsOutput"]
    ]
    created = datazone.create_asset(
        domainIdentifier=domain,
        owningProjectIdentifier=platform.settings.project_id,
        name=name,
        typeIdentifier=original["typeIdentifier"],
        typeRevision=original["typeRevision"],
        formsInput=forms,
    )
    return created["id"]


def run_check(platform):
    result = defs.resolve_job_def("catalog_checks").execute_in_process(
        instance=platform.instance, raise_on_error=False
    )
    [evaluation] = [e for e in result.get_asset_check_evaluations() if e.check_name == CHECK]
    return evaluation


def test_two_assets_of_one_schema_fail_the_check_naming_both_and_one_each_passes(platform):
    assert platform.sync().success
    clean = run_check(platform)
    assert clean.passed, clean.description
    assets = topic_assets(platform)
    assert clean.metadata["checked"].value == len(assets) == 7

    schema_arn = platform.schema_arn("shop.sales.orders")
    [original] = assets[schema_arn]
    copy = duplicate_by_hand(platform, original, "orders (copied by hand)")

    duplicated = run_check(platform)
    assert not duplicated.passed
    assert duplicated.description.startswith("1 of 7 schemas with assets: ")
    assert {"why", "what to do"} <= set(duplicated.metadata)
    [problem] = duplicated.metadata["problems"].value
    assert problem.startswith(schema_arn)
    assert {original, copy} <= set(json.loads(problem.split(": ", 1)[1].replace("'", '"')))

    platform.client("datazone").delete_asset(
        domainIdentifier=platform.settings.domain_id, identifier=copy
    )
    assert run_check(platform).passed
