"""The three per-topic stages: read the schema, sync the DataZone asset, post the lineage.

Each stage is idempotent and crash-safe: DataZone writes carry client tokens derived from what
they write, so a retry (by botocore, by a rerun after a crash) replays instead of duplicating,
and the SSM record is written right after the asset so the mapping is never lost.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any, Literal

from botocore.exceptions import ClientError

from dzlineage_dagster.core.avro import Column, InvalidAvroSchema, RowSchema, parse_row_schema
from dzlineage_dagster.core.forms import (
    ASSET_COMMON_DETAILS_FORM_TYPE,
    KAFKA_SCHEMA_FORM,
    KAFKA_TOPIC_ASSET_TYPE,
    MSK_SOURCE_REFERENCE_FORM,
    RELATIONAL_TABLE_FORM_TYPE,
    asset_common_details_content,
    fitting_relational_table_content,
    forms_fingerprint,
    kafka_schema_form_content,
    msk_source_form_content,
)
from dzlineage_dagster.core.openlineage import (
    DatasetSpec,
    build_run_events,
    dataset_source_identifier,
    deterministic_run_id,
    event_json,
    event_size_ok,
    glue_dataset,
    glue_source_identifier,
    lineage_client_token,
)
from dzlineage_dagster.core.planning import DesiredTopicState, asset_action, datazone_asset_name
from dzlineage_dagster.core.ssm_names import MappingRecord
from dzlineage_dagster.core.table_mapping import TopicTableMapping
from dzlineage_dagster.core.topics import TopicKind, classify_topic
from dzlineage_dagster.sync.environment import SyncEnvironment, SyncError

PRODUCER = "https://github.com/dzlineage/dzlineage-dagster"
LINEAGE_EVENT_LIMIT = 300_000


@dataclass(frozen=True)
class SchemaSnapshot:
    topic: str
    kind: TopicKind
    schema_name: str
    schema_arn: str
    registry_name: str
    registry_arn: str
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


def read_schema(env: SyncEnvironment, topic: str) -> SchemaSnapshot:
    listed = env.registry_topics.get(topic)
    if listed is None:
        raise SyncError(f"no schema for topic {topic!r} in registry {env.settings.registry_name}")
    schema = env.registry.get_schema(listed.schema_arn)
    version = env.registry.get_schema_version(listed.schema_arn)
    data_format = schema.get("DataFormat", "AVRO")
    row = RowSchema([], debezium_envelope=False)
    if data_format == "AVRO":
        try:
            row = parse_row_schema(version["SchemaDefinition"])
        except InvalidAvroSchema as error:
            raise SyncError(
                f"schema {listed.schema_name} version {version['VersionNumber']} is not valid "
                f"Avro: {error}"
            ) from None
    else:
        env.log.warning(f"{topic}: {data_format} schemas are not parsed; no columns recorded")
    return SchemaSnapshot(
        topic=topic,
        kind=classify_topic(topic),
        schema_name=listed.schema_name,
        schema_arn=listed.schema_arn,
        registry_name=schema["RegistryName"],
        registry_arn=schema["RegistryArn"],
        version=int(version["VersionNumber"]),
        compatibility=schema.get("Compatibility", "NONE"),
        data_format=data_format,
        columns=tuple(row.columns),
        debezium_envelope=row.debezium_envelope,
    )


AssetAction = Literal["created", "revised", "unchanged", "adopted"]


@dataclass(frozen=True)
class AssetOutcome:
    action: AssetAction
    record: MappingRecord
    url: str | None


def topic_source_identifier(env: SyncEnvironment, topic: str) -> str:
    """What DataZone links the topic's lineage node to the asset by."""
    return dataset_source_identifier(env.topic_namespace, topic)


def topic_forms_input(env: SyncEnvironment, snapshot: SchemaSnapshot) -> list[dict[str, str]]:
    cluster = env.cluster
    table_form, kept = fitting_relational_table_content(
        list(snapshot.columns), table_name=snapshot.topic
    )
    if kept < len(snapshot.columns):
        env.log.warning(
            f"{snapshot.topic}: {len(snapshot.columns)} columns exceed DataZone's form size "
            f"limit; the asset's table form lists the first {kept}"
        )
    contents = {
        KAFKA_SCHEMA_FORM.name: kafka_schema_form_content(
            topic=snapshot.topic,
            schema_version=snapshot.version,
            schema_arn=snapshot.schema_arn,
            registry_arn=snapshot.registry_arn,
            compatibility=snapshot.compatibility,
            data_format=snapshot.data_format,
        ),
        MSK_SOURCE_REFERENCE_FORM.name: msk_source_form_content(
            cluster_arn=cluster.arn,
            cluster_type=cluster.cluster_type,
            bootstrap_brokers=cluster.bootstrap_brokers,
        ),
        ASSET_COMMON_DETAILS_FORM_TYPE: asset_common_details_content(
            topic_source_identifier(env, snapshot.topic)
        ),
        RELATIONAL_TABLE_FORM_TYPE: table_form,
    }
    return [
        KAFKA_TOPIC_ASSET_TYPE.form_input(type_name, content)
        for type_name, content in contents.items()
    ]


def _token(*parts: object) -> str:
    """A clientToken (64 hex characters) that is the same whenever the write is the same."""
    return hashlib.sha256("\n".join(map(str, parts)).encode()).hexdigest()


def _error_code(error: ClientError) -> str:
    return error.response.get("Error", {}).get("Code", "")


@dataclass(frozen=True)
class AssetPlan:
    action: Literal["create", "revise", "unchanged", "skip"]
    forms: list[dict[str, str]]
    desired: DesiredTopicState | None
    stored: MappingRecord | None


def plan_topic_asset(
    env: SyncEnvironment, snapshot: SchemaSnapshot, type_revision: str | None
) -> AssetPlan:
    """What the asset stage would do for this schema (``type_revision`` None: no type yet)."""
    stored = env.stored_records.get(snapshot.schema_arn)
    if snapshot.kind is not TopicKind.TABLE:
        return AssetPlan("skip", [], None, stored)
    forms = topic_forms_input(env, snapshot)
    desired = DesiredTopicState(
        topic=snapshot.topic,
        schema_arn=snapshot.schema_arn,
        schema_version=snapshot.version,
        # A new asset type revision moves every asset onto it, so it is part of the content.
        content_fingerprint=f"{forms_fingerprint(forms)}@{type_revision}",
    )
    return AssetPlan(asset_action(desired, stored).value, forms, desired, stored)


def sync_topic_asset(env: SyncEnvironment, snapshot: SchemaSnapshot) -> AssetOutcome | None:
    """Create the topic's asset, revise it when its content changed, or leave it alone.

    Only table topics are cataloged: heartbeat, transaction and schema-change topics are
    connector plumbing, not data anyone subscribes to (None for them).
    """
    type_revision = env.asset_type_revision
    plan = plan_topic_asset(env, snapshot, type_revision)
    if plan.action == "skip":
        return None
    stored = plan.stored
    if plan.action == "unchanged":
        return AssetOutcome("unchanged", stored, env.asset_url(stored.asset_id))

    write = AssetWrite(
        env,
        snapshot,
        name=datazone_asset_name(env.cluster.name, snapshot.topic),
        forms=plan.forms,
        type_revision=type_revision,
        content_key=plan.desired.content_fingerprint,
    )
    action: AssetAction
    if stored is not None:
        response = write.revise_or_recreate(stored.asset_id)
        action = "revised" if response.get("id") == stored.asset_id else "created"
    else:
        response, action = write.create_or_adopt()
    record = plan.desired.to_record(
        asset_id=response["id"],
        asset_revision=str(response["revision"]),
        asset_type_revision=type_revision,
        lineage_fingerprint=stored.lineage_fingerprint if stored else "",
    )
    env.remember(record)
    return AssetOutcome(action, record, env.asset_url(record.asset_id))


@dataclass(frozen=True)
class AssetWrite:
    """One topic asset's content, and the DataZone writes that put it in place."""

    env: SyncEnvironment
    snapshot: SchemaSnapshot
    name: str
    forms: list[dict[str, str]]
    type_revision: str
    #: Changes exactly when the content does: the client tokens of the writes derive from it.
    content_key: str

    @property
    def _common(self) -> dict[str, Any]:
        return {
            "domainIdentifier": self.env.settings.domain_id,
            "name": self.name,
            "description": (
                f"Kafka topic {self.snapshot.topic} on MSK cluster {self.env.cluster.name}"
            ),
            "typeRevision": self.type_revision,
            "formsInput": self.forms,
        }

    def create(self) -> dict[str, Any]:
        return self.env.datazone.client().create_asset(
            **self._common,
            owningProjectIdentifier=self.env.settings.project_id,
            typeIdentifier=KAFKA_TOPIC_ASSET_TYPE.name,
            externalIdentifier=self.snapshot.schema_arn,
            # Same content, same token: a rerun after a crash gets the asset it created.
            clientToken=_token("create", self.snapshot.schema_arn, self.content_key),
        )

    def revise(self, asset_id: str) -> dict[str, Any]:
        return self.env.datazone.client().create_asset_revision(
            **self._common,
            identifier=asset_id,
            clientToken=_token("revise", asset_id, self.content_key),
        )

    def create_or_adopt(self) -> tuple[dict[str, Any], AssetAction]:
        try:
            return self.create(), "created"
        except ClientError as error:
            if _error_code(error) != "ConflictException":
                raise
        # The asset exists but SSM forgot it (a crash before PutParameter, or a lost
        # parameter): adopt it by its externalIdentifier instead of creating a duplicate.
        existing = find_asset_by_external_identifier(self.env, self.name, self.snapshot.schema_arn)
        if existing is None:
            raise SyncError(
                f"DataZone reports an asset for {self.snapshot.schema_arn} exists, but search "
                "cannot find it"
            )
        self.env.log.warning(
            f"{self.snapshot.topic}: SSM had no mapping for asset {existing['identifier']}; "
            "repaired"
        )
        return self.revise(existing["identifier"]), "adopted"

    def revise_or_recreate(self, asset_id: str) -> dict[str, Any]:
        try:
            return self.revise(asset_id)
        except ClientError as error:
            if _error_code(error) != "ResourceNotFoundException":
                raise
        self.env.log.warning(
            f"{self.snapshot.topic}: asset {asset_id} was deleted in DataZone; recreating it"
        )
        return self.create()


def find_asset_by_external_identifier(
    env: SyncEnvironment, name: str, external_identifier: str
) -> dict[str, Any] | None:
    for item in env.datazone.search_assets(env.settings.domain_id, text=name):
        if item.get("externalIdentifier") == external_identifier:
            return item
    return None


@dataclass(frozen=True)
class LineageOutcome:
    mapping: TopicTableMapping
    posted: bool
    run_id: str | None = None
    output_source_identifier: str | None = None
    columns_dropped: bool = False

    @property
    def summary(self) -> str:
        if self.mapping.table is None:
            return f"no edge: {self.mapping.reason}"
        state = "posted" if self.posted else "unchanged"
        return f"{self.mapping.topic} -> {self.mapping.table} ({state}, {self.mapping.origin})"


@dataclass(frozen=True)
class LineagePlan:
    """The edge a topic should have; ``run_id`` identifies its content (None: no edge)."""

    mapping: TopicTableMapping
    job_name: str = ""
    run_id: str | None = None
    output_dataset: tuple[str, str] | None = None
    output_source_identifier: str | None = None
    already_posted: bool = False


def plan_topic_lineage(env: SyncEnvironment, snapshot: SchemaSnapshot) -> LineagePlan:
    mapping = env.mapper.map_topic(snapshot.topic)
    if mapping.table is None:
        return LineagePlan(mapping)
    where = (snapshot.region, snapshot.account_id, mapping.table.database, mapping.table.table)
    table_namespace, table_name = glue_dataset(*where)
    job_name = f"iceberg-sink.{snapshot.topic}"
    run_id = deterministic_run_id(
        env.settings.job_namespace, job_name, snapshot.schema_arn, str(snapshot.version),
        env.topic_namespace, table_namespace, table_name,
    )  # fmt: skip
    stored = env.stored_records.get(snapshot.schema_arn)
    return LineagePlan(
        mapping,
        job_name,
        run_id,
        (table_namespace, table_name),
        glue_source_identifier(*where),
        already_posted=stored is not None and stored.lineage_fingerprint == run_id,
    )


def post_topic_lineage(env: SyncEnvironment, snapshot: SchemaSnapshot) -> LineageOutcome:
    """Post START and COMPLETE events for the edge topic -> Iceberg table, once per content."""
    plan = plan_topic_lineage(env, snapshot)
    outcome = LineageOutcome(
        plan.mapping, False, plan.run_id, plan.output_source_identifier, columns_dropped=False
    )
    if plan.run_id is None or plan.already_posted:
        return outcome

    columns = list(snapshot.columns)
    payloads = _event_payloads(env, plan, snapshot, columns)
    if not all(event_size_ok(p, LINEAGE_EVENT_LIMIT) for _, p in payloads):
        env.log.warning(
            f"{snapshot.topic}: lineage events exceed DataZone's {LINEAGE_EVENT_LIMIT} bytes with "
            f"{len(columns)} columns in the schema facets; posting them without column facets"
        )
        payloads = _event_payloads(env, plan, snapshot, None)
        outcome = replace(outcome, columns_dropped=True)
        if not all(event_size_ok(p, LINEAGE_EVENT_LIMIT) for _, p in payloads):
            raise SyncError(
                f"lineage event for {snapshot.topic} exceeds {LINEAGE_EVENT_LIMIT} bytes"
            )
    datazone = env.datazone.client()
    for event_type, payload in payloads:
        datazone.post_lineage_event(
            domainIdentifier=env.settings.domain_id,
            event=payload.encode(),
            clientToken=lineage_client_token(plan.run_id, event_type),
        )
    stored = env.stored_records.get(snapshot.schema_arn)
    if stored is not None:
        env.remember(replace(stored, lineage_fingerprint=plan.run_id))
    return replace(outcome, posted=True)


def _event_payloads(
    env: SyncEnvironment,
    plan: LineagePlan,
    snapshot: SchemaSnapshot,
    columns: list[Column] | None,
) -> list[tuple[str, str]]:
    """``(eventType, JSON)`` of the START and COMPLETE events of the edge."""
    table_namespace, table_name = plan.output_dataset
    events = build_run_events(
        job_namespace=env.settings.job_namespace,
        job_name=plan.job_name,
        inputs=[DatasetSpec(env.topic_namespace, snapshot.topic, columns)],
        outputs=[DatasetSpec(table_namespace, table_name, columns)],
        run_id=plan.run_id,
        event_time=datetime.now(timezone.utc),
        producer=PRODUCER,
    )
    return [(str(e.eventType.value), event_json(e)) for e in events]


RetireAction = Literal["deleted", "deprecated", "already gone"]


def retire_topic_asset(env: SyncEnvironment, record: MappingRecord) -> RetireAction:
    """A schema left the registry: delete or deprecate its asset, then drop its mapping."""
    datazone = env.datazone.client()
    domain = env.settings.domain_id
    action: RetireAction
    try:
        if env.settings.deleted_schema_policy == "delete":
            datazone.delete_asset(domainIdentifier=domain, identifier=record.asset_id)
            action = "deleted"
        else:
            asset = datazone.get_asset(domainIdentifier=domain, identifier=record.asset_id)
            note = f"DEPRECATED: schema {record.schema_arn} was deleted from the registry"
            if not (asset.get("description") or "").startswith("DEPRECATED"):
                datazone.create_asset_revision(
                    domainIdentifier=domain,
                    identifier=record.asset_id,
                    name=asset["name"],
                    description=f"{note}. {asset.get('description') or ''}".strip()[:2048],
                    typeRevision=asset["typeRevision"],
                    formsInput=[_form_input(f) for f in asset.get("formsOutput", [])],
                    clientToken=_token("deprecate", record.asset_id, asset["revision"]),
                )
            action = "deprecated"
    except ClientError as error:
        if _error_code(error) != "ResourceNotFoundException":
            raise
        action = "already gone"
    env.forget(record.schema_arn)
    return action


def _form_input(form_output: dict[str, Any]) -> dict[str, Any]:
    """A form as GetAsset returns it, in the shape CreateAssetRevision takes."""
    form = {"formName": form_output["formName"], "content": form_output.get("content", "{}")}
    for key in ("typeName", "typeRevision"):
        if form_output.get(key):
            form["typeIdentifier" if key == "typeName" else key] = form_output[key]
    return form
