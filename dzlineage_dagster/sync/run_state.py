"""What one sync run works with: the sync resource, and the lookups it makes once per run.

The assets, the jobs, the checks, the sensor, `dzlineage sync` and the benchmarks all start a
run the same way: ``SyncRun(LineageSyncResource, log)``. Each lookup here is made at most once
per run however many topics the run covers (one registry listing, one read of the mapping, one
cluster description), so the API calls of a run grow with the topics it changes, not with the
topics it merely considers.

A run's topics are synced by several threads (`concurrency` setting); each lookup is made under
the run's lock, so the first thread to need it makes the call and the others wait for its answer.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from dataclasses import dataclass, field
from functools import cached_property
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from dzlineage_dagster.core.discovery import RegistryTopic, registry_topics, topic_sync_token
from dzlineage_dagster.core.forms import KAFKA_TOPIC_ASSET_TYPE
from dzlineage_dagster.core.openlineage import kafka_dataset_namespace
from dzlineage_dagster.core.table_mapping import NamingConventionMapper, TopicTableMapper
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.errors import SyncError
from dzlineage_dagster.sync.mapping_store import MappingStore


class run_lookup(cached_property):
    """A cached_property made once per run even when threads ask for it at the same time
    (Python 3.12 dropped cached_property's own lock)."""

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        cached = instance.__dict__.get(self.attrname, _MISSING)
        if cached is not _MISSING:
            return cached
        with instance._lookup_lock:
            return super().__get__(instance, owner)


_MISSING = object()


def _code_version() -> str:
    try:
        return version("dzlineage-dagster")
    except PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class ClusterInfo:
    arn: str
    name: str
    cluster_type: str
    bootstrap_brokers: str


@dataclass
class SyncRun:
    resource: LineageSyncResource
    log: Any = field(default_factory=lambda: logging.getLogger("dzlineage"))
    mapper: TopicTableMapper | None = None
    mappings: MappingStore = field(init=False)
    _asset_type_revision: str | None = field(default=None, init=False, repr=False)
    _lookup_lock: threading.RLock = field(default_factory=threading.RLock, init=False, repr=False)

    def __post_init__(self) -> None:
        self.log = self.log or logging.getLogger("dzlineage")
        self.mappings = MappingStore(
            self.resource.mapping_parameters, self.settings.ssm_prefix, self.log
        )
        if self.mapper is None:
            self.mapper = NamingConventionMapper(
                database=self.settings.glue_database,
                table_pattern=self.settings.table_name_pattern,
            )

    @property
    def settings(self) -> LineageSettings:
        return self.resource.settings

    def api_calls(self) -> dict[str, int]:
        """Calls made through this run's clients, by `service.Operation`."""
        return self._totals("api_calls")

    def api_retries(self) -> dict[str, int]:
        """Attempts botocore retried for this run's calls, by `service.Operation`."""
        return self._totals("api_retries")

    def _totals(self, counter: str) -> dict[str, int]:
        totals: dict[str, int] = {}
        for aws in self.resource.aws_resources:
            for operation, count in getattr(aws, counter).items():
                totals[operation] = totals.get(operation, 0) + count
        return dict(sorted(totals.items()))

    @run_lookup
    def registry_topics(self) -> dict[str, RegistryTopic]:
        listed = self.resource.schema_registry.list_schemas(self.settings.registry_name)
        return registry_topics(listed)

    @run_lookup
    def sync_context(self) -> str:
        """What shapes the catalog besides the registry: the settings that name and place
        things, the topic asset type's revision and this code's version. A change to any of
        them makes every topic's registry token and the registry digest change."""
        settings = self.settings.model_dump(exclude={"concurrency"})
        context = json.dumps(
            {
                "settings": settings,
                "asset_type_revision": self.asset_type_revision,
                "code": _code_version(),
            },
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(context.encode()).hexdigest()

    def topic_token(self, topic: str) -> str:
        """The topic's registry token under this run's context (see ``MappingRecord``)."""
        return topic_sync_token(self.registry_topics[topic], self.sync_context)

    @property
    def registry_arn(self) -> str | None:
        """The registry's ARN, from any of its schemas' (None when it has none)."""
        first = next(iter(self.registry_topics.values()), None)
        if first is None:
            return None
        prefix, _, _ = first.schema_arn.partition(":schema/")
        return f"{prefix}:registry/{self.settings.registry_name}"

    @property
    def asset_type_revision(self) -> str:
        """The latest revision of the topic asset type (read once, unless a sync just made it)."""
        with self._lookup_lock:
            if self._asset_type_revision is None:
                self._asset_type_revision = self._read_asset_type_revision()
            return self._asset_type_revision

    def use_asset_type_revision(self, revision: str) -> None:
        self._asset_type_revision = revision

    def _read_asset_type_revision(self) -> str:
        datazone = self.resource.datazone.client()
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

    @run_lookup
    def cluster(self) -> ClusterInfo:
        arn = self.settings.msk_cluster_arn
        description = self.resource.msk.describe_cluster(arn)
        brokers = self.resource.msk.bootstrap_brokers(arn)
        preferred = ("BootstrapBrokerStringSaslIam", "BootstrapBrokerStringTls")
        chosen = next((brokers[k] for k in preferred if brokers.get(k)), None)
        return ClusterInfo(
            arn=arn,
            name=description["ClusterName"],
            cluster_type=description.get("ClusterType", "PROVISIONED"),
            bootstrap_brokers=chosen or brokers.get("BootstrapBrokerString", ""),
        )

    @run_lookup
    def topic_namespace(self) -> str:
        """OpenLineage namespace of every topic of the cluster, per the namespace setting."""
        if self.settings.topic_namespace_style == "cluster":
            return f"kafka://{self.cluster.name}"
        return kafka_dataset_namespace(self.cluster.bootstrap_brokers)

    @run_lookup
    def portal_url(self) -> str | None:
        return self.resource.datazone.portal_url(self.settings.domain_id)

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
