from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.aws.authorization import (
    CASCADE,
    CREATE_FORM_TYPE,
    INTERSECT,
    USE_ASSET_TYPE,
    asset_type_use_missing,
    enforces_policies,
    iam_principal,
    is_member,
    missing_unit_grants,
    units_lacking,
)

PROJECT = "prj1"
ROOT, SALES, EMEA = "root", "sales", "emea"


def project_grant(project: str = PROJECT, cascade: bool = False) -> dict:
    return {
        "principal": {"project": {"projectDesignation": "OWNER", "projectIdentifier": project}},
        "detail": {"createFormType": {"includeChildDomainUnits": cascade}},
    }


def test_an_assumed_roles_session_is_known_by_its_role():
    assert (
        iam_principal("arn:aws:sts::123456789012:assumed-role/dzlineage-sync/session-1")
        == "arn:aws:iam::123456789012:role/dzlineage-sync"
    )
    assert (
        iam_principal("arn:aws:iam::123456789012:user/alice")
        == "arn:aws:iam::123456789012:user/alice"
    )
    assert iam_principal("arn:aws:sts::123456789012:user/moto") == (
        "arn:aws:iam::123456789012:user/moto"
    )


@pytest.mark.parametrize(
    ("version", "child_units", "enforced"),
    [("V2", False, True), ("V1", True, True), ("V1", False, False), (None, False, False)],
)
def test_policies_are_enforced_in_v2_domains_and_v1_domains_with_units(
    version, child_units, enforced
):
    assert enforces_policies(version, child_units) is enforced


def test_the_projects_own_unit_grant_is_enough_under_both_readings():
    chain = [ROOT, SALES]
    grants = {SALES: [project_grant()]}
    assert units_lacking(CREATE_FORM_TYPE, PROJECT, chain, grants, CASCADE) == []
    assert units_lacking(CREATE_FORM_TYPE, PROJECT, chain, grants, INTERSECT) == [ROOT]


def test_an_ancestors_grant_counts_under_cascade_only_when_it_includes_children():
    chain = [ROOT, SALES, EMEA]
    assert units_lacking(CREATE_FORM_TYPE, PROJECT, chain, {ROOT: [project_grant()]}, CASCADE) == [
        EMEA
    ]
    assert (
        units_lacking(
            CREATE_FORM_TYPE, PROJECT, chain, {ROOT: [project_grant(cascade=True)]}, CASCADE
        )
        == []
    )


def test_intersect_needs_every_unit_of_the_chain():
    chain = [ROOT, SALES, EMEA]
    grants = {ROOT: [project_grant(cascade=True)], EMEA: [project_grant()]}
    assert units_lacking(CREATE_FORM_TYPE, PROJECT, chain, grants, INTERSECT) == [SALES]


def test_another_projects_grant_or_a_unit_filter_elsewhere_does_not_count():
    chain = [ROOT, SALES]
    other_unit = {
        "principal": {
            "project": {
                "projectDesignation": "OWNER",
                "projectGrantFilter": {"domainUnitFilter": {"domainUnit": "hr"}},
            }
        },
        "detail": {"createFormType": {}},
    }
    grants = {SALES: [project_grant("other"), other_unit]}
    assert units_lacking(CREATE_FORM_TYPE, PROJECT, chain, grants, CASCADE) == [SALES]
    every_project_below_root = {
        "principal": {
            "project": {
                "projectDesignation": "OWNER",
                "projectGrantFilter": {
                    "domainUnitFilter": {"domainUnit": ROOT, "includeChildDomainUnits": True}
                },
            }
        },
        "detail": {"createFormType": {}},
    }
    assert (
        units_lacking(
            CREATE_FORM_TYPE, PROJECT, chain, {SALES: [every_project_below_root]}, CASCADE
        )
        == []
    )


@given(
    st.lists(st.sampled_from([ROOT, SALES, EMEA]), unique=True, min_size=1).map(
        lambda units: [ROOT, *[u for u in units if u != ROOT]]
    ),
    st.dictionaries(
        st.sampled_from([ROOT, SALES, EMEA]),
        st.lists(st.builds(project_grant, st.sampled_from([PROJECT, "other"]), st.booleans())),
    ),
)
def test_what_intersect_accepts_cascade_accepts(chain, grants):
    if not units_lacking(CREATE_FORM_TYPE, PROJECT, chain, grants, INTERSECT):
        assert not units_lacking(CREATE_FORM_TYPE, PROJECT, chain, grants, CASCADE)


def test_missing_grants_satisfy_both_readings_and_say_which_are_certain():
    chain = [ROOT, SALES]
    missing = missing_unit_grants(CREATE_FORM_TYPE, "dzd_1", PROJECT, chain, {SALES: "Sales"}, {})
    assert [(m.entity_id, m.certain) for m in missing] == [(ROOT, False), (SALES, True)]
    sales = missing[1]
    assert sales.add_policy_grant_input() == {
        "domainIdentifier": "dzd_1",
        "entityType": "DOMAIN_UNIT",
        "entityIdentifier": SALES,
        "policyType": CREATE_FORM_TYPE,
        "principal": {"project": {"projectDesignation": "OWNER", "projectIdentifier": PROJECT}},
        "detail": {"createFormType": {"includeChildDomainUnits": True}},
    }
    words = shlex.split(sales.cli_command())
    assert words[:3] == ["aws", "datazone", "add-policy-grant"]
    assert words[words.index("--principal") + 1] == (
        '{"project":{"projectDesignation":"OWNER","projectIdentifier":"prj1"}}'
    )
    assert "domain unit 'Sales' (sales)" in sales.describe()


def test_use_asset_type_is_needed_for_another_projects_type_only():
    chain = [ROOT, SALES]
    assert asset_type_use_missing("d", PROJECT, chain, "KafkaTopic", PROJECT, []) is None
    missing = asset_type_use_missing("d", PROJECT, chain, "KafkaTopic", "platform", [])
    assert (missing.policy, missing.entity_type, missing.entity_id) == (
        USE_ASSET_TYPE,
        "ASSET_TYPE",
        "KafkaTopic",
    )
    by_unit = {"principal": {}, "detail": {"useAssetType": {"domainUnitId": SALES}}}
    assert asset_type_use_missing("d", PROJECT, chain, "KafkaTopic", "platform", [by_unit]) is None
    by_project = {
        "principal": {
            "project": {"projectDesignation": "CONTRIBUTOR", "projectIdentifier": PROJECT}
        },
        "detail": {"useAssetType": {}},
    }
    assert (
        asset_type_use_missing("d", PROJECT, chain, "KafkaTopic", "platform", [by_project]) is None
    )


def test_membership_is_found_by_the_callers_user_id():
    members = [{"memberDetails": {"user": {"userId": "u1"}}, "designation": "PROJECT_OWNER"}]
    assert is_member(members, "u1")
    assert not is_member(members, "u2")
    assert not is_member([{"memberDetails": {"group": {"groupId": "u1"}}}], "u1")
