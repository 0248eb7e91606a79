"""The asset stage: the topic's DataZone asset, created, revised when its content changed, or
left alone; its mapping record is staged for the runner to write."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Literal

from botocore.exceptions import ClientError

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
from dzlineage_dagster.core.openlineage import dataset_source_identifier
from dzlineage_dagster.core.planning import DesiredTopicState, asset_action, datazone_asset_name
from dzlineage_dagster.core.ssm_names import MappingRecord
from dzlineage_dagster.core.topics import TopicKind
from dzlineage_dagster.sync.errors import SyncError, error_code
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.stages.schema import SchemaSnapshot

AssetAction = Literal["created", "revised", "unchanged", "adopted"]


@dataclass(frozen=True)
class AssetOutcome:
    action: AssetAction
    record: MappingRecord
    url: str | None


def topic_source_identifier(run: SyncRun, topic: str) -> str:
    """What DataZone links the topic's lineage node to the asset by: the lineage stage's topic
    dataset (:meth:`SyncRun.topic_dataset`), so the node and the asset are the same topic."""
    return dataset_source_identifier(*run.topic_dataset(topic))


def topic_forms_input(run: SyncRun, snapshot: SchemaSnapshot) -> list[dict[str, str]]:
    cluster = run.cluster
    table_form, kept = fitting_relational_table_content(
        list(snapshot.columns), table_name=snapshot.topic
    )
    if kept < len(snapshot.columns):
        run.log.warning(
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
            topic_source_identifier(run, snapshot.topic)
        ),
        RELATIONAL_TABLE_FORM_TYPE: table_form,
    }
    return [
        KAFKA_TOPIC_ASSET_TYPE.form_input(type_name, content)
        for type_name, content in contents.items()
    ]


def client_token(*parts: object) -> str:
    """A clientToken (64 hex characters) that is the same whenever the write is the same."""
    return hashlib.sha256("\n".join(map(str, parts)).encode()).hexdigest()


@dataclass(frozen=True)
class AssetPlan:
    action: Literal["create", "revise", "unchanged", "skip"]
    forms: list[dict[str, str]]
    desired: DesiredTopicState | None
    stored: MappingRecord | None


def plan_topic_asset(
    run: SyncRun, snapshot: SchemaSnapshot, type_revision: str | None
) -> AssetPlan:
    """What the asset stage would do for this schema (``type_revision`` None: no type yet)."""
    stored = run.mappings.get(snapshot.schema_arn)
    if snapshot.kind is not TopicKind.TABLE:
        return AssetPlan("skip", [], None, stored)
    forms = topic_forms_input(run, snapshot)
    desired = DesiredTopicState(
        topic=snapshot.topic,
        schema_arn=snapshot.schema_arn,
        schema_version=snapshot.version,
        # A new asset type revision moves every asset onto it, so it is part of the content.
        content_fingerprint=f"{forms_fingerprint(forms)}@{type_revision}",
    )
    return AssetPlan(asset_action(desired, stored).value, forms, desired, stored)


def sync_topic_asset(run: SyncRun, snapshot: SchemaSnapshot) -> AssetOutcome | None:
    """Create the topic's asset, revise it when its content changed, or leave it alone.

    Only table topics are cataloged: heartbeat, transaction and schema-change topics are
    connector plumbing, not data anyone subscribes to (None for them).
    """
    type_revision = run.asset_type_revision
    plan = plan_topic_asset(run, snapshot, type_revision)
    if plan.action == "skip":
        return None
    stored = plan.stored
    if plan.action == "unchanged":
        return AssetOutcome("unchanged", stored, run.asset_url(stored.asset_id))

    write = AssetWrite(
        run,
        snapshot,
        name=datazone_asset_name(run.cluster.name, snapshot.topic),
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
    run.mappings.stage(record)
    return AssetOutcome(action, record, run.asset_url(record.asset_id))


@dataclass(frozen=True)
class AssetWrite:
    """One topic asset's content, and the DataZone writes that put it in place."""

    run: SyncRun
    snapshot: SchemaSnapshot
    name: str
    forms: list[dict[str, str]]
    type_revision: str
    #: Changes exactly when the content does: the client tokens of the writes derive from it.
    content_key: str

    @property
    def _common(self) -> dict[str, Any]:
        return {
            "domainIdentifier": self.run.settings.domain_id,
            "name": self.name,
            "description": (
                f"Kafka topic {self.snapshot.topic} on MSK cluster {self.run.cluster.name}"
            ),
            "typeRevision": self.type_revision,
            "formsInput": self.forms,
        }

    def create(self) -> dict[str, Any]:
        return self.run.resource.datazone.client().create_asset(
            **self._common,
            owningProjectIdentifier=self.run.settings.project_id,
            typeIdentifier=KAFKA_TOPIC_ASSET_TYPE.name,
            externalIdentifier=self.snapshot.schema_arn,
            # Same content, same token: a rerun after a crash gets the asset it created.
            clientToken=client_token("create", self.snapshot.schema_arn, self.content_key),
        )

    def revise(self, asset_id: str) -> dict[str, Any]:
        return self.run.resource.datazone.client().create_asset_revision(
            **self._common,
            identifier=asset_id,
            clientToken=client_token("revise", asset_id, self.content_key),
        )

    def create_or_adopt(self) -> tuple[dict[str, Any], AssetAction]:
        try:
            return self.create(), "created"
        except ClientError as error:
            if error_code(error) != "ConflictException":
                raise
        # The asset exists but SSM forgot it (a crash before PutParameter, or a lost
        # parameter): adopt it by its externalIdentifier instead of creating a duplicate.
        existing = find_asset_by_external_identifier(self.run, self.name, self.snapshot.schema_arn)
        if existing is None:
            raise SyncError(
                f"DataZone reports an asset for {self.snapshot.schema_arn} exists, but search "
                "cannot find it"
            )
        self.run.log.warning(
            f"{self.snapshot.topic}: SSM had no mapping for asset {existing['identifier']}; "
            "repaired"
        )
        return self.revise(existing["identifier"]), "adopted"

    def revise_or_recreate(self, asset_id: str) -> dict[str, Any]:
        try:
            return self.revise(asset_id)
        except ClientError as error:
            if error_code(error) != "ResourceNotFoundException":
                raise
        self.run.log.warning(
            f"{self.snapshot.topic}: asset {asset_id} was deleted in DataZone; recreating it"
        )
        return self.create()


def find_asset_by_external_identifier(
    run: SyncRun, name: str, external_identifier: str
) -> dict[str, Any] | None:
    for item in run.resource.datazone.search_assets(run.settings.domain_id, text=name):
        if item.get("externalIdentifier") == external_identifier:
            return item
    return None
