"""DZLINEAGE_SCOPES: read from YAML, checked as the run checks settings, and turned into a
resource per scope whose data side reaches the scope's Region and account."""

from pathlib import Path

import pytest
from dagster import build_resources

from dzlineage_dagster.core.aws.quotas import parse_rate_limits
from dzlineage_dagster.definitions import build_resources as definitions_resources
from dzlineage_dagster.resources.base import client_bucket
from dzlineage_dagster.scopes import read_scopes
from dzlineage_dagster.settings import InvalidSettings

CLUSTER = "arn:aws:kafka:eu-west-1:111111111111:cluster/orders/1a2b"
SCOPES = f"""
scopes:
  - name: orders_eu
    region: eu-west-1
    role_arn: arn:aws:iam::111111111111:role/dzlineage-data
    registry_name: orders-cdc
    msk_cluster_arn: {CLUSTER}
    glue_database: orders_lake
  - name: billing
    registry_name: billing-cdc
    retire_when_registry_empty: true
"""
DEPLOYMENT = {
    "DZLINEAGE_DOMAIN_ID": "dzd_abc123",
    "DZLINEAGE_PROJECT_ID": "5m3ak1pr0j",
    "DZLINEAGE_MSK_CLUSTER_ARN": "arn:aws:kafka:us-east-1:222222222222:cluster/billing/9z",
}


def test_scopes_come_from_a_file_or_from_the_value_itself(tmp_path: Path):
    path = tmp_path / "scopes.yaml"
    path.write_text(SCOPES)
    from_file = read_scopes({**DEPLOYMENT, "DZLINEAGE_SCOPES": str(path)})
    inline = read_scopes({**DEPLOYMENT, "DZLINEAGE_SCOPES": SCOPES})
    assert from_file == inline
    assert [scope.name for scope in inline] == ["orders_eu", "billing"]
    assert inline[0].data_side_options() == {
        "region_name": "eu-west-1",
        "role_arn": "arn:aws:iam::111111111111:role/dzlineage-data",
    }
    assert inline[1].settings["retire_when_registry_empty"] == "true"
    assert read_scopes(DEPLOYMENT) == []


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ("scopes: []", "expected `scopes:` with a list"),
        ("[{name: a, registry_name: r}]", "; it is a list: put it under `scopes:`"),
        ("./scopes.conf", "; it is the text './scopes.conf' (a file's path must end in .yaml"),
        ("scopes: {name: a}", "its `scopes:` is \"{'name': 'a'}\""),
        ("scopes: [{name: a, registy_name: r}]", "'registy_name' (did you mean registry_name?)"),
        ("scopes: [{name: Orders, registry_name: r}]", "scope name 'Orders' must be"),
        ("scopes: [{name: a, registry_name: r, domain_id: d}]", "'domain_id' cannot be set"),
        ("scopes: [{name: a}]", "scope 'a': set registry_name"),
        ("scopes: [{name: a, registry_name: 'no spaces'}]", "scope 'a': registry_name='no spaces'"),
        ("scopes: [{name: a, registry_name: r, role_arn: x}]", "not an IAM role ARN"),
        ("scopes: [{name: a, registry_name: r}, {name: a, registry_name: s}]", "listed twice"),
        ("scopes: [{name: a", "not YAML"),
        ("/nowhere/scopes.yaml", "cannot read it"),
    ],
)
def test_a_wrong_scope_is_refused_naming_it(document, said):
    with pytest.raises(InvalidSettings, match="DZLINEAGE_SCOPES") as refused:
        read_scopes({**DEPLOYMENT, "DZLINEAGE_SCOPES": document})
    assert said in str(refused.value)


def test_a_scope_without_its_cluster_needs_the_deployments():
    environ = {key: v for key, v in DEPLOYMENT.items() if key != "DZLINEAGE_MSK_CLUSTER_ARN"}
    with pytest.raises(InvalidSettings, match="scope 'billing': set msk_cluster_arn"):
        read_scopes({**environ, "DZLINEAGE_SCOPES": SCOPES})


def test_each_scope_gets_its_settings_and_its_data_sides_region_and_role(monkeypatch):
    environ = {**DEPLOYMENT, "DZLINEAGE_SCOPES": SCOPES, "AWS_REGION": "us-east-1"}
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("DZLINEAGE_REGISTRY_NAME", raising=False)
    with build_resources(definitions_resources(environ)) as resources:
        deployment = resources.lineage_sync
        orders = deployment.for_scope("orders_eu")
        billing = deployment.for_scope("billing")
    assert deployment.scope_names == ["orders_eu", "billing"]
    assert (orders.settings.registry_name, orders.settings.glue_database) == (
        "orders-cdc",
        "orders_lake",
    )
    assert orders.settings.msk_cluster_arn == CLUSTER
    assert (billing.settings.registry_name, billing.settings.glue_database) == (
        "billing-cdc",
        "lakehouse",
    )
    assert billing.settings.retire_when_registry_empty is True
    assert billing.settings.msk_cluster_arn == DEPLOYMENT["DZLINEAGE_MSK_CLUSTER_ARN"]
    assert orders.schema_registry.region_name == orders.msk.region_name == "eu-west-1"
    assert orders.data_catalog.role_arn == "arn:aws:iam::111111111111:role/dzlineage-data"
    # The catalog's side is the deployment's, shared by every scope.
    assert orders.datazone is billing.datazone is deployment.datazone
    assert orders.datazone.role_arn is None
    with pytest.raises(KeyError, match=r"no scope 'nope'.*orders_eu, billing"):
        deployment.for_scope("nope")


def test_quotas_are_paced_per_account_and_region():
    quota = parse_rate_limits("aws")["glue.GetSchemaVersion"]
    one = client_bucket(quota, "eu-west-1", "arn:aws:iam::111111111111:role/a")
    assert client_bucket(quota, "eu-west-1", "arn:aws:iam::111111111111:role/a") is one
    assert client_bucket(quota, "us-east-1", "arn:aws:iam::111111111111:role/a") is not one
    assert client_bucket(quota, "eu-west-1", None) is not one


def test_two_scopes_cannot_drain_one_change_queue():
    """A scope that names no queue takes DZLINEAGE_CHANGE_QUEUE_URL's: with the sandbox's
    environment that is the first scope's queue, which the second scope's role cannot read
    (NonExistentQueue) and, in one account, whose other registries' events it would delete."""
    queue = "https://sqs.us-east-1.amazonaws.com/111111111111/dzlineage-changes"
    environ = {**DEPLOYMENT, "DZLINEAGE_CHANGE_QUEUE_URL": queue}
    document = (
        f"scopes: [{{name: shop, registry_name: s, change_queue_url: '{queue}'}},"
        " {name: billing, registry_name: b}]"
    )
    with pytest.raises(InvalidSettings) as refused:
        read_scopes({**environ, "DZLINEAGE_SCOPES": document})
    assert (
        f"scope 'billing': DZLINEAGE_CHANGE_QUEUE_URL='{queue}' is also the queue of scope 'shop'"
    ) in str(refused.value)
    assert "change_queue_url: '' for none" in str(refused.value)
    # Opting out, or a queue of its own, is fine; so is one scope taking the deployment's.
    opted_out = document.replace("registry_name: b}", "registry_name: b, change_queue_url: ''}")
    assert [s.name for s in read_scopes({**environ, "DZLINEAGE_SCOPES": opted_out})] == [
        "shop",
        "billing",
    ]
    alone = "scopes: [{name: billing, registry_name: b}]"
    assert read_scopes({**environ, "DZLINEAGE_SCOPES": alone})[0].name == "billing"
