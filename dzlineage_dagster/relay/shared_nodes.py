"""How the relay keeps DataZone's nodes right when several events describe one node.

AWS documents neither what a job run's lineage node shows when the run's events name different
datasets, nor which ``schema`` a dataset node keeps when several producers gave it one (the
sandbox's ``run_event_merge`` and ``node_schema`` switches play each reading). The relay makes
the graph come out the same under every reading:

- **Streaming runs** (:class:`RunDatasets`): Debezium sends START, then its source tables and
  its topics in separate RUNNING events of one run, then a COMPLETE or FAIL naming none. If
  DataZone showed a run as its latest event alone, that run would link nothing. The relay holds
  each run's datasets (per job and run id, least recently used runs evicted past a bound, an
  entry dropped at COMPLETE, FAIL or ABORT) and adds to an event that lacks a side the run's
  datasets it does not name, listed in a ``dzlineage_heldDatasets`` run facet.
- **Columns on shared nodes** (:func:`set_aside_schemas`): the product describes a topic's
  columns (from the Schema Registry) and a Glue table's; a producer that reads a topic or a
  table with a narrower schema (Flink's two fields) would replace them on a last-writer node.
  The relay moves a producer's ``schema`` facet off the platform's topics (either side) and off
  the Glue tables it reads into a ``dzlineage_producerSchema`` facet naming its fields.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import attr
from openlineage.client.facet_v2 import DatasetFacet, RunFacet
from openlineage.client.serde import Serde

from dzlineage_dagster.core.identity.glue import is_project_table_namespace
from dzlineage_dagster.core.lineage.relay_events import RELAY_PRODUCER, ReceivedEvent

HELD_DATASETS_FACET = "dzlineage_heldDatasets"
PRODUCER_SCHEMA_FACET = "dzlineage_producerSchema"
#: Events after which a run sends nothing more: its held datasets are dropped.
FINAL_EVENT_TYPES = frozenset({"COMPLETE", "FAIL", "ABORT"})
#: Runs held at once; the least recently heard of goes first (a run that ends without a final
#: event the relay sees, a crashed task say, is dropped so).
MAX_HELD_RUNS = 10_000
#: Datasets held per side of a run: past it the least recently named goes. Bounds what an
#: event grows by (names only, a few hundred bytes each, far below DataZone's 300,000).
MAX_HELD_DATASETS = 250
#: Events per run whose additions are remembered, so a producer's retry of one is posted
#: exactly as before (same content under the same client token: a replay, not a 409).
MAX_REMEMBERED_EVENTS = 32
#: Field names a set-aside schema facet keeps (with the count of all): enough to read, and
#: bounded, since the relay's own facets are never trimmed to fit DataZone's limit.
MAX_SET_ASIDE_FIELD_NAMES = 100

DatasetKey = tuple[str, str]
_SIDES = ("inputs", "outputs")


@attr.define
class HeldDatasetsRunFacet(RunFacet):
    """Datasets of the run's earlier events the relay added to this one, so the event names
    both sides of the run (DataZone may show a run as its latest event alone)."""

    addedInputs: list[dict[str, str]] = attr.field(factory=list)
    addedOutputs: list[dict[str, str]] = attr.field(factory=list)


@attr.define
class ProducerSchemaDatasetFacet(DatasetFacet):
    """The producer's ``schema`` facet of a dataset whose columns the platform describes, set
    aside so the node keeps the platform's: its first field names and how many it had."""

    fieldNames: list[str]
    fieldCount: int
    schemaProducer: str
    reason: str


@dataclass
class Guarded:
    """What :class:`SharedNodes` changed in one event: for the answer and for the counts."""

    event: ReceivedEvent
    notes: dict[str, list[str]] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)


class SharedNodes:
    """The relay's guard of shared nodes: schemas set aside, and (``runs``) datasets held."""

    def __init__(self, kafka_namespaces: Collection[str], runs: RunDatasets | None) -> None:
        self.kafka_namespaces = frozenset(kafka_namespaces)
        self.runs = runs

    def apply(self, event: ReceivedEvent, token: str) -> Guarded:
        """``event`` (a run event, already renamed) as the relay forwards it."""
        event, set_aside = set_aside_schemas(event, self.kafka_namespaces)
        guarded = Guarded(event)
        if set_aside:
            guarded.notes["schemaSetAside"] = set_aside
            guarded.counts["schemas_set_aside"] += len(set_aside)
        if self.runs is not None:
            guarded.event, added, evicted = self.runs.complete(event, token)
            if added:
                guarded.notes["heldDatasetsAdded"] = added
                guarded.counts["held_datasets_added"] += len(added)
            if evicted:
                guarded.counts["held_runs_evicted"] += evicted
        return guarded


# --- streaming runs ------------------------------------------------------------------------------


@dataclass
class _HeldRun:
    #: Per side, the datasets named so far, least recently named first.
    sides: dict[str, OrderedDict[DatasetKey, None]] = field(
        default_factory=lambda: {side: OrderedDict() for side in _SIDES}
    )
    #: Client token -> what was added to that event, per side.
    added: OrderedDict[str, dict[str, list[DatasetKey]]] = field(default_factory=OrderedDict)


class RunDatasets:
    """The datasets each run's events named so far, held in memory (thread-safe, bounded)."""

    def __init__(
        self, max_runs: int = MAX_HELD_RUNS, max_datasets: int = MAX_HELD_DATASETS
    ) -> None:
        self.max_runs = max_runs
        self.max_datasets = max_datasets
        self._runs: OrderedDict[tuple[str, str, str], _HeldRun] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._runs)

    def complete(self, event: ReceivedEvent, token: str) -> tuple[ReceivedEvent, list[str], int]:
        """The event with the run's held datasets it lacks, a line per dataset added, and how
        many runs were evicted to hold this one.

        An event naming both sides is the producer's whole picture and goes as sent; one that
        lacks a side (or both) gets every held dataset of the run it does not name. The event's
        own datasets are held after; a final event (COMPLETE, FAIL, ABORT) ends the entry. A
        retry (same ``token``) gets what the first post of it got, so it is the same event.
        """
        document = event.document
        job = document["job"]
        key = (job["namespace"], job["name"], document["run"]["runId"])
        named = {side: [_key(d) for d in document.get(side) or []] for side in _SIDES}
        with self._lock:
            run, evicted = self._run(key)
            added = run.added.get(token)
            if added is None:
                added = self._additions(run, named)
                run.added[token] = added
                while len(run.added) > MAX_REMEMBERED_EVENTS:
                    run.added.popitem(last=False)
            for side in _SIDES:
                self._hold(run.sides[side], named[side])
            if document.get("eventType") in FINAL_EVENT_TYPES:
                del self._runs[key]
        if not any(added.values()):
            return event, [], evicted
        lines = [
            f"{side[:-1]} {namespace}/{name}" for side in _SIDES for namespace, name in added[side]
        ]
        return ReceivedEvent(event.kind, _with_added(document, added)), lines, evicted

    def _run(self, key: tuple[str, str, str]) -> tuple[_HeldRun, int]:
        run = self._runs.get(key)
        if run is not None:
            self._runs.move_to_end(key)
            return run, 0
        evicted = 0
        while len(self._runs) >= self.max_runs:
            self._runs.popitem(last=False)
            evicted += 1
        run = self._runs[key] = _HeldRun()
        return run, evicted

    @staticmethod
    def _additions(run: _HeldRun, named: dict[str, list[DatasetKey]]) -> dict[str, list]:
        if all(named[side] for side in _SIDES):
            return {side: [] for side in _SIDES}
        additions = {}
        for side in _SIDES:
            own = set(named[side])
            additions[side] = [dataset for dataset in run.sides[side] if dataset not in own]
        return additions

    def _hold(self, held: OrderedDict[DatasetKey, None], datasets: list[DatasetKey]) -> None:
        for dataset in datasets:
            held[dataset] = None
            held.move_to_end(dataset)
        while len(held) > self.max_datasets:
            held.popitem(last=False)


def _key(dataset: dict[str, Any]) -> DatasetKey:
    return dataset["namespace"], dataset["name"]


def _with_added(document: dict[str, Any], added: dict[str, list[DatasetKey]]) -> dict[str, Any]:
    """A copy of ``document`` with ``added`` appended to its sides and listed in a run facet."""
    document = dict(document)
    for side in _SIDES:
        extra = [{"namespace": namespace, "name": name} for namespace, name in added[side]]
        document[side] = [*(document.get(side) or []), *extra]
    facet = HeldDatasetsRunFacet(
        addedInputs=[{"namespace": ns, "name": name} for ns, name in added["inputs"]],
        addedOutputs=[{"namespace": ns, "name": name} for ns, name in added["outputs"]],
        producer=RELAY_PRODUCER,
    )
    run = dict(document["run"])
    run["facets"] = {**(run.get("facets") or {}), HELD_DATASETS_FACET: Serde.to_dict(facet)}
    document["run"] = run
    return document


# --- columns on shared nodes -------------------------------------------------------------------


def set_aside_schemas(
    event: ReceivedEvent, kafka_namespaces: Collection[str]
) -> tuple[ReceivedEvent, list[str]]:
    """The event with the ``schema`` facet moved off every dataset whose columns the platform
    describes: a topic under one of ``kafka_namespaces`` (input or output) and a Glue table in
    the product's naming (``arn:aws:glue:<region>:<account>:table``) that the event reads. Each
    is replaced by a ``dzlineage_producerSchema`` facet; the input is left untouched."""
    document, set_aside = None, []
    for side in _SIDES:
        for index, dataset in enumerate(event.document.get(side) or []):
            reason = _platform_describes(dataset["namespace"], side, kafka_namespaces)
            facets = dataset.get("facets") or {}
            schema = facets.get("schema")
            if reason is None or not isinstance(schema, dict):
                continue
            if document is None:
                sides = {s: list(event.document[s]) for s in _SIDES if event.document.get(s)}
                document = {**event.document, **sides}
            moved = {name: facet for name, facet in facets.items() if name != "schema"}
            moved[PRODUCER_SCHEMA_FACET] = Serde.to_dict(_set_aside(schema, reason))
            document[side][index] = {**dataset, "facets": moved}
            set_aside.append(f"{dataset['namespace']}/{dataset['name']}")
    if document is None:
        return event, []
    return ReceivedEvent(event.kind, document), set_aside


def _platform_describes(namespace: str, side: str, kafka_namespaces: Collection[str]) -> str | None:
    """Why the platform describes this dataset's columns, or None when it does not."""
    if namespace in kafka_namespaces:
        return "a topic of the platform: its columns come from the Schema Registry"
    if side == "inputs" and is_project_table_namespace(namespace):
        return "a Glue table read: a reader's schema is not the table's columns"
    return None


def _set_aside(schema: dict[str, Any], reason: str) -> ProducerSchemaDatasetFacet:
    fields = schema.get("fields") if isinstance(schema.get("fields"), list) else []
    names = [str(f.get("name")) for f in fields if isinstance(f, dict)]
    return ProducerSchemaDatasetFacet(
        fieldNames=names[:MAX_SET_ASIDE_FIELD_NAMES],
        fieldCount=len(fields),
        schemaProducer=str(schema.get("_producer", "")),
        reason=reason,
        producer=RELAY_PRODUCER,
    )
