"""The names the AWS ecosystem's producers give a Glue table reach the table's own lineage node
through the relay: Airflow's AthenaOperator, dbt-glue, a storage location alone. A claim of a
table the catalog does not have, or a location two tables share, passes as sent, and the
catalog is read from Glue once per database and TTL, never per event.

The relay is built in process from its settings, with the sandbox's real clients; the tables
are the demo's Glue database ``lakehouse`` (Iceberg tables under
``s3://shop-lakehouse-<account>/warehouse/lakehouse.db/<table>``)."""

from __future__ import annotations

import os

import pytest
from openlineage.client.event_v2 import InputDataset, OutputDataset

from benchmarks.relay_process import API_KEY
from dzlineage_dagster.core.identity.glue import ATHENA_RULE, DBT_GLUE_RULE, LOCATION_RULE
from dzlineage_dagster.core.lineage.openlineage import glue_source_identifier
from dzlineage_dagster.core.lineage.relay_events import CANONICAL_NAME_FACET
from dzlineage_dagster.relay.build import build_relay
from dzlineage_dagster.relay.service import LINEAGE_PATH, Relay
from dzlineage_dagster.relay.settings import RelaySettings
from dzlineage_dagster.sandbox.server.faults import FaultRule
from dzlineage_dagster_tests.relay.conftest import create_glue_table, posted_event
from dzlineage_dagster_tests.relay.events import run_event, symlinks_facet, to_json

REGION, ACCOUNT = "us-east-1", "123456789012"
BUCKET = f"s3://shop-lakehouse-{ACCOUNT}"
ATHENA = f"awsathena://athena.{REGION}.amazonaws.com"
AIRFLOW_PRODUCER = "https://github.com/apache/airflow/tree/providers-amazon/9.0.0/providers/amazon"
DBT_PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.40.0/integration/dbt"


@pytest.fixture
def relay(module_platform, monkeypatch) -> Relay:
    """A relay as `dzlineage relay` builds it, with a Glue catalog it has not read yet (the
    platform's datasets, which it measures unmapped datasets against, read already: their own
    GetTables is not the catalog's)."""
    for name, value in module_platform.environment.items():
        monkeypatch.setenv(name, value)
    environ = {**os.environ, "DZLINEAGE_RELAY_API_KEY": API_KEY}
    built = build_relay(RelaySettings.from_env(environ), with_spool=False, environ=environ)
    assert built.platforms[None].current() is not None
    return built


def post(relay: Relay, event) -> dict:
    headers = {"authorization": f"Bearer {API_KEY}"}
    answer = relay.route("POST", LINEAGE_PATH, headers.get, to_json(event))
    assert answer.status == 200, answer.body
    return answer.body


def glue_reads(platform) -> dict[str, int]:
    """The Glue catalog reads the sandbox served (the tests' own CreateTable left out)."""
    counts = platform.control.call_counts()
    return {
        operation: n
        for (service, operation), n in counts.items()
        if service == "glue" and operation in ("GetTable", "GetTables")
    }


def table_location(table: str) -> tuple[str, str]:
    """(namespace, name) of a demo table's storage location, as openlineage-spark names it."""
    return BUCKET, f"/warehouse/lakehouse.db/{table}"


def athena_output(table: str) -> OutputDataset:
    """Airflow's AthenaOperator: `awsathena://` + `<catalog>.<db>.<table>`, its S3 location as
    the only symlink (providers/amazon/.../operators/athena.py, get_openlineage_dataset)."""
    facets = {"symlinks": symlinks_facet([table_location(table)], AIRFLOW_PRODUCER)}
    return OutputDataset(ATHENA, f"AwsDataCatalog.lakehouse.{table}", facets=facets)


def dbt_glue_output(table: str) -> OutputDataset:
    """dbt-glue: the Glue namespace `arn:aws:glue:<region>:<account>`, a dotted name."""
    return OutputDataset(f"arn:aws:glue:{REGION}:{ACCOUNT}", f"lakehouse.{table}")


def s3_output(table: str) -> OutputDataset:
    """A Spark or Flink job writing the table's files, without the Glue symlink."""
    return OutputDataset(*table_location(table))


def upstream_run_ids(platform, table: str) -> set[str]:
    """The runs the table's ARN node shows upstream (their sourceIdentifier's run id)."""
    datazone = platform.client("datazone")
    domain = platform.settings.domain_id
    table_node = datazone.get_lineage_node(
        domainIdentifier=domain,
        identifier=glue_source_identifier(REGION, ACCOUNT, "lakehouse", table),
    )
    return {
        datazone.get_lineage_node(domainIdentifier=domain, identifier=reference["id"])[
            "sourceIdentifier"
        ].rpartition("/")[2]
        for reference in table_node.get("upstreamNodes", [])
    }


@pytest.mark.parametrize(
    ("output", "table", "rule", "job"),
    [
        (athena_output, "sales_orders", ATHENA_RULE, ("airflow", "revenue_dag.load_orders")),
        (dbt_glue_output, "sales_payments", DBT_GLUE_RULE, ("dbt", "shop.payments_model")),
        (s3_output, "inventory_products", LOCATION_RULE, ("spark", "products_compaction")),
    ],
    ids=["airflow-athena", "dbt-glue", "s3-location"],
)
def test_a_producers_name_of_a_table_lands_on_the_tables_arn_node(
    module_platform, relay, output, table, rule, job
):
    event = run_event(
        inputs=[InputDataset("s3://landing", f"/{job[1]}")], outputs=[output(table)], job=job
    )
    answer = post(relay, event)
    assert answer["status"] == "forwarded"
    forwarded = posted_event(module_platform, answer["id"])["outputs"][0]
    assert forwarded["facets"][CANONICAL_NAME_FACET]["rule"] == rule
    assert event.run.runId in upstream_run_ids(module_platform, table)


@pytest.mark.parametrize(
    "claim",
    [
        OutputDataset(ATHENA, "AwsDataCatalog.lakehouse.no_such_table"),
        OutputDataset(f"arn:aws:glue:{REGION}:{ACCOUNT}", "table/lakehouse/no_such_table"),
        OutputDataset(f"arn:aws:glue:{REGION}:{ACCOUNT}", "lakehouse.no_such_table"),
        OutputDataset(ATHENA, "federated_mysql.lakehouse.sales_orders"),
    ],
    ids=["athena", "openlineage-glue", "dbt-glue", "other-athena-catalog"],
)
def test_a_dataset_claiming_a_table_the_catalog_does_not_have_passes_as_sent(
    module_platform, relay, claim
):
    answer = post(relay, run_event(outputs=[claim], job=("airflow", "claims")))
    assert "renamed" not in answer
    forwarded = posted_event(module_platform, answer["id"])["outputs"][0]
    assert (forwarded["namespace"], forwarded["name"]) == (claim.namespace, claim.name)
    with pytest.raises(module_platform.client("datazone").exceptions.ResourceNotFoundException):
        module_platform.client("datazone").get_lineage_node(
            domainIdentifier=module_platform.settings.domain_id,
            identifier=glue_source_identifier(REGION, ACCOUNT, "lakehouse", "no_such_table"),
        )


def test_a_location_two_tables_share_is_ambiguous_and_passes_as_sent(module_platform, relay):
    location = f"{BUCKET}/warehouse/shared/events"
    create_glue_table(module_platform, "lakehouse", "events_raw", location)
    create_glue_table(module_platform, "lakehouse", "events_view", f"{location}/")
    shared = OutputDataset(BUCKET, "/warehouse/shared/events")
    answer = post(relay, run_event(outputs=[shared], job=("spark", "events")))
    assert "renamed" not in answer
    forwarded = posted_event(module_platform, answer["id"])["outputs"][0]
    assert (forwarded["namespace"], forwarded["name"]) == (shared.namespace, shared.name)


def test_glue_is_read_once_per_database_and_ttl_not_per_event(module_platform, relay):
    """GetTables once for the database however many events name it; GetTable once for a
    table the listing lacks (a table created since, or none); again only after the TTL."""
    catalog = relay.rules.glue_catalog
    now = [0.0]
    catalog.clock = lambda: now[0]
    module_platform.control.clear_calls()
    for table in ("sales_orders", "sales_order_lines", "daily_revenue"):
        for output in (athena_output(table), s3_output(table), dbt_glue_output(table)):
            post(relay, run_event(outputs=[output], job=("airflow", "many")))
    assert glue_reads(module_platform) == {"GetTables": 1}

    # A table Spark creates after the listing: found by one GetTable, at once.
    create_glue_table(module_platform, "lakehouse", "spark_new", f"{BUCKET}/warehouse/new")
    for _ in range(3):
        answer = post(relay, run_event(outputs=[dbt_glue_output("spark_new")]))
        assert answer["renamed"], answer
        answer = post(relay, run_event(outputs=[dbt_glue_output("no_such_table")]))
        assert "renamed" not in answer
    assert glue_reads(module_platform) == {"GetTables": 1, "GetTable": 2}

    now[0] += catalog.ttl_seconds
    post(relay, run_event(outputs=[athena_output("sales_orders")]))
    assert glue_reads(module_platform) == {"GetTables": 2, "GetTable": 2}
    status = relay.status()["glue_catalog"]
    assert status["glue_calls"] == {"glue.GetTable": 2, "glue.GetTables": 2}
    assert status["databases"] == 1
    assert status["last_error"] is None


def test_the_ttl_is_a_setting_and_glue_renaming_can_be_turned_off(module_platform, monkeypatch):
    for name, value in module_platform.environment.items():
        monkeypatch.setenv(name, value)
    environ = {
        **os.environ,
        "DZLINEAGE_RELAY_API_KEY": API_KEY,
        "DZLINEAGE_RELAY_GLUE_CATALOG_TTL_SECONDS": "30",
    }
    relay = build_relay(RelaySettings.from_env(environ), with_spool=False, environ=environ)
    assert relay.rules.glue_catalog.ttl_seconds == 30
    off = {**environ, "DZLINEAGE_RELAY_GLUE_SYMLINKS": "false"}
    relay = build_relay(RelaySettings.from_env(off), with_spool=False, environ=off)
    answer = post(relay, run_event(outputs=[athena_output("sales_orders")]))
    assert "renamed" not in answer
    assert relay.status()["glue_catalog"] is None


def test_a_catalog_glue_refuses_passes_names_as_sent_and_is_read_again_after_the_ttl(
    module_platform, relay, caplog
):
    """Each failed read is logged once and not retried per event: the next is a TTL later."""
    catalog = relay.rules.glue_catalog
    now = [0.0]
    catalog.clock = lambda: now[0]
    module_platform.control.clear_calls()
    module_platform.control.set_faults(
        *(FaultRule("glue", read, kind="access-denied") for read in ("GetTables", "GetTable"))
    )
    try:
        for _ in range(3):
            answer = post(relay, run_event(outputs=[athena_output("sales_orders")]))
            assert "renamed" not in answer
    finally:
        module_platform.control.clear_faults()
    assert glue_reads(module_platform) == {"GetTables": 1, "GetTable": 1}
    logged = [r.getMessage() for r in caplog.records if "relay Glue catalog" in r.getMessage()]
    assert len(logged) == 2 and all("AccessDeniedException" in line for line in logged)
    assert "AccessDeniedException" in relay.status()["glue_catalog"]["last_error"]

    assert "renamed" not in post(relay, run_event(outputs=[athena_output("sales_orders")]))
    now[0] += catalog.ttl_seconds
    assert post(relay, run_event(outputs=[athena_output("sales_orders")]))["renamed"]
    assert relay.status()["glue_catalog"]["last_error"] is None
