"""What one sync run works with: settings, resources, and the lookups it makes once per run.

Each lookup here is made at most once per run however many topics the run covers (one
registry listing, one read of the SSM mapping, one cluster description), so the API calls of
a run grow with the topics it changes, not with the topics it merely considers.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from dzlineage_dagster.core.discovery import RegistryTopic, registry_topics
from dzlineage_dagster.core.forms import KAFKA_TOPIC_ASSET_TYPE
from dzlineage_dagster.core.openlineage import kafka_dataset_namespace
from dzlineage_dagster.core.ssm_names import MappingRecord, parameter_name, validate_prefix
from dzlineage_dagster.core.table_mapping import NamingConventionMapper, TopicTableMapper
from dzlineage_dagster.resources import (
    CatalogResource,
    DataZoneResource,
    MskResource,
    ParameterStoreResource,
    SchemaRegistryResource,
)
from dzlineage_dagster.settings import LineageSettings


class SyncError(Exception):
    """A topic could not be synced; the message says why, for the run log and the CLI."""


@dataclass(frozen=True)
class ClusterInfo:
    arn: str
    name: str
    cluster_type: str
    bootstrap_brokers: str


@dataclass
class SyncEnvironment:
    settings: LineageSettings
    registry: SchemaRegistryResource
    parameters: ParameterStoreResource
    datazone: DataZoneResource
    msk: MskResource
    log: Any = field(default_factory=lambda: logging.getLogger("dzlineage"))
    mapper: TopicTableMapper | None = None
    _asset_type_revision: str | None = field(default=None, init=False, repr=False)

    @classmethod
    def of(cls, catalog: CatalogResource, log: Any = None) -> SyncEnvironment:
        """The environment of one run, from the catalog resource (and the run's logger)."""
        return cls(
            settings=catalog.settings,
            registry=catalog.registry,
            parameters=catalog.parameters,
            datazone=catalog.datazone,
            msk=catalog.msk,
            log=log or logging.getLogger("dzlineage"),
        )

    def __post_init__(self) -> None:
        try:
            validate_prefix(self.settings.ssm_prefix)
        except ValueError as error:
            raise SyncError(f"DZLINEAGE_SSM_PREFIX: {error}") from None
        if self.mapper is None:
            self.mapper = NamingConventionMapper(
                database=self.settings.glue_database,
                table_pattern=self.settings.table_name_pattern,
            )

    @property
    def resources(self) -> list[Any]:
        return [self.registry, self.parameters, self.datazone, self.msk]

    def api_calls(self) -> dict[str, int]:
        """Calls made through this run's clients, by `service.Operation`."""
        totals: dict[str, int] = {}
        for resource in self.resources:
            for operation, count in resource.api_calls.items():
                totals[operation] = totals.get(operation, 0) + count
        return dict(sorted(totals.items()))

    @cached_property
    def registry_topics(self) -> dict[str, RegistryTopic]:
        return registry_topics(self.registry.list_schemas(self.settings.registry_name))

    @cached_property
    def stored_records(self) -> dict[str, MappingRecord]:
        """Schema ARN -> the mapping record SSM holds for it."""
        records = {}
        for name, value in self.parameters.parameters_under(self.settings.ssm_prefix).items():
            try:
                record = MappingRecord.from_parameter_value(value)
            except ValueError as error:
                self.log.warning(f"ignoring unreadable mapping parameter {name}: {error}")
                continue
            if name != self.parameter_name(record.schema_arn):
                # Hand-copied or from another prefix: trusting it would map a schema twice.
                self.log.warning(f"ignoring mapping parameter {name}: it names another schema")
                continue
            records[record.schema_arn] = record
        return records

    def parameter_name(self, schema_arn: str) -> str:
        return parameter_name(self.settings.ssm_prefix, schema_arn)

    def remember(self, record: MappingRecord) -> None:
        """Write the record to SSM (the durable mapping) and to this run's view of it."""
        self.parameters.put(
            self.parameter_name(record.schema_arn),
            record.to_parameter_value(),
            description=f"DataZone asset of Kafka topic {record.topic}"[:1024],
        )
        self.stored_records[record.schema_arn] = record

    def forget(self, schema_arn: str) -> None:
        self.parameters.delete(self.parameter_name(schema_arn))
        self.stored_records.pop(schema_arn, None)

    @property
    def asset_type_revision(self) -> str:
        """The latest revision of the topic asset type (read once, unless a sync just made it)."""
        if self._asset_type_revision is None:
            self._asset_type_revision = self._read_asset_type_revision()
        return self._asset_type_revision

    def use_asset_type_revision(self, revision: str) -> None:
        self._asset_type_revision = revision

    def _read_asset_type_revision(self) -> str:
        datazone = self.datazone.client()
        try:
            asset_type = datazone.get_asset_type(
                domainIdentifier=self.settings.domain_id, identifier=KAFKA_TOPIC_ASSET_TYPE.name
            )
        except datazone.exceptions.ResourceNotFoundException:
            raise SyncError(
                f"DataZone asset type {KAFKA_TOPIC_ASSET_TYPE.name} does not exist in domain "
                f"{self.settings.domain_id}: materialize datazone_custom_types first"
            ) from None
        return asset_type["revision"]

    @cached_property
    def cluster(self) -> ClusterInfo:
        arn = self.settings.msk_cluster_arn
        description = self.msk.describe_cluster(arn)
        brokers = self.msk.bootstrap_brokers(arn)
        preferred = ("BootstrapBrokerStringSaslIam", "BootstrapBrokerStringTls")
        chosen = next((brokers[k] for k in preferred if brokers.get(k)), None)
        return ClusterInfo(
            arn=arn,
            name=description["ClusterName"],
            cluster_type=description.get("ClusterType", "PROVISIONED"),
            bootstrap_brokers=chosen or brokers.get("BootstrapBrokerString", ""),
        )

    @cached_property
    def topic_namespace(self) -> str:
        """OpenLineage namespace of every topic of the cluster, per the namespace setting."""
        if self.settings.topic_namespace_style == "cluster":
            return f"kafka://{self.cluster.name}"
        return kafka_dataset_namespace(self.cluster.bootstrap_brokers)

    @cached_property
    def portal_url(self) -> str | None:
        return self.datazone.portal_url(self.settings.domain_id)

    def asset_url(self, asset_id: str) -> str | None:
        """The asset's page in the DataZone portal (per the `asset_url_template` setting)."""
        if not self.portal_url:
            return None
        return self.settings.asset_url_template.format(
            portal_url=self.portal_url.rstrip("/"),
            domain_id=self.settings.domain_id,
            project_id=self.settings.project_id,
            asset_id=asset_id,
        )
