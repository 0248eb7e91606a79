from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import botocore.session
import pytest
import yaml
from botocore.validate import validate_parameters
from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.connectors import report as report
from dzlineage_dagster.core.connectors.debezium import SourceEngine, parse_debezium_source
from dzlineage_dagster.core.connectors.iceberg_sink import catalog_kind
from dzlineage_dagster.core.connectors.table_mapping import NamingConventionMapper
from dzlineage_dagster.core.connectors.topics import TopicKind
from dzlineage_dagster.core.connectors.topology import (
    ConnectorDefinition,
    ConnectorTopicMapper,
    OverrideError,
    build_topology,
    parse_overrides,
)

FIXTURES = Path(__file__).parent / "fixtures"
DEMO_PLATFORM = (
    Path(__file__).parents[2] / "dzlineage_dagster" / "sandbox" / "demo" / "demo_platform.yaml"
)
MSK_BODIES = ["msk_create_connector_debezium_mysql.json", "msk_create_connector_iceberg_sink.json"]

REGISTRY_TOPICS = [
    "pg.public.orders",
    "pg.catalog.products",
    "pg.audit.events",
    "hr.all.employees",
    "hr.hr.dbo.departments",
    "hr.payroll.dbo.departments",
    "crm.CRM.ACCOUNTS",
    "erp.erp.orders",
    "erp.erp.customers",
    "outbox.shop.outbox",
    "__debezium-heartbeat.pg",
    "hr.transaction",
    "erp",
    "schemahistory.erp",
    "dbz-heartbeat.erp",
]


def fixture_connectors() -> list[ConnectorDefinition]:
    expanded = json.loads((FIXTURES / "kafka_connect_connectors_expand_info.json").read_text())
    connectors = [
        ConnectorDefinition(name, entry["info"]["config"]) for name, entry in expanded.items()
    ]
    for body_file in MSK_BODIES:
        body = json.loads((FIXTURES / body_file).read_text())
        connectors.append(
            ConnectorDefinition(body["connectorName"], body["connectorConfiguration"])
        )
    return connectors


@pytest.fixture(scope="module")
def fixture_topology():
    return build_topology(fixture_connectors(), REGISTRY_TOPICS)


@pytest.mark.parametrize("body_file", MSK_BODIES)
def test_msk_connect_fixtures_are_valid_create_connector_requests(body_file: str) -> None:
    model = botocore.session.get_session().get_service_model("kafkaconnect")
    shape = model.operation_model("CreateConnector").input_shape
    validate_parameters(json.loads((FIXTURES / body_file).read_text()), shape)


# topic -> (kind, source tables as database[.schema].table, sink tables, origin, ambiguous text)
EXPECTED = {
    # ToLogicalTopicRouter merges two physical tables: both are upstreams; Tabular's sink with
    # static tables and one topic writes to both tables.
    "pg.public.orders": (
        TopicKind.TABLE,
        {"inventory.public.orders_eu", "inventory.public.orders_us"},
        {"lake.orders", "lake.orders_audit"},
        "connector",
        None,
    ),
    # A RegexRouter guarded by a TopicNameMatches predicate renames only the products topic.
    "pg.catalog.products": (
        TopicKind.TABLE,
        {"inventory.public.products"},
        set(),
        "connector",
        None,
    ),
    # A table that only a regex include entry captures, shown by its registry topic.
    "pg.audit.events": (TopicKind.TABLE, {"inventory.audit.events"}, set(), "connector", None),
    # ByLogicalTableRouter merges one table of two SQL Server databases; the static sink of
    # three topics into two tables cannot say which is which.
    "hr.all.employees": (
        TopicKind.TABLE,
        {"hr.dbo.employees", "payroll.dbo.employees"},
        set(),
        "connector",
        "each of its 3 topics to each of its 2 tables",
    ),
    "hr.hr.dbo.departments": (
        TopicKind.TABLE,
        {"hr.dbo.departments"},
        set(),
        "connector",
        "static iceberg.tables without a route field",
    ),
    # Oracle: the PDB is the database; dynamic routing lower-cases the target.
    "crm.CRM.ACCOUNTS": (
        TopicKind.TABLE,
        {"ORCLPDB1.CRM.ACCOUNTS"},
        {"crm_lake.accounts"},
        "connector",
        None,
    ),
    # MySQL: RegexRouter with \d merges yearly tables; route regexes on _cdc.target = db.table.
    "erp.erp.orders": (
        TopicKind.TABLE,
        {"erp.orders_2024", "erp.orders_2025"},
        {"erp_lake.orders"},
        "connector",
        None,
    ),
    "erp.erp.customers": (
        TopicKind.TABLE,
        {"erp.customers"},
        {"erp_lake.customers"},
        "connector",
        None,
    ),
    # An outbox router decides topics by content: reported, not guessed.
    "outbox.shop.outbox": (TopicKind.TABLE, set(), set(), "none", "EventRouter"),
    "__debezium-heartbeat.pg": (TopicKind.HEARTBEAT, set(), set(), "none", None),
    "dbz-heartbeat.erp": (TopicKind.HEARTBEAT, set(), set(), "none", None),
    "hr.transaction": (TopicKind.TRANSACTION, set(), set(), "none", None),
    "erp": (TopicKind.SCHEMA_CHANGE, set(), set(), "none", None),
    "schemahistory.erp": (TopicKind.SCHEMA_HISTORY, set(), set(), "none", None),
}


@pytest.mark.parametrize("topic", sorted(EXPECTED))
def test_fixture_connectors_decide_each_topic(fixture_topology, topic: str) -> None:
    kind, sources, sinks, origin, ambiguous = EXPECTED[topic]
    lineage = fixture_topology.lineage_for(topic)
    assert lineage.kind is kind
    assert {table.qualified for table in lineage.source_tables} == sources
    assert {str(table.ref) for table in lineage.tables} == sinks
    assert lineage.origin == origin
    if ambiguous is None:
        assert lineage.ambiguous_reason is None
    else:
        assert ambiguous in (lineage.ambiguous_reason or "")


def test_unknown_connectors_and_unmatched_patterns_are_reported(fixture_topology) -> None:
    assert [(c.name, c.connector_class) for c in fixture_topology.unknown_connectors] == [
        ("archive-s3", "io.confluent.connect.s3.S3SinkConnector")
    ]
    subjects = {item.subject for item in fixture_topology.unresolved}
    # erp's invoice_.* pattern matches no registry topic; audit\..* is shown by pg.audit.events.
    assert "erp\\.invoice_(?!archive).*" in subjects
    assert "audit\\..*" not in subjects
    assert "outbox.shop.outbox" in subjects


def test_include_list_lookahead_and_case_insensitivity() -> None:
    source = parse_debezium_source(*_one(fixture_connectors(), "erp-mysql-source"))
    assert not source.captures(source.table("erp", None, "invoice_archive"))
    assert source.captures(source.table("erp", None, "INVOICE_2023"))  # case-insensitive


def _one(connectors: list[ConnectorDefinition], name: str) -> tuple[str, Any]:
    connector = next(c for c in connectors if c.name == name)
    return connector.name, connector.config


def demo_connectors() -> tuple[list[ConnectorDefinition], dict[str, Any]]:
    document = yaml.safe_load(DEMO_PLATFORM.read_text())
    connectors = []
    for name, connector in document["connectors"].items():
        config = {
            key: str(value).replace("${region}", "us-east-1").replace("${account_id}", "1" * 12)
            for key, value in connector["config"].items()
        }
        connectors.append(ConnectorDefinition(name, config))
    return connectors, document


def test_demo_platform_connectors_decide_every_table_edge() -> None:
    connectors, document = demo_connectors()
    prefix = next(c.config["topic.prefix"] for c in connectors if "topic.prefix" in c.config)
    # The source's ToLogicalTopicRouter merges the yearly archive shards into one topic.
    topic_of = {
        table: (
            f"{prefix}.archive.orders"
            if table.startswith("sales.orders_archive_")
            else f"{prefix}.{table}"
        )
        for table in document["source_tables"]
    }
    topics = sorted(set(topic_of.values()))
    topology = build_topology(connectors, topics)
    catalog = document["glue_catalog"]
    expected_tables = {
        spec["from_topic"]: f"{catalog['database']}.{table}"
        for table, spec in catalog["tables"].items()
        if "from_topic" in spec
    }
    for topic in topics:
        lineage = topology.lineage_for(topic)
        assert lineage.origin == "connector", lineage
        assert [str(t.ref) for t in lineage.tables] == [expected_tables[topic]]
        assert {f"{s.schema}.{s.table}" for s in lineage.source_tables} == {
            table for table, routed in topic_of.items() if routed == topic
        }
        for source in lineage.source_tables:
            assert source.engine is SourceEngine.POSTGRES
            assert source.database == "shop"
    assert topology.unknown_connectors == ()
    assert topology.special_topics()[f"__debezium-heartbeat.{prefix}"] is TopicKind.HEARTBEAT


def postgres(**settings: str) -> ConnectorDefinition:
    config = {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "database.hostname": "db",
        "database.dbname": "app",
        "topic.prefix": "app",
        **settings,
    }
    return ConnectorDefinition("pg", config)


def iceberg(**settings: str) -> ConnectorDefinition:
    config = {
        "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
        "iceberg.catalog.type": "glue",
        **settings,
    }
    return ConnectorDefinition("sink", config)


DEBEZIUM = {
    "transforms": "dbz",
    "transforms.dbz.type": "org.apache.iceberg.connect.transforms.DebeziumTransform",
}

# (case, connectors, registry topics, topic asked, sources, sinks, ambiguous text)
OPTION_CASES = [
    (
        "legacy database.server.name and a custom delimiter",
        [postgres(**{"topic.prefix": "", "database.server.name": "old", "topic.delimiter": "_"})],
        ["old_public_users"],
        "old_public_users",
        {"app.public.users"},
        set(),
        None,
    ),
    (
        "RegexRouter rewrites only on a full match (not a substring as replaceFirst alone would)",
        [
            postgres(
                transforms="r",
                **{
                    "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter",
                    "transforms.r.regex": "users",
                    "transforms.r.replacement": "people",
                },
            )
        ],
        ["app.public.users"],
        "app.public.users",
        {"app.public.users"},
        set(),
        None,
    ),
    (
        "RegexRouter with $1 and $2 groups",
        [
            postgres(
                transforms="r",
                **{
                    "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter",
                    "transforms.r.regex": "app\\.([a-z]+)\\.(.*)",
                    "transforms.r.replacement": "cdc-$2-from-$1",
                    "table.include.list": "public.users",
                },
            )
        ],
        [],
        "cdc-users-from-public",
        {"app.public.users"},
        set(),
        None,
    ),
    (
        "table.exclude.list without an include list",
        [postgres(**{"table.exclude.list": "public\\.secret_.*"})],
        ["app.public.secret_keys", "app.public.users"],
        "app.public.secret_keys",
        set(),
        set(),
        None,
    ),
    (
        "schema.include.list filters schemas case-insensitively",
        [postgres(**{"schema.include.list": "SALES"})],
        ["app.sales.orders", "app.hr.people"],
        "app.hr.people",
        set(),
        set(),
        None,
    ),
    (
        "a negated TopicNameMatches predicate",
        [
            postgres(
                transforms="r",
                predicates="keep",
                **{
                    "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter",
                    "transforms.r.regex": "app\\.public\\.(.*)",
                    "transforms.r.replacement": "$1",
                    "transforms.r.predicate": "keep",
                    "transforms.r.negate": "true",
                    "predicates.keep.type": (
                        "org.apache.kafka.connect.transforms.predicates.TopicNameMatches"
                    ),
                    "predicates.keep.pattern": "app\\.public\\.keep",
                    "table.include.list": "public.keep,public.move",
                },
            )
        ],
        [],
        "move",
        {"app.public.move"},
        set(),
        None,
    ),
    (
        "a HasHeaderKey predicate depends on each record",
        [
            postgres(
                transforms="r",
                predicates="h",
                **{
                    "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter",
                    "transforms.r.regex": ".*",
                    "transforms.r.replacement": "x",
                    "transforms.r.predicate": "h",
                    "predicates.h.type": (
                        "org.apache.kafka.connect.transforms.predicates.HasHeaderKey"
                    ),
                    "table.include.list": "public.users",
                },
            )
        ],
        [],
        "app.public.users",
        set(),
        set(),
        "depends on each record",
    ),
    (
        "static sink with one topic and route regexes on _cdc.source",
        [
            postgres(**{"table.include.list": "public.a,public.b"}),
            iceberg(
                topics="app.public.a,app.public.b",
                **DEBEZIUM,
                **{
                    "iceberg.tables": "l.a,l.b",
                    "iceberg.tables.route-field": "_cdc.source",
                    "iceberg.table.l.a.route-regex": "public\\.a",
                    "iceberg.table.l.b.route-regex": "public\\.[b-z]",
                },
            ),
        ],
        [],
        "app.public.b",
        {"app.public.b"},
        {"l.b"},
        None,
    ),
    (
        "a route field from the record's own content",
        [
            postgres(**{"table.include.list": "public.a"}),
            iceberg(
                topics="app.public.a",
                **{
                    "iceberg.tables": "l.a",
                    "iceberg.tables.route-field": "region",
                    "iceberg.table.l.a.route-regex": "eu",
                },
            ),
        ],
        [],
        "app.public.a",
        {"app.public.a"},
        set(),
        "'region', whose values the configuration does not decide",
    ),
    (
        "dynamic routing with the default {db}.{table} pattern",
        [
            postgres(**{"table.include.list": "Public.Users"}),
            iceberg(
                **{"topics.regex": "app\\..*"},
                **DEBEZIUM,
                **{
                    "iceberg.tables.dynamic-enabled": "true",
                    "iceberg.tables.route-field": "_cdc.target",
                },
            ),
        ],
        [],
        "app.Public.Users",
        {"app.Public.Users"},
        {"public.users"},
        None,
    ),
    (
        "topics.regex must match the whole topic",
        [postgres(), iceberg(**{"topics.regex": "public", "iceberg.tables": "l.t"})],
        ["app.public.t"],
        "app.public.t",
        {"app.public.t"},
        set(),
        None,
    ),
    (
        "a routed topic no Debezium connector produces",
        [
            iceberg(
                topics="elsewhere",
                **DEBEZIUM,
                **{
                    "iceberg.tables.dynamic-enabled": "true",
                    "iceberg.tables.route-field": "_cdc.target",
                },
            )
        ],
        ["elsewhere"],
        "elsewhere",
        set(),
        set(),
        "no Debezium connector is known to produce this topic",
    ),
    (
        "a dynamic target with a two-level namespace cannot be a Glue table",
        [
            postgres(**{"table.include.list": "public.t"}),
            iceberg(
                topics="app.public.t",
                transforms="dbz",
                **{
                    "transforms.dbz.type": "io.tabular.iceberg.connect.transforms.DebeziumTransform",
                    "transforms.dbz.cdc.target.pattern": "a.b.{table}",
                    "iceberg.tables.dynamic-enabled": "true",
                    "iceberg.tables.route-field": "_cdc.target",
                },
            ),
        ],
        [],
        "app.public.t",
        {"app.public.t"},
        set(),
        "one-level namespace",
    ),
]


@pytest.mark.parametrize(
    ("connectors", "topics", "topic", "sources", "sinks", "ambiguous"),
    [case[1:] for case in OPTION_CASES],
    ids=[case[0] for case in OPTION_CASES],
)
def test_connector_options(
    connectors: list[ConnectorDefinition],
    topics: list[str],
    topic: str,
    sources: set[str],
    sinks: set[str],
    ambiguous: str | None,
) -> None:
    lineage = build_topology(connectors, topics).lineage_for(topic)
    assert {table.qualified for table in lineage.source_tables} == sources
    assert {str(table.ref) for table in lineage.tables} == sinks
    if ambiguous is None:
        assert lineage.ambiguous_reason is None
    else:
        assert ambiguous in (lineage.ambiguous_reason or "")


def test_mysql_and_sqlserver_layouts_and_schema_naming_strategy() -> None:
    mysql = ConnectorDefinition(
        "my",
        {
            "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
            "topic.prefix": "m",
            "database.include.list": "shop",
        },
    )
    sqlserver = ConnectorDefinition(
        "ms",
        {
            "connector.class": "io.debezium.connector.sqlserver.SqlServerConnector",
            "topic.prefix": "s",
            "database.names": "hr",
            "topic.naming.strategy": "io.debezium.schema.SchemaTopicNamingStrategy",
        },
    )
    topology = build_topology(
        [mysql, sqlserver], ["m.shop.orders", "m.other.x", "s.dbo.emp", "s.hr.dbo.emp"]
    )
    assert topology.lineage_for("m.shop.orders").source_tables[0].qualified == "shop.orders"
    assert topology.lineage_for("m.other.x").source_tables == ()
    # SqlServerConnectorTask runs every naming strategy in multi-partition mode: the topic
    # keeps the database part even with SchemaTopicNamingStrategy written out.
    assert topology.lineage_for("s.dbo.emp").source_tables == ()
    (emp,) = topology.lineage_for("s.hr.dbo.emp").source_tables
    assert (emp.database, emp.schema, emp.table, emp.port) == ("hr", "dbo", "emp", "1433")


def test_connectors_that_cannot_be_parsed_are_unknown_with_the_setting() -> None:
    broken = [
        ConnectorDefinition("no-prefix", {"connector.class": postgres().config["connector.class"]}),
        iceberg(topics="a", **{"topics.regex": "a", "iceberg.tables": "l.a"}),
        ConnectorDefinition("bad-regex", {**postgres().config, "table.include.list": "(a"}),
        ConnectorDefinition(
            "both-lists",
            {**postgres().config, "table.include.list": "a.b", "table.exclude.list": "a.c"},
        ),
    ]
    reasons = {c.name: c.reason for c in build_topology(broken, []).unknown_connectors}
    assert "topic.prefix" in reasons["no-prefix"]
    assert "mutually exclusive" in reasons["sink"]
    assert "table.include.list" in reasons["bad-regex"]
    assert "cannot both be set" in reasons["both-lists"]


def test_configs_the_platform_refuses_are_failing_connectors_with_no_edge() -> None:
    shards = {
        "transforms": "merge",
        "transforms.merge.type": "io.debezium.transforms.ByLogicalTableRouter",
        "transforms.merge.topic.regex": "app\\.public\\.t_(.*)",
        "transforms.merge.topic.replacement": "",
    }
    connectors = [
        # Debezium splits at every comma: t{1 and 3} are two patterns, t{1 does not compile.
        postgres(**{"table.include.list": "public.t{1,3}"}),
        ConnectorDefinition("router", {**postgres().config, **shards}),
        iceberg(**{"topics": "app.public.t", "iceberg.tables": "l.t"}),
        ConnectorDefinition(
            "both",
            {
                **iceberg().config,
                "topics": "app.public.t",
                "iceberg.tables": "l.t",
                "iceberg.tables.dynamic-enabled": "true",
                "iceberg.tables.route-field": "_cdc.target",
            },
        ),
        # Valid Java, just not evaluated here: the connector may well run.
        ConnectorDefinition(
            "latin", {**postgres().config, "table.include.list": "public\\.\\p{IsLatin}+"}
        ),
    ]
    topology = build_topology(connectors, ["app.public.t"])
    unknown = {c.name: c for c in topology.unknown_connectors}
    assert unknown["router"].refused and "transforms.merge.topic.replacement" in (
        unknown["router"].reason
    )
    assert unknown["both"].refused and "static and dynamic" in unknown["both"].reason
    assert not unknown["latin"].refused
    assert [s.name for s in topology.sources] == []
    assert topology.lineage_for("app.public.t").sources == ()
    refused = report.refused_connectors(topology)
    assert refused == [
        "pg: connector 'pg', table.include.list: invalid Java regex 'public.t{1': illegal "
        "repetition at 8",
        "router: transform 'merge' of connector 'router' needs a value for "
        "transforms.merge.topic.replacement",
        "both: connector 'both': cannot specify both static and dynamic table names "
        "(iceberg.tables with iceberg.tables.dynamic-enabled=true)",
    ]
    assert report.unknown_connectors(build_topology([connectors[1]], []))[0].startswith(
        "router (io.debezium.connector.postgresql.PostgresConnector): failing, the platform "
        "refuses its configuration (no lineage from it): "
    )


def test_multi_level_namespaces_route_for_rest_catalogs_and_not_for_glue() -> None:
    def sink(catalog: dict[str, str]) -> ConnectorDefinition:
        return ConnectorDefinition(
            "sink",
            {
                "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
                "topics": "app.public.t",
                "iceberg.tables.dynamic-enabled": "true",
                "iceberg.tables.route-field": "_cdc.target",
                **DEBEZIUM,
                "transforms.dbz.cdc.target.pattern": "lake.raw.{db}.{table}",
                **catalog,
            },
        )

    topics = ["app.public.t"]
    rest = build_topology([postgres(), sink({"iceberg.catalog.type": "rest"})], topics)
    [table] = rest.lineage_for("app.public.t").tables
    assert (table.database, table.table, table.catalog) == ("lake.raw.public", "t", "rest")
    glue = build_topology([postgres(), sink({"iceberg.catalog.type": "glue"})], topics)
    lineage = glue.lineage_for("app.public.t")
    assert lineage.tables == ()
    assert "a Glue table has a one-level namespace" in (lineage.ambiguous_reason or "")


def test_a_sink_without_auto_create_reaches_only_tables_the_catalog_has() -> None:
    dynamic = iceberg(
        topics="app.public.t,app.public.u",
        **{
            "iceberg.tables.dynamic-enabled": "true",
            "iceberg.tables.route-field": "_cdc.target",
            **DEBEZIUM,
            "transforms.dbz.cdc.target.pattern": "lake.{table}",
        },
    )
    static = ConnectorDefinition(
        "static", {**iceberg().config, "topics": "app.public.u", "iceberg.tables": "lake.u"}
    )
    topics = ["app.public.t", "app.public.u"]
    unread = build_topology([postgres(), dynamic, static], topics)
    assert unread.tables_to_confirm() == ["lake"]
    topology = build_topology([postgres(), dynamic, static], topics, catalog_tables={"lake": {"t"}})
    assert [str(t.ref) for t in topology.lineage_for("app.public.t").tables] == ["lake.t"]
    u = topology.lineage_for("app.public.u")
    assert u.tables == ()
    assert "sink 'sink' routes to lake.u, which is not in the Glue Data Catalog" in u.reason
    assert "its dynamic routing writes nothing to it (no edge)" in u.reason
    # Static routing to a missing table fails the task: a problem, not just a missing edge.
    assert "its task fails on the first record routed there" in (u.ambiguous_reason or "")
    creating = ConnectorDefinition(
        "sink", {**dynamic.config, "iceberg.tables.auto-create-enabled": "TRUE"}
    )
    created = build_topology([postgres(), creating], topics, catalog_tables={"lake": set()})
    assert created.tables_to_confirm() == []
    assert [str(t.ref) for t in created.lineage_for("app.public.u").tables] == ["lake.u"]


def test_two_connectors_writing_one_topic_are_reported() -> None:
    first = postgres()
    second = ConnectorDefinition("pg2", {**postgres().config, "database.hostname": "other"})
    lineage = build_topology([first, second], ["app.public.t"]).lineage_for("app.public.t")
    assert len(lineage.sources) == 2
    assert "connectors pg, pg2 all write 'app.public.t'" in (lineage.ambiguous_reason or "")


def test_an_unwrapped_envelope_defeats_the_sinks_debezium_transform() -> None:
    unwrap = postgres(
        transforms="unwrap",
        **{
            "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
            "table.include.list": "public.t",
        },
    )
    sink = iceberg(
        topics="app.public.t",
        **DEBEZIUM,
        **{"iceberg.tables.dynamic-enabled": "true", "iceberg.tables.route-field": "_cdc.target"},
    )
    topology = build_topology([unwrap, sink], [])
    lineage = topology.lineage_for("app.public.t")
    assert lineage.tables == ()
    assert "unwraps the change-event envelope" in (lineage.ambiguous_reason or "")
    source = topology.source_connector_of("app.public.t")
    assert source is not None and source.chain.reshapes_value


def test_a_topic_a_router_may_have_named_is_reported_without_its_schema_names() -> None:
    router = postgres(
        transforms="r",
        **{
            "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.r.regex": "app\\.public\\.(.*)",
            "transforms.r.replacement": "$1-events",
            "table.include.list": "public\\..*",
        },
    )
    topology = build_topology([router], ["users-events", "unrelated"])
    lineage = topology.lineage_for("users-events")
    assert lineage.source_tables == () and lineage.kind is TopicKind.TABLE
    assert "transform 'r' of connector 'pg' may have named this topic" in (
        lineage.ambiguous_reason or ""
    )
    assert topology.lineage_for("unrelated").ambiguous_reason is None


def test_custom_naming_strategy_is_unresolved() -> None:
    connector = postgres(**{"topic.naming.strategy": "com.acme.MyNaming"})
    topology = build_topology([connector], ["app.public.t"])
    assert any("com.acme.MyNaming" in item.reason for item in topology.unresolved)
    assert topology.lineage_for("app.public.t").source_tables == ()


def test_value_schema_names_reveal_tables_behind_a_regex_router() -> None:
    router = postgres(
        transforms="r",
        **{
            "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.r.regex": "app\\.public\\.(.*)",
            "transforms.r.replacement": "$1-events",
            "table.include.list": "public\\..*",
        },
    )
    topology = build_topology(
        [router], ["users-events"], value_schema_names={"users-events": "app.public.users.Envelope"}
    )
    assert topology.lineage_for("users-events").source_tables[0].qualified == "app.public.users"
    assert topology.unresolved == []


def test_overrides_win_and_say_so(fixture_topology) -> None:
    overrides = {
        "topics": {
            "hr.all.employees": {
                "tables": ["hr_lake.employees"],
                "reason": "one table per topic, agreed with the HR team",
            },
            "outbox.shop.outbox": {
                "sources": [{"connector": "shop-outbox", "table": "shop.outbox"}],
                "tables": [],
            },
        }
    }
    topology = build_topology(fixture_connectors(), REGISTRY_TOPICS, overrides=overrides)
    employees = topology.lineage_for("hr.all.employees")
    assert [(str(e.table.ref), e.origin) for e in employees.sinks] == [
        ("hr_lake.employees", "override")
    ]
    assert employees.ambiguous_reason is None
    assert {e.origin for e in employees.sources} == {"connector"}
    assert employees.origin == "connector"  # the weakest edge
    outbox = topology.lineage_for("outbox.shop.outbox")
    assert [e.table.qualified for e in outbox.sources] == ["shop.outbox"]
    assert outbox.origin == "override" and outbox.ambiguous_reason is None


def test_override_entries_parse_to_the_tables_they_name() -> None:
    mysql = parse_debezium_source(
        "my",
        {
            "connector.class": "io.debezium.connector.mysql.MySqlConnector",
            "topic.prefix": "m",
            "database.hostname": "mysql.internal",
        },
    )
    sqlserver = parse_debezium_source(
        "ms",
        {
            "connector.class": "io.debezium.connector.sqlserver.SqlServerConnector",
            "topic.prefix": "s",
            "database.hostname": "mssql.internal",
            "database.names": "hr",
        },
    )
    pg = parse_debezium_source("pg", postgres().config)
    overrides = parse_overrides(
        {
            "topics": {
                "mixed": {
                    "tables": ["Lake.Orders"],
                    "sources": [
                        {"connector": "pg", "table": "sales.orders"},
                        {"connector": "my", "table": "shop.items"},
                        {"connector": "ms", "table": "hr.dbo.emp"},
                        {
                            "engine": "postgres",
                            "host": "legacy.internal",
                            "port": 5433,
                            "database": "old",
                            "schema": "public",
                            "table": "orders",
                        },
                        {
                            "engine": "mysql",
                            "host": "m2",
                            "port": 3306,
                            "database": "shop",
                            "schema": "ignored",
                            "table": "items",
                        },
                    ],
                },
                "unexplained": {"tables": []},
            }
        },
        [pg, mysql, sqlserver],
    )
    assert set(overrides) == {"mixed", "unexplained"}
    mixed = overrides["mixed"]
    assert [(t.database, t.table, t.connector, t.catalog) for t in mixed.tables] == [
        ("lake", "orders", "", "glue")
    ]
    assert [
        (s.engine, s.database, s.schema, s.table, s.hostname, s.port, s.connector)
        for s in mixed.sources
    ] == [
        (SourceEngine.POSTGRES, "app", "sales", "orders", "db", "5432", "pg"),
        (SourceEngine.MYSQL, "shop", None, "items", "mysql.internal", "3306", "my"),
        (SourceEngine.SQLSERVER, "hr", "dbo", "emp", "mssql.internal", "1433", "ms"),
        (SourceEngine.POSTGRES, "old", "public", "orders", "legacy.internal", "5433", ""),
        (SourceEngine.MYSQL, "shop", None, "items", "m2", "3306", ""),
    ]
    assert mixed.reason == "override for topic 'mixed'"
    assert overrides["unexplained"] == type(mixed)((), None, "override for topic 'unexplained'")


@pytest.mark.parametrize(
    ("table", "connector"),
    [("orders", "pg"), ("a.b.c", "pg"), ("dbo.emp", "ms"), ("a.b.c", "my"), ("", "my")],
)
def test_an_override_table_that_is_not_the_connectors_table_id_is_refused(
    table: str, connector: str
) -> None:
    sources = [
        parse_debezium_source("pg", postgres().config),
        parse_debezium_source(
            "my",
            {"connector.class": "io.debezium.connector.mysql.MySqlConnector", "topic.prefix": "m"},
        ),
        parse_debezium_source(
            "ms",
            {
                "connector.class": "io.debezium.connector.sqlserver.SqlServerConnector",
                "topic.prefix": "s",
                "database.names": "hr,payroll",
            },
        ),
    ]
    document = {"topics": {"t": {"sources": [{"connector": connector, "table": table}]}}}
    expected = (
        f"override for topic 't': source {{'connector': {connector!r}, 'table': {table!r}}}: "
        "table must be the connector's table id"
    )
    with pytest.raises(OverrideError) as raised:
        parse_overrides(document, sources)
    assert str(raised.value) == expected


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"topics": []}, "'topics' mapping"),
        ({"topics": {"t": {"tables": ["no_dot"]}}}, "'<database>.<table>'"),
        ({"topics": {"t": {"table": ["a.b"]}}}, "unknown keys"),
        ({"topics": {"t": {"sources": [{"connector": "nope", "table": "a.b"}]}}}, "nope"),
        ({"topics": {"t": {"sources": [{"engine": "db2", "table": "x"}]}}}, "needs engine"),
        (
            {"topics": {"t": {"sources": [{"engine": "postgres", "table": "x"}]}}},
            "override for topic 't': source .* needs engine \\(postgres, mysql, ",
        ),
        ({"topics": {"t": {"sources": ["pg.public.x"]}}}, "'t': source 'pg.public.x' must be"),
        ({"topics": {"t": {"tables": ["a.b.c"]}}}, "topic 't': table 'a.b.c' must be"),
    ],
)
def test_malformed_overrides_name_the_topic(document: dict, message: str) -> None:
    with pytest.raises(OverrideError, match=message):
        parse_overrides(document)


def test_convention_is_the_fallback_only_without_known_sinks() -> None:
    convention = NamingConventionMapper("lake")
    alone = build_topology([postgres()], ["app.public.users"], fallback=convention)
    mapping = ConnectorTopicMapper(alone).map_topic("app.public.users")
    assert (str(mapping.table), mapping.origin) == ("lake.public_users", "convention")
    with_sink = build_topology(
        [postgres(), iceberg(topics="other", **{"iceberg.tables": "l.o"})],
        ["app.public.users"],
        fallback=convention,
    )
    mapping = ConnectorTopicMapper(with_sink).map_topic("app.public.users")
    assert mapping.table is None and mapping.origin == "none"


def test_connector_mapper_answers_with_the_connector_origin() -> None:
    connectors, _document = demo_connectors()
    topology = build_topology(connectors, ["shop.sales.orders"])
    mapping = ConnectorTopicMapper(topology).map_topic("shop.sales.orders")
    assert (str(mapping.table), mapping.origin, mapping.is_guess) == (
        "lakehouse.sales_orders",
        "connector",
        False,
    )


@pytest.mark.parametrize(
    ("config", "kind"),
    [
        ({"iceberg.catalog.catalog-impl": "org.apache.iceberg.aws.glue.GlueCatalog"}, "glue"),
        ({"iceberg.catalog.type": "GLUE"}, "glue"),
        ({"iceberg.catalog.type": "rest"}, "rest"),
        ({}, "unknown"),
    ],
)
def test_catalog_kind(config: dict[str, str], kind: str) -> None:
    assert catalog_kind(config) == kind


_NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,15}", fullmatch=True)


@given(schema=_NAME, table=_NAME, prefix=_NAME)
def test_a_postgres_table_topic_reads_back_as_its_table(
    schema: str, table: str, prefix: str
) -> None:
    source = parse_debezium_source(*_one([postgres(**{"topic.prefix": prefix})], "pg"))
    captured = source.table("app", schema, table)
    assert source.table_from_raw_topic(source.raw_topic(captured)) == captured


def test_a_table_topic_no_known_connector_writes_is_cataloged_and_says_why_it_has_no_edge() -> None:
    # A second registry's platform: its Debezium connector runs on another Connect cluster.
    topology = build_topology(
        [postgres(), iceberg(**{"topics.regex": "app\\..*", "iceberg.tables": "db.orders"})],
        ["app.public.orders", "crm.sales.leads", "crm.transaction"],
    )
    leads = topology.lineage_for("crm.sales.leads")
    assert leads.kind is TopicKind.TABLE
    assert leads.source_tables == () and leads.sinks == () and leads.sink_connectors == ()
    assert leads.reason == (
        "no known connector writes or reads 'crm.sales.leads' (the Debezium sources' topic "
        "prefixes: app); a lineage override can name its tables"
    )
    assert topology.lineage_for("crm.transaction").kind is TopicKind.OTHER
    assert topology.lineage_for("app.public.orders").sink_connectors == ("sink",)


def test_a_regex_naming_strategy_merges_the_tables_its_include_list_names() -> None:
    source = ConnectorDefinition(
        "src",
        {
            "connector.class": "io.debezium.connector.mysql.MySqlConnector",
            "topic.prefix": "m",
            "table.include.list": "db.dbz_4180_00,db.dbz_4180_01",
            "topic.naming.strategy": "io.debezium.schema.DefaultRegexTopicNamingStrategy",
            "topic.regex": "(.*)(dbz_4180)(.*)",
            "topic.replacement": "$1$2_all_shards",
        },
    )
    lineage = build_topology([source], ["m.db.dbz_4180_all_shards"]).lineage_for(
        "m.db.dbz_4180_all_shards"
    )
    assert [t.qualified for t in lineage.source_tables] == ["db.dbz_4180_00", "db.dbz_4180_01"]
    assert not lineage.is_ambiguous
    assert (
        "into m.db.dbz_4180_all_shards (named by topic.naming.strategy "
        "DefaultRegexTopicNamingStrategy) (one of the tables merged into it)"
    ) in lineage.reason


def test_a_renamed_topic_whose_value_schema_names_its_table_is_not_read_as_a_table() -> None:
    renamed = ConnectorDefinition(
        "my",
        {
            "connector.class": "io.debezium.connector.mysql.MySqlConnector",
            "topic.prefix": "shop",
            "transforms": "v2",
            "transforms.v2.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.v2.regex": "(.*)\\.customers",
            "transforms.v2.replacement": "$1.customers_v2",
        },
    )
    topic = "shop.inv.customers_v2"
    schemas = {topic: "shop.inv.customers.Envelope"}
    lineage = build_topology([renamed], [topic], value_schema_names=schemas).lineage_for(topic)
    # Its name has a table's shape, but the envelope says whose topic it was before the rename.
    assert [t.qualified for t in lineage.source_tables] == ["inv.customers"]


MERGING_ROUTER = {
    "transforms": "Reroute",
    "transforms.Reroute.type": "io.debezium.transforms.ByLogicalTableRouter",
    "transforms.Reroute.topic.regex": "(.*)customers_shard(.*)",
    "transforms.Reroute.topic.replacement": "$1customers_all_shards",
}


def test_every_missing_hop_of_a_table_topic_says_why() -> None:
    merged = "app.public.customers_all_shards"
    topology = build_topology(
        [
            postgres(**MERGING_ROUTER, **{"table.include.list": "public.customers_shard_.*"}),
            iceberg(topics=merged, **{"iceberg.tables": "lake.customers"}),
        ],
        [merged, "app.public.orders", "other.public.t"],
        value_schema_names={merged: f"{merged}.Envelope"},
    )
    lineage = topology.lineage_for(merged)
    assert lineage.source_tables == () and [str(t.ref) for t in lineage.tables]
    assert "transform 'Reroute' of connector 'pg' may have named this topic" in (
        lineage.no_source_reason
    )
    assert "only a literal table.include.list or an override" in lineage.no_source_reason
    assert lineage.no_table_reason == ""
    assert lineage.missing_hops == (f"no source: {lineage.no_source_reason}",)
    unconsumed = topology.lineage_for("app.public.orders")
    assert unconsumed.no_table_reason == "no Iceberg sink connector consumes it"
    assert "no Debezium source's topic prefix (app) names it" in (
        topology.lineage_for("other.public.t").no_source_reason
    )


@given(st.lists(st.sampled_from(["app.public.t", "app.x.y", "z.q", "app"]), min_size=1))
def test_a_table_topic_without_a_hop_always_has_a_reason(topics) -> None:
    topology = build_topology(
        [postgres(**{"table.include.list": "public.t"}), iceberg(topics="app.public.t")], topics
    )
    for topic in topics:
        lineage = topology.lineage_for(topic)
        if lineage.kind is TopicKind.TABLE:
            assert bool(lineage.source_tables) != bool(lineage.no_source_reason), lineage
            assert bool(lineage.tables) != bool(lineage.no_table_reason), lineage


def test_a_connector_without_connector_class_is_named_as_one_that_cannot_run() -> None:
    topology = build_topology([ConnectorDefinition("nameless", {"tasks.max": "1"})], [])
    assert report.refused_connectors(topology) == [
        "nameless: its configuration has no connector.class, which Kafka Connect requires "
        "(no default): it cannot run"
    ]
    assert report.connector_role(topology, topology.connectors[0]) == (
        "failing: configuration refused"
    )
