"""A Glue table's other names, as producers of the AWS ecosystem send them, map to its one
identity (the name DataZone files under the table's ARN) only when the catalog has it."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openlineage.client.event_v2 import OutputDataset

from dzlineage_dagster.core.identity.glue import (
    ATHENA_RULE,
    DBT_GLUE_RULE,
    GLUE_NAME_RULE,
    GLUE_SYMLINK_RULE,
    LOCATION_RULE,
    DatabaseTables,
    GlueCatalogIndex,
    glue_dataset,
    normalized_location,
    resolve_glue_table,
    s3_location,
)
from dzlineage_dagster.core.lineage.relay_events import (
    CANONICAL_NAME_FACET,
    NameRules,
    canonicalize,
    compact_json,
)
from dzlineage_dagster_tests.core.test_relay_events import received
from dzlineage_dagster_tests.openlineage_spec import validate_openlineage_event
from dzlineage_dagster_tests.relay.events import run_event, symlinks_facet

REGION, ACCOUNT = "us-east-1", "123456789012"
WAREHOUSE = "s3://shop-lakehouse/warehouse/lakehouse.db"


def glue_table(name: str, location: str | None = None) -> dict:
    """A table as GetTables lists it."""
    return {"Name": name, **({"StorageDescriptor": {"Location": location}} if location else {})}


CATALOG = GlueCatalogIndex.of(
    REGION,
    ACCOUNT,
    {
        "lakehouse": [
            glue_table("orders", f"{WAREHOUSE}/orders"),
            glue_table("customers", f"{WAREHOUSE}/customers/"),
            # Two tables over one location (a view-like second registration): ambiguous.
            glue_table("events", f"{WAREHOUSE}/events"),
            glue_table("events_copy", f"{WAREHOUSE}/events"),
        ]
    },
)
ORDERS = glue_dataset(REGION, ACCOUNT, "lakehouse", "orders")


def dataset(namespace: str, name: str, symlinks: list[tuple[str, str]] = ()) -> dict:
    facets = {"symlinks": {"identifiers": [{"namespace": n, "name": m} for n, m in symlinks]}}
    return {"namespace": namespace, "name": name, "facets": facets if symlinks else {}}


ATHENA = f"awsathena://athena.{REGION}.amazonaws.com"


@pytest.mark.parametrize(
    ("namespace", "name", "rule"),
    [
        (f"arn:aws:glue:{REGION}:{ACCOUNT}", "table/lakehouse/orders", GLUE_NAME_RULE),
        (f"arn:aws:glue:{REGION}:{ACCOUNT}", "lakehouse.orders", DBT_GLUE_RULE),
        (ATHENA, "AwsDataCatalog.lakehouse.orders", ATHENA_RULE),
        (ATHENA, "awsdatacatalog.lakehouse.orders", ATHENA_RULE),
        (ATHENA, "AWSDATACATALOG.Lakehouse.ORDERS", ATHENA_RULE),
        ("s3://shop-lakehouse", "/warehouse/lakehouse.db/orders", LOCATION_RULE),
        ("s3://shop-lakehouse", "warehouse/lakehouse.db/orders/", LOCATION_RULE),
        ("s3a://shop-lakehouse", "/warehouse/lakehouse.db/orders", LOCATION_RULE),
    ],
)
def test_every_name_producers_give_a_table_resolves_to_its_one_identity(namespace, name, rule):
    assert resolve_glue_table(dataset(namespace, name), CATALOG) == (*ORDERS, rule)


@pytest.mark.parametrize(
    "symlink",
    [
        (f"arn:aws:glue:{REGION}:{ACCOUNT}", "table/lakehouse/orders"),  # openlineage-spark
        (f"arn:aws:glue:{REGION}:{ACCOUNT}", "lakehouse.orders"),
        (ATHENA, "AwsDataCatalog.lakehouse.orders"),
    ],
)
def test_a_symlink_naming_the_table_any_of_those_ways_resolves_too(symlink):
    named = dataset("s3://elsewhere", "/not/the/location", [symlink])
    assert resolve_glue_table(named, CATALOG) == (*ORDERS, GLUE_SYMLINK_RULE)


def test_a_hive_table_of_the_glue_metastore_resolves_by_its_location_symlink():
    """OpenLineage's Hive hook (HiveUtils.getDatasetIdentifierFromTable): hive://<metastore> +
    <db>.<table>, its storage location a LOCATION symlink; one table there, so it is that one."""
    hive = dataset(
        "hive://ip-10-0-1-23.ec2.internal:9083",
        "lakehouse.orders",
        [("s3://shop-lakehouse", "warehouse/lakehouse.db/orders")],
    )
    assert resolve_glue_table(hive, CATALOG) == (*ORDERS, LOCATION_RULE)
    shared = dataset(
        "hive://ip-10-0-1-23.ec2.internal:9083",
        "lakehouse.events",
        [("s3://shop-lakehouse", "warehouse/lakehouse.db/events")],
    )
    assert resolve_glue_table(shared, CATALOG) is None  # two tables at that location


def test_a_location_given_with_a_trailing_slash_in_glue_matches_one_without():
    customers = dataset("s3://shop-lakehouse", "warehouse/lakehouse.db/customers")
    assert resolve_glue_table(customers, CATALOG) == (
        *glue_dataset(REGION, ACCOUNT, "lakehouse", "customers"),
        LOCATION_RULE,
    )


@pytest.mark.parametrize(
    ("namespace", "name", "symlinks"),
    [
        # Claims of a table the catalog does not have: another table, database, account, Region.
        (f"arn:aws:glue:{REGION}:{ACCOUNT}", "table/lakehouse/no_such_table", ()),
        (f"arn:aws:glue:{REGION}:{ACCOUNT}", "other_db.orders", ()),
        (f"arn:aws:glue:{REGION}:{'9' * 12}", "table/lakehouse/orders", ()),
        (f"arn:aws:glue:eu-west-1:{ACCOUNT}", "table/lakehouse/orders", ()),
        (ATHENA, "AwsDataCatalog.lakehouse.no_such_table", ()),
        ("awsathena://athena.eu-west-1.amazonaws.com", "AwsDataCatalog.lakehouse.orders", ()),
        # Another Athena catalog (federated, a Lambda connector's) is not the Glue catalog.
        (ATHENA, "my_mysql_catalog.lakehouse.orders", ()),
        ("s3://shop-lakehouse", "elsewhere", [(ATHENA, "my_mysql_catalog.lakehouse.orders")]),
        # A location two tables share, one no table has, one inside a table's.
        ("s3://shop-lakehouse", "/warehouse/lakehouse.db/events", ()),
        ("s3://shop-lakehouse", "/warehouse/lakehouse.db/nothing", ()),
        ("s3://shop-lakehouse", "/warehouse/lakehouse.db/orders/data/part-0.parquet", ()),
        # The project's own naming is the identity already.
        (*ORDERS, ()),
    ],
)
def test_a_name_that_does_not_single_out_a_table_of_the_catalog_is_kept(namespace, name, symlinks):
    assert resolve_glue_table(dataset(namespace, name, list(symlinks)), CATALOG) is None


def test_athenas_default_catalog_is_the_account_the_catalog_belongs_to():
    """Athena names no account: without knowing the platform's, nothing is claimed."""
    unknown_account = GlueCatalogIndex(REGION, None, CATALOG.databases)
    athena = dataset(ATHENA, "AwsDataCatalog.lakehouse.orders")
    assert resolve_glue_table(athena, unknown_account) is None
    assert resolve_glue_table(athena, CATALOG) == (*ORDERS, ATHENA_RULE)


glue_names = st.text(string.ascii_lowercase + string.digits + "_", min_size=1, max_size=30)


@given(database=glue_names, table=glue_names, slashes=st.integers(0, 3))
def test_each_form_of_any_table_lands_on_the_same_identity_and_only_if_it_exists(
    database, table, slashes
):
    location = f"s3://bucket/{database}.db/{table}"
    catalog = GlueCatalogIndex.of(REGION, ACCOUNT, {database: [glue_table(table, location)]})
    empty = GlueCatalogIndex.of(REGION, ACCOUNT, {database: []})
    forms = [
        dataset(f"arn:aws:glue:{REGION}:{ACCOUNT}", f"table/{database}/{table}"),
        dataset(f"arn:aws:glue:{REGION}:{ACCOUNT}", f"{database}.{table}"),
        dataset(ATHENA, f"AwsDataCatalog.{database}.{table}"),
        dataset("s3://bucket", f"/{database}.db/{table}" + "/" * slashes),
        dataset("s3a://bucket/", f"{database}.db/{table}"),
    ]
    identity = glue_dataset(REGION, ACCOUNT, database, table)
    for form in forms:
        assert resolve_glue_table(form, catalog)[:2] == identity
        assert resolve_glue_table(form, empty) is None


@given(path=st.lists(glue_names, min_size=1, max_size=4), slashes=st.integers(0, 3))
def test_a_datasets_s3_name_and_a_glue_location_normalize_alike(path, slashes):
    joined = "/".join(path)
    expected = f"s3://bucket/{joined}"
    for scheme in ("s3", "s3a", "s3n"):
        assert normalized_location(f"{scheme}://bucket/{joined}" + "/" * slashes) == expected
        assert s3_location(f"{scheme}://bucket", "/" * slashes + joined) == expected
    assert s3_location("gs://bucket", joined) is None
    assert normalized_location(f"gs://bucket/{joined}") is None


def test_a_table_looked_up_after_the_listing_joins_it_with_its_location():
    listed = DatabaseTables.from_glue("lakehouse", [glue_table("a", "s3://b/a")])
    grown = listed.with_tables([glue_table("b", "s3://b/a/"), glue_table("C", "s3://b/c")])
    assert grown.names == {"a": "a", "b": "b", "c": "C"}
    assert grown.by_location == {"s3://b/a": ("a", "b"), "s3://b/c": ("C",)}


def test_the_relay_records_each_rule_and_keeps_openlineages_glue_name_as_a_symlink():
    """Airflow's AthenaOperator: Athena's name, its S3 location as the only symlink."""
    athena_output = OutputDataset(
        ATHENA,
        "AwsDataCatalog.lakehouse.orders",
        facets={"symlinks": symlinks_facet([("s3://shop-lakehouse", "/warehouse/x")])},
    )
    renamed, rewrites = canonicalize(
        received(run_event(outputs=[athena_output])), NameRules(glue_catalog=CATALOG)
    )
    output = renamed.document["outputs"][0]
    assert (output["namespace"], output["name"]) == ORDERS
    assert output["facets"][CANONICAL_NAME_FACET]["rule"] == ATHENA_RULE
    assert output["facets"][CANONICAL_NAME_FACET]["originalNamespace"] == ATHENA
    assert [(i["namespace"], i["name"]) for i in output["facets"]["symlinks"]["identifiers"]] == [
        ("s3://shop-lakehouse", "/warehouse/x"),
        (f"arn:aws:glue:{REGION}:{ACCOUNT}", "table/lakehouse/orders"),
    ]
    assert rewrites == [
        f"{ATHENA}/AwsDataCatalog.lakehouse.orders -> "
        f"arn:aws:glue:{REGION}:{ACCOUNT}:table/lakehouse/orders"
    ]
    validate_openlineage_event(compact_json(renamed.document))
