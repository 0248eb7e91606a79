"""`dzlineage sync`, `trace`, `orphans`, `impact`, `doctor` and `settings` across the scopes of
``DZLINEAGE_SCOPES``: two registries, each with its MSK cluster, connectors and Glue database,
synced into one DataZone domain by one command; a broken scope is named and the other still
syncs (docs/many-registries.md, "From the command line")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.sandbox.demo.change_queue import create_change_queue
from dzlineage_dagster.sandbox.demo.seed import DEMO_PLATFORM, seed_platform
from dzlineage_dagster_tests.test_catalog_sync import topic_assets

#: The second platform: the demo's sales schema captured by its own Debezium connector into
#: its own registry, cluster and Glue database.
BILLING_TABLES = ("sales.orders", "sales.payments")
BILLING_TOPICS = [f"billing.{table}" for table in BILLING_TABLES]
SHOP_TOPIC = "shop.sales.orders"
#: The billing platform's Region: its scope's data side is reached there, DataZone where the
#: deployment is (the demo's us-east-1).
BILLING_REGION = "eu-west-1"


def billing_platform(directory: Path) -> Path:
    """The demo platform file renamed to a second platform: its cluster, registries, connectors,
    Glue database and DataZone domain (seeding makes one; the scopes use the demo's)."""
    spec = yaml.safe_load(DEMO_PLATFORM.read_text())
    spec["msk_cluster"]["name"] = "billing-cdc"
    spec["schema_registry"]["name"] = "billing-cdc"
    spec["source_tables"] = {name: spec["source_tables"][name] for name in BILLING_TABLES}
    source = spec["connectors"]["shop-debezium-source"]["config"]
    for key in [key for key in source if key.startswith("transforms")]:
        del source[key]
    source.update(
        {
            "topic.prefix": "billing",
            "table.include.list": ",".join(BILLING_TABLES),
            "database.hostname": "billing-db.cluster-c8a1b2c3d4e5.${region}.rds.amazonaws.com",
            "database.dbname": "billing",
            "slot.name": "billing_debezium",
        }
    )
    sink = spec["connectors"]["shop-iceberg-sink"]["config"]
    sink["topics.regex"] = r"billing\.sales\..*"
    sink["transforms.debezium.cdc.target.pattern"] = "billing_lake.{db}_{table}"
    for config in (source, sink):
        for key, value in config.items():
            if key.endswith("registry.name"):
                config[key] = value.replace("shop-cdc", "billing-cdc")
    spec["connectors"] = {
        "billing-debezium-source": spec["connectors"]["shop-debezium-source"],
        "billing-iceberg-sink": spec["connectors"]["shop-iceberg-sink"],
    }
    spec["glue_catalog"]["database"] = "billing_lake"
    spec["glue_catalog"]["tables"] = {
        "sales_orders": {"from_topic": "billing.sales.orders"},
        "sales_payments": {"from_topic": "billing.sales.payments"},
    }
    spec["datazone"] = {"domain": "billing-data", "project": "unused"}
    path = directory / "billing_platform.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


@pytest.fixture
def two_scopes(platform, tmp_path, monkeypatch):
    """The demo platform and the billing one in the sandbox, each a scope."""
    billing = seed_platform(
        platform.sandbox.endpoint_url, billing_platform(tmp_path), region=BILLING_REGION
    )
    scopes = {
        "scopes": [
            {
                "name": "shop",
                "registry_name": platform.environment["DZLINEAGE_REGISTRY_NAME"],
                "msk_cluster_arn": platform.environment["DZLINEAGE_MSK_CLUSTER_ARN"],
                "glue_database": platform.environment["DZLINEAGE_GLUE_DATABASE"],
            },
            {
                "name": "billing",
                "region": BILLING_REGION,
                "registry_name": billing["DZLINEAGE_REGISTRY_NAME"],
                "msk_cluster_arn": billing["DZLINEAGE_MSK_CLUSTER_ARN"],
                "glue_database": billing["DZLINEAGE_GLUE_DATABASE"],
            },
        ]
    }
    monkeypatch.setenv("DZLINEAGE_SCOPES", yaml.safe_dump(scopes))
    platform.control.clear_calls()
    return scopes


def run(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = dzlineage(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assets_by_registry(platform) -> dict[str, int]:
    """How many topic assets carry a schema of each registry (their externalIdentifier is the
    schema's ARN: arn:aws:glue:<region>:<account>:schema/<registry>/<schema>)."""
    counted: dict[str, int] = {}
    for arn, assets in topic_assets(platform).items():
        registry = arn.split(":schema/", 1)[1].split("/", 1)[0]
        counted[registry] = counted.get(registry, 0) + len(assets)
    return counted


def scope_sections(out: str) -> dict[str, str]:
    """Each scope's part of `dzlineage sync`'s output, by scope name, and the summary's."""
    sections: dict[str, str] = {}
    name = "before"
    for line in out.splitlines():
        if line.startswith("== scope "):
            name = line.split()[2]
        elif line.startswith("scopes ("):
            name = "summary"
        sections[name] = sections.get(name, "") + line + "\n"
    return sections


def test_one_sync_brings_both_scopes_topics_into_datazone_and_a_second_converges(
    two_scopes, platform, capsys
):
    code, out, err = run(capsys, "sync")
    assert code == 0, err
    sections = scope_sections(out)
    assert sections["shop"].startswith("== scope shop (1 of 2): registry shop-cdc ==\n")
    assert sections["billing"].startswith(
        f"== scope billing (2 of 2): registry billing-cdc in {BILLING_REGION} ==\n"
    )
    for topic in BILLING_TOPICS:
        assert re.search(rf"^{re.escape(topic)} +created +published r1 ", sections["billing"], re.M)
        assert topic not in sections["shop"]
    assert "shop.sales.orders " in sections["shop"]
    assert "  shop     ok\n  billing  ok\n" in sections["summary"]
    assert out.rstrip().endswith("2 synced, 0 failed")
    first = assets_by_registry(platform)
    assert first == {"shop-cdc": 7, "billing-cdc": 2}

    code, out, err = run(capsys, "sync")
    assert code == 0, err
    sections = scope_sections(out)
    assert "registry shop-cdc unchanged since the last complete sync" in sections["shop"]
    assert "registry billing-cdc unchanged since the last complete sync" in sections["billing"]
    assert assets_by_registry(platform) == first


def test_a_broken_scope_is_named_and_the_other_still_syncs(
    two_scopes, platform, capsys, monkeypatch
):
    two_scopes["scopes"][0]["registry_name"] = "no-such-registry"
    monkeypatch.setenv("DZLINEAGE_SCOPES", yaml.safe_dump(two_scopes))
    code, out, err = run(capsys, "sync")
    assert code == 1
    assert (
        "dzlineage sync: scope shop: could not start: registry_name='no-such-registry': "
        "Glue Schema Registry does not exist"
    ) in err
    sections = scope_sections(out)
    assert "billing.sales.orders " in sections["billing"]
    assert "  shop     FAILED: could not start: registry_name='no-such-registry': " in out
    assert "  billing  ok" in out
    assert out.rstrip().endswith("1 synced, 1 failed: shop")
    assert assets_by_registry(platform) == {"billing-cdc": 2}


def test_scope_picks_scopes_and_a_wrong_name_or_document_is_refused(
    two_scopes, platform, capsys, monkeypatch
):
    code, out, err = run(capsys, "sync", "--scope", "billing", "--dry-run")
    assert code == 0, err
    assert "== scope billing (1 of 1)" in out and "scope shop" not in out
    assert "billing.sales.orders" in out and "dry run: nothing was written" in out
    assert assets_by_registry(platform) == {}

    with pytest.raises(
        SystemExit,
        match="--scope sales: no such scope in DZLINEAGE_SCOPES; its scopes: shop, billing",
    ):
        dzlineage(["sync", "--scope", "sales"])

    monkeypatch.delenv("DZLINEAGE_SCOPES")
    with pytest.raises(SystemExit, match="--scope billing: DZLINEAGE_SCOPES is not set"):
        dzlineage(["sync", "--scope", "billing"])
    two_scopes["scopes"][1]["topic_namespace_style"] = "sideways"
    monkeypatch.setenv("DZLINEAGE_SCOPES", yaml.safe_dump(two_scopes))
    wrong = "DZLINEAGE_SCOPES: scope 'billing': topic_namespace_style='sideways'"
    with pytest.raises(SystemExit, match=wrong):
        dzlineage(["sync"])
    for command in (["trace", SHOP_TOPIC], ["orphans"], ["doctor"], ["impact", SHOP_TOPIC]):
        code, out, err = run(capsys, *command)
        assert (code, out) == (2, ""), command
        assert wrong in err, command


def test_trace_orphans_impact_and_doctor_answer_across_the_scopes(two_scopes, platform, capsys):
    assert run(capsys, "sync")[0] == 0

    # trace finds each scope's datasets in the scope that has them
    code, out, err = run(capsys, "trace", "billing_lake.sales_payments", "--no-owners")
    assert code == 0, err
    assert "<- topic billing.sales.payments  via kafka-connect.billing-iceberg-sink/" in out
    code, out, err = run(capsys, "trace", SHOP_TOPIC, "--downstream", "--format", "json")
    assert code == 0, err
    labels = {node["label"] for node in json.loads(out)["nodes"]}
    assert labels == {SHOP_TOPIC, "lakehouse.sales_orders"}
    # a name two scopes have, each its own dataset: --scope says which
    code, out, err = run(capsys, "trace", "sales.orders", "--downstream")
    assert (code, out) == (2, "")
    assert "'sales.orders' names datasets in 2 scopes; choose one with --scope:" in err
    assert "\n  scope shop: postgres://shop-db." in err
    assert "\n  scope billing: postgres://billing-db." in err
    code, out, err = run(capsys, "trace", "sales.orders", "--downstream", "--scope", "billing")
    assert code == 0, err
    assert out.splitlines()[0].startswith("source table billing.sales.orders  postgres://billing")
    code, out, err = run(capsys, "trace", SHOP_TOPIC, "--scope", "billing")
    assert (code, out) == (2, "")
    assert "'shop.sales.orders' is in no scope:\n  scope billing: no dataset named" in err

    # orphans: a section per scope
    code, out, err = run(capsys, "orphans", "--format", "json")
    assert code == 0, err
    found = json.loads(out)
    assert set(found) == {"shop", "billing"}
    assert found["billing"] == {
        "topics_without_downstream_table": [],
        "tables_without_upstream": [],
    }
    assert [table.rsplit("/", 1)[-1] for table in found["shop"]["tables_without_upstream"]] == [
        "daily_revenue"
    ]
    code, out, err = run(capsys, "orphans")
    assert code == 0, err
    assert out.index("== scope shop ==") < out.index("== scope billing ==")
    assert "topics of registry billing-cdc that feed no table (0):" in out

    # impact asks every scope, and names the scope of each topic it found
    code, out, err = run(capsys, "impact", "billing.sales.orders", "--format", "json")
    assert code == 0, err
    assert [(r["scope"], r["topic"]) for r in json.loads(out)] == [
        ("billing", "billing.sales.orders")
    ]
    code, out, err = run(capsys, "impact", "billing.sales.orders")
    assert code == 0, err
    assert out.startswith("== scope billing ==\nbilling.sales.orders "), out

    # doctor: the shared checks once, the others per scope
    code, out, err = run(capsys, "doctor", "--format", "json")
    rows = json.loads(out)["checks"]
    assert code == 0, [row for row in rows if row["status"] == "FAIL"]
    by_check: dict[str, list[str | None]] = {}
    for row in rows:
        by_check.setdefault(row["check"], []).append(row.get("scope"))
    assert set(by_check["domain"]) == {None} and set(by_check["project"]) == {None}
    assert set(by_check["registry"]) == {"shop", "billing"}
    assert any(
        row["check"] == "registry" and row["scope"] == "billing" and "billing-cdc" in row["detail"]
        for row in rows
    )
    code, out, err = run(capsys, "doctor")
    assert out.splitlines()[0].split()[:3] == ["STATUS", "SCOPE", "CHECK"]
    assert re.search(r"^OK +\(all\) +domain ", out, re.M)
    assert re.search(r"^OK +billing +registry ", out, re.M)


def test_a_scope_that_cannot_be_read_is_named_by_every_command(
    two_scopes, platform, capsys, monkeypatch
):
    assert run(capsys, "sync")[0] == 0
    two_scopes["scopes"][1]["registry_name"] = "billing-gone"
    monkeypatch.setenv("DZLINEAGE_SCOPES", yaml.safe_dump(two_scopes))
    gone = "scope billing: registry_name='billing-gone': Glue Schema Registry does not exist"

    code, out, err = run(capsys, "trace", SHOP_TOPIC, "--no-owners")
    assert code == 0 and out.startswith(f"topic {SHOP_TOPIC}")
    assert f"dzlineage trace: not looked up in {gone}" in err
    code, out, err = run(capsys, "orphans")
    assert code == 2 and "== scope shop ==" in out and "scope billing" not in out
    assert f"dzlineage orphans: {gone}" in err
    code, out, err = run(capsys, "doctor", "--format", "json")
    assert code == 1
    failed = [row for row in json.loads(out)["checks"] if row["status"] == "FAIL"]
    assert [(row["check"], row["scope"]) for row in failed] == [("registry", "billing")]
    assert failed[0]["fix"].startswith("set the scope's registry_name to a registry of the data")


def test_settings_shows_each_scopes_settings_and_names_a_wrong_one(monkeypatch, capsys):
    monkeypatch.setenv("DZLINEAGE_MSK_CLUSTER_ARN", "arn:aws:kafka:us-east-1:1:cluster/c/1")
    monkeypatch.setenv(
        "DZLINEAGE_SCOPES",
        "scopes: [{name: shop, registry_name: shop-cdc, glue_database: lake},"
        " {name: billing, region: eu-west-1, registry_name: billing-cdc}]",
    )
    code, out, err = run(capsys, "settings")
    scopes = out[out.index("DZLINEAGE_SCOPES = ") :]
    assert "  scope shop: Region the deployment's" in scopes
    assert "  scope billing: Region eu-west-1;" in scopes
    assert "    glue_database = lake  (the scope's)\n" in scopes
    assert (
        "    msk_cluster_arn = arn:aws:kafka:us-east-1:1:cluster/c/1  (DZLINEAGE_MSK_CLUSTER_ARN)"
        in scopes
    )
    assert "    table_name_pattern = {schema}_{table}  (default)" in scopes
    assert "DZLINEAGE_SCOPES" not in err
    # A scope's own role without its own external id is assumed with the deployment's: said.
    monkeypatch.setenv("DZLINEAGE_DATA_ROLE_EXTERNAL_ID", "deployment-id")
    monkeypatch.setenv(
        "DZLINEAGE_SCOPES",
        "scopes: [{name: billing, registry_name: b, role_arn: 'arn:aws:iam::333333333333:role/d'},"
        " {name: ledger, registry_name: l, role_arn: 'arn:aws:iam::444444444444:role/d',"
        " role_external_id: ledger-id}]",
    )
    out = run(capsys, "settings")[1]
    assert (
        "; data side's role arn:aws:iam::333333333333:role/d, external id deployment-id (the "
        "deployment's "
        "DZLINEAGE_DATA_ROLE_EXTERNAL_ID)\n"
    ) in out
    assert "role/d, external id ledger-id (the scope's)\n" in out

    monkeypatch.setenv("DZLINEAGE_SCOPES", "scopes: [{name: billing, registry_name: 'a b'}]")
    code, out, err = run(capsys, "settings")
    assert code == 1
    wrong = "DZLINEAGE_SCOPES: scope 'billing': registry_name='a b'"
    assert f"    INVALID: {wrong}" in out
    assert f"dzlineage settings: invalid setting {wrong}" in err


def test_from_queue_drains_each_scopes_own_queue(two_scopes, platform, capsys, monkeypatch):
    assert run(capsys, "sync")[0] == 0
    for scope in two_scopes["scopes"]:
        # Each scope's queue is in its Region, fed by that Region's rules (every registry's).
        region = {"region_name": scope["region"]} if "region" in scope else {}
        scope["change_queue_url"] = create_change_queue(
            platform.client("sqs", **region),
            platform.client("events", **region),
            name=f"{scope['name']}-changes",
        )
    monkeypatch.setenv("DZLINEAGE_SCOPES", yaml.safe_dump(two_scopes))
    platform.register_new_version(SHOP_TOPIC, "note")
    billing_orders = {"RegistryName": "billing-cdc", "SchemaName": BILLING_TOPICS[0]}
    billing_glue = platform.client("glue", region_name=BILLING_REGION)
    billing_glue.update_schema(SchemaId=billing_orders, Compatibility="FULL")
    platform.control.clear_calls()

    code, out, err = run(capsys, "sync", "--from-queue")
    assert code == 0, err
    sections = scope_sections(out)
    assert re.search(rf"^{re.escape(SHOP_TOPIC)}  synced", sections["shop"], re.M)
    assert "\n1 topics named by 1 messages, 0 failed" in sections["shop"]
    assert re.search(rf"^{re.escape(BILLING_TOPICS[0])}  synced", sections["billing"], re.M)
    assert "\n1 topics named by 1 messages, 0 failed" in sections["billing"]
    assert platform.control.call_counts().get(("glue", "ListSchemas"), 0) == 0
    for scope in two_scopes["scopes"]:
        region = {"region_name": scope["region"]} if "region" in scope else {}
        left = platform.client("sqs", **region).receive_message(QueueUrl=scope["change_queue_url"])
        assert "Messages" not in left
