"""What one sync run works with: the sync resource, and the lookups it makes once per run.

The assets, the jobs, the checks, the sensor, `dzlineage sync` and the benchmarks all start a
run the same way: ``SyncRun(LineageSyncResource, log)``. Each lookup here is made at most once
per run however many topics the run covers (one registry listing, one read of the mapping, one
cluster description, one read of the connectors and the topology derived from them), so the
API calls of a run grow with the topics it changes, not with the topics it merely considers.

A run's topics are synced by several threads (`concurrency` setting); each lookup is made under
its own lock, so the first thread to need it makes the call and the others wait for its answer,
and a run's start makes its independent lookups at once (:meth:`SyncRun.prefetch`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import queue
import threading
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import cached_property, partial
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import yaml

from dzlineage_dagster.core.aws.authorization import iam_principal
from dzlineage_dagster.core.aws.concurrency import at_once
from dzlineage_dagster.core.catalog.discovery import (
    RegistryTopic,
    describing_schema_names,
    registry_topics,
    schemas_naming_no_topic,
    topic_sync_token,
)
from dzlineage_dagster.core.catalog.forms import KAFKA_TOPIC_ASSET_TYPE
from dzlineage_dagster.core.connectors.debezium import SourceTable
from dzlineage_dagster.core.connectors.report import connectors_digest
from dzlineage_dagster.core.connectors.table_mapping import NamingConventionMapper, TopicTableMapper
from dzlineage_dagster.core.connectors.topology import (
    ConnectorDefinition,
    ConnectorTopicMapper,
    OverrideError,
    Topology,
    build_topology,
)
from dzlineage_dagster.core.identity.kafka import (
    KafkaCluster,
    parse_broker_aliases,
    preferred_broker_string,
)
from dzlineage_dagster.core.identity.sources import SourceHosts, source_table_dataset
from dzlineage_dagster.core.mapping.ssm_names import MappingRecord, registry_arn_of_schema
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.resources.kafka_connect_rest import (
    KafkaConnectRestError,
    read_kafka_connect_connectors,
)
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.catalog.mapping_store import MappingStore
from dzlineage_dagster.sync.errors import SyncError, error_code
from dzlineage_dagster.sync.lineage.foreign import ForeignRun, find_foreign_runs
from dzlineage_dagster.sync.lineage.health import (
    LineageHealth,
    check_lineage_health,
    events_held_before,
)


class run_lookup(cached_property):
    """A cached_property made once per run even when threads ask for it at the same time
    (Python 3.12 dropped cached_property's own lock).

    Each lookup has its own lock, so different lookups are made at once (:meth:`SyncRun.prefetch`).
    A lookup holds its lock while it asks for the lookups it is made of, and those never ask
    for it back (a cycle would recurse forever), so locks are always taken in the same order
    and two threads cannot each wait for the other's."""

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        cached = instance.__dict__.get(self.attrname, _MISSING)
        if cached is not _MISSING:
            return cached
        with instance.lookup_lock(self.attrname):
            return super().__get__(instance, owner)


_MISSING = object()


class MainThreadLog:
    """A run's log for its worker threads: their lines wait until the thread that started the
    run emits them (:meth:`flush`), so Dagster's log is only ever called from that thread."""

    def __init__(self, target: Any) -> None:
        self.target = target
        self._owner = threading.get_ident()
        self._waiting: queue.SimpleQueue[tuple[str, str]] = queue.SimpleQueue()

    def _emit(self, level: str, message: str) -> None:
        if threading.get_ident() == self._owner:
            getattr(self.target, level)(message)
        else:
            self._waiting.put((level, message))

    def debug(self, message: str) -> None:
        self._emit("debug", message)

    def info(self, message: str) -> None:
        self._emit("info", message)

    def warning(self, message: str) -> None:
        self._emit("warning", message)

    def error(self, message: str) -> None:
        self._emit("error", message)

    def flush(self) -> None:
        while True:
            try:
                level, message = self._waiting.get_nowait()
            except queue.Empty:
                return
            getattr(self.target, level)(message)


def _code_version() -> str:
    try:
        return version("dzlineage-dagster")
    except PackageNotFoundError:
        return "unknown"


class RegistryByName(Mapping[str, RegistryTopic]):
    """The registry as a run over a few topics sees it, without listing it: every topic's name
    is known without a call (the Dagster partitions the registry sensor keeps), and a topic's
    schema is looked up by name (GetSchema: its value schema, a schema named as the topic, its
    key schema, as :func:`~dzlineage_dagster.core.catalog.discovery.registry_topics` prefers them) the
    first time the run asks for it. GetSchema's answer is kept for the schema stage, which
    would make the same call (:meth:`SyncRun.schema_description`), so a run over k topics costs
    k calls here in place of ``ceil(N / 100)`` ListSchemas pages."""

    def __init__(self, names: Sequence[str], describe: Any) -> None:
        self._names = dict.fromkeys(sorted(names))
        self._describe = describe
        self._described: dict[str, RegistryTopic | None] = {}
        #: Schema ARN -> GetSchema's answer, until the schema stage takes it.
        self.answers: dict[str, dict[str, Any]] = {}

    def __getitem__(self, topic: str) -> RegistryTopic:
        if topic not in self._names:
            raise KeyError(topic)
        if topic not in self._described:
            self._described[topic] = self._look_up(topic)
        described = self._described[topic]
        if described is None:
            raise KeyError(topic)  # its schema left the registry since the sensor's tick
        return described

    def _look_up(self, topic: str) -> RegistryTopic | None:
        for name in describing_schema_names(topic):
            answer = self._describe(name)
            if answer is not None:
                self.answers[answer["SchemaArn"]] = answer
                return registry_topics([answer])[topic]
        return None

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, topic: object) -> bool:
        return topic in self._names

    def any_described(self) -> RegistryTopic | None:
        """A topic the run has looked up already (no call), if any."""
        return next((t for t in self._described.values() if t is not None), None)


@dataclass(frozen=True)
class ClusterInfo:
    arn: str
    name: str
    cluster_type: str
    #: The preferred listener's broker string (the asset's MSK form shows it).
    bootstrap_brokers: str
    #: GetBootstrapBrokers' broker string of every listener the cluster has.
    broker_strings: Mapping[str, str] = field(default_factory=dict)


@dataclass
class SyncRun:
    resource: LineageSyncResource
    log: Any = field(default_factory=lambda: logging.getLogger("dzlineage"))
    #: Every registry topic's name, known without a call (a Dagster run: the partitions the
    #: registry sensor keeps), for a run over a few of them: the registry is then not listed,
    #: each topic the run needs is looked up by name (:class:`RegistryByName`).
    topic_names: Sequence[str] | None = None
    mappings: MappingStore = field(init=False)
    _asset_type_revision: str | None = field(default=None, init=False, repr=False)
    _lookup_locks: dict[str, threading.RLock] = field(default_factory=dict, init=False, repr=False)
    _table_names: dict[str, list[str]] = field(default_factory=dict, init=False, repr=False)
    _lookup_locks_guard: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False
    )
    #: When the run started (this machine's clock): a DataZone answer dated before it was
    #: replayed for a client token, not made by this run (the asset stage dates its requests
    #: on AWS's clock instead, by the answer's Date header, when there is one).
    started_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc), init=False)
    #: Schema ARNs whose lineage a reconcile re-posts (missing or FAILED in DataZone).
    repost_lineage: set[str] = field(default_factory=set, init=False)
    #: A reconcile looks for foreign runs on the sync's jobs through the whole lookback window,
    #: not only down to the sync's newest run (:func:`find_foreign_runs`).
    reconciling: bool = field(default=False, init=False)
    #: Topic -> the owners its schema tag and connectors name, read once a run (the asset
    #: stage and Glue's dataset event both need them: one GetTags).
    configured_owners: dict[str, tuple] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def over_topics(
        cls,
        resource: LineageSyncResource,
        log: Any,
        topics: Sequence[str],
        topic_names: Sequence[str],
    ) -> SyncRun:
        """A run over ``topics`` of a registry whose topics are ``topic_names``: the topics
        are looked up by name when that takes no more calls than listing the registry (a
        page per 100 schemas), so a run over a few topics costs calls for those few."""
        pages = -(-len(topic_names) // 100)
        by_name = topic_names if 0 < len(topics) <= pages else None
        return cls(resource, log, topic_names=by_name)

    def __post_init__(self) -> None:
        self.log = self.log or logging.getLogger("dzlineage")
        self.mappings = MappingStore(
            self.resource.mapping_parameters,
            self.settings.ssm_prefix,
            self.log,
            domain_id=self.settings.domain_id,
            project_id=self.settings.project_id,
            legacy_owner=self._owned_legacy_record,
            layout=self.settings.ssm_mapping_layout,
            tier=self.settings.ssm_tier,
        )

    def lookup_lock(self, name: str) -> threading.RLock:
        """The lock that makes the run's ``name`` lookup once, however many threads ask."""
        with self._lookup_locks_guard:
            return self._lookup_locks.setdefault(name, threading.RLock())

    def table_names(self, database: str) -> list[str]:
        """The tables of ``database`` in the Glue catalog (``DZLINEAGE_GLUE_CATALOG_ID``'s),
        read with GetTables once per run whoever asks: the topology's confirmation, the
        platform's datasets, `trace`."""
        with self.lookup_lock(f"table_names/{database}"):
            if database not in self._table_names:
                self._table_names[database] = self.resource.data_catalog.table_names(
                    database, self.settings.glue_catalog_id
                )
            return self._table_names[database]

    def prefetch(self, *lookups: str) -> None:
        """Make these lookups at once, each on its own thread, so a run's start waits for the
        slowest of them rather than for their sum (at AWS's latency, the registry's pages, the
        connectors' descriptions, the cluster and the domain took 1.3 s one after the other).

        Only lookups the caller is about to make anyway: a prefetch adds no call. One that
        fails is not kept, so the caller's own use makes it again and meets the error where it
        handles it (e.g. :func:`~dzlineage_dagster.sync.checks.preflight.check_platform` names
        the setting). Their log lines reach the log on this thread, once they are all made.
        """
        pending = [name for name in lookups if name not in self.__dict__]
        if len(pending) < 2:
            return
        log = MainThreadLog(self.log)
        self.log = log
        try:
            at_once(*(partial(self._lookup_if_it_answers, name) for name in pending))
        finally:
            self.log = log.target
            log.flush()

    def _lookup_if_it_answers(self, name: str) -> None:
        with suppress(Exception):
            getattr(self, name)

    @run_lookup
    def convention(self) -> NamingConventionMapper:
        """The naming-convention guess: the topology's last fallback, and the drift check's
        comparison."""
        return NamingConventionMapper(
            database=self.settings.glue_database, table_pattern=self.settings.table_name_pattern
        )

    @run_lookup
    def governance_principal(self) -> str:
        """The IAM principal the governance side's calls are made as (STS GetCallerIdentity,
        which needs no permission)."""
        caller = self.resource.datazone.client("sts").get_caller_identity()["Arn"]
        return iam_principal(caller)

    @run_lookup
    def mapper(self) -> TopicTableMapper:
        """Topic -> Iceberg table: override, else the connectors, else the convention."""
        return ConnectorTopicMapper(self.topology)

    @run_lookup
    def connectors(self) -> tuple[ConnectorDefinition, ...]:
        """Every connector with its configuration, from the Kafka Connect REST endpoint when
        one is set, else from MSK Connect (ListConnectors + DescribeConnector)."""
        url = self.settings.kafka_connect_url
        if url:
            try:
                configs = read_kafka_connect_connectors(url)
            except KafkaConnectRestError as error:
                raise SyncError(str(error)) from None
            return tuple(ConnectorDefinition(name, config) for name, config in configs.items())
        return tuple(
            ConnectorDefinition(c["connectorName"], c.get("connectorConfiguration") or {})
            for c in self.resource.msk.connectors()
        )

    @run_lookup
    def override_document(self) -> dict[str, Any]:
        """The override file's content ({} when the setting is unset); the topology checks its
        entries (connector references need the parsed connectors)."""
        path = self.settings.lineage_overrides
        if not path:
            return {}
        where = f"DZLINEAGE_LINEAGE_OVERRIDES={path}"
        try:
            document = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as error:
            raise SyncError(f"{where}: {error}") from None
        if not isinstance(document, dict):
            raise SyncError(f"{where}: the file must hold a mapping with a 'topics' mapping")
        return document

    @run_lookup
    def topology(self) -> Topology:
        """The connectors parsed against the registry's topics, once per run. A sink that
        does not create missing tables writes nothing to one the Glue Data Catalog lacks, so
        the databases it routes to are read (GetTables, once each) and the topology rebuilt
        knowing their tables."""
        topology = self._build_topology(None)
        databases = topology.tables_to_confirm()
        if not databases:
            return topology
        return self._build_topology({db: set(self.table_names(db)) for db in databases})

    def _build_topology(self, catalog_tables: dict[str, set[str]] | None) -> Topology:
        try:
            return build_topology(
                self.connectors,
                self.registry_topics,
                overrides=self.override_document,
                fallback=self.convention,
                registry_name=self.settings.registry_name,
                debezium_version=self.settings.debezium_version_tuple,
                catalog_tables=catalog_tables,
            )
        except OverrideError as error:
            raise SyncError(
                f"DZLINEAGE_LINEAGE_OVERRIDES={self.settings.lineage_overrides}: {error}"
            ) from None

    def topic_dataset(self, topic: str) -> tuple[str, str]:
        """The topic's OpenLineage (namespace, name): the topic asset's sourceIdentifier and
        both lineage hops use it, so the topic is one node. Named by the cluster alone
        (:attr:`kafka_cluster`): a connector's bootstrap property, which Debezium's own lineage
        names the topic by, is one of the names the relay maps to it, never what moves it."""
        return self.kafka_cluster.topic_dataset(topic)

    def source_table_dataset(self, table: SourceTable) -> tuple[str, str]:
        """A captured source table's (namespace, name), as Debezium names it, its host taken
        through DZLINEAGE_SOURCE_HOST_ALIASES."""
        return source_table_dataset(
            table, sqlserver_scheme=self.settings.sqlserver_scheme, hosts=self.source_hosts
        )

    @cached_property
    def source_hosts(self) -> SourceHosts:
        return SourceHosts.parse(self.settings.source_host_aliases)

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
    def registry_topics(self) -> Mapping[str, RegistryTopic]:
        """The registry's topics: its schemas but those that name no topic (:attr:`not_topics`)."""
        registry, name = self.resource.schema_registry, self.settings.registry_name
        if self.topic_names is not None:
            return RegistryByName(
                self.topic_names, lambda schema: registry.schema_named(name, schema)
            )
        if not self.not_topics:  # the usual registry: one dict of every topic, not two
            return self.registry_listing
        return {t: info for t, info in self.registry_listing.items() if t not in self.not_topics}

    @run_lookup
    def registry_listing(self) -> dict[str, RegistryTopic]:
        """Every schema of the registry as the topic it names, whether a topic can have that
        name or not."""
        registry = self.resource.schema_registry
        return registry_topics(registry.list_schemas(self.settings.registry_name))

    @run_lookup
    def not_topics(self) -> dict[str, str]:
        """Listed schemas whose name no Kafka topic can have (``$``, ``#``, over 249
        characters), with why: reported once a run (a warning), never synced, never a failure
        (only deleting the schema could fix it). A run by name lists nothing: empty."""
        if self.topic_names is not None:
            return {}
        found = schemas_naming_no_topic(self.registry_listing)
        for topic, problem in found.items():
            self.log.warning(f"registry schema for {topic!r} is not a topic: {problem}")
        return found

    def schema_description(self, schema_arn: str) -> dict[str, Any]:
        """GetSchema's answer for the schema: the one the registry lookup kept, else a call."""
        listed = self.registry_topics
        kept = listed.answers.pop(schema_arn, None) if isinstance(listed, RegistryByName) else None
        return kept or self.resource.schema_registry.get_schema(schema_arn)

    @run_lookup
    def sync_context(self) -> str:
        """What shapes the catalog besides the registry: the settings that name and place
        things (the lineage settings among them), the lineage override file, the connector
        topology's signature (see :attr:`connectors_digest`), the topic asset type's revision
        and this code's version. A change to any of them makes every topic's registry token and
        the registry digest change, so an idle headless sync never skips it."""
        # How fast it goes is no part of what it makes.
        settings = self.settings.model_dump(exclude={"concurrency", "glue_lineage_tps"})
        context = json.dumps(
            {
                "settings": settings,
                "lineage_overrides": self.override_document,
                "connectors": self.connectors_digest,
                "asset_type_revision": self.asset_type_revision,
                "code": _code_version(),
            },
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(context.encode()).hexdigest()

    @run_lookup
    def connectors_digest(self) -> str:
        """A digest of every connector's current configuration: with a Kafka Connect REST
        endpoint, of the configs themselves (one GET returns them all); on MSK Connect, of
        ListConnectors' names, ARNs, ``currentVersion`` and creation times (a configuration
        change makes a new version), so no DescribeConnector is needed to notice a change."""
        if self.settings.kafka_connect_url:
            return connectors_digest([c.name, dict(c.config)] for c in self.connectors)
        return connectors_digest(
            [c["connectorName"], c["connectorArn"], c.get("currentVersion"), c.get("creationTime")]
            for c in self.resource.msk.connector_summaries()
        )

    def topic_token(self, topic: str) -> str:
        """The topic's registry token under this run's context (see ``MappingRecord``)."""
        return topic_sync_token(self.registry_topics[topic], self.sync_context)

    @run_lookup
    def registry_arn(self) -> str:
        """The configured registry's ARN: from a listed schema's ARN, else GetRegistry."""
        registry = self.registry_topics
        if isinstance(registry, RegistryByName):
            looked_up = registry.any_described()
            if looked_up is not None:
                return registry_arn_of_schema(looked_up.schema_arn)
        else:
            for listed in registry.values():
                return registry_arn_of_schema(listed.schema_arn)
        return self.resource.schema_registry.registry_arn(self.settings.registry_name)

    def in_registry(self, record: MappingRecord) -> bool:
        """Whether the record's schema belongs to the configured registry."""
        return registry_arn_of_schema(record.schema_arn) == self.registry_arn

    def _owned_legacy_record(self, record: MappingRecord) -> MappingRecord | None:
        """A first-layout record with this run's scope, if its asset is this run's."""
        datazone = self.resource.datazone.client()
        try:
            asset = datazone.get_asset(
                domainIdentifier=self.settings.domain_id, identifier=record.asset_id
            )
        except datazone.exceptions.ClientError as error:
            if error_code(error) in ("ResourceNotFoundException", "AccessDeniedException"):
                return None
            raise
        if asset.get("owningProjectId") != self.settings.project_id:
            return None
        if asset.get("externalIdentifier") != record.schema_arn:
            return None
        return replace(
            record,
            domain_id=self.settings.domain_id,
            project_id=self.settings.project_id,
            registry_arn=registry_arn_of_schema(record.schema_arn),
        )

    @property
    def asset_type_revision(self) -> str:
        """The latest revision of the topic asset type (read once, unless a sync just made it)."""
        with self.lookup_lock("asset_type_revision"):
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
        return ClusterInfo(
            arn=arn,
            name=description["ClusterName"],
            cluster_type=description.get("ClusterType", "PROVISIONED"),
            bootstrap_brokers=preferred_broker_string(brokers),
            broker_strings=brokers,
        )

    @run_lookup
    def kafka_cluster(self) -> KafkaCluster:
        """The cluster's Kafka identity: the one namespace of its topics, per the namespace
        settings, and every broker and alias that names it."""
        try:
            return KafkaCluster.of(
                name=self.cluster.name,
                broker_strings=self.cluster.broker_strings,
                style=self.settings.topic_namespace_style,
                pinned=self.settings.topic_namespace,
                aliases=parse_broker_aliases(self.settings.kafka_broker_aliases),
            )
        except ValueError as error:
            raise SyncError(f"cluster {self.cluster.arn}: {error}") from None

    @property
    def topic_namespace(self) -> str:
        """OpenLineage namespace of every topic of the cluster, per the namespace settings."""
        return self.kafka_cluster.namespace

    @run_lookup
    def lineage_health(self) -> LineageHealth:
        """The lineage runs DataZone failed after accepting them: looked up once per run, when
        the lineage stage first plans an edge (one ListLineageEvents page when none failed)."""
        return check_lineage_health(self)

    @run_lookup
    def foreign_runs(self) -> tuple[ForeignRun, ...]:
        """Runs someone else posted under the sync's jobs that are their job's latest: looked
        up once per run (one ListLineageEvents page while nobody else posts)."""
        return find_foreign_runs(self, whole_window=self.reconciling)

    @run_lookup
    def domain(self) -> dict[str, Any]:
        """GetDomain's answer: the portal link, and the version and root domain unit the
        authorization check reads."""
        return self.resource.datazone.client().get_domain(identifier=self.settings.domain_id)

    @run_lookup
    def project(self) -> dict[str, Any]:
        """GetProject's answer for the settings' project: the start-up check reads it, the
        authorization check its domain unit, the owners lookup its name."""
        return self.resource.datazone.client().get_project(
            domainIdentifier=self.settings.domain_id, identifier=self.settings.project_id
        )

    @run_lookup
    def lineage_events_held(self) -> Counter[tuple[str, str]]:
        """The lineage events DataZone held when this run started, by (run id, event type):
        looked up once per run, when a PostLineageEvent first answers 409."""
        return events_held_before(self)

    @run_lookup
    def portal_url(self) -> str | None:
        return self.domain.get("portalUrl")

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
