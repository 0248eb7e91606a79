"""The reference design the project replaces, as DESIGN.md describes it: the benchmark baseline.

This is not the project's code and uses none of it: plain boto3, sequential, no change
detection, the weaknesses kept on purpose, since they are what is measured:

1. *Schema sync*: list every schema of the registry; for each, GetSchema and GetSchemaVersion
   (latest); read all mappings with GetParametersByPath under one prefix (the mapping of a
   schema is named prefix + schema ARN with ``:`` replaced by a delimiter); a schema without a
   mapping gets CreateAsset with the two custom forms and PutParameter; a mapped one gets
   CreateAssetRevision (and its mapping rewritten) when its version changed.
2. *Lineage emission*: for each mapped topic, the Iceberg table from the topic name by
   convention, one OpenLineage RunEvent (topic in, table out), PostLineageEvent with a random
   clientToken.

An unhandled error ends a run, as it ends a scheduled function. The form and asset types come
from :func:`ensure_reference_types`, the design's own minimal calls (the project's
``ensure_custom_types`` would make the asset type require a third form, RelationalTableForm,
that the reference never sends). What the design leaves open is settled the simple way: the
mapping's value holds the asset id and the schema version it describes; the cluster's name and
type come from configuration rather than a call; assets carry no ``externalIdentifier``, which
is how a crash between CreateAsset and PutParameter can duplicate an asset; CreateAsset leaves
its clientToken to boto3 (a fresh UUID per call, which botocore reuses for that call's own
retries, as it does the explicit random token of PostLineageEvent). The clients take endpoint,
region and retries from boto3's environment (``AWS_RETRY_MODE``, ``AWS_MAX_ATTEMPTS``).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import boto3

#: The reference's own delimiter: a colon-style one, itself invalid in SSM parameter names.
LITERAL_DELIMITER = "::"
#: A delimiter SSM accepts, for measuring calls and time rather than the naming bug.
VALID_DELIMITER = "_"

ASSET_TYPE = "KafkaTopicAssetType"
SCHEMA_FORM_TYPE = "KafkaSchemaFormType"
MSK_FORM_TYPE = "MskSourceReferenceFormType"
SCHEMA_FORM = "KafkaSchemaForm"
MSK_FORM = "MskSourceReferenceForm"
PRODUCER = "https://example.com/reference-design/lineage-emitter"
RUN_EVENT_SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/definitions/RunEvent"

_SCHEMA_FORM_MODEL = """
structure KafkaSchemaFormType {
    @required
    kafka_topic: String
    @required
    schema_version: Integer
    @required
    schema_arn: String
    registry_arn: String
    compatibility_mode: String
    data_format: String
}
"""
_MSK_FORM_MODEL = """
structure MskSourceReferenceFormType {
    @required
    cluster_arn: String
    @required
    cluster_type: String
}
"""


@dataclass(frozen=True)
class ReferenceConfig:
    """What the reference's functions are configured with."""

    domain_id: str
    project_id: str
    registry_name: str
    cluster_arn: str
    glue_database: str
    ssm_prefix: str = "/reference/schema-assets/"
    delimiter: str = VALID_DELIMITER
    cluster_type: str = "PROVISIONED"

    @classmethod
    def from_environment(cls, environment: dict[str, str], **overrides: Any) -> ReferenceConfig:
        """From the ``DZLINEAGE_*`` variables the sandbox seeder prints."""
        return cls(
            domain_id=environment["DZLINEAGE_DOMAIN_ID"],
            project_id=environment["DZLINEAGE_PROJECT_ID"],
            registry_name=environment["DZLINEAGE_REGISTRY_NAME"],
            cluster_arn=environment["DZLINEAGE_MSK_CLUSTER_ARN"],
            glue_database=environment.get("DZLINEAGE_GLUE_DATABASE", "lakehouse"),
            **overrides,
        )

    @property
    def region(self) -> str:
        return self.cluster_arn.split(":")[3]

    @property
    def account_id(self) -> str:
        return self.cluster_arn.split(":")[4]

    @property
    def cluster_name(self) -> str:
        return self.cluster_arn.split(":")[5].split("/")[1]


@dataclass(frozen=True)
class ReferenceClients:
    glue: Any
    ssm: Any
    datazone: Any

    @classmethod
    def create(cls) -> ReferenceClients:
        """Clients configured by boto3's own environment (endpoint, region, retries)."""
        session = boto3.session.Session()
        return cls(*(session.client(name) for name in ("glue", "ssm", "datazone")))


@dataclass(frozen=True)
class Mapping:
    asset_id: str
    schema_version: int

    def to_value(self) -> str:
        return json.dumps({"assetId": self.asset_id, "schemaVersion": self.schema_version})

    @classmethod
    def from_value(cls, value: str) -> Mapping:
        decoded = json.loads(value)
        return cls(decoded["assetId"], int(decoded["schemaVersion"]))


@dataclass(frozen=True)
class ReferenceRun:
    """What one run of both functions did."""

    schemas: int
    created: int
    revised: int
    events_posted: int


def ensure_reference_types(clients: ReferenceClients, config: ReferenceConfig) -> None:
    """The two form types and the asset type (DataZone answers a repeat with the same revision)."""
    models = {
        SCHEMA_FORM: (SCHEMA_FORM_TYPE, _SCHEMA_FORM_MODEL),
        MSK_FORM: (MSK_FORM_TYPE, _MSK_FORM_MODEL),
    }
    forms_input = {}
    for form, (type_name, model) in models.items():
        created = clients.datazone.create_form_type(
            domainIdentifier=config.domain_id,
            owningProjectIdentifier=config.project_id,
            name=type_name,
            model={"smithy": model},
            status="ENABLED",
        )
        forms_input[form] = {
            "typeIdentifier": type_name, "typeRevision": created["revision"], "required": True
        }  # fmt: skip
    clients.datazone.create_asset_type(
        domainIdentifier=config.domain_id,
        owningProjectIdentifier=config.project_id,
        name=ASSET_TYPE,
        formsInput=forms_input,
    )


def parameter_name(config: ReferenceConfig, schema_arn: str) -> str:
    return config.ssm_prefix + schema_arn.replace(":", config.delimiter)


def _all_pages(client: Any, operation: str, result_key: str, **params: Any) -> list[Any]:
    pages = client.get_paginator(operation).paginate(**params)
    return [item for page in pages for item in page[result_key]]


def read_mappings(clients: ReferenceClients, config: ReferenceConfig) -> dict[str, Mapping]:
    """Parameter name -> mapping, for every parameter under the prefix (10 a page)."""
    parameters = _all_pages(
        clients.ssm, "get_parameters_by_path", "Parameters", Path=config.ssm_prefix, Recursive=True
    )
    return {p["Name"]: Mapping.from_value(p["Value"]) for p in parameters}


def _forms(config: ReferenceConfig, schema: dict[str, Any], version: dict[str, Any]) -> list:
    schema_form = {
        "kafka_topic": schema["SchemaName"],
        "schema_version": version["VersionNumber"],
        "schema_arn": schema["SchemaArn"],
        "registry_arn": schema["RegistryArn"],
        "compatibility_mode": schema["Compatibility"],
        "data_format": schema["DataFormat"],
    }
    msk_form = {"cluster_arn": config.cluster_arn, "cluster_type": config.cluster_type}
    return [
        {"formName": SCHEMA_FORM, "typeIdentifier": SCHEMA_FORM_TYPE, "content": json.dumps(schema_form)},
        {"formName": MSK_FORM, "typeIdentifier": MSK_FORM_TYPE, "content": json.dumps(msk_form)},
    ]  # fmt: skip


def _remember(clients: ReferenceClients, name: str, mapping: Mapping) -> None:
    clients.ssm.put_parameter(Name=name, Value=mapping.to_value(), Type="String", Overwrite=True)


def sync_schemas(clients: ReferenceClients, config: ReferenceConfig) -> tuple[list[str], int, int]:
    """Function 1: ``(mapped topics, assets created, assets revised)``."""
    glue, datazone = clients.glue, clients.datazone
    schemas = _all_pages(
        glue, "list_schemas", "Schemas", RegistryId={"RegistryName": config.registry_name}
    )
    mappings = read_mappings(clients, config)
    mapped, created, revised = [], 0, 0
    for item in schemas:
        schema_id = {"SchemaArn": item["SchemaArn"]}
        schema = glue.get_schema(SchemaId=schema_id)
        version = glue.get_schema_version(
            SchemaId=schema_id, SchemaVersionNumber={"LatestVersion": True}
        )
        name = parameter_name(config, item["SchemaArn"])
        current = mappings.get(name)
        forms = _forms(config, schema, version)
        if current is None:
            asset = datazone.create_asset(
                domainIdentifier=config.domain_id,
                owningProjectIdentifier=config.project_id,
                name=item["SchemaName"],
                typeIdentifier=ASSET_TYPE,
                formsInput=forms,
            )
            _remember(clients, name, Mapping(asset["id"], version["VersionNumber"]))
            created += 1
        elif current.schema_version != version["VersionNumber"]:
            datazone.create_asset_revision(
                domainIdentifier=config.domain_id,
                identifier=current.asset_id,
                name=item["SchemaName"],
                formsInput=forms,
            )
            _remember(clients, name, Mapping(current.asset_id, version["VersionNumber"]))
            revised += 1
        mapped.append(item["SchemaName"])
    return mapped, created, revised


def convention_table(topic: str) -> str | None:
    """``prefix.schema.table`` -> ``schema_table``; None for a topic of another shape."""
    parts = topic.split(".")
    return f"{parts[1]}_{parts[2]}" if len(parts) == 3 else None


def run_event(config: ReferenceConfig, topic: str, table: str) -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": datetime.now(timezone.utc).isoformat(),
        "producer": PRODUCER,
        "schemaURL": RUN_EVENT_SCHEMA,
        "run": {"runId": str(uuid.uuid4())},
        "job": {"namespace": "reference", "name": f"iceberg-sink.{topic}"},
        "inputs": [{"namespace": f"kafka://{config.cluster_name}", "name": topic}],
        "outputs": [
            {
                "namespace": f"arn:aws:glue:{config.region}:{config.account_id}",
                "name": f"table/{config.glue_database}/{table}",
            }
        ],
    }


def emit_lineage(clients: ReferenceClients, config: ReferenceConfig, topics: list[str]) -> int:
    """Function 2: one event per mapped topic that names a table; how many were posted."""
    posted = 0
    for topic in topics:
        table = convention_table(topic)
        if table is None:
            continue
        clients.datazone.post_lineage_event(
            domainIdentifier=config.domain_id,
            event=json.dumps(run_event(config, topic, table)).encode(),
            clientToken=str(uuid.uuid4()),
        )
        posted += 1
    return posted


def run_reference_design(clients: ReferenceClients, config: ReferenceConfig) -> ReferenceRun:
    """Both scheduled functions, one after the other, as one scheduled run."""
    topics, created, revised = sync_schemas(clients, config)
    posted = emit_lineage(clients, config, topics)
    return ReferenceRun(len(topics), created, revised, posted)
