"""The schema stage: the topic's latest schema in the Glue Schema Registry, parsed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dzlineage_dagster.core.connectors.topics import TopicKind, topic_name_problem
from dzlineage_dagster.core.schemas.avro import (
    Column,
    InvalidAvroSchema,
    RowSchema,
    parse_row_schema,
)
from dzlineage_dagster.core.schemas.json_schema import InvalidJsonSchema, parse_json_row_schema
from dzlineage_dagster.core.schemas.protobuf import InvalidProtobufSchema, parse_protobuf_row_schema
from dzlineage_dagster.sync.errors import SyncError
from dzlineage_dagster.sync.run_state import SyncRun

#: Per DataFormat (botocore's glue model has these three): its parser, the error a definition
#: it can't read raises, and what such a definition is not.
ROW_READERS: dict[str, tuple[Callable[[str], RowSchema], type[ValueError], str]] = {
    "AVRO": (parse_row_schema, InvalidAvroSchema, "valid Avro"),
    "JSON": (parse_json_row_schema, InvalidJsonSchema, "a JSON Schema with columns"),
    "PROTOBUF": (
        parse_protobuf_row_schema,
        InvalidProtobufSchema,
        "a Protobuf schema protoc compiles",
    ),
}


@dataclass(frozen=True)
class SchemaSnapshot:
    topic: str
    kind: TopicKind
    schema_name: str
    schema_arn: str
    registry_name: str
    registry_arn: str
    #: When the schema was created: a schema deleted and re-created under the same name (the
    #: same ARN) is a new generation.
    created_time: str
    version: int
    compatibility: str
    data_format: str
    columns: tuple[Column, ...]
    debezium_envelope: bool

    @property
    def region(self) -> str:
        return self.schema_arn.split(":")[3]

    @property
    def account_id(self) -> str:
        return self.schema_arn.split(":")[4]


def read_schema(run: SyncRun, topic: str) -> SchemaSnapshot:
    listed = run.registry_topics.get(topic)
    if listed is None:
        raise SyncError(f"no schema for topic {topic!r} in registry {run.settings.registry_name}")
    # Before any call: a name no topic can have would be cataloged as a topic that cannot exist.
    problem = topic_name_problem(topic, listed.schema_name)
    if problem:
        raise SyncError(f"{topic}: {problem}")
    registry = run.resource.schema_registry
    schema = run.schema_description(listed.schema_arn)
    version = registry.get_schema_version(listed.schema_arn)
    data_format = schema.get("DataFormat", "AVRO")
    parse, invalid, must_be = ROW_READERS[data_format]
    try:
        row = parse(version["SchemaDefinition"])
    except invalid as error:
        raise SyncError(
            f"schema {listed.schema_name} version {version['VersionNumber']} is not "
            f"{must_be}: {error}"
        ) from None
    if row.origin:
        run.log.info(f"{topic}: columns from {row.origin}")
    numbered = int(schema.get("LatestSchemaVersion") or 0)
    if numbered > int(version["VersionNumber"]):
        run.log.warning(
            f"{topic}: version {numbered} of schema {listed.schema_name} is not AVAILABLE in the "
            f"registry (it failed the schema's {schema.get('Compatibility', 'NONE')} "
            f"compatibility check, or is still being checked): version "
            f"{version['VersionNumber']} stays the cataloged one"
        )
    return SchemaSnapshot(
        topic=topic,
        # From the connectors' configs where they name the topic (heartbeat, transaction,
        # schema change, history), else from its shape with the connectors' prefixes.
        kind=run.topology.lineage_for(topic).kind,
        schema_name=listed.schema_name,
        schema_arn=listed.schema_arn,
        registry_name=schema["RegistryName"],
        registry_arn=schema["RegistryArn"],
        created_time=str(schema.get("CreatedTime", "")),
        version=int(version["VersionNumber"]),
        compatibility=schema.get("Compatibility", "NONE"),
        data_format=data_format,
        columns=tuple(row.columns),
        debezium_envelope=row.debezium_envelope,
    )
