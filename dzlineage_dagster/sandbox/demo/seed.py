"""Seed an endpoint with a CDC platform described in a YAML file (the bundled demo by default).

Everything is created through boto3 against the endpoint, as a person would against AWS:
the MSK cluster, the Glue Schema Registry with Debezium-shaped Avro value schemas (one version
per ``added_columns`` step), the Glue database with the Iceberg tables the sink writes, the
Debezium and Iceberg sink connectors on MSK Connect, and a DataZone domain and project. The
same file on a fresh endpoint gives the same platform: names, schema versions and configs are
the file's; only the ids the services mint differ.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from dzlineage_dagster.boto3_sessions import new_session
from dzlineage_dagster.core.connectors.debezium import DebeziumSource, parse_debezium_source
from dzlineage_dagster.sandbox.demo.accounts import (
    create_side_roles,
    side_environment,
    side_session,
)
from dzlineage_dagster.sandbox.demo.change_queue import create_change_queue
from dzlineage_dagster.sandbox.server.control import SANDBOX_CREDENTIALS

DEMO_PLATFORM = Path(__file__).with_name("demo_platform.yaml")

#: Debezium's default ``topic.heartbeat.prefix``.
HEARTBEAT_TOPIC_PREFIX = "__debezium-heartbeat"
#: What MSK Connect runs the connectors on; the sandbox does not care, AWS requires it.
KAFKA_CONNECT_VERSION = "2.7.1"
#: The struct the Iceberg DebeziumTransform adds to every row (``_cdc.op``, ``_cdc.target``...).
CDC_COLUMN_TYPE = "struct<op:string,ts:timestamp,offset:bigint,source:string,target:string>"
_SECTIONS = (
    "msk_cluster",
    "schema_registry",
    "source_tables",
    "custom_plugins",
    "connectors",
    "glue_catalog",
    "datazone",
)


class PlatformSpecError(ValueError):
    """The platform file is malformed; the message names the place and the problem."""


# --- the platform, as the file describes it ---------------------------------------------------


@dataclass(frozen=True)
class Column:
    name: str
    postgres_type: str
    nullable: bool


@dataclass(frozen=True)
class SourceTable:
    schema: str
    table: str
    columns: tuple[Column, ...]
    #: One tuple per later schema version: the columns that version adds.
    added_columns: tuple[tuple[Column, ...], ...]

    def column_versions(self) -> list[tuple[Column, ...]]:
        """The table's columns at each schema version, oldest first."""
        versions = [self.columns]
        for added in self.added_columns:
            versions.append(versions[-1] + added)
        return versions


@dataclass(frozen=True)
class Connector:
    name: str
    plugin: str
    execution_role: str
    config: dict[str, str]


@dataclass(frozen=True)
class GlueTable:
    name: str
    from_topic: str | None
    columns: tuple[Column, ...]


@dataclass(frozen=True)
class PlatformSpec:
    cluster: dict[str, Any]
    registry: dict[str, str]
    source_tables: tuple[SourceTable, ...]
    custom_plugins: dict[str, dict[str, str]]
    connectors: tuple[Connector, ...]
    catalog: dict[str, str]
    glue_tables: tuple[GlueTable, ...]
    datazone: dict[str, str]

    @property
    def source_connector(self) -> Connector:
        """The Debezium connector: the one that names a ``topic.prefix``."""
        return next(c for c in self.connectors if "topic.prefix" in c.config)

    @property
    def topic_prefix(self) -> str:
        return self.source_connector.config["topic.prefix"]

    @cached_property
    def _debezium(self) -> DebeziumSource:
        connector = self.source_connector
        return parse_debezium_source(connector.name, connector.config)

    def topic(self, table: SourceTable) -> str:
        """The table's topic as the source connector names it: its routers applied, so the
        tables a logical-table router merges share one topic."""
        source = self._debezium
        routed = source.route(
            source.table(source.default_database or "", table.schema, table.table)
        )
        if routed.is_ambiguous:
            raise PlatformSpecError(
                f"source_tables.{table.schema}.{table.table}: {routed.ambiguous_reason}"
            )
        return routed.topic

    @property
    def heartbeat_topic(self) -> str | None:
        interval = self.source_connector.config.get("heartbeat.interval.ms", "0")
        return f"{HEARTBEAT_TOPIC_PREFIX}.{self.topic_prefix}" if int(interval) > 0 else None

    @property
    def registries(self) -> list[str]:
        """The value registry first, then every other registry a converter writes to."""
        names = [self.registry["name"]]
        for connector in self.connectors:
            for key in ("key.converter.registry.name", "value.converter.registry.name"):
                if connector.config.get(key) and connector.config[key] not in names:
                    names.append(connector.config[key])
        return names


def load_platform_spec(path: Path | str = DEMO_PLATFORM) -> PlatformSpec:
    """Read and check a platform file; :class:`PlatformSpecError` says what is wrong where."""
    path = Path(path)
    try:
        document = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise PlatformSpecError(f"{path}: cannot read it as YAML: {error}") from error
    try:
        return _parse_spec(_mapping(document, "the file"))
    except PlatformSpecError as error:
        raise PlatformSpecError(f"{path}: {error}") from None


def _parse_spec(document: dict[str, Any]) -> PlatformSpec:
    unknown = sorted(set(document) - set(_SECTIONS))
    if unknown:
        raise PlatformSpecError(f"unknown sections {unknown}; expected {list(_SECTIONS)}")
    sections = {name: _mapping(document.get(name), name) for name in _SECTIONS}
    cluster = sections["msk_cluster"]
    _require(cluster, "msk_cluster", "name", "kafka_version", "broker_count", "subnets")
    if not isinstance(cluster["subnets"], list):
        raise PlatformSpecError("msk_cluster.subnets: expected a list of subnet ids")
    catalog = sections["glue_catalog"]
    glue_tables = _mapping(catalog.get("tables"), "glue_catalog.tables")
    spec = PlatformSpec(
        cluster=cluster,
        registry=_strings(sections["schema_registry"], "schema_registry", "name"),
        source_tables=tuple(
            _source_table(name, _mapping(body, f"source_tables.{name}"))
            for name, body in sections["source_tables"].items()
        ),
        custom_plugins={
            name: _strings(
                _mapping(body, f"custom_plugins.{name}"),
                f"custom_plugins.{name}",
                "s3_bucket",
                "s3_key",
            )
            for name, body in sections["custom_plugins"].items()
        },
        connectors=tuple(
            _connector(name, _mapping(body, f"connectors.{name}"))
            for name, body in sections["connectors"].items()
        ),
        catalog=_strings(
            {k: v for k, v in catalog.items() if k != "tables"},
            "glue_catalog",
            "database",
            "warehouse",
        ),
        glue_tables=tuple(
            _glue_table(name, _mapping(body, f"glue_catalog.tables.{name}"))
            for name, body in glue_tables.items()
        ),
        datazone=_strings(sections["datazone"], "datazone", "domain", "project"),
    )
    _check_consistency(spec)
    return spec


def _source_table(name: str, body: dict[str, Any]) -> SourceTable:
    schema, dot, table = name.partition(".")
    if not dot or not schema or not table or "." in table:
        raise PlatformSpecError(f"source_tables.{name}: name it <schema>.<table>")
    where = f"source_tables.{name}"
    columns = _columns(_mapping(body.get("columns"), f"{where}.columns"), f"{where}.columns")
    added = []
    known = {c.name for c in columns}
    steps = body.get("added_columns") or []
    if not isinstance(steps, list):
        raise PlatformSpecError(f"{where}.added_columns: expected a list of column mappings")
    for index, step in enumerate(steps, start=1):
        step_where = f"{where}.added_columns[{index}]"
        step_columns = _columns(_mapping(step, step_where), step_where)
        for column in step_columns:
            if not column.nullable:
                raise PlatformSpecError(
                    f"{step_where}.{column.name}: a column added later must be nullable, or "
                    "the new schema version is not BACKWARD compatible"
                )
            if column.name in known:
                raise PlatformSpecError(f"{step_where}.{column.name}: the table has it already")
            known.add(column.name)
        added.append(step_columns)
    return SourceTable(schema, table, columns, tuple(added))


def _columns(body: dict[str, Any], where: str) -> tuple[Column, ...]:
    if not body:
        raise PlatformSpecError(f"{where}: list at least one column")
    columns = []
    for name, declaration in body.items():
        if not isinstance(declaration, str):
            raise PlatformSpecError(f"{where}.{name}: give a Postgres type, like 'text not null'")
        postgres_type = declaration.strip().lower()
        nullable = not postgres_type.endswith(" not null")
        postgres_type = postgres_type.removesuffix(" not null").strip()
        _postgres_type_mapping(postgres_type, f"{where}.{name}")
        columns.append(Column(str(name), postgres_type, nullable))
    return tuple(columns)


def _connector(name: str, body: dict[str, Any]) -> Connector:
    where = f"connectors.{name}"
    fields = _strings(
        {k: v for k, v in body.items() if k != "config"}, where, "plugin", "execution_role"
    )
    config = _mapping(body.get("config"), f"{where}.config")
    if "connector.class" not in config:
        raise PlatformSpecError(f"{where}.config: connector.class is missing")
    return Connector(
        name,
        fields["plugin"],
        fields["execution_role"],
        {k: _config_value(v) for k, v in config.items()},
    )


def _config_value(value: Any) -> str:
    # MSK Connect configurations are string maps; YAML reads `tasks.max: 1` as a number.
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _glue_table(name: str, body: dict[str, Any]) -> GlueTable:
    where = f"glue_catalog.tables.{name}"
    if ("from_topic" in body) == ("columns" in body):
        raise PlatformSpecError(f"{where}: give either from_topic or columns")
    if "from_topic" in body:
        return GlueTable(name, str(body["from_topic"]), ())
    columns = _columns(_mapping(body["columns"], f"{where}.columns"), f"{where}.columns")
    return GlueTable(name, None, columns)


def _check_consistency(spec: PlatformSpec) -> None:
    sources = [c for c in spec.connectors if "topic.prefix" in c.config]
    if len(sources) != 1:
        raise PlatformSpecError("connectors: exactly one (the Debezium source) sets topic.prefix")
    source = sources[0]
    if not source.config.get("heartbeat.interval.ms", "0").isdigit():
        raise PlatformSpecError(
            f"connectors.{source.name}.config.heartbeat.interval.ms: not a number"
        )
    included = {
        t.strip() for t in source.config.get("table.include.list", "").split(",") if t.strip()
    }
    tables = {f"{t.schema}.{t.table}" for t in spec.source_tables}
    if included != tables:
        raise PlatformSpecError(
            f"connectors.{source.name}.config.table.include.list must list exactly the "
            f"source_tables: missing {sorted(tables - included)}, extra {sorted(included - tables)}"
        )
    value_registry = source.config.get("value.converter.registry.name")
    if value_registry != spec.registry["name"]:
        raise PlatformSpecError(
            f"connectors.{source.name}.config.value.converter.registry.name is "
            f"{value_registry!r}, not schema_registry.name {spec.registry['name']!r}"
        )
    for connector in spec.connectors:
        if connector.plugin not in spec.custom_plugins:
            raise PlatformSpecError(
                f"connectors.{connector.name}.plugin: no custom plugin {connector.plugin!r}"
            )
    topics = {spec.topic(t) for t in spec.source_tables}
    for table in spec.glue_tables:
        if table.from_topic is not None and table.from_topic not in topics:
            raise PlatformSpecError(
                f"glue_catalog.tables.{table.name}.from_topic: {table.from_topic!r} is not a "
                f"topic of the source tables ({', '.join(sorted(topics))})"
            )


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise PlatformSpecError(f"{where}: expected a mapping, found {type(value).__name__}")
    return value


def _require(body: dict[str, Any], where: str, *keys: str) -> None:
    missing = [key for key in keys if body.get(key) in (None, "")]
    if missing:
        raise PlatformSpecError(f"{where}: missing {', '.join(missing)}")


def _strings(body: dict[str, Any], where: str, *required: str) -> dict[str, str]:
    _require(body, where, *required)
    for key, value in body.items():
        if not isinstance(value, str):
            raise PlatformSpecError(f"{where}.{key}: expected text, found {type(value).__name__}")
    return dict(body)


# --- Postgres columns as Debezium writes them (Avro) and the Iceberg sink stores them ---------


def _connect_type(avro_type: str, connect_name: str, **extra: Any) -> dict[str, Any]:
    return {"type": avro_type, "connect.version": 1, "connect.name": connect_name, **extra}


#: Postgres type -> (Debezium's Avro type, Glue type of the Iceberg column), with the
#: connector's time.precision.mode=connect and decimal.handling.mode=precise.
_POSTGRES_TYPES: dict[str, tuple[Any, str]] = {
    "smallint": ({"type": "int", "connect.type": "int16"}, "int"),
    "integer": ("int", "int"),
    "bigint": ("long", "bigint"),
    "real": ("float", "float"),
    "double precision": ("double", "double"),
    "text": ("string", "string"),
    "boolean": ("boolean", "boolean"),
    "date": (
        _connect_type("int", "org.apache.kafka.connect.data.Date", logicalType="date"),
        "date",
    ),
    "timestamp": (
        _connect_type(
            "long", "org.apache.kafka.connect.data.Timestamp", logicalType="timestamp-millis"
        ),
        "timestamp",
    ),
    # Debezium writes timestamptz as an ISO string whatever the precision mode.
    "timestamptz": (_connect_type("string", "io.debezium.time.ZonedTimestamp"), "string"),
    "uuid": (_connect_type("string", "io.debezium.data.Uuid"), "string"),
    "jsonb": (_connect_type("string", "io.debezium.data.Json"), "string"),
}
_VARCHAR = re.compile(r"varchar\(\d+\)")
_NUMERIC = re.compile(r"numeric\((\d+),\s*(\d+)\)")


def _postgres_type_mapping(postgres_type: str, where: str) -> tuple[Any, str]:
    if postgres_type in _POSTGRES_TYPES:
        return _POSTGRES_TYPES[postgres_type]
    if _VARCHAR.fullmatch(postgres_type):
        return "string", "string"
    numeric = _NUMERIC.fullmatch(postgres_type)
    if numeric:
        precision, scale = int(numeric.group(1)), int(numeric.group(2))
        decimal = _connect_type(
            "bytes",
            "org.apache.kafka.connect.data.Decimal",
            logicalType="decimal",
            precision=precision,
            scale=scale,
            **{
                "connect.parameters": {
                    "scale": str(scale),
                    "connect.decimal.precision": str(precision),
                }
            },
        )
        return decimal, f"decimal({precision},{scale})"
    known = [*_POSTGRES_TYPES, "varchar(n)", "numeric(p,s)"]
    raise PlatformSpecError(f"{where}: unknown type {postgres_type!r}; use one of {known}")


def avro_namespace(topic: str) -> str:
    """The topic as an Avro namespace, adjusted as Debezium does (`schema.name.adjustment.mode`
    `avro`): each character Avro names do not allow becomes `_`, and a part that starts with a
    digit gets a leading `_`."""
    parts = [re.sub(r"[^A-Za-z0-9_]", "_", part) for part in topic.split(".")]
    return ".".join(f"_{part}" if part[:1].isdigit() else part for part in parts)


def debezium_value_schema(topic: str, columns: tuple[Column, ...]) -> dict[str, Any]:
    """The value schema Debezium's Postgres connector registers for a table topic."""
    namespace = avro_namespace(topic)
    row = _record("Value", namespace, [_avro_field(column) for column in columns])
    optional_long = ["null", "long"]
    snapshot = _connect_type(
        "string",
        "io.debezium.data.Enum",
        **{"connect.parameters": {"allowed": "true,last,false,incremental"}},
    )
    source = _record(
        "Source",
        "io.debezium.connector.postgresql",
        [
            {"name": "version", "type": "string"},
            {"name": "connector", "type": "string"},
            {"name": "name", "type": "string"},
            {"name": "ts_ms", "type": "long"},
            {"name": "snapshot", "type": [snapshot, "null"], "default": "false"},
            {"name": "db", "type": "string"},
            {"name": "sequence", "type": ["null", "string"], "default": None},
            {"name": "schema", "type": "string"},
            {"name": "table", "type": "string"},
            {"name": "txId", "type": optional_long, "default": None},
            {"name": "lsn", "type": optional_long, "default": None},
            {"name": "xmin", "type": optional_long, "default": None},
        ],
    )
    transaction = _record(
        "block",
        "event",
        [
            {"name": "id", "type": "string"},
            {"name": "total_order", "type": "long"},
            {"name": "data_collection_order", "type": "long"},
        ],
        versioned=True,
    )
    return _record(
        "Envelope",
        namespace,
        [
            {"name": "before", "type": ["null", row], "default": None},
            {"name": "after", "type": ["null", "Value"], "default": None},
            {"name": "source", "type": source},
            {"name": "op", "type": "string"},
            {"name": "ts_ms", "type": optional_long, "default": None},
            {"name": "transaction", "type": ["null", transaction], "default": None},
        ],
        versioned=True,
    )


def heartbeat_value_schema() -> dict[str, Any]:
    """The value schema of Debezium's heartbeat topic."""
    fields = [{"name": "ts_ms", "type": "long"}]
    return _record("Heartbeat", "io.debezium.connector.common", fields, versioned=True)


def _record(
    name: str, namespace: str, fields: list[dict[str, Any]], *, versioned: bool = False
) -> dict[str, Any]:
    """An Avro record as Kafka Connect's Avro converter writes it (with its Connect name)."""
    record: dict[str, Any] = {"type": "record", "name": name, "namespace": namespace}
    record["fields"] = fields
    if versioned:
        record["connect.version"] = 1
    record["connect.name"] = f"{namespace}.{name}"
    return record


def _avro_field(column: Column) -> dict[str, Any]:
    avro_type, _ = _postgres_type_mapping(column.postgres_type, column.name)
    if column.nullable:
        return {"name": column.name, "type": ["null", avro_type], "default": None}
    return {"name": column.name, "type": avro_type}


def iceberg_table_input(
    name: str, columns: tuple[Column, ...], *, database: str, warehouse: str, fed_by_cdc: bool
) -> dict[str, Any]:
    """A Glue ``TableInput`` as the Iceberg GlueCatalog writes it for a table."""
    glue_columns = [
        (column.name, _postgres_type_mapping(column.postgres_type, column.name)[1], column.nullable)
        for column in columns
    ]
    if fed_by_cdc:
        glue_columns.append(("_cdc", CDC_COLUMN_TYPE, True))
    location = f"{warehouse}/{database}.db/{name}"
    metadata_id = uuid.uuid5(uuid.NAMESPACE_URL, location)
    return {
        "Name": name,
        "TableType": "EXTERNAL_TABLE",
        "Parameters": {
            "table_type": "ICEBERG",
            "metadata_location": f"{location}/metadata/00000-{metadata_id}.metadata.json",
        },
        "StorageDescriptor": {
            "Location": location,
            "Columns": [
                {
                    "Name": column_name,
                    "Type": glue_type,
                    "Parameters": {
                        "iceberg.field.id": str(field_id),
                        "iceberg.field.optional": str(optional).lower(),
                        "iceberg.field.current": "true",
                    },
                }
                for field_id, (column_name, glue_type, optional) in enumerate(glue_columns, 1)
            ],
        },
    }


# --- column showcase: nested, enum, $ref and Protobuf columns (docs/columns.md) ----------------

#: A customer profile with a nested address (itself holding a record), an enum, and an array
#: of a named record used again by name: how its columns read is in docs/columns.md.
SHOWCASE_AVRO = {
    "type": "record",
    "name": "CustomerProfile",
    "namespace": "shop.profiles",
    "fields": [
        {"name": "id", "type": "long"},
        {
            "name": "address",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "Address",
                    "fields": [
                        {"name": "street", "type": "string"},
                        {
                            "name": "geo",
                            "type": {
                                "type": "record",
                                "name": "Geo",
                                "fields": [
                                    {"name": "lat", "type": "double", "doc": "degrees north"},
                                    {"name": "lon", "type": "double", "doc": "degrees east"},
                                ],
                            },
                        },
                    ],
                },
            ],
            "default": None,
        },
        {
            "name": "tier",
            "type": {"type": "enum", "name": "Tier", "symbols": ["BRONZE", "SILVER", "GOLD"]},
            "doc": "loyalty tier",
        },
        {"name": "past_addresses", "type": {"type": "array", "items": "Address"}},
        {"name": "joined", "type": {"type": "int", "logicalType": "date"}},
    ],
}
#: A refund as a JSON Schema whose nested objects are `$ref`s into `definitions` and `$defs`.
SHOWCASE_JSON = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "required": ["id", "amount"],
    "properties": {
        "id": {"type": "integer"},
        "amount": {"$ref": "#/definitions/Money"},
        "reason": {"type": "string", "enum": ["DAMAGED", "LATE", "OTHER"]},
        "refunded_to": {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/Account"}]},
    },
    "definitions": {
        "Money": {
            "type": "object",
            "required": ["units", "currency"],
            "properties": {
                "units": {"type": "number"},
                "currency": {"type": "string", "description": "ISO 4217 code"},
            },
        }
    },
    "$defs": {
        "Account": {
            "type": "object",
            "properties": {"iban": {"type": "string"}, "holder": {"type": "string"}},
        }
    },
}
#: A shipment as a .proto file: nested message, oneof, map, enum and a well-known type.
SHOWCASE_PROTOBUF = """syntax = "proto3";
package shop.logistics;

import "google/protobuf/timestamp.proto";

// A shipment leaving the warehouse.
message Shipment {
  int64 id = 1;
  // Where it goes.
  Destination destination = 2;
  oneof carrier {
    string parcel_service = 3;
    string own_fleet_vehicle = 4;
  }
  map<string, string> labels = 5;
  Status status = 6;
  google.protobuf.Timestamp shipped_at = 7;

  message Destination {
    string city = 1;
    string postal_code = 2;
  }
  enum Status {
    STATUS_UNSPECIFIED = 0;
    PACKED = 1;
    IN_TRANSIT = 2;
    DELIVERED = 3;
  }
}
"""
#: Topic -> (DataFormat, definition): table topics under the demo's prefix that neither the
#: Debezium source (its include list) nor the Iceberg sink (its topics regex) takes.
COLUMN_SHOWCASE = {
    "shop.profiles.customer_profiles": ("AVRO", json.dumps(SHOWCASE_AVRO)),
    "shop.payments.refunds": ("JSON", json.dumps(SHOWCASE_JSON)),
    "shop.logistics.shipments": ("PROTOBUF", SHOWCASE_PROTOBUF),
}


def register_column_showcase(glue: Any, registry_name: str) -> None:
    """Register the :data:`COLUMN_SHOWCASE` schemas in the registry."""
    for topic, (data_format, definition) in COLUMN_SHOWCASE.items():
        glue.create_schema(
            RegistryId={"RegistryName": registry_name},
            SchemaName=topic,
            DataFormat=data_format,
            Compatibility="BACKWARD",
            SchemaDefinition=definition,
        )


# --- seeding ----------------------------------------------------------------------------------


def deployment_session(region: str) -> Any:
    """A session with the sandbox's own credentials: the deployment's account, which reaches
    another account only by assuming a role there."""
    return new_session(
        aws_access_key_id=SANDBOX_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=SANDBOX_CREDENTIALS["AWS_SESSION_TOKEN"],
        region_name=region,
    )


def seed_platform(
    endpoint_url: str,
    spec_path: Path | None = None,
    *,
    region: str = "us-east-1",
    two_accounts: bool = False,
    column_showcase: bool = False,
    domain_version: str = "V1",
    change_queue: bool = False,
) -> dict[str, str]:
    """Create the platform of ``spec_path`` (default: the demo) on the endpoint, with the
    :data:`COLUMN_SHOWCASE` schemas too if ``column_showcase``, its DataZone domain a
    ``domain_version`` one (V2: Amazon SageMaker Unified Studio's, see
    :func:`grant_type_policies`).

    ``two_accounts``: the data side in one account and DataZone in another, each reached
    through its role (:mod:`~dzlineage_dagster.sandbox.demo.accounts`). ``change_queue``: the
    data side's EventBridge rules and SQS queue of its changes too, made last so the seeding's
    own calls are not on it (:mod:`~dzlineage_dagster.sandbox.demo.change_queue`). Returns the
    ``DZLINEAGE_*`` variables that point the project at it (both roles and the queue too, then).
    """
    spec = load_platform_spec(spec_path or DEMO_PLATFORM)
    session = deployment_session(region)

    governance = session
    if two_accounts:
        create_side_roles(governance, endpoint_url)
        session = side_session(governance, "data", endpoint_url)
        governance = side_session(governance, "governance", endpoint_url)

    data = seed_data_side(
        session,
        endpoint_url,
        spec,
        column_showcase=column_showcase,
        change_queue=change_queue,
    )
    domain_id, project_id = _create_datazone(
        governance.client("datazone", endpoint_url=endpoint_url),
        spec.datazone,
        governance.client("sts", endpoint_url=endpoint_url).get_caller_identity()["Account"],
        domain_version,
    )
    if "tables_project" in spec.datazone:
        _import_glue_tables(
            governance.client("datazone", endpoint_url=endpoint_url),
            session.client("glue", endpoint_url=endpoint_url),
            spec,
            domain_id,
            region,
            data.account_id,
        )
    return {
        **(side_environment() if two_accounts else {}),
        **data.queue_environment(),
        "DZLINEAGE_DOMAIN_ID": domain_id,
        "DZLINEAGE_PROJECT_ID": project_id,
        "DZLINEAGE_REGISTRY_NAME": spec.registry["name"],
        "DZLINEAGE_MSK_CLUSTER_ARN": data.cluster_arn,
        "DZLINEAGE_GLUE_DATABASE": spec.catalog["database"],
    }


@dataclass(frozen=True)
class SeededDataSide:
    """Where a seeded platform's data side is: its account, its cluster, and its change queue
    if made."""

    account_id: str
    cluster_arn: str
    change_queue_url: str | None

    def queue_environment(self) -> dict[str, str]:
        url = self.change_queue_url
        return {"DZLINEAGE_CHANGE_QUEUE_URL": url} if url else {}


def seed_data_side(
    session: Any,
    endpoint_url: str,
    spec: PlatformSpec,
    *,
    column_showcase: bool = False,
    change_queue: bool = False,
) -> SeededDataSide:
    """The platform's data side (MSK cluster, registries, Glue database and tables, connectors,
    and with ``change_queue`` the rules and queue of its changes, made last so the seeding's
    own calls are not on it) in ``session``'s account and Region."""

    def client(service: str) -> Any:
        return session.client(service, endpoint_url=endpoint_url)

    region = session.region_name
    account_id = client("sts").get_caller_identity()["Account"]
    placeholders = {"${region}": region, "${account_id}": account_id}
    cluster_arn, bootstrap_servers = _create_cluster(client("kafka"), spec.cluster)
    _create_schemas(client("glue"), spec)
    if column_showcase:
        register_column_showcase(client("glue"), spec.registry["name"])
    _create_catalog(client("glue"), spec, placeholders)
    _create_connectors(
        client("kafkaconnect"), spec, cluster_arn, bootstrap_servers, placeholders, account_id
    )
    queue = create_change_queue(client("sqs"), client("events")) if change_queue else None
    return SeededDataSide(account_id, cluster_arn, queue)


#: The private CA that signs the demo's client certificates (mutual TLS).
DEMO_PRIVATE_CA = (
    "arn:aws:acm-pca:us-east-1:123456789012:certificate-authority/"
    "0e7f3a52-5c1d-4c1b-9a57-2f1e8d4b6c01"
)


def _create_cluster(kafka: Any, cluster: dict[str, Any]) -> tuple[str, str]:
    arn = kafka.create_cluster_v2(
        ClusterName=cluster["name"],
        Provisioned={
            "BrokerNodeGroupInfo": {
                "InstanceType": cluster.get("instance_type", "kafka.m5.large"),
                "ClientSubnets": list(cluster["subnets"]),
                "SecurityGroups": list(cluster.get("security_groups", [])),
            },
            "KafkaVersion": str(cluster["kafka_version"]),
            "NumberOfBrokerNodes": int(cluster["broker_count"]),
            # IAM (MSK Connect's), SASL/SCRAM and mutual TLS: a listener for each producer.
            "ClientAuthentication": {
                "Sasl": {"Iam": {"Enabled": True}, "Scram": {"Enabled": True}},
                "Tls": {"Enabled": True, "CertificateAuthorityArnList": [DEMO_PRIVATE_CA]},
            },
            "EncryptionInfo": {"EncryptionInTransit": {"ClientBroker": "TLS", "InCluster": True}},
        },
    )["ClusterArn"]
    brokers = kafka.get_bootstrap_brokers(ClusterArn=arn)
    return arn, brokers["BootstrapBrokerStringSaslIam"]


def _create_schemas(glue: Any, spec: PlatformSpec) -> None:
    for name in spec.registries:
        description = spec.registry.get("description") if name == spec.registry["name"] else None
        glue.create_registry(
            RegistryName=name, **({"Description": description} if description else {})
        )
    schemas: dict[str, list[dict[str, Any]]] = {}
    for table in spec.source_tables:
        # Merged shards share their topic's schema: the first shard registers it.
        topic = spec.topic(table)
        schemas.setdefault(
            topic, [debezium_value_schema(topic, columns) for columns in table.column_versions()]
        )
    if spec.heartbeat_topic:
        schemas[spec.heartbeat_topic] = [heartbeat_value_schema()]
    registry_id = {"RegistryName": spec.registry["name"]}
    for topic, versions in schemas.items():
        first, *later = versions
        glue.create_schema(
            RegistryId=registry_id,
            SchemaName=topic,
            DataFormat="AVRO",
            Compatibility=spec.registry.get("compatibility", "BACKWARD"),
            SchemaDefinition=json.dumps(first),
        )
        for definition in later:
            glue.register_schema_version(
                SchemaId={**registry_id, "SchemaName": topic},
                SchemaDefinition=json.dumps(definition),
            )


def _create_catalog(glue: Any, spec: PlatformSpec, placeholders: Mapping[str, str]) -> None:
    database = spec.catalog["database"]
    warehouse = _fill(spec.catalog["warehouse"], placeholders)
    glue.create_database(
        DatabaseInput={
            "Name": database,
            "Description": spec.catalog.get("description", ""),
            "LocationUri": f"{warehouse}/{database}.db",
        }
    )
    latest_columns = {spec.topic(t): t.column_versions()[-1] for t in spec.source_tables}
    for table in spec.glue_tables:
        columns = latest_columns[table.from_topic] if table.from_topic else table.columns
        glue.create_table(
            DatabaseName=database,
            TableInput=iceberg_table_input(
                table.name,
                columns,
                database=database,
                warehouse=warehouse,
                fed_by_cdc=table.from_topic is not None,
            ),
        )


def _create_connectors(
    kafkaconnect: Any,
    spec: PlatformSpec,
    cluster_arn: str,
    bootstrap_servers: str,
    placeholders: Mapping[str, str],
    account_id: str,
) -> None:
    region = cluster_arn.split(":")[3]
    cluster = spec.cluster
    for connector in spec.connectors:
        plugin = spec.custom_plugins[connector.plugin]
        # The emulator has no CreateCustomPlugin: the ARN is the one AWS would have minted.
        plugin_id = uuid.uuid5(uuid.NAMESPACE_URL, f"s3://{plugin['s3_bucket']}/{plugin['s3_key']}")
        kafkaconnect.create_connector(
            connectorName=connector.name,
            connectorConfiguration={k: _fill(v, placeholders) for k, v in connector.config.items()},
            kafkaConnectVersion=KAFKA_CONNECT_VERSION,
            capacity={"provisionedCapacity": {"mcuCount": 1, "workerCount": 1}},
            kafkaCluster={
                "apacheKafkaCluster": {
                    "bootstrapServers": bootstrap_servers,
                    "vpc": {
                        "subnets": list(cluster["subnets"]),
                        "securityGroups": list(cluster.get("security_groups", [])),
                    },
                }
            },
            kafkaClusterClientAuthentication={"authenticationType": "IAM"},
            kafkaClusterEncryptionInTransit={"encryptionType": "TLS"},
            plugins=[
                {
                    "customPlugin": {
                        "customPluginArn": (
                            f"arn:aws:kafkaconnect:{region}:{account_id}:custom-plugin/"
                            f"{connector.plugin}/{plugin_id}-1"
                        ),
                        "revision": 1,
                    }
                }
            ],
            serviceExecutionRoleArn=f"arn:aws:iam::{account_id}:role/{connector.execution_role}",
        )


def _create_datazone(
    datazone: Any, spec: dict[str, str], account_id: str, domain_version: str = "V1"
) -> tuple[str, str]:
    roles = {"domainExecutionRole": f"arn:aws:iam::{account_id}:role/AmazonDataZoneDomainExecution"}
    if domain_version == "V2":
        # SageMaker Unified Studio's default role names (its admin guide's "IAM roles").
        roles = {
            "domainExecutionRole": (
                f"arn:aws:iam::{account_id}:role/service-role/AmazonSageMakerDomainExecution"
            ),
            "serviceRole": f"arn:aws:iam::{account_id}:role/service-role/AmazonSageMakerDomainService",
        }
    domain = datazone.create_domain(
        name=spec["domain"],
        description=spec.get("domain_description", ""),
        domainVersion=domain_version,
        **roles,
    )
    domain_id = domain["id"]
    project_id = datazone.create_project(
        domainIdentifier=domain_id,
        name=spec["project"],
        description=spec.get("project_description", ""),
    )["id"]
    if "administration_project" in spec:
        # What UpdateAssetOwner moves assets through (docs/scope.md: 'Moving the assets to another
        # project').
        datazone.create_project(
            domainIdentifier=domain_id,
            name=spec["administration_project"],
            description="The domain's administration project",
            projectCategory="ADMIN",
        )
    if domain_version == "V2":
        grant_type_policies(datazone, domain_id, domain["rootDomainUnitId"], project_id)
    return domain_id, project_id


#: What a V2 domain's project needs to create the product's types (and the curation's
#: glossaries): granted on the root domain unit, cascading to every unit below it.
TYPE_POLICY_DETAILS = {
    "CREATE_FORM_TYPE": "createFormType",
    "CREATE_ASSET_TYPE": "createAssetType",
    "CREATE_GLOSSARY": "createGlossary",
}


def grant_type_policies(datazone: Any, domain_id: str, root_unit: str, project_id: str) -> None:
    """The grants an administrator gives the demo's project (the seeding caller, its creator,
    is already its owner): what `dzlineage grant-policies --apply` would add."""
    for policy, detail in TYPE_POLICY_DETAILS.items():
        datazone.add_policy_grant(
            domainIdentifier=domain_id,
            entityType="DOMAIN_UNIT",
            entityIdentifier=root_unit,
            policyType=policy,
            principal={"project": {"projectDesignation": "OWNER", "projectIdentifier": project_id}},
            detail={detail: {"includeChildDomainUnits": True}},
        )


#: DataZone's managed Glue table asset type and its forms, as a Glue data source run imports
#: a table ("Create and run an Amazon DataZone data source for the AWS Glue Data Catalog";
#: the type and form names a real domain's GetAssetType shows).
GLUE_TABLE_ASSET_TYPE = "amazon.datazone.GlueTableAssetType"
GLUE_TABLE_FORM_TYPE = "amazon.datazone.GlueTableFormType"
COMMON_DETAILS_FORM_TYPE = "amazon.datazone.AssetCommonDetailsFormType"


def _import_glue_tables(
    datazone: Any, glue: Any, spec: PlatformSpec, domain_id: str, region: str, account_id: str
) -> None:
    """Every lakehouse table as the asset a Glue data source run would make of it, in the
    ``tables_project``: its ``AssetCommonDetailsForm.sourceIdentifier`` is the table's ARN, so
    DataZone links it to the table's lineage node (the SageMaker Unified Studio guide, "Linking
    dataset lineage nodes with assets")."""
    project_id = datazone.create_project(
        domainIdentifier=domain_id,
        name=spec.datazone["tables_project"],
        description="Imports the lakehouse's Glue tables (a Glue data source's project)",
    )["id"]
    database = spec.catalog["database"]
    for table in spec.glue_tables:
        arn = f"arn:aws:glue:{region}:{account_id}:table/{database}/{table.name}"
        described = glue.get_table(DatabaseName=database, Name=table.name)["Table"]
        columns = [
            {"columnName": c["Name"], "dataType": c["Type"]}
            for c in described["StorageDescriptor"]["Columns"]
        ]
        glue_form = {
            "catalogId": account_id,
            "region": region,
            "tableArn": arn,
            "databaseName": database,
            "tableName": table.name,
            "columns": columns,
        }
        datazone.create_asset(
            domainIdentifier=domain_id,
            owningProjectIdentifier=project_id,
            name=table.name,
            typeIdentifier=GLUE_TABLE_ASSET_TYPE,
            externalIdentifier=arn,
            formsInput=[
                {
                    "formName": "GlueTableForm",
                    "typeIdentifier": GLUE_TABLE_FORM_TYPE,
                    "content": json.dumps(glue_form),
                },
                {
                    "formName": "AssetCommonDetailsForm",
                    "typeIdentifier": COMMON_DETAILS_FORM_TYPE,
                    "content": json.dumps({"sourceIdentifier": arn}),
                },
            ],
        )


def _fill(value: str, placeholders: Mapping[str, str]) -> str:
    for placeholder, replacement in placeholders.items():
        value = value.replace(placeholder, replacement)
    return value
