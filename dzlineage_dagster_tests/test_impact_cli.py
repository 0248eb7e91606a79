"""`dzlineage impact` on the seeded demo: a breaking and an additive schema version of a topic,
followed to the Iceberg columns the sink writes from them."""

from __future__ import annotations

import json

from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.cli.impact import CHANGE_FOUND

TOPIC = "shop.sales.orders"


def impact(capsys, *args: str) -> tuple[int, str, str]:
    code = dzlineage(["impact", *args])
    out, err = capsys.readouterr()
    return code, out, err


def register_breaking_version(platform) -> None:
    """status dropped and total narrowed to decimal(10,2), in the envelope's row, as Debezium
    would register them after the ALTER TABLEs."""
    glue = platform.client("glue")
    schema_id = {"SchemaArn": platform.schema_arn(TOPIC)}
    glue.update_schema(SchemaId=schema_id, Compatibility="NONE")
    latest = glue.get_schema_version(
        SchemaId=schema_id, SchemaVersionNumber={"LatestVersion": True}
    )
    envelope = json.loads(latest["SchemaDefinition"])
    before = next(f for f in envelope["fields"] if f["name"] == "before")
    row = next(branch for branch in before["type"] if isinstance(branch, dict))
    row["fields"] = [f for f in row["fields"] if f["name"] != "status"]
    total = next(f for f in row["fields"] if f["name"] == "total")
    total["type"] = {**total["type"], "precision": 10}
    glue.register_schema_version(SchemaId=schema_id, SchemaDefinition=json.dumps(envelope))


def test_a_breaking_version_names_each_change_and_the_iceberg_columns_it_reaches(platform, capsys):
    register_breaking_version(platform)
    code, out, err = impact(capsys, TOPIC, "--format", "json")
    assert code == CHANGE_FOUND, err  # CI gates on a breaking change
    (report,) = json.loads(out)
    assert report["verdict"] == "breaking"
    assert (report["previous_version"], report["latest_version"]) == (1, 2)
    assert {(c["column"], c["kind"]) for c in report["changes"]} == {
        ("status", "removed"),
        ("total", "type_changed"),
    }
    assert {(a["table"], a["column"], a["change"]) for a in report["affected"]} == {
        ("lakehouse.sales_orders", "status", "removed"),
        ("lakehouse.sales_orders", "total", "type_changed"),
    }
    project = platform.client("datazone").get_project(
        domainIdentifier=platform.settings.domain_id, identifier=platform.settings.project_id
    )
    assert report["owners"][0] == {"name": f"team:{project['name']}", "source": "datazone-project"}
    assert {d["name"] for d in report["downstream"]} == {"iceberg/lakehouse/sales_orders"}
    # Asked about one column of the table: only what reaches it.
    code, out, err = impact(capsys, "lakehouse.sales_orders.total", "--format", "json")
    assert code == CHANGE_FOUND, err
    (report,) = json.loads(out)
    assert [c["column"] for c in report["changes"]] == ["total"]
    assert [a["column"] for a in report["affected"]] == ["total"]
    code, out, _ = impact(capsys, TOPIC)
    assert code == CHANGE_FOUND
    assert "BREAKING  status:" in out
    assert "reaches   lakehouse.sales_orders.total (type_changed)" in out
    # The text carries the tables, the assets downstream and the owners, as the JSON does.
    assert "  tables    lakehouse.sales_orders" in out
    assert "  read by   iceberg/lakehouse/sales_orders (Dagster)" in out
    assert f"  owners    team:{project['name']} (datazone-project)" in out
    assert impact(capsys, TOPIC, "--fail-on", "never")[0] == 0


def test_an_additive_version_reaches_no_column_and_a_first_version_changes_nothing(
    platform, capsys
):
    platform.register_new_version(TOPIC, "coupon")
    code, out, _ = impact(capsys, TOPIC, "--format", "json")
    (report,) = json.loads(out)
    assert code == 0 and report["verdict"] == "additive" and report["affected"] == []
    assert [(c["column"], c["kind"]) for c in report["changes"]] == [("coupon", "added")]
    # An additive change gates CI only when asked to.
    assert impact(capsys, TOPIC, "--fail-on", "additive")[0] == CHANGE_FOUND
    code, out, _ = impact(capsys, "shop.sales.payments", "--format", "json")
    assert code == 0 and json.loads(out)[0]["verdict"] == "none"
    code, out, _ = impact(capsys, "shop.sales.payments", "--fail-on", "additive")
    assert code == 0
    assert out == "shop.sales.payments v1: its first version, nothing to compare\n"


def test_a_name_that_is_neither_topic_nor_table_is_refused_by_name(platform, capsys):
    code, _, err = impact(capsys, "lakehouse.nothing")
    assert code == 2
    assert "'lakehouse.nothing' is neither a topic of registry shop-cdc" in err


def test_a_version_after_one_the_registry_refused_is_compared_with_the_last_available(
    platform, capsys
):
    """v2 failed BACKWARD (a column with no default) and was never served: v3, made from v1,
    is compared with v1, and its one change is the column it adds."""
    refused = {"name": "voucher", "type": "string"}
    assert platform.register_with_column(TOPIC, refused, 1)["Status"] == "FAILURE"
    coupon = {"name": "coupon", "type": ["null", "string"], "default": None}
    assert platform.register_with_column(TOPIC, coupon, 1)["VersionNumber"] == 3
    code, out, err = impact(capsys, TOPIC, "--format", "json")
    assert code == 0, err
    (report,) = json.loads(out)
    assert (report["previous_version"], report["latest_version"]) == (1, 3)
    assert [(c["column"], c["kind"]) for c in report["changes"]] == [("coupon", "added")]
