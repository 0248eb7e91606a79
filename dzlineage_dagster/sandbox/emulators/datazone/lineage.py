"""DataZone's lineage graph, fed by OpenLineage RunEvents.

PostLineageEvent is asynchronous on AWS: it answers with the event's id once the event is
accepted, and DataZone processes it later (GetLineageEvent/ListLineageEvents report its
``processingStatus``: REQUESTED, PROCESSING, then SUCCESS or FAILED). The graph models that
lazily: an accepted event is *pending* until its processing time has come, and the nodes it
makes appear only when it succeeds; one that is made to fail after acceptance (the sandbox's
``fail-after-accept`` fault) leaves the graph untouched. Every read first advances the
processing to the current time, so a delay of 0 (the default) behaves synchronously.

``PostLineageEvent`` takes RunEvents only; each builds (or adds a version to) a node for the
job, the run and each dataset, with edges input -> run -> output. A dataset node's
``sourceIdentifier`` is ``<namespace>/<name>``, as the guide ("The importance of the
sourceIdentifier attribute to lineage nodes") says of every dataset it does not name otherwise;
under the ``glue_node_naming=colon-join`` switch, OpenLineage's Glue naming
(``arn:aws:glue:<region>:<account>`` + ``table/<db>/<table>``) is joined at a colon into the
table's ARN instead (:mod:`dzlineage_dagster.sandbox.server.ambiguities`). A dataset node links
to the catalog asset whose ``AssetCommonDetailsForm.sourceIdentifier`` is the same: the asset's
own lineage node (``amazon.datazone.asset/<assetId>``) is downstream of it.

Which edges a node shows follows AWS's lineage guide: the timestamp view shows the graph "as it
existed at a specific point in time, displaying only the latest job run for each job at that
timestamp", the aggregated view "all jobs that are currently contributing". So a dataset node's
edges go only to the latest run of each job (the run whose latest event time is the latest, up
to the time asked), and a run node keeps its own datasets. ``GetLineageNode`` has no switch
between the views, only ``eventTimestamp``: with it the sandbox answers the timestamp view at
that time; without it, as of now, which is the aggregated view (every job contributes what its
latest run says; a job's earlier runs contribute nothing). ``ListLineageNodeHistory`` shows
each version of a node with its edges as of that version's time.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from botocore.utils import parse_timestamp

from dzlineage_dagster.sandbox.emulators.datazone.catalog.records import (
    Asset,
    AssetRevision,
    Form,
    TypeRef,
)
from dzlineage_dagster.sandbox.emulators.datazone.common import invalid, new_id

JOB_NODE_TYPE = "amazon.datazone.JobLineageNodeType"
JOB_RUN_NODE_TYPE = "amazon.datazone.JobRunLineageNodeType"
DATASET_NODE_TYPE = "amazon.datazone.DatasetLineageNodeType"
NODE_TYPE_REVISION = "1"
ASSET_SOURCE_IDENTIFIER_PREFIX = "amazon.datazone.asset/"
RUN_EVENT_TYPES = frozenset({"START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"})
#: ListLineageEvents' and GetLineageEvent's processingStatus values (botocore's model).
REQUESTED, PROCESSING, SUCCESS, FAILED = "REQUESTED", "PROCESSING", "SUCCESS", "FAILED"
_GLUE_NAMESPACE = re.compile(r"arn:aws[a-z-]*:glue:[a-z0-9-]+:\d{12}")

Edges = tuple[tuple[str, datetime], ...]
#: The type the sandbox gives the facet forms of dataset nodes (AWS does not document one).
FACET_FORM_TYPE = TypeRef("amazon.datazone.OpenLineageFacetFormType", "1")


@dataclass(frozen=True)
class DatasetRef:
    namespace: str
    name: str

    def source_identifier(self, colon_joins_glue: bool = False) -> str:
        """``<namespace>/<name>``; with ``colon_joins_glue``, OpenLineage's Glue naming joined
        at its colon into the table's ARN (the sandbox's ``colon-join`` reading)."""
        if (
            colon_joins_glue
            and _GLUE_NAMESPACE.fullmatch(self.namespace)
            and self.name.startswith("table/")
        ):
            return f"{self.namespace}:{self.name}"
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class RunEvent:
    """The parts of an OpenLineage RunEvent that lineage nodes are made of."""

    event_type: str
    event_time: datetime
    run_id: str
    job: DatasetRef
    inputs: tuple[DatasetRef, ...]
    outputs: tuple[DatasetRef, ...]
    #: The facets each dataset of the event carries (``schema``, ``columnLineage``, ...).
    dataset_facets: tuple[tuple[DatasetRef, dict[str, Any]], ...] = ()

    @classmethod
    def parse(cls, payload: bytes) -> RunEvent:
        try:
            event = json.loads(payload)
        except (UnicodeDecodeError, ValueError) as error:
            raise invalid(f"The lineage event is not valid JSON: {error}") from error
        if not isinstance(event, dict):
            raise invalid("The lineage event must be a JSON object")
        if "run" not in event:
            raise invalid("Only OpenLineage RunEvents are supported (the event has no run)")
        event_type = event.get("eventType")
        if event_type not in RUN_EVENT_TYPES:
            raise invalid(f"eventType must be one of {sorted(RUN_EVENT_TYPES)}")
        run, job = event.get("run"), event.get("job")
        if not isinstance(run, dict) or not isinstance(run.get("runId"), str):
            raise invalid("run.runId is required")
        try:
            event_time = parse_timestamp(event["eventTime"]).astimezone(timezone.utc)
        except (KeyError, TypeError, ValueError) as error:
            raise invalid("eventTime is required and must be an ISO 8601 date-time") from error
        inputs, outputs = _list(event, "inputs"), _list(event, "outputs")
        return cls(
            event_type=event_type,
            event_time=event_time,
            run_id=run["runId"],
            job=_named(job, "job"),
            inputs=tuple(_named(d, "inputs[]") for d in inputs),
            outputs=tuple(_named(d, "outputs[]") for d in outputs),
            dataset_facets=tuple(
                (_named(d, "dataset"), d["facets"])
                for d in (*inputs, *outputs)
                if isinstance(d.get("facets"), dict) and d["facets"]
            ),
        )

    def facets_of(self, ref: DatasetRef) -> dict[str, Any]:
        """The facets the event gives ``ref`` (a dataset both read and written: merged)."""
        merged: dict[str, Any] = {}
        for dataset, facets in self.dataset_facets:
            if dataset == ref:
                merged.update(facets)
        return merged

    def summary(self) -> dict[str, Any]:
        def name_identifier(ref: DatasetRef) -> dict[str, str]:
            return {"namespace": ref.namespace, "name": ref.name}

        return {
            "openLineageRunEventSummary": {
                "eventType": self.event_type,
                "runId": self.run_id,
                "job": name_identifier(self.job),
                "inputs": [name_identifier(ref) for ref in self.inputs],
                "outputs": [name_identifier(ref) for ref in self.outputs],
            }
        }


def _list(event: dict[str, Any], key: str) -> list[Any]:
    value = event.get(key) or []
    if not isinstance(value, list):
        raise invalid(f"{key} must be a list")
    return value


def _named(value: Any, where: str) -> DatasetRef:
    if not isinstance(value, dict) or not all(
        isinstance(value.get(key), str) and value[key] for key in ("namespace", "name")
    ):
        raise invalid(f"{where} needs a namespace and a name")
    return DatasetRef(value["namespace"], value["name"])


@dataclass
class LineageEventRecord:
    """An accepted event. ``processed_at`` is when its processing ends; ``fails`` makes it
    end FAILED (and build nothing) instead of SUCCESS."""

    id: str
    payload: bytes
    event: RunEvent
    created_at: datetime
    created_by: str
    processed_at: datetime | None = None
    fails: bool = False
    #: SUCCESS or FAILED once processed; None while pending.
    outcome: str | None = None

    def processing_status(self, at: datetime) -> str:
        """REQUESTED for the first half of the processing delay, PROCESSING for the second."""
        if self.outcome is not None:
            return self.outcome
        done = self.processed_at or self.created_at
        halfway = self.created_at + (done - self.created_at) / 2
        return REQUESTED if at < halfway else PROCESSING


@dataclass(frozen=True)
class NodeVersion:
    """When one event said something about a node, and the facets it gave a dataset node."""

    event_time: datetime
    recorded_at: datetime
    facets: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class LineageNode:
    id: str
    type_name: str
    name: str
    source_identifier: str
    created_by: str
    versions: list[NodeVersion] = field(default_factory=list)
    #: neighbour node id -> the event times that drew the edge
    upstream: dict[str, list[datetime]] = field(default_factory=dict)
    downstream: dict[str, list[datetime]] = field(default_factory=dict)

    def version_at(self, when: datetime | None) -> NodeVersion | None:
        eligible = [v for v in self.versions if when is None or v.event_time <= when]
        return max(eligible, key=lambda v: v.event_time, default=None)


@dataclass(frozen=True)
class NodeView:
    """A lineage node as GetLineageNode and ListLineageNodeHistory show it."""

    id: str
    type_name: str
    type_revision: str
    name: str
    source_identifier: str
    event_time: datetime
    created_at: datetime
    created_by: str
    updated_at: datetime
    forms: tuple[Form, ...] = ()
    upstream: Edges = ()
    downstream: Edges = ()

    def summary(self, domain_id: str) -> dict[str, Any]:
        return {
            "domainId": domain_id,
            "id": self.id,
            "name": self.name,
            "typeName": self.type_name,
            "typeRevision": self.type_revision,
            "sourceIdentifier": self.source_identifier,
            "eventTimestamp": self.event_time,
            "createdAt": self.created_at,
            "createdBy": self.created_by,
            "updatedAt": self.updated_at,
            "updatedBy": self.created_by,
        }

    def item(self, domain_id: str, form_names: Collection[str]) -> dict[str, Any]:
        """The node as QueryGraph's ``LineageNodeItem``: its neighbours' ids, and the forms
        named in ``additionalAttributes.formNames`` (none unless asked)."""
        return {
            **self.summary(domain_id),
            "formsOutput": [f.output() for f in self.forms if f.name in form_names],
            "upstreamLineageNodeIds": [node_id for node_id, _ in self.upstream],
            "downstreamLineageNodeIds": [node_id for node_id, _ in self.downstream],
        }

    def output(self, domain_id: str) -> dict[str, Any]:
        def references(edges: Edges) -> list[dict[str, Any]]:
            return [{"id": node_id, "eventTimestamp": when} for node_id, when in edges[:100]]

        return {
            **self.summary(domain_id),
            "formsOutput": [form.output() for form in self.forms],
            "upstreamNodes": references(self.upstream),
            "downstreamNodes": references(self.downstream),
        }


class LineageGraph:
    """The lineage nodes and events of one domain, built from RunEvents.

    The node types, how a job and a dataset are named and the facets a job or run node keeps
    are the class's to say, so Glue's own lineage graph
    (:mod:`dzlineage_dagster.sandbox.emulators.glue_lineage`) is this one with its own names.
    """

    job_type, run_type, dataset_type = JOB_NODE_TYPE, JOB_RUN_NODE_TYPE, DATASET_NODE_TYPE

    def __init__(self) -> None:
        #: The ``glue_node_naming=colon-join`` reading; the emulator sets it before each read.
        self.colon_joins_glue = False
        self.events: dict[str, LineageEventRecord] = {}
        #: Events DeleteLineageEvent removed, so a repeated delete answers the same (the model
        #: marks it idempotent).
        self.deleted: dict[str, LineageEventRecord] = {}
        self.nodes: dict[str, LineageNode] = {}
        self._by_source: dict[str, str] = {}
        #: Accepted events whose processing has not ended, in the order they were accepted.
        self._pending: list[LineageEventRecord] = []
        #: Run node id -> its job's node id; job node id -> its runs' node ids -> when (event
        #: time, processing order) each of the run's events happened: what decides "the
        #: latest run of each job".
        self._job_of_run: dict[str, str] = {}
        self._runs_of_job: dict[str, dict[str, list[tuple[datetime, int]]]] = {}
        self._processed = itertools.count()
        self._asset_links = _AssetLinks({}, None)

    def accept(
        self, record: LineageEventRecord, delay: timedelta = timedelta(0), fails: bool = False
    ) -> None:
        """Take an event for processing ``delay`` from now (its acceptance time)."""
        record.processed_at = record.created_at + delay
        record.fails = fails
        self.events[record.id] = record
        self._pending.append(record)
        self.advance(record.created_at)

    def advance(self, at: datetime) -> None:
        """End the processing of every pending event whose time has come, in acceptance order
        (DataZone's order is its own; acceptance order keeps a run's START before its COMPLETE)."""
        while self._pending and self._pending[0].processed_at <= at:
            record = self._pending.pop(0)
            if record.fails:
                record.outcome = FAILED
            else:
                self.record(record)
                record.outcome = SUCCESS

    def delete(self, event_id: str) -> LineageEventRecord | None:
        """DeleteLineageEvent: the event leaves the event listings; one still pending is never
        processed. The nodes an event already built stay: the API reference says only "Deletes
        the specified lineage event", not that the graph changes."""
        record = self.events.pop(event_id, None)
        if record is None:
            return self.deleted.get(event_id)
        if record in self._pending:
            self._pending.remove(record)
        self.deleted[event_id] = record
        return record

    def reachable(
        self,
        identifier: str,
        upstream: bool,
        max_hops: int,
        assets: Mapping[str, Asset],
    ) -> list[NodeView]:
        """QueryGraph's traversal: the nodes up to ``max_hops`` edges upstream (or downstream)
        of the node ``identifier`` names, nearest first, without the node itself; each as it
        is now (the aggregated view, as GetLineageNode without a timestamp)."""
        root = self.node_views(identifier, None, assets)
        if not root:
            return []
        seen, found, frontier = {root[0].id}, [], [root[0]]
        for _ in range(max_hops):
            next_frontier = []
            for view in frontier:
                for node_id, _when in view.upstream if upstream else view.downstream:
                    if node_id in seen:
                        continue
                    seen.add(node_id)
                    neighbour = self.node_views(node_id, None, assets)
                    if neighbour:
                        found.append(neighbour[0])
                        next_frontier.append(neighbour[0])
            frontier = next_frontier
        return found

    def find(self, identifier: str) -> LineageNode | None:
        """The node with this id or sourceIdentifier, as GetLineageNode accepts either."""
        node_id = identifier if identifier in self.nodes else self._by_source.get(identifier)
        return self.nodes.get(node_id) if node_id else None

    def by_source(self, source_identifier: str) -> LineageNode | None:
        node_id = self._by_source.get(source_identifier)
        return self.nodes[node_id] if node_id else None

    def record(self, record: LineageEventRecord) -> None:
        """Build the nodes and edges of a successfully processed event."""
        event = record.event
        self.events[record.id] = record
        job = event.job
        job_source = f"{job.namespace}.{job.name}"
        job_node = self._node(self.job_type, self.job_name(event), job_source, record)
        run_source = f"{job_source}/{event.run_id}"
        run_node = self._node(self.run_type, self.job_name(event), run_source, record)
        inputs = [self._dataset_node(ref, record) for ref in event.inputs]
        outputs = [self._dataset_node(ref, record) for ref in event.outputs]
        for node in inputs:
            _link(node, run_node, event.event_time)
        for node in outputs:
            _link(run_node, node, event.event_time)
        self._job_of_run[run_node.id] = job_node.id
        runs = self._runs_of_job.setdefault(job_node.id, {})
        runs.setdefault(run_node.id, []).append((event.event_time, next(self._processed)))
        touched = {node.id: node for node in (job_node, run_node)}
        job_facets, run_facets = self.job_and_run_facets(event)
        job_node.versions.append(NodeVersion(event.event_time, record.created_at, job_facets))
        run_node.versions.append(NodeVersion(event.event_time, record.created_at, run_facets))
        for ref in (*event.inputs, *event.outputs):
            node = self.by_source(self.dataset_source_identifier(ref))
            if node.id in touched:
                continue
            touched[node.id] = node
            facets = event.facets_of(ref)
            node.versions.append(NodeVersion(event.event_time, record.created_at, facets))

    def is_latest_run(self, run_node_id: str, when: datetime | None) -> bool:
        """Whether the run is its job's latest at ``when`` (None: now): the run whose latest
        event up to then is the latest, a tie going to the one processed last."""
        runs = self._runs_of_job[self._job_of_run[run_node_id]]
        newest = {
            run: max(eligible)
            for run, events in runs.items()
            if (eligible := [e for e in events if when is None or e[0] <= when])
        }
        return max(newest, key=newest.__getitem__) == run_node_id

    def job_name(self, event: RunEvent) -> str:
        """The name of the event's job node and run node: the job's name."""
        return event.job.name

    def job_and_run_facets(self, event: RunEvent) -> tuple[dict[str, Any], dict[str, Any]]:
        """What a job and a run node keep of the event as forms: nothing (DataZone's guide
        names forms on dataset nodes only)."""
        return {}, {}

    def dataset_source_identifier(self, ref: DatasetRef) -> str:
        return ref.source_identifier(self.colon_joins_glue)

    def dataset_name(self, ref: DatasetRef) -> str:
        return ref.name

    def _dataset_node(self, ref: DatasetRef, record: LineageEventRecord) -> LineageNode:
        source_identifier = self.dataset_source_identifier(ref)
        return self._node(self.dataset_type, self.dataset_name(ref), source_identifier, record)

    def _node(
        self, type_name: str, name: str, source_identifier: str, record: LineageEventRecord
    ) -> LineageNode:
        node = self.by_source(source_identifier)
        if node is None:
            node = LineageNode(new_id(), type_name, name, source_identifier, record.created_by)
            self.nodes[node.id] = node
            self._by_source[source_identifier] = node.id
        return node

    # the nodes as the API shows them, catalog assets included

    def node_views(
        self,
        identifier: str,
        when: datetime | None,
        assets: Mapping[str, Asset],
        every_version: bool = False,
    ) -> list[NodeView]:
        """The lineage node ``identifier`` names (an event's node or one of ``assets``), oldest
        version first: only its version at ``when`` (the latest by default) unless
        ``every_version``."""
        node = self.find(identifier)
        if node is not None:
            if every_version:
                versions = sorted(node.versions, key=lambda v: v.event_time)
                return [self._event_node_view(node, v, assets, v.event_time) for v in versions]
            version = node.version_at(when)
            return [] if version is None else [self._event_node_view(node, version, assets, when)]
        asset = self._linked(assets).asset_of_node(identifier)
        if asset is None:
            return []
        revisions = [r for r in asset.revisions if when is None or r.created_at <= when]
        if not every_version:
            revisions = revisions[-1:]
        return [self._asset_node_view(asset, revision) for revision in revisions]

    def _asset_node_view(self, asset: Asset, revision: AssetRevision) -> NodeView:
        source = asset.source_identifier()
        dataset = self.by_source(source) if source else None
        upstream: Edges = ()
        if dataset is not None:
            upstream = ((dataset.id, max(v.event_time for v in dataset.versions)),)
        return NodeView(
            id=asset.lineage_node_id,
            type_name=asset.type_name,
            type_revision=revision.type_revision,
            name=revision.name,
            source_identifier=f"{ASSET_SOURCE_IDENTIFIER_PREFIX}{asset.id}",
            event_time=revision.created_at,
            created_at=asset.revisions[0].created_at,
            created_by=asset.revisions[0].created_by,
            updated_at=revision.created_at,
            forms=revision.forms,
            upstream=upstream,
        )

    def _linked(self, assets: Mapping[str, Asset]) -> _AssetLinks:
        fingerprint = _assets_fingerprint(assets)
        if self._asset_links.assets is not assets or self._asset_links.fingerprint != fingerprint:
            self._asset_links = _AssetLinks(assets, fingerprint)
        return self._asset_links

    def _event_node_view(
        self,
        node: LineageNode,
        version: NodeVersion,
        assets: Mapping[str, Asset],
        when: datetime | None,
    ) -> NodeView:
        """The node at ``version``, its edges as the timestamp view draws them at ``when``
        (None: now, which is the aggregated view): a dataset's edges only to the latest run of
        each job, a run's to its own datasets, each edge dated by its latest event up to then."""
        upstream, downstream = _edges_at(node.upstream, when), _edges_at(node.downstream, when)
        if node.type_name == self.dataset_type:
            upstream = tuple(e for e in upstream if self.is_latest_run(e[0], when))
            downstream = tuple(e for e in downstream if self.is_latest_run(e[0], when))
            linked = self._linked(assets).by_source.get(node.source_identifier, ())
            downstream += tuple((a.lineage_node_id, a.latest.created_at) for a in linked)
        return NodeView(
            id=node.id,
            type_name=node.type_name,
            type_revision=NODE_TYPE_REVISION,
            name=node.name,
            source_identifier=node.source_identifier,
            event_time=version.event_time,
            created_at=node.versions[0].recorded_at,
            created_by=node.created_by,
            updated_at=version.recorded_at,
            forms=_facet_forms(node, version.event_time),
            upstream=upstream,
            downstream=downstream,
        )


def _link(upstream: LineageNode, downstream: LineageNode, when: datetime) -> None:
    upstream.downstream.setdefault(downstream.id, []).append(when)
    downstream.upstream.setdefault(upstream.id, []).append(when)


def _edges_at(edges: dict[str, list[datetime]], when: datetime | None) -> Edges:
    """Each neighbour with the latest time (no later than ``when``) an event drew its edge."""
    result = []
    for node_id, times in edges.items():
        eligible = [t for t in times if when is None or t <= when]
        if eligible:
            result.append((node_id, max(eligible)))
    return tuple(result)


def _assets_fingerprint(assets: Mapping[str, Asset]) -> tuple[int, int, str | None]:
    """Changes with every CreateAsset (a new last key), DeleteAsset (fewer assets) and new
    revision (more revisions in all)."""
    return (
        len(assets),
        sum(len(asset.revisions) for asset in assets.values()),
        next(reversed(assets.keys()), None),
    )


class _AssetLinks:
    """The domain's assets by lineage node id and by ``sourceIdentifier``: scanning every
    asset's forms for each GetLineageNode made a read-back of N topics cost N^2."""

    def __init__(self, assets: Mapping[str, Asset], fingerprint: tuple | None) -> None:
        self.assets = assets
        self.fingerprint = fingerprint
        self.by_node_id = {asset.lineage_node_id: asset for asset in assets.values()}
        self.by_source: dict[str, list[Asset]] = {}
        for asset in assets.values():
            self.by_source.setdefault(asset.source_identifier(), []).append(asset)

    def asset_of_node(self, identifier: str) -> Asset | None:
        asset_id = identifier.removeprefix(ASSET_SOURCE_IDENTIFIER_PREFIX)
        return self.assets.get(asset_id) or self.by_node_id.get(identifier)


def _facet_forms(node: LineageNode, when: datetime) -> tuple[Form, ...]:
    """A dataset node's facets as forms, each facet as the latest event (up to ``when``) gave it.

    AWS documents that dataset nodes carry ``formsOutput`` but not their names; the sandbox
    keeps one form per OpenLineage facet, named after the facet (``schema``,
    ``columnLineage``), its content the facet's JSON, so a reader can get the columns and the
    column lineage back.
    """
    latest: dict[str, Any] = {}
    for version in sorted(node.versions, key=lambda v: v.event_time):
        if version.event_time <= when:
            latest.update(version.facets)
    return tuple(
        Form(name, FACET_FORM_TYPE, json.dumps(facet, sort_keys=True))
        for name, facet in sorted(latest.items())
    )
