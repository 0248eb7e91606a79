"""What the OpenLineage relay does to one event before DataZone sees it (pure, no AWS).

An OpenLineage producer (Debezium, openlineage-spark, Airflow, ...) posts events in the
specification's JSON. DataZone's ``PostLineageEvent`` takes RunEvents only, as a blob of at
most 300,000 bytes, and links lineage nodes to catalog assets by ``sourceIdentifier``, so the
relay:

- parses the event with openlineage-python's classes and checks the specification's required
  fields, naming the first one that is wrong (:func:`parse_event`);
- derives PostLineageEvent's ``clientToken`` from the event, so a producer's retry replays
  instead of posting twice (:func:`client_token`);
- rewrites dataset names to the ones the rest of the graph uses: every broker address of the
  MSK cluster (and every alias) to its one Kafka namespace
  (:class:`~dzlineage_dagster.core.identity.kafka.KafkaCluster`), a source database's alias
  host to its canonical host, a Glue table (by any name producers give it and the catalog
  confirms: :func:`~dzlineage_dagster.core.identity.glue.resolve_glue_table`) to the name
  DataZone files under the table's ARN, keeping OpenLineage's Glue name in its ``symlinks``
  facet, and namespaces mapped by settings; each rewrite is recorded on the dataset in a
  ``dzlineage_canonicalName`` facet (:func:`canonicalize`);
- trims the largest facets of an event over the size limit and records what it removed in a
  ``dzlineage_trimmed`` run facet, or refuses the event when even that cannot make it fit
  (:func:`fit_to_size`).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal
from urllib.parse import urlparse

import attr
from openlineage.client.event_v2 import (
    DatasetEvent,
    InputDataset,
    Job,
    JobEvent,
    OutputDataset,
    Run,
    RunEvent,
    RunState,
    StaticDataset,
)
from openlineage.client.facet_v2 import DatasetFacet, RunFacet
from openlineage.client.serde import Serde

from dzlineage_dagster.core.identity.glue import (
    GLUE_RULES,
    GlueCatalog,
    claimed_table_name,
    is_glue_namespace,
    keep_glue_symlink,
    resolve_glue_table,
)
from dzlineage_dagster.core.identity.kafka import UNKNOWN_NAMESPACE, DebeziumTopics, KafkaCluster
from dzlineage_dagster.core.identity.sources import SOURCE_SCHEMES, SourceHosts
from dzlineage_dagster.core.lineage.graph import near_matches, node_kind, source_identifier
from dzlineage_dagster.core.lineage.openlineage import MAX_EVENT_BYTES

#: The producer URI of the facets the relay adds to events it forwards.
RELAY_PRODUCER = "https://github.com/dzlineage/dzlineage-dagster/relay"
#: Custom facets are prefixed with their producer's name, as the specification asks.
CANONICAL_NAME_FACET = "dzlineage_canonicalName"
TRIMMED_FACET = "dzlineage_trimmed"
RELAY_FACET_PREFIX = "dzlineage_"

EventKind = Literal["run", "dataset", "job"]
#: The facet maps of an event, where trimming may remove facets: (container path, key).
_DATASET_FACET_MAPS = {"inputs": ("facets", "inputFacets"), "outputs": ("facets", "outputFacets")}


#: Deepest JSON nesting an event may have. OpenLineage's own facets nest a few levels (a
#: schema facet's nested fields one per level of the record): 64 is far beyond any, and far
#: from the ~1,000 where Python's recursion gives out copying or encoding the event.
MAX_NESTING_DEPTH = 64


class InvalidEvent(ValueError):
    """The body is not an OpenLineage event the relay can forward; the message says why."""


class EventTooLarge(ValueError):
    """The event exceeds PostLineageEvent's limit even without its removable facets."""


@attr.define
class CanonicalNameDatasetFacet(DatasetFacet):
    """The name a producer gave a dataset before the relay renamed it, and the rule used.

    Fields are camelCase like the specification's own facets.
    """

    originalNamespace: str
    originalName: str
    rule: str


@attr.define
class TrimmedRunFacet(RunFacet):
    """Facets the relay removed so the event fits DataZone's size limit."""

    originalBytes: int
    limitBytes: int
    removedFacets: list[dict[str, Any]] = attr.field(factory=list)


@dataclass(frozen=True)
class ReceivedEvent:
    """A checked event: which kind it is and its JSON object, as the producer sent it."""

    kind: EventKind
    document: dict[str, Any]

    @property
    def run_id(self) -> str | None:
        return self.document["run"]["runId"] if self.kind == "run" else None

    @property
    def event_type(self) -> str | None:
        return self.document.get("eventType")


def parse_event(body: bytes | str) -> ReceivedEvent:
    """Check ``body`` against the specification's required fields and classify it.

    The event is built into openlineage-python's ``event_v2`` classes, whose validators check
    the run id (a UUID) and the event time (ISO 8601 with a time); the facets stay as the
    producer wrote them. Raises :class:`InvalidEvent` naming the first offending field.
    """
    try:
        document = json.loads(body)
    except (UnicodeDecodeError, ValueError) as error:
        raise InvalidEvent(f"the body is not JSON: {error}") from None
    except RecursionError:
        raise InvalidEvent(f"the body nests JSON deeper than {MAX_NESTING_DEPTH} levels") from None
    if not isinstance(document, dict):
        raise InvalidEvent("the body must be a JSON object (one OpenLineage event)")
    _check_structure(document)
    for key in ("eventTime", "producer", "schemaURL"):
        _require_string(document, key, "event")
    for key in ("producer", "schemaURL"):
        if not _is_uri(document[key]):
            raise InvalidEvent(f"event.{key} must be an absolute URI, got {document[key]!r}")
    if "run" in document:
        _build_run_event(document)
        return ReceivedEvent("run", document)
    if "dataset" in document:
        dataset = _dataset(document["dataset"], "dataset", StaticDataset)
        _build(DatasetEvent, "event", eventTime=document["eventTime"], dataset=dataset)
        return ReceivedEvent("dataset", document)
    if "job" in document:
        _build(
            JobEvent,
            "event",
            eventTime=document["eventTime"],
            job=_job(document),
            inputs=_datasets(document, "inputs", InputDataset),
            outputs=_datasets(document, "outputs", OutputDataset),
        )
        return ReceivedEvent("job", document)
    raise InvalidEvent("an OpenLineage event needs `run` and `job` (RunEvent), `dataset` or `job`")


def _check_structure(document: dict[str, Any]) -> None:
    """Refuse what JSON can carry but the relay cannot forward: nesting deeper than
    :data:`MAX_NESTING_DEPTH` (copying or encoding it would exhaust Python's recursion), and
    text that is not Unicode (a lone surrogate such as ``"\\ud800"``: no UTF-8 encodes it, so
    neither the client token nor DataZone's blob could be made of it). Walked without
    recursion, so any depth is measured, not crashed on."""
    pending: list[tuple[Any, str, int]] = [(document, "event", 1)]
    while pending:
        value, where, depth = pending.pop()
        if isinstance(value, str):
            _check_text(value, where)
            continue
        if not isinstance(value, (dict, list)):
            continue
        if depth > MAX_NESTING_DEPTH:
            raise InvalidEvent(f"{_shown(where)} nests JSON deeper than {MAX_NESTING_DEPTH} levels")
        if isinstance(value, dict):
            for key, item in value.items():
                _check_text(key, f"a key of {where}")
                pending.append((item, f"{where}.{key}", depth + 1))
        else:
            pending.extend((item, f"{where}[{i}]", depth + 1) for i, item in enumerate(value))


def _check_text(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        bad = text[error.start : error.end].encode("unicode_escape").decode("ascii")
        raise InvalidEvent(
            f"{_shown(where)} holds {bad}, a lone surrogate: not Unicode text"
        ) from None


def _shown(where: str, limit: int = 200) -> str:
    """A path fit for an error message: printable, at most ``limit`` characters."""
    printable = where.encode("unicode_escape").decode("ascii")
    return printable if len(printable) <= limit else f"{printable[:limit]}..."


def _build_run_event(document: dict[str, Any]) -> RunEvent:
    run = document["run"]
    if not isinstance(run, dict):
        raise InvalidEvent("run must be an object")
    _require_string(run, "runId", "run")
    built_run = _build(Run, "run.runId", runId=run["runId"], facets=_facets(run, "facets", "run"))
    if "job" not in document:
        raise InvalidEvent("event.job is required in a RunEvent")
    event_type = document.get("eventType")
    if event_type is None:
        # Optional in the specification, but DataZone places the event in the run by it.
        raise InvalidEvent(
            f"event.eventType is required by DataZone; one of {[s.value for s in RunState]}"
        )
    if not isinstance(event_type, str) or event_type not in {state.value for state in RunState}:
        raise InvalidEvent(
            f"event.eventType must be one of {[s.value for s in RunState]}, got {event_type!r}"
        )
    return _build(
        RunEvent,
        "event.eventTime",
        eventTime=document["eventTime"],
        producer=document["producer"],
        eventType=RunState(event_type),
        run=built_run,
        job=_job(document),
        inputs=_datasets(document, "inputs", InputDataset),
        outputs=_datasets(document, "outputs", OutputDataset),
    )


def _build(cls: type, where: str, **fields: Any) -> Any:
    try:
        return cls(**fields)
    except (TypeError, ValueError, OverflowError) as error:
        raise InvalidEvent(f"{where} is not valid: {error}") from None


def _job(document: dict[str, Any]) -> Job:
    job = document["job"]
    if not isinstance(job, dict):
        raise InvalidEvent("job must be an object")
    _require_string(job, "namespace", "job")
    _require_string(job, "name", "job")
    return Job(namespace=job["namespace"], name=job["name"], facets=_facets(job, "facets", "job"))


def _datasets(document: dict[str, Any], key: str, cls: type) -> list[Any]:
    value = document.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidEvent(f"event.{key} must be a list")
    return [_dataset(item, f"{key}[{index}]", cls) for index, item in enumerate(value)]


def _dataset(value: Any, where: str, cls: type) -> Any:
    if not isinstance(value, dict):
        raise InvalidEvent(f"{where} must be an object")
    _require_string(value, "namespace", where)
    _require_string(value, "name", where)
    for facet_map in ("facets", "inputFacets", "outputFacets"):
        _facets(value, facet_map, where)
    return cls(namespace=value["namespace"], name=value["name"])


def _facets(owner: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    facets = owner.get(key)
    if facets is None:
        return {}
    if not isinstance(facets, dict):
        raise InvalidEvent(f"{where}.{key} must be an object")
    for name, facet in facets.items():
        if not isinstance(facet, dict):
            raise InvalidEvent(f"{where}.{key}.{name} must be an object")
        for required in ("_producer", "_schemaURL"):
            if not _is_uri(facet.get(required)):
                raise InvalidEvent(f"{where}.{key}.{name}.{required} must be an absolute URI")
    return facets


def _require_string(owner: dict[str, Any], key: str, where: str) -> None:
    value = owner.get(key)
    if not isinstance(value, str) or not value:
        raise InvalidEvent(f"{where}.{key} is required and must be a non-empty string")


def _is_uri(value: object) -> bool:
    return isinstance(value, str) and bool(urlparse(value).scheme) and " " not in value


def compact_json(document: Mapping[str, Any]) -> str:
    """The JSON the relay forwards: compact, keys in the producer's order, UTF-8 as is."""
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False)


def json_bytes(value: Any) -> int:
    """Size of ``value`` as compact UTF-8 JSON: what counts against PostLineageEvent's limit."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def client_token(event: ReceivedEvent) -> str:
    """PostLineageEvent's clientToken: 64 hex characters from the event as received.

    It covers the run id, the event type, the event time and a digest of the whole content
    (keys sorted), so a producer's retry of the same event gets the same token while two
    different events of one run at the same instant do not.
    """
    document = event.document
    content = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    parts = [
        event.run_id or "",
        event.event_type or "",
        document.get("eventTime", ""),
        hashlib.sha256(content.encode("utf-8")).hexdigest(),
    ]
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()


# --- names that join ---------------------------------------------------------------------------


@dataclass(frozen=True)
class NameRules:
    """How the relay renames datasets before forwarding; the first rule that applies wins.

    A Glue table of ``glue_catalog``, by any name producers give it
    (:func:`~dzlineage_dagster.core.identity.glue.resolve_glue_table`), takes the name DataZone
    files under the table's ARN (no catalog: Glue names pass as sent); else a namespace in
    ``namespace_map`` (from settings) is renamed; else a ``kafka://`` namespace that names
    ``kafka`` (any broker of the cluster on any listener, or an alias) becomes the cluster's
    namespace, and so does Debezium's ``kafka://unknown:unknown`` for a topic a connector of
    ``debezium`` writes under the event's job namespace (its ``topic.prefix``); else a source
    database named under one of ``source_hosts``' aliases takes its canonical host.
    """

    namespace_map: Mapping[str, str] = field(default_factory=dict)
    kafka: KafkaCluster | None = None
    #: The platform's Debezium connectors now (read again when stale: a callable).
    debezium: Callable[[], DebeziumTopics] = DebeziumTopics
    source_hosts: SourceHosts = field(default_factory=SourceHosts)
    glue_catalog: GlueCatalog | None = None

    KAFKA_RULE: ClassVar[str] = "kafka-cluster-broker"
    DEBEZIUM_UNKNOWN_RULE: ClassVar[str] = "debezium-unknown-kafka"
    SOURCE_HOST_RULE: ClassVar[str] = "source-host-alias"
    SETTINGS_RULE: ClassVar[str] = "namespace-map"

    def rename(
        self, dataset: Mapping[str, Any], job_namespace: str | None = None
    ) -> tuple[str, str, str] | None:
        """The (namespace, name, rule) ``dataset`` of a run of a job in ``job_namespace``
        should have, or None if it keeps its own."""
        return _renamed((self,), self.namespace_map, dataset, job_namespace)

    def kafka_namespaces(self) -> frozenset[str]:
        """The cluster's Kafka namespace (none without a cluster)."""
        return frozenset({self.kafka.namespace} if self.kafka is not None else ())

    def glue_rename(self, dataset: Mapping[str, Any]) -> tuple[str, str, str] | None:
        """The Glue table of :attr:`glue_catalog` ``dataset`` names, by any of its names."""
        return resolve_glue_table(dataset, self.glue_catalog) if self.glue_catalog else None

    def platform_rename(
        self, namespace: str, name: str, job_namespace: str | None
    ) -> tuple[str, str, str] | None:
        """The rename by the platform's cluster, Debezium connectors or source hosts."""
        if self.kafka is not None:
            canonical = self.kafka.canonical(namespace)
            if canonical is not None:
                return canonical, name, self.KAFKA_RULE
            if (
                namespace == UNKNOWN_NAMESPACE
                and job_namespace is not None
                and self.debezium().writes(job_namespace, name)
            ):
                return self.kafka.namespace, name, self.DEBEZIUM_UNKNOWN_RULE
        canonical = self.source_hosts.canonical_namespace(namespace)
        if canonical is not None:
            return canonical, name, self.SOURCE_HOST_RULE
        return None


@dataclass(frozen=True)
class ScopedNameRules:
    """The renaming rules of several platforms, one :class:`NameRules` per scope (its cluster,
    Debezium connectors, Glue catalog and source hosts), and the settings' one namespace map.

    Each kind of rule applies in :class:`NameRules`' order, the scopes' in their order: a Glue
    table of any scope's catalog first, then the namespace map, then any scope's cluster,
    connectors or source hosts. A name is one scope's at most (a broker, a connector's job
    namespace, a database host or a Glue catalog's account and Region are a platform's own).
    """

    scopes: Mapping[str, NameRules]
    namespace_map: Mapping[str, str] = field(default_factory=dict)

    def rename(
        self, dataset: Mapping[str, Any], job_namespace: str | None = None
    ) -> tuple[str, str, str] | None:
        return _renamed(tuple(self.scopes.values()), self.namespace_map, dataset, job_namespace)

    def kafka_namespaces(self) -> frozenset[str]:
        return frozenset().union(*(rules.kafka_namespaces() for rules in self.scopes.values()))


def _renamed(
    platforms: tuple[NameRules, ...],
    namespace_map: Mapping[str, str],
    dataset: Mapping[str, Any],
    job_namespace: str | None,
) -> tuple[str, str, str] | None:
    namespace, name = dataset["namespace"], dataset["name"]
    for rules in platforms:
        glue = rules.glue_rename(dataset)
        if glue is not None:
            return glue
    if namespace in namespace_map:
        target = namespace_map[namespace]
        return (target, name, NameRules.SETTINGS_RULE) if target != namespace else None
    for rules in platforms:
        renamed = rules.platform_rename(namespace, name, job_namespace)
        if renamed is not None:
            return renamed
    return None


def canonicalize(event: ReceivedEvent, rules: NameRules) -> tuple[ReceivedEvent, list[str]]:
    """The event with its datasets renamed by ``rules``, and a line per rewrite.

    The input is left untouched. Each renamed dataset carries a ``dzlineage_canonicalName``
    facet with its original name and the rule, so no rewrite is silent.
    """
    document = copy.deepcopy(event.document)
    rewrites = []
    job = document.get("job")
    job_namespace = job.get("namespace") if isinstance(job, dict) else None
    datasets = [dataset for key in ("inputs", "outputs") for dataset in document.get(key) or []]
    if event.kind == "dataset":  # a dataset event's one dataset (Glue takes them)
        datasets.append(document["dataset"])
    for dataset in datasets:
        renamed = rules.rename(dataset, job_namespace)
        if renamed is None:
            continue
        namespace, name, rule = renamed
        facet = CanonicalNameDatasetFacet(
            originalNamespace=dataset["namespace"],
            originalName=dataset["name"],
            rule=rule,
            producer=RELAY_PRODUCER,
        )
        rewrites.append(f"{dataset['namespace']}/{dataset['name']} -> {namespace}/{name}")
        dataset["namespace"], dataset["name"] = namespace, name
        dataset["facets"] = dataset.get("facets") or {}  # absent or null
        dataset["facets"][CANONICAL_NAME_FACET] = Serde.to_dict(facet)
        if rule in GLUE_RULES:
            keep_glue_symlink(dataset["facets"], (namespace, name), RELAY_PRODUCER)
    return ReceivedEvent(event.kind, document), rewrites


# --- size --------------------------------------------------------------------------------------


def _facet_maps(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every facet map of a run event with a readable path to it."""
    for owner in ("run", "job"):
        facets = (document.get(owner) or {}).get("facets")
        if isinstance(facets, dict):
            yield f"{owner}.facets", facets
    for key, facet_keys in _DATASET_FACET_MAPS.items():
        for index, dataset in enumerate(document.get(key) or []):
            for facet_key in facet_keys:
                facets = dataset.get(facet_key)
                if isinstance(facets, dict):
                    yield f"{key}[{index}].{facet_key}", facets


def fit_to_size(
    event: ReceivedEvent, limit: int = MAX_EVENT_BYTES
) -> tuple[ReceivedEvent, list[dict[str, Any]]]:
    """The event as it fits ``limit`` bytes of compact JSON, and the facets removed.

    Facets go largest first (never the relay's own), and a ``dzlineage_trimmed`` run facet
    lists each with its size. Raises :class:`EventTooLarge` when the event without every
    removable facet still does not fit.
    """
    size = json_bytes(event.document)
    if size <= limit:
        return event, []
    document = copy.deepcopy(event.document)
    candidates = sorted(
        (
            # The entry's bytes: `"name":{...},` (the comma counted; the last entry has none).
            (json_bytes(name) + json_bytes(facet) + 2, path, name, facets)
            for path, facets in _facet_maps(document)
            for name, facet in facets.items()
            if not name.startswith(RELAY_FACET_PREFIX)
        ),
        key=lambda candidate: candidate[0],
        reverse=True,
    )
    removed: list[dict[str, Any]] = []
    run_facets = document["run"]["facets"] = document["run"].get("facets") or {}
    for facet_size, path, name, facets in candidates:
        del facets[name]
        removed.append({"facet": f"{path}.{name}", "bytes": facet_size})
        size -= facet_size
        if size > limit:
            continue  # certainly too large still: the estimate is at most one comma short
        note = TrimmedRunFacet(
            originalBytes=json_bytes(event.document),
            limitBytes=limit,
            removedFacets=removed,
            producer=RELAY_PRODUCER,
        )
        run_facets[TRIMMED_FACET] = Serde.to_dict(note)
        if json_bytes(document) <= limit:
            return ReceivedEvent(event.kind, document), removed
        del run_facets[TRIMMED_FACET]
    raise EventTooLarge(
        f"the event is {json_bytes(event.document)} bytes; DataZone takes at most {limit} and "
        f"it is still {json_bytes(document)} bytes without its {len(removed)} removable facets"
    )


# --- what the relay could not map ---------------------------------------------------------------

#: Debezium's Kafka namespace when its connector names no bootstrap servers
#: (``KafkaDatasetNamespaceResolver``).
UNKNOWN_KAFKA_NAMESPACE = "kafka://unknown:unknown"
#: Where Debezium takes a topic's namespace from, first to last (its docs' "OpenLineage
#: configuration properties"); with neither set the topic is named :data:`UNKNOWN_KAFKA_NAMESPACE`.
DEBEZIUM_LINEAGE_BOOTSTRAP_PROPERTY = "openlineage.integration.dataset.kafka.bootstrap.servers"
#: The setting (``DZLINEAGE_*``) that names further addresses of the cluster's brokers.
BROKER_ALIASES_SETTING = "DZLINEAGE_KAFKA_BROKER_ALIASES"
#: The settings that name a source database's other hosts, and rename any namespace.
SOURCE_HOST_ALIASES_SETTING = "DZLINEAGE_SOURCE_HOST_ALIASES"
NAMESPACE_MAP_SETTING = "DZLINEAGE_RELAY_NAMESPACE_MAP"


@dataclass(frozen=True)
class PlatformDatasets:
    """The platform's own dataset identities, as DataZone's sourceIdentifiers: each topic of the
    registry as the sync names it, each Glue table of its databases and each table its sinks
    write (the ARN), each source table its Debezium connectors capture.

    ``topics`` are the topics' bare names (a dataset naming one under another namespace is a
    parallel node of it); ``debezium_jobs`` maps the job namespace a Debezium connector posts
    its OpenLineage runs under (``openlineage.integration.job.namespace``, else ``topic.prefix``)
    to the connector's name; ``broker`` is a broker address of the cluster, for the advice;
    ``kafka`` the cluster's identity, to tell which servers of a list are not its own."""

    identities: frozenset[str]
    topics: frozenset[str] = frozenset()
    debezium_jobs: Mapping[str, str] = field(default_factory=dict)
    broker: str | None = None
    kafka: KafkaCluster | None = None


@dataclass(frozen=True)
class UnmappedDataset:
    """A dataset the relay forwards under a name that is none of the platform's nodes.

    ``fix`` is set when the dataset names a topic or a captured source table of the platform
    under another namespace (a parallel node of it); ``refusable`` for a topic only: the relay
    may refuse it (422) with this advice."""

    identity: str
    reason: str
    fix: str | None = None
    refusable: bool = False


def unmapped_dataset(
    dataset: Mapping[str, Any], job: Mapping[str, Any], known: PlatformDatasets
) -> UnmappedDataset | None:
    """Whether ``dataset``, as the relay forwards it (after :func:`canonicalize`), is one of
    the platform's own nodes (None) or not, with why and, for a parallel node of a platform
    topic, what fixes it. A dataset a rule renamed to a name that is no platform node (a Glue
    table that does not exist) is unmapped too: the rename does not make it the platform's."""
    namespace, name = str(dataset["namespace"]), str(dataset["name"])
    identity = source_identifier(namespace, name)
    if identity in known.identities:
        return None
    if namespace.startswith("kafka://") and name in known.topics:
        reason = (
            f"names the platform's topic {name} under {namespace}, not the cluster's namespace: "
            "a lineage node apart from the topic's"
        )
        return UnmappedDataset(identity, reason, _topic_fix(namespace, job, known), True)
    platform_namespace = _source_table_namespace(namespace, name, known)
    if platform_namespace is not None:
        reason = (
            f"names the platform's source table {name} under {namespace}, not "
            f"{platform_namespace}: a lineage node apart from the table's"
        )
        return UnmappedDataset(identity, reason, _source_host_fix(namespace, platform_namespace))
    claimed = claimed_table_name(namespace, name)
    if is_glue_namespace(namespace) or claimed:
        tables = [i for i in known.identities if node_kind(i) == "glue_table"]
        near = near_matches(".".join(claimed), tables, limit=1) if claimed else []
        fix = f"did you mean {near[0]}?" if near else None
        return UnmappedDataset(identity, "names a Glue table the platform does not have", fix)
    return UnmappedDataset(
        identity,
        "is none of the platform's datasets (its topics, Glue tables and captured source tables)",
    )


def unmapped_in_scopes(
    dataset: Mapping[str, Any], job: Mapping[str, Any], known: Sequence[PlatformDatasets]
) -> UnmappedDataset | None:
    """:func:`unmapped_dataset` across several platforms (one per scope): None when any of
    them has the dataset; else the finding that says the most (refusable, then with a fix,
    then the first scope's), so a fix names the platform whose topic or table it is."""
    found = []
    for platform in known:
        unmapped = unmapped_dataset(dataset, job, platform)
        if unmapped is None:
            return None
        found.append(unmapped)
    return max(found, key=lambda f: (f.refusable, f.fix is not None), default=None)


def _topic_fix(namespace: str, job: Mapping[str, Any], known: PlatformDatasets) -> str:
    broker = known.broker or "<a broker of the cluster>"
    if namespace == UNKNOWN_KAFKA_NAMESPACE:
        connector = known.debezium_jobs.get(str(job.get("namespace", "")))
        which = (
            f"connector {connector}"
            if connector
            else f"the Debezium connector of job {job.get('namespace')}.{job.get('name')}"
        )
        return f"set {DEBEZIUM_LINEAGE_BOOTSTRAP_PROPERTY}={broker} on {which}"
    address = namespace.removeprefix("kafka://")
    foreign = known.kafka.foreign_servers(address) if known.kafka else []
    address = ", ".join(foreign) or address
    return (
        f"if {address} is a broker of the cluster, add it to {BROKER_ALIASES_SETTING}; else "
        f"point the producer's bootstrap servers at the cluster ({broker})"
    )


def _source_table_namespace(namespace: str, name: str, known: PlatformDatasets) -> str | None:
    """The namespace the platform names a captured source table ``name`` of ``namespace``'s
    engine by, when ``namespace`` is another (the database by its IP or an alias)."""
    scheme = namespace.partition("://")[0]
    if scheme not in SOURCE_SCHEMES:
        return None
    for identity in sorted(known.identities):
        other, _, other_name = identity.rpartition("/")
        if other_name == name and other.partition("://")[0] == scheme and other != namespace:
            return other
    return None


def _source_host_fix(namespace: str, platform_namespace: str) -> str:
    """A host alias when only the host differs (it keeps the port), else the namespace map."""
    host, _, port = namespace.partition("://")[2].rpartition(":")
    platform_host, _, platform_port = platform_namespace.partition("://")[2].rpartition(":")
    if host and port == platform_port:
        return (
            f"if {host} is the database {platform_host}, add {host}={platform_host} to "
            f"{SOURCE_HOST_ALIASES_SETTING}"
        )
    return (
        f"if {namespace} is the database {platform_namespace}, map it in "
        f'{NAMESPACE_MAP_SETTING}: {{"{namespace}": "{platform_namespace}"}}'
    )
