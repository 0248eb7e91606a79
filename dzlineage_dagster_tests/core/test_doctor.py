"""The pure part of `dzlineage doctor`: verdict, rendering, SSM headroom, quotas against the
pacing table, UpdatedTime, and an AWS error as a row."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.aws.quotas import (
    ASSUMED_SOURCE,
    AWS_QUOTAS,
    DATAZONE_QUOTAS_PAGE,
    SSM_QUOTAS_PAGE,
)
from dzlineage_dagster.core.doctor import (
    PARAMETER_CAPS,
    AccountQuota,
    CheckResult,
    Status,
    exit_code,
    failed_call,
    iam_action,
    mapping_parameters_needed,
    per_second,
    quota_checks,
    quota_of,
    render_json,
    render_table,
    ssm_capacity,
    updated_time_check,
    verdict,
)
from dzlineage_dagster.core.mapping.pack import parameters_needed

OK = CheckResult("domain", "governance", Status.OK, "found")
WARN = CheckResult("quota", "datazone.CreateAsset", Status.WARN, "lower", "raise it")
FAIL = CheckResult("registry", "data", Status.FAIL, "missing", "set it")


@given(st.lists(st.sampled_from([OK, WARN, FAIL])))
def test_any_fail_and_only_a_fail_makes_the_exit_code_one(results):
    assert exit_code(results) == (1 if FAIL in results else 0)


def test_the_verdict_counts_and_says_what_next():
    assert verdict([OK]) == "1 OK, 0 WARN, 0 FAIL: ready for the first sync"
    assert verdict([OK, WARN]).endswith("the first sync can run; read the WARN rows")
    assert verdict([OK, WARN, FAIL]) == (
        "1 OK, 1 WARN, 1 FAIL: fix the FAIL rows before the first sync"
    )


def test_once_a_sync_ran_the_verdict_speaks_of_the_next_one():
    assert verdict([OK], synced_before=True) == "1 OK, 0 WARN, 0 FAIL: ready to sync"
    assert verdict([OK, WARN], synced_before=True).endswith(
        "the next sync can run; read the WARN rows"
    )
    assert verdict([FAIL], synced_before=True).endswith("fix the FAIL rows before the next sync")
    assert json.loads(render_json([OK], synced_before=True))["verdict"].endswith("ready to sync")


def test_the_table_aligns_its_columns_and_the_json_holds_every_row():
    table = render_table([OK, FAIL]).splitlines()
    assert table[0].split() == ["STATUS", "CHECK", "SUBJECT", "DETAIL", "FIX"]
    assert table[1].startswith("OK      domain    governance")
    assert table[2].startswith("FAIL    registry  data      ")
    assert table[2].endswith("missing  set it")
    report = json.loads(render_json([OK, FAIL]))
    assert report["ok"] is False
    assert report["checks"][1] == {
        "check": "registry",
        "subject": "data",
        "status": "FAIL",
        "detail": "missing",
        "fix": "set it",
    }


@pytest.mark.parametrize(
    ("code", "fix"),
    [
        (
            "AccessDeniedException",
            "allow glue:GetRegistry to the data side: in its permission policy (as "
            "iam/doctor-policy.json does)",
        ),
        ("EntityNotFoundException", "set DZLINEAGE_REGISTRY_NAME"),
        ("ThrottlingException", "the account's quota was used up by others"),
        ("InternalServiceException", "check that glue.GetRegistry is reachable"),
    ],
)
def test_an_aws_error_is_a_fail_row_naming_the_call_and_the_fix(code, fix):
    row = failed_call(
        "registry",
        "data",
        "glue.GetRegistry",
        code,
        "no",
        missing="set DZLINEAGE_REGISTRY_NAME",
        who="the data side",
        side="data",
    )
    assert row.status is Status.FAIL
    assert row.detail == f"glue.GetRegistry failed: {code}: no"
    assert row.fix.startswith(fix)


def test_the_iam_action_of_a_call():
    assert iam_action("datazone.GetDomain") == "datazone:GetDomain"
    assert iam_action("service-quotas.ListServiceQuotas") == "servicequotas:ListServiceQuotas"


def test_the_mapping_takes_a_parameter_a_topic_and_two_a_registry():
    assert mapping_parameters_needed(0) == 2
    assert mapping_parameters_needed(20_000) == 20_002
    assert mapping_parameters_needed(10, registries=3) == 16


def test_the_packed_mapping_needs_far_fewer_parameters_than_the_cap_at_20000_topics():
    packed = mapping_parameters_needed(20_000, layout="packed")
    assert packed == parameters_needed(20_000, "Standard") + 2
    assert packed < 10_000 - 2_000  # fits beside 2,000 other applications' parameters
    assert mapping_parameters_needed(20_000, layout="packed", tier="Advanced") < packed


@pytest.mark.parametrize(
    ("tier", "parameters", "ours", "needed", "status", "says"),
    [
        ("Standard", 100, 0, 10, Status.OK, "110 of 10,000 after the sync: 9,890 left"),
        ("Standard", 9_000, 0, 10, Status.WARN, "990 left"),
        ("Standard", 9_995, 0, 10, Status.FAIL, "5 over the standard tier's cap"),
        # The mapping's own parameters are already counted: they are not needed twice.
        ("Standard", 9_995, 8, 10, Status.WARN, "9,997 of 10,000"),
        ("Advanced", 9_995, 0, 10, Status.OK, "of 100,000"),
        ("Intelligent-Tiering", 9_995, 0, 10, Status.FAIL, "standard tier's cap"),
    ],
)
def test_ssm_capacity(tier, parameters, ours, needed, status, says):
    row = ssm_capacity(tier, parameters, ours, needed)
    assert row.status is status
    assert says in row.detail


@given(
    parameters=st.integers(0, 200_000),
    needed=st.integers(0, 50_000),
    tier=st.sampled_from(["Standard", "Advanced"]),
)
def test_ssm_capacity_fails_exactly_when_the_sync_would_pass_the_cap(parameters, needed, tier):
    row = ssm_capacity(tier, parameters, 0, needed)
    assert (row.status is Status.FAIL) == (parameters + needed > PARAMETER_CAPS[tier])


def test_a_quota_is_found_by_the_operation_its_name_names():
    quotas = [
        AccountQuota("Rate of GetParameters requests", "L-1", 30),
        AccountQuota("Rate of GetParameter requests", "L-2", 40),
    ]
    assert quota_of("GetParameter", quotas).code == "L-2"
    assert quota_of("GetParameters", quotas).code == "L-1"
    assert quota_of("GetParametersByPath", quotas) is None


def test_quotas_below_the_pacing_warn_and_the_rest_name_their_source():
    account = [
        AccountQuota("Rate of CreateAsset requests", "L-A", 10),
        AccountQuota("Rate of Search requests", "L-S", 25, applied=False),
    ]
    rows = quota_checks("datazone", account, AWS_QUOTAS)
    [low] = [r for r in rows if r.status is Status.WARN]
    assert low.subject == "datazone.CreateAsset"
    assert "quota 'Rate of CreateAsset requests' (L-A) is 10 TPS" in low.detail
    assert "the client paces at 20 TPS (Amazon DataZone User Guide" in low.detail
    assert low.fix.startswith("set DZLINEAGE_CLIENT_RATE_LIMITS=aws,datazone.CreateAsset=10")
    [enough] = [r for r in rows if r.subject == "datazone (Service Quotas)"]
    assert enough.detail == "at or above the pacing: Search 25>=20 TPS"
    [unlisted] = [r for r in rows if r.subject == "datazone (not in Service Quotas)"]
    assert "20 TPS, assumed: " in unlisted.detail and "PostLineageEvent" in unlisted.detail
    assert "20 TPS, Amazon DataZone User Guide" in unlisted.detail  # DeleteAsset, ...
    assert AWS_QUOTAS["datazone.PostLineageEvent"].source == ASSUMED_SOURCE
    assert AWS_QUOTAS["datazone.CreateAsset"].source == DATAZONE_QUOTAS_PAGE


def test_a_shared_quota_is_compared_for_each_operation_that_draws_from_it():
    account = [
        AccountQuota(
            "Max throughput of GetParameter, GetParameters and GetParametersByPath", "Q", 30
        )
    ]
    rows = quota_checks("ssm", account, AWS_QUOTAS)
    assert [r.subject for r in rows if r.status is Status.WARN] == [
        "ssm.GetParameter",
        "ssm.GetParameters",
        "ssm.GetParametersByPath",
    ]
    assert AWS_QUOTAS["ssm.GetParameters"].source == SSM_QUOTAS_PAGE


CREATED = datetime(2026, 12, 4, 12, 0, tzinfo=timezone.utc)


def test_updated_time_that_moves_is_ok_and_a_frozen_one_warns_with_the_sweeps_bound():
    moved = updated_time_check("s", CREATED, 3, CREATED, 1_000)
    assert moved.status is Status.OK
    frozen = updated_time_check("s", CREATED - timedelta(hours=1), 3, CREATED, 1_000)
    assert frozen.status is Status.WARN
    assert "within 60 ticks" in frozen.detail
    assert "at 17 GetSchema a tick for 1000 topics" in frozen.detail


@pytest.mark.parametrize(
    ("value", "period", "rate"),
    [
        (20, {"PeriodValue": 1, "PeriodUnit": "SECOND"}, 20.0),
        (600, {"PeriodValue": 1, "PeriodUnit": "MINUTE"}, 10.0),
        (10, {"PeriodValue": 2, "PeriodUnit": "SECOND"}, 5.0),
        # A count of resources (schemas per registry, say) is not a rate.
        (10_000, None, None),
    ],
)
def test_a_service_quota_as_calls_per_second(value, period, rate):
    assert per_second(value, period) == rate
