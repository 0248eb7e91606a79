"""The sandbox as slow and as strict as AWS: quotas answered with ThrottlingException, service
times, and MSK ARNs in AWS's shape."""

from __future__ import annotations

import re
import time

import pytest
from botocore.exceptions import ClientError

from dzlineage_dagster.sandbox.server.app import Sandbox
from dzlineage_dagster.sandbox.server.control import SandboxControl, sandbox_environment
from dzlineage_dagster.sandbox.server.pacing import Latency, Quotas, aws_service_time
from dzlineage_dagster_tests.clients import sandbox_client


def test_quotas_are_off_by_default_and_listed_when_on(sandbox):
    assert sandbox.control.quotas() == {}
    with Sandbox(quotas="aws") as strict:
        quotas = SandboxControl(strict.endpoint_url).quotas()
    assert quotas["datazone.CreateAsset"] == 20
    assert quotas["datazone.Search"] == 20
    assert quotas["ssm.GetParametersByPath"] == 40


@pytest.mark.parametrize(
    "service, call, status",
    [
        ("datazone", lambda c: c.get_domain(identifier="dzd_nothere"), 429),
        ("ssm", lambda c: c.get_parameters(Names=["/nothere"]), 400),
    ],
)
def test_calls_over_the_quota_are_throttled_as_aws_does(service, call, status):
    with Sandbox() as server:
        control = SandboxControl(server.endpoint_url)
        server.app.pace(Latency(), Quotas({f"{service}.{_operation(service)}": 2}))
        client = sandbox_client(sandbox_environment(server.endpoint_url), service)
        outcomes = []
        for _ in range(5):
            try:
                call(client)
                outcomes.append("served")
            except ClientError as error:
                code = error.response["Error"]["Code"]
                outcomes.append(code if code == "ThrottlingException" else "served")
                assert error.response["ResponseMetadata"]["HTTPStatusCode"] in (status, 404, 400)
        throttled = [c for c in control.calls() if c.throttled]
    # A bucket of 2 a second serves its burst of 2, then refuses until it refills.
    assert outcomes[:2] == ["served", "served"]
    assert "ThrottlingException" in outcomes[2:]
    assert len(throttled) == outcomes.count("ThrottlingException")
    assert {c.status for c in throttled} == {status}


def _operation(service: str) -> str:
    return {"datazone": "GetDomain", "ssm": "GetParameters"}[service]


def test_fixed_latency_slows_every_call(sandbox):
    with Sandbox(latency="120") as slow:
        ssm = sandbox_client(sandbox_environment(slow.endpoint_url), "ssm")
        started = time.monotonic()
        ssm.get_parameters(Names=["/x"])
        ssm.get_parameters(Names=["/y"])
        elapsed = time.monotonic() - started
        assert SandboxControl(slow.endpoint_url).set_pacing("0") == {
            "latency": 0.0,
            "quotas": "off",
        }
    assert elapsed >= 0.24


def test_aws_latency_model_reads_faster_than_writes():
    assert 0.01 <= aws_service_time("glue", "GetSchema") < 0.1
    assert aws_service_time("datazone", "CreateAsset") > aws_service_time("datazone", "GetAsset")
    assert aws_service_time("ssm", "PutParameter") > aws_service_time("ssm", "GetParameters")
    assert Latency.parse("aws").seconds("glue", "ListSchemas") == aws_service_time(
        "glue", "ListSchemas"
    )
    for bad in ("fast", "-1"):
        with pytest.raises(ValueError):
            Latency.parse(bad)
    with pytest.raises(ValueError):
        Quotas.parse("strict")


def test_pacing_is_set_over_http_and_refused_when_malformed(sandbox):
    with Sandbox() as server:
        control = SandboxControl(server.endpoint_url)
        assert control.set_pacing("aws", "aws") == {"latency": "aws", "quotas": "aws"}
        assert control.quotas()["datazone.CreateAsset"] == 20
        with pytest.raises(Exception, match="400"):
            control.set_pacing("soon", "off")


MSK_ARN = re.compile(
    r"arn:aws:kafka:us-east-1:\d{12}:cluster/(?P<name>[^/]+)/"
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-(?P<suffix>s?\d+)"
)


def test_msk_cluster_arns_look_like_aws(sandbox):
    kafka = sandbox.client("kafka")
    provisioned = kafka.create_cluster(
        ClusterName="arn-shape-provisioned",
        KafkaVersion="3.6.0",
        NumberOfBrokerNodes=3,
        BrokerNodeGroupInfo={"InstanceType": "kafka.m5.large", "ClientSubnets": ["subnet-1"]},
    )["ClusterArn"]
    serverless = kafka.create_cluster_v2(
        ClusterName="arn-shape-serverless",
        Serverless={"VpcConfigs": [{"SubnetIds": ["subnet-1"]}]},
    )["ClusterArn"]
    first, second = MSK_ARN.fullmatch(provisioned), MSK_ARN.fullmatch(serverless)
    assert first and first["name"] == "arn-shape-provisioned" and first["suffix"].isdigit()
    assert second and second["name"] == "arn-shape-serverless" and second["suffix"][0] == "s"
    described = kafka.describe_cluster_v2(ClusterArn=provisioned)["ClusterInfo"]
    assert described["ClusterArn"] == provisioned
    assert kafka.get_bootstrap_brokers(ClusterArn=provisioned)


def test_quotas_of_ones_own_disagree_with_the_products_table(tmp_path):
    """``--quotas`` figures independent of ``core/aws/quotas.py``: the sandbox throttles at them
    and its Service Quotas API reports them, beside the published defaults."""
    rates_file = tmp_path / "quotas.json"
    rates_file.write_text('{"datazone.CreateAsset": 10, "ssm.GetParameters": 5}')
    for spec in ("datazone.CreateAsset=10,ssm.GetParameters=5", str(rates_file)):
        with Sandbox(quotas=spec) as server:
            environment = sandbox_environment(server.endpoint_url)
            enforced = SandboxControl(server.endpoint_url).quotas()
            service_quotas = sandbox_client(environment, "service-quotas")
            applied = _quota_values(service_quotas.list_service_quotas, "datazone")
            defaults = _quota_values(service_quotas.list_aws_default_service_quotas, "datazone")
            ssm = _quota_values(service_quotas.list_service_quotas, "ssm")
        assert enforced == {"datazone.CreateAsset": 10, "ssm.GetParameters": 5}
        assert applied["Rate of CreateAsset requests"] == 10
        assert applied["Rate of Search requests"] == 20
        assert defaults["Rate of CreateAsset requests"] == 20
        # SSM's reads share one quota: the lowest rate given to any of them is its value.
        assert list(ssm.values()) == [5]


def test_operations_joined_by_plus_share_one_quota():
    """SSM publishes one throughput for its three reads: ``a+b=40`` is one bucket of 40 TPS
    that every one of them draws from, where ``a=40,b=40`` would allow 80."""
    shared = Quotas.parse("ssm.GetParameter+ssm.GetParameters=2,datazone.CreateAsset=2")
    assert shared.rates == {
        "ssm.GetParameter": 2,
        "ssm.GetParameters": 2,
        "datazone.CreateAsset": 2,
    }
    now = 1000.0
    taken = [shared.admits("ssm", op, now) for op in ("GetParameter", "GetParameters") * 2]
    assert taken == [True, True, False, False]
    assert shared.admits("datazone", "CreateAsset", now)
    with pytest.raises(ValueError, match=re.escape("'GetParameters' is not <service.Operation>")):
        Quotas.parse("ssm.GetParameter+GetParameters=2")


def _quota_values(list_quotas, service_code: str) -> dict[str, float]:
    return {q["QuotaName"]: q["Value"] for q in list_quotas(ServiceCode=service_code)["Quotas"]}


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("fast", "'fast': a rate is <service.Operation>=<calls per second>"),
        ("datazone.CreateAsset=0", "the rate must be positive"),
        ("nothere.json", "No such file"),
    ],
)
def test_bad_quota_figures_are_refused_by_name(spec, problem):
    with pytest.raises(ValueError, match=re.escape(problem)):
        Quotas.parse(spec)


def test_service_quotas_knows_no_other_service_and_ssm_answers_its_tier(sandbox):
    service_quotas = sandbox.client("service-quotas")
    with pytest.raises(ClientError) as refused:
        service_quotas.list_service_quotas(ServiceCode="nothere")
    assert refused.value.response["Error"]["Code"] == "NoSuchResourceException"
    assert service_quotas.list_service_quotas(ServiceCode="glue")["Quotas"] == []
    tier = sandbox.client("ssm").get_service_setting(
        SettingId="/ssm/parameter-store/default-parameter-tier"
    )
    assert tier["ServiceSetting"]["SettingValue"] == "Standard"
