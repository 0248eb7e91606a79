import re

import botocore.session
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.aws.quotas import (
    ASSUMED,
    ASSUMED_SOURCE,
    AWS_QUOTAS,
    DATAZONE_QUOTAS_PAGE,
    SETTING_SOURCE,
    SSM_QUOTAS_PAGE,
    Quota,
    parse_rate_limits,
)
from dzlineage_dagster.core.aws.rate_limit import TokenBucket

rates = st.floats(min_value=0.5, max_value=100)
capacities = st.integers(min_value=1, max_value=30)
gaps = st.lists(st.floats(min_value=0, max_value=0.5), min_size=1, max_size=300)


@given(rates, capacities, gaps)
def test_served_calls_never_exceed_burst_plus_rate(rate, capacity, steps):
    bucket = TokenBucket(rate, capacity)
    now, served = 0.0, []
    for step in steps:
        now += step
        if bucket.try_take(now):
            served.append(now)
    # In every window the bucket serves at most what it held plus what the window refilled.
    for i, start in enumerate(served):
        for j in range(i, len(served)):
            assert j - i + 1 <= capacity + (served[j] - start) * rate + 1e-6


@given(rates, capacities, st.integers(min_value=1, max_value=200))
def test_reservations_at_one_instant_are_spaced_at_the_rate(rate, capacity, callers):
    bucket = TokenBucket(rate, capacity)
    waits = [bucket.reserve(10.0) for _ in range(callers)]
    assert waits == sorted(waits)
    for k, wait in enumerate(waits, start=1):
        assert wait == pytest.approx(max(0.0, (k - capacity) / rate))


def test_a_full_bucket_serves_its_burst_then_throttles_until_refilled():
    bucket = TokenBucket(rate=20, capacity=20)
    assert all(bucket.try_take(0.0) for _ in range(20))
    assert not bucket.try_take(0.0)
    assert not bucket.try_take(0.049)
    assert bucket.try_take(0.05)


def test_time_going_backwards_adds_no_tokens():
    bucket = TokenBucket(rate=1, capacity=1)
    assert bucket.try_take(5.0)
    assert not bucket.try_take(4.0)
    assert not bucket.try_take(5.5)
    assert bucket.try_take(6.0)


@pytest.mark.parametrize(
    "rate, capacity, message",
    [
        (0, 1, "a token bucket's rate must be positive, got 0"),
        (-1, 1, "a token bucket's rate must be positive, got -1"),
        (1, 0.5, "a token bucket holds at least one token, got 0.5"),
    ],
)
def test_bad_bucket_parameters_are_refused(rate, capacity, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        TokenBucket(rate, capacity)


def test_a_reservation_after_a_pause_uses_the_tokens_the_pause_refilled():
    bucket = TokenBucket(rate=1, capacity=1)
    assert bucket.reserve(0.0) == 0.0
    assert bucket.reserve(0.0) == pytest.approx(1.0)
    # Ten seconds on, the debt is paid and the bucket is full again.
    assert bucket.reserve(10.0) == 0.0


def test_published_datazone_quotas():
    for operation in ("CreateAsset", "CreateAssetRevision", "DeleteAsset", "Search"):
        quota = AWS_QUOTAS[f"datazone.{operation}"]
        assert (quota.rate, quota.published) == (20, True)
    reads = {AWS_QUOTAS[f"ssm.{op}"].bucket for op in ("GetParameters", "GetParametersByPath")}
    assert len(reads) == 1  # SSM's reads share one throughput


def test_rate_limit_setting():
    assert parse_rate_limits("off") == {}
    assert parse_rate_limits("aws") == dict(AWS_QUOTAS)
    limits = parse_rate_limits("aws, datazone.CreateAsset=50")
    assert limits["datazone.CreateAsset"].rate == 50
    assert limits["datazone.Search"].rate == 20
    for bad in ("", "fast", "aws,CreateAsset=5", "aws,datazone.CreateAsset=x", "aws,ssm.X=0"):
        with pytest.raises(ValueError):
            parse_rate_limits(bad)


def test_every_quota_names_an_operation_botocore_knows_with_a_positive_rate():
    session = botocore.session.get_session()
    for name, quota in AWS_QUOTAS.items():
        service, _, operation = name.partition(".")
        assert operation in session.get_service_model(service).operation_names, name
        assert quota.rate > 0, name


def test_an_override_gets_a_bucket_of_its_own_and_is_not_a_published_figure():
    limits = parse_rate_limits("aws,ssm.GetParameters=0.5")
    assert limits["ssm.GetParameters"] == Quota(0.5, "ssm.GetParameters", SETTING_SOURCE)
    assert not limits["ssm.GetParameters"].published
    # The other reads keep sharing SSM's published throughput, and name its page.
    assert limits["ssm.GetParametersByPath"] == Quota(40, "ssm.GetParameter*", SSM_QUOTAS_PAGE)
    assert limits["ssm.GetParametersByPath"].published


def test_every_figure_names_its_source():
    """An AWS page (its title and address) where AWS publishes the figure, else "assumed":
    PostLineageEvent, GetAsset and the Glue reads have no published rate."""
    sources = {name: quota.source for name, quota in AWS_QUOTAS.items()}
    assert sources["datazone.CreateAsset"] == DATAZONE_QUOTAS_PAGE
    assert "Quotas for Amazon DataZone" in DATAZONE_QUOTAS_PAGE
    assert "datazone-limits.html" in DATAZONE_QUOTAS_PAGE
    for name in ("datazone.PostLineageEvent", "datazone.GetAsset", "glue.ListSchemas"):
        assert sources[name] == ASSUMED_SOURCE
        assert name in ASSUMED
    assert set(sources.values()) == {DATAZONE_QUOTAS_PAGE, SSM_QUOTAS_PAGE, ASSUMED_SOURCE}


@pytest.mark.parametrize(
    ("setting", "part", "problem"),
    [
        ("aws,CreateAsset=5", "'CreateAsset=5'", "a rate is <service.Operation>="),
        ("aws,datazone.Search", "'datazone.Search'", "a rate is <service.Operation>="),
        ("aws,datazone.CreateAsset=5=6", "'datazone.CreateAsset=5=6'", "'5=6' is not a number"),
        ("aws,datazone.CreateAsset=x", "'datazone.CreateAsset=x'", "'x' is not a number"),
        ("aws,ssm.PutParameter=-1", "'ssm.PutParameter=-1'", "the rate must be positive"),
    ],
)
def test_a_bad_rate_limit_setting_names_the_part_and_what_is_wrong(setting, part, problem):
    with pytest.raises(ValueError, match=re.escape(f"{part}: {problem}")):
        parse_rate_limits(setting)


def test_a_setting_of_the_wrong_shape_says_what_it_may_be():
    with pytest.raises(ValueError, match=r"^say 'off', 'aws', or "):
        parse_rate_limits("fast")
