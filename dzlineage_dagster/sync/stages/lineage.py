"""The lineage stage: the topic's two hops, derived from the connectors, posted to DataZone.

Per topic, the source hop (the captured source tables -> the Debezium connector's job -> the
topic) and the sink hop (the topic -> each Iceberg sink connector's job -> its tables), one job
per hop (:func:`~dzlineage_dagster.core.lineage.openlineage.hop_job`: ``<connector>/<topic>``), with
``columnLineage`` on every output. Edges come from :class:`~dzlineage_dagster.core.connectors.topology.
Topology`: override > connector > convention, each hop says which; what the configs leave
undecided is not posted but reported (``ambiguous_reason``).

The newest run of every hop's job states the hop's whole current truth, so DataZone's
timestamp view (the latest run of each job) shows every topic's edges, and a job whose hop is
gone (connector deleted or re-routed away, topic retired) gets a closing run that keeps only
the topic (:mod:`~dzlineage_dagster.core.lineage.state`): the old edge leaves the graph. The
topic's mapping record keeps which jobs were posted.

One COMPLETE event per hop, no START: DataZone's PostLineageEvent takes any OpenLineage run
event and builds the job, run and dataset nodes from its inputs and outputs (the API reference
lists START | RUNNING | COMPLETE | ABORT | FAIL | OTHER as equally valid event types, and the
sandbox's emulator builds the graph from any of them); OpenLineage itself lets a producer send
only the final state of a run. A START carrying the same datasets would add nothing to the
graph but a second write per hop. An event over 300,000 bytes is split into several events of
the one run (RUNNING, then COMPLETE) or trimmed of its facets (flagged in the outcome), never
dropped.

The run ids derive from the hops' content chained to the runs posted before it: an unchanged
topic posts nothing, a changed one (or content that comes back) posts new runs with new client
tokens, a rerun after a crash replays, and a reconcile finds each run among DataZone's lineage
events.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone

from openlineage.client.event_v2 import DatasetEvent, RunState

from dzlineage_dagster.core.connectors.table_mapping import TopicTableMapping
from dzlineage_dagster.core.connectors.topology import _ORIGIN_STRENGTH, EdgeOrigin, TopicLineage
from dzlineage_dagster.core.lineage.openlineage import (
    CONNECTOR_JOB_NAMESPACE,
    MAX_EVENT_BYTES,
    DatasetSpec,
    build_dataset_event,
    build_fitted_run_events,
    deterministic_run_id,
    glue_source_identifier,
    glue_table_spec,
    hop_job,
    sink_hop_column_lineage,
    source_hop_column_lineage,
    source_table_dataset,
)
from dzlineage_dagster.core.lineage.state import (
    HopJob,
    PostedLineage,
    Side,
    after_posting,
    closing_datasets,
    hop_run_id,
    jobs_to_close,
    next_base,
)
from dzlineage_dagster.core.mapping.ssm_names import MappingRecord
from dzlineage_dagster.core.topic_states import (
    ALREADY_POSTED,
    POST,
    REPOST,
    UNCHANGED,
    edges_state,
    no_edge_state,
)
from dzlineage_dagster.sync.destinations import CompositeDestination, LineageDestination, RunPost
from dzlineage_dagster.sync.destinations.datazone import DataZoneDestination
from dzlineage_dagster.sync.destinations.glue import GlueDestination
from dzlineage_dagster.sync.errors import SyncError
from dzlineage_dagster.sync.lineage.foreign import ForeignRun
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.stages.asset import topic_configured_owners
from dzlineage_dagster.sync.stages.schema import SchemaSnapshot

PRODUCER = "https://github.com/dzlineage/dzlineage-dagster"
#: See the module doc: DataZone builds the same graph from the COMPLETE event alone.
EVENT_TYPES = (RunState.COMPLETE,)
#: How far after a foreign run's eventTime a re-post is dated when that time is ahead of now.
EVENT_TIME_STEP = timedelta(milliseconds=1)
#: Prefix of the field names of a topic whose records keep Debezium's change-event envelope.
ENVELOPE_PREFIX = "after."


@dataclass(frozen=True)
class Hop:
    """One hop of a topic's lineage: its own job (the connector and the topic), the job's
    inputs and outputs."""

    side: Side
    connector: str | None
    #: Who moves the topic: the connector, or the stand-in for edges no connector decided.
    owner: str
    job: tuple[str, str]
    inputs: tuple[DatasetSpec, ...]
    outputs: tuple[DatasetSpec, ...]
    origin: EdgeOrigin
    reason: str

    @property
    def job_label(self) -> str:
        """The job as DataZone names its node: ``<namespace>.<name>``."""
        return f"{self.job[0]}.{self.job[1]}"

    @property
    def posted_job(self) -> HopJob:
        return HopJob(self.side, self.job[0], self.owner)

    def describe(self) -> str:
        ins = ", ".join(d.name for d in self.inputs)
        outs = ", ".join(d.name for d in self.outputs)
        return f"{ins} -> [{self.job_label}] -> {outs} ({self.origin})"


@dataclass(frozen=True)
class ClosingHop:
    """A hop posted before that is gone now: its job's closing run keeps only the topic."""

    side: Side
    job: tuple[str, str]
    inputs: tuple[DatasetSpec, ...]
    outputs: tuple[DatasetSpec, ...]

    @classmethod
    def of(cls, run: SyncRun, topic: str, side: Side, job: tuple[str, str]) -> ClosingHop:
        inputs, outputs = closing_datasets(side, run.topic_dataset(topic))
        return cls(
            side,
            job,
            tuple(DatasetSpec(*d) for d in inputs),
            tuple(DatasetSpec(*d) for d in outputs),
        )

    @property
    def job_label(self) -> str:
        return f"{self.job[0]}.{self.job[1]}"

    def describe(self) -> str:
        return f"closed [{self.job_label}]"


@dataclass(frozen=True)
class DestinationPlan:
    """What one lineage destination gets of a topic's plan."""

    name: str
    #: It holds the hops' content already (and, DataZone, nothing failed or foreign): no post.
    holds: bool
    #: Jobs open at this destination whose hop is gone: each gets a closing run there.
    closing: tuple[ClosingHop, ...] = ()


@dataclass(frozen=True)
class LineagePlan:
    """The hops a topic should have and the ones to close; ``fingerprint`` is what their runs
    derive from (None: nothing to post, ever)."""

    lineage: TopicLineage
    mapping: TopicTableMapping
    hops: tuple[Hop, ...] = ()
    fingerprint: str | None = None
    #: What the topic's mapping record keeps once posted (a :class:`PostedLineage`), so the
    #: next post knows which jobs to close and a reconcile which runs to look for.
    posted_state: str = ""
    output_source_identifier: str | None = None
    already_posted: bool = False
    #: Events of these hops' runs that DataZone failed after accepting them: posted again.
    failed_events: tuple[str, ...] = ()
    #: Jobs posted before whose hop is gone: each gets a closing run.
    closing: tuple[ClosingHop, ...] = ()
    #: Runs someone else posted under these hops' jobs, now their latest in DataZone: the
    #: hops are posted again, under new run ids dated after them.
    foreign_runs: tuple[ForeignRun, ...] = ()
    #: Each configured destination's part (``DZLINEAGE_LINEAGE_DESTINATIONS``), in order.
    destinations: tuple[DestinationPlan, ...] = ()
    #: The state posting records (what ``posted_state`` encodes) and the one it replaces.
    state: PostedLineage | None = None
    previous_state: PostedLineage | None = None

    def posts_by_destination(self) -> tuple[tuple[Hop | ClosingHop, tuple[str, ...]], ...]:
        """Every run this plan posts, each with the destinations it goes to: a hop to those
        that do not hold the content, a closing to those where its job is open."""
        posts: list[tuple[Hop | ClosingHop, tuple[str, ...]]] = []
        takers = tuple(d.name for d in self.destinations if not d.holds)
        if takers:
            posts.extend((hop, takers) for hop in self.hops)
        for closing in self.closing:
            names = tuple(d.name for d in self.destinations if closing in d.closing)
            if names:
                posts.append((closing, names))
        return tuple(posts)

    @property
    def run_id(self) -> str | None:
        return self.fingerprint

    @property
    def posts(self) -> tuple[Hop | ClosingHop, ...]:
        """Every job this plan posts a run for: the hops, then the closings."""
        return (*self.hops, *self.closing)

    def told(self, state: str, notes: Sequence[str] = ()) -> str:
        """The topic's lineage in the words of :mod:`~dzlineage_dagster.core.topic_states`:
        ``state`` (a plan's or a sync's word) and the edges, or why there is none."""
        closed = [hop.describe() for hop in self.closing]
        notes = [*notes, *closed]
        return told_lineage(self.lineage, self.mapping, state, bool(self.hops), notes)

    @property
    def planned(self) -> str:
        """What a sync would do with the topic's lineage, as `sync --dry-run` shows it."""
        if self.foreign_runs:
            runs = ", ".join(f.describe() for f in self.foreign_runs)
            return self.told(REPOST.planned, [f"not the sync's: {runs}"])
        if self.failed_events:
            return self.told(REPOST.planned, ["its events failed after acceptance"])
        if self.already_posted:
            return self.told(UNCHANGED.planned)
        return self.told(POST.planned, self.destinations_behind)

    @property
    def destinations_behind(self) -> list[str]:
        """A note when only some destinations take the post (the others hold it already)."""
        holding = [d.name for d in self.destinations if d.holds]
        if not holding:
            return []
        taking = [d.name for d in self.destinations if not d.holds]
        return [f"to {', '.join(taking)} only: {', '.join(holding)} has it"]


def told_lineage(
    lineage: TopicLineage,
    mapping: TopicTableMapping,
    state: str,
    has_edges: bool,
    notes: Sequence[str] = (),
) -> str:
    """``state`` and the topic's edges, each missing hop with why, or ``no edge`` and why when
    it has none to post."""
    if not has_edges:
        return no_edge_state(lineage.ambiguous_reason or mapping.reason, notes)
    return edges_state(
        state,
        [t.qualified for t in lineage.source_tables],
        mapping.topic,
        [str(t.ref) for t in lineage.tables],
        lineage.origin,
        [*notes, *lineage.missing_hops],
    )


@dataclass(frozen=True)
class LineageOutcome:
    plan: LineagePlan
    posted: bool
    #: Events DataZone took from this post (not those it held already).
    events_posted: int = 0
    #: Events whose post DataZone answered 409 because it held them already: delivered
    #: before (a crashed run, a concurrent sync), not posted by this run.
    events_already_held: int = 0
    split: bool = False
    trimmed: bool = False
    #: The ids of the events DataZone failed after accepting them that this post replaces.
    reposted_failed_events: tuple[str, ...] = ()
    #: DataZone already had the events (their client tokens were used): nothing new posted.
    replayed: bool = False
    #: One line per hop whose event passed DataZone's limit: the hop and what was done to it.
    oversized_hops: tuple[str, ...] = ()
    #: The ids PostLineageEvent gave the events it accepted (what the read-back waits for).
    event_ids: tuple[str, ...] = ()
    #: (destination, events it took from this post, a dataset event included), each
    #: configured destination in order: 0 for one that held the content already.
    destinations: tuple[tuple[str, int], ...] = ()

    @property
    def mapping(self) -> TopicTableMapping:
        return self.plan.mapping

    @property
    def lineage(self) -> TopicLineage:
        return self.plan.lineage

    @property
    def run_id(self) -> str | None:
        return self.plan.fingerprint

    @property
    def output_source_identifier(self) -> str | None:
        return self.plan.output_source_identifier

    @property
    def reposted_over_foreign(self) -> bool:
        """Posted again because someone else's run was the latest of one of its jobs."""
        return self.posted and bool(self.plan.foreign_runs)

    @property
    def columns_dropped(self) -> bool:
        return self.trimmed

    @property
    def summary(self) -> str:
        """What the sync did with the topic's lineage, as its summary and Dagster show it."""
        if self.reposted_failed_events:
            count = len(self.reposted_failed_events)
            state, notes = REPOST.done, [f"{count} events had failed after acceptance"]
        elif self.reposted_over_foreign:
            jobs = ", ".join(f"[{f.job[0]}.{f.job[1]}]" for f in self.plan.foreign_runs)
            state, notes = REPOST.done, [f"over a foreign run of {jobs}"]
        else:
            state = (
                ALREADY_POSTED if self.replayed else POST.done if self.posted else UNCHANGED.done
            )
            notes = self.plan.destinations_behind if self.posted else []
        # The edges are whole either way; whether every column's lineage is there is not.
        return self.plan.told(state, [*notes, *self.oversized_hops])


def recorded_lineage(run: SyncRun, topic: str, record: MappingRecord) -> str:
    """The lineage of a topic known unchanged from its registry token, without a call: the jobs
    its record says are open, the edges from the run's topology (the token vouches that
    neither the schema nor the connectors changed since the record was written)."""
    try:
        posted = PostedLineage.decode(record.lineage_fingerprint)
    except ValueError:
        posted = None  # the sync that reads the topic says what is wrong with the record
    has_edges = bool(posted and (posted.jobs or posted.legacy_runs))
    return told_lineage(
        run.topology.lineage_for(topic), run.mapper.map_topic(topic), UNCHANGED.done, has_edges
    )


def plan_topic_lineage(run: SyncRun, snapshot: SchemaSnapshot) -> LineagePlan:
    """The topic's hops, the jobs to close, and whether DataZone already has them (reads only)."""
    lineage = run.topology.lineage_for(snapshot.topic)
    mapping = run.mapper.map_topic(snapshot.topic)
    hops = topic_hops(run, snapshot, lineage)
    stored = run.mappings.get(snapshot.schema_arn)
    try:
        previous = PostedLineage.decode(stored.lineage_fingerprint) if stored else None
    except ValueError as error:
        raise SyncError(
            f"{snapshot.topic}: {error} (its SSM mapping was edited?); "
            "`dzlineage sync --reconcile` re-posts the topic's lineage"
        ) from None
    names = run.settings.lineage_destinations
    closings = {
        name: _closings(run, snapshot.topic, previous, hops, name, legacy=name == "datazone")
        for name in names
    }
    # Each job closed once in the plan, whichever destinations it is closed at.
    closing = tuple({c.job: c for name in names for c in closings[name]}.values())
    if not hops and not closing:
        return LineagePlan(lineage, mapping)
    content = deterministic_run_id(
        snapshot.schema_arn, str(snapshot.version), json.dumps([_hop_key(h) for h in hops])
    )
    base = next_base(content, previous)
    jobs = {hop.job for hop in hops}
    # A run of this very content under the run ids it gets is the sync's own, posted by a run
    # whose record write then failed: the post below replays it, nothing foreign is in it.
    own = {hop_run_id(base, hop.side, hop.job) for hop in hops}
    # Failed and foreign runs are DataZone's to say (and read only where it is a destination).
    datazone = "datazone" in names
    foreign = tuple(
        f for f in (run.foreign_runs if datazone else ()) if f.job in jobs and f.run_id not in own
    )
    if foreign:
        # New run ids (and so client tokens): the sync's runs of this content are older than
        # the foreign ones, and a replay of them would change nothing.
        base = deterministic_run_id("over foreign runs", base, *(f.run_id for f in foreign))
    failed_events = tuple(
        event
        for hop in ((*hops, *closing) if datazone else ())
        for event in run.lineage_health.failed_runs.get(hop_run_id(base, hop.side, hop.job), ())
    )
    first_table = lineage.tables[0] if lineage.tables else None
    identifier = (
        glue_source_identifier(
            snapshot.region,
            run.settings.glue_table_account(snapshot.account_id),
            first_table.database,
            first_table.table,
        )
        if first_table
        else None
    )
    destinations = tuple(
        DestinationPlan(
            name,
            holds=(
                previous is not None
                and previous.holds(name, content)
                and (name != "datazone" or not (failed_events or foreign))
            ),
            closing=closings[name],
        )
        for name in names
    )
    state = after_posting(
        PostedLineage(content, base, tuple(hop.posted_job for hop in hops)), previous, names, ()
    )
    return LineagePlan(
        lineage,
        mapping,
        hops,
        base,
        state.encode() if state else "",
        identifier,
        already_posted=all(destination.holds for destination in destinations),
        failed_events=failed_events,
        closing=closing,
        foreign_runs=foreign,
        destinations=destinations,
        state=state,
        previous_state=previous,
    )


def _closings(
    run: SyncRun,
    topic: str,
    previous: PostedLineage | None,
    hops: Sequence[Hop],
    destination: str,
    *,
    legacy: bool,
) -> tuple[ClosingHop, ...]:
    """The closing runs ``destination`` needs: its open jobs the hops no longer have and, for
    DataZone (``legacy``), the jobs an earlier layout of the record posted under."""
    closing = tuple(
        ClosingHop.of(run, topic, job.side, job.job(topic))
        for job in jobs_to_close(previous, (hop.posted_job for hop in hops), destination)
    )
    if legacy and previous is not None and previous.legacy_runs:
        closing += tuple(
            ClosingHop.of(run, topic, hop.side, _legacy_job(run, hop, topic)) for hop in hops
        )
    return closing


def post_topic_lineage(run: SyncRun, snapshot: SchemaSnapshot) -> LineageOutcome:
    """Post one run per hop (its events split when too big) and a closing run per job whose
    hop is gone, once per content."""
    plan = plan_topic_lineage(run, snapshot)
    if plan.fingerprint is None or plan.already_posted:
        return LineageOutcome(plan, posted=False)
    # A reconcile re-post is a new delivery of the same logical run: a token of its own, or
    # DataZone would replay the missing or failed delivery.
    delivery = (
        f"repost {run.started_at.isoformat()}" if snapshot.schema_arn in run.repost_lineage else ""
    )
    for foreign in plan.foreign_runs:
        run.log.warning(
            f"{snapshot.topic}: the latest run of the sync's job [{foreign.job[0]}."
            f"{foreign.job[1]}] in DataZone is not the sync's: {foreign.describe()}; its edges "
            "replaced the platform's, so the topic's lineage is posted again (posting runs "
            "under the product's job namespaces is for the sync alone; the relay refuses it)"
        )
    after = max((f.event_time for f in plan.foreign_runs), default=None)
    composite = CompositeDestination(run_destinations(run))
    posts = plan.posts_by_destination()
    posted = _post_runs(run, composite, snapshot.topic, plan.fingerprint, posts, delivery, after)
    # Where the hops went as new content, the topic's schema and owners go too, as a dataset
    # event (Glue takes them; DataZone's topic asset carries them already).
    described = composite.post_dataset(
        snapshot.topic,
        lambda: _topic_dataset_event(run, snapshot),
        only=[d.name for d in plan.destinations if not d.holds],
    )
    # What reached a destination is recorded even when another failed: the next sync posts
    # only to the one that failed (core/lineage/state.py).
    assert plan.state is not None
    state = after_posting(
        plan.state, plan.previous_state, composite.names, frozenset(composite.failures)
    )
    # The asset stage of this run may have staged the record: it gets the state on top.
    current = run.mappings.get(snapshot.schema_arn)
    if current is not None and state is not None:
        run.mappings.stage(replace(current, lineage_fingerprint=state.encode()))
    composite.raise_failures(snapshot.topic)
    return LineageOutcome(
        plan,
        posted=True,
        events_posted=posted.events - posted.refused,
        events_already_held=posted.refused,
        split=posted.split,
        trimmed=posted.trimmed,
        reposted_failed_events=plan.failed_events,
        replayed=posted.refused == posted.events,
        oversized_hops=posted.oversized_hops,
        event_ids=posted.event_ids,
        destinations=tuple(
            (name, posted.by_destination.get(name, 0) + (name in described))
            for name in composite.names
        ),
    )


def close_topic_lineage(run: SyncRun, record: MappingRecord) -> None:
    """A retired topic: a closing run for every job its record says is open, at each
    destination where it is open."""
    try:
        previous = PostedLineage.decode(record.lineage_fingerprint)
    except ValueError as error:
        raise SyncError(f"{record.topic}: {error}") from None
    by_job: dict[tuple[str, str], tuple[ClosingHop, list[str]]] = {}
    for name in run.settings.lineage_destinations:
        for job in jobs_to_close(previous, (), name):
            closing = ClosingHop.of(run, record.topic, job.side, job.job(record.topic))
            by_job.setdefault(closing.job, (closing, []))[1].append(name)
    if by_job:
        composite = CompositeDestination(run_destinations(run))
        posts = tuple((closing, tuple(names)) for closing, names in by_job.values())
        _post_runs(run, composite, record.topic, next_base("retired", previous), posts, "")
        composite.raise_failures(record.topic)


def run_destinations(run: SyncRun) -> list[LineageDestination]:
    """The destinations ``DZLINEAGE_LINEAGE_DESTINATIONS`` names, in order: DataZone through
    the governance side, Glue's lineage through the data side (the side of its tables)."""
    made = {
        "datazone": lambda: DataZoneDestination(run),
        "glue": lambda: GlueDestination(
            run.resource.data_catalog.client(), run.settings.glue_lineage_tps
        ),
    }
    return [made[name]() for name in run.settings.lineage_destinations]


@dataclass(frozen=True)
class _Posted:
    events: int
    refused: int
    split: bool
    trimmed: bool
    oversized_hops: tuple[str, ...]
    event_ids: tuple[str, ...]
    #: Destination -> the events it took (a destination that failed is not here).
    by_destination: dict[str, int]


def _post_runs(
    run: SyncRun,
    composite: CompositeDestination,
    topic: str,
    base: str,
    posts: Sequence[tuple[Hop | ClosingHop, Sequence[str]]],
    delivery: str,
    after: datetime | None = None,
) -> _Posted:
    """One run per hop under ``base``, to the destinations named beside it: PostLineageEvent
    for each of its events, dated now or, when that is not later, just ``after`` (DataZone's
    latest run of a job is the one with the latest eventTime, and a foreign run may be dated
    ahead). A destination that fails gets nothing more (``composite.failures``)."""
    events, refused, split, trimmed = 0, 0, False, False
    oversized_hops: list[str] = []
    event_ids: list[str] = []
    by_destination: dict[str, int] = {}
    now = datetime.now(timezone.utc)
    if after is not None and after >= now:
        now = after + EVENT_TIME_STEP
    limit_of = "DataZone" if "datazone" in composite.names else "Glue"
    for hop, names in posts:
        run_id = hop_run_id(base, hop.side, hop.job)
        try:
            fitted = build_fitted_run_events(
                job_namespace=hop.job[0],
                job_name=hop.job[1],
                inputs=hop.inputs,
                outputs=hop.outputs,
                run_id=run_id,
                event_time=now,
                producer=PRODUCER,
                event_types=EVENT_TYPES,
            )
        except ValueError as error:
            raise SyncError(f"{topic}: {error}") from None
        if fitted.split or fitted.trimmed:
            done = (
                "schema and column-lineage facets left out, datasets kept"
                if fitted.trimmed
                else f"columns split over {fitted.parts} events of its run"
            )
            oversized_hops.append(
                f"{hop.side} hop [{hop.job_label}] over {limit_of}'s {MAX_EVENT_BYTES} bytes: {done}"
            )
            run.log.warning(f"{topic}: {oversized_hops[-1]}")
        split, trimmed = split or fitted.split, trimmed or fitted.trimmed
        retry_of = run.lineage_health.retry_of(run_id) if "datazone" in names else None
        post = RunPost(topic, hop.job_label, fitted.events, fitted.split, delivery, retry_of)
        delivered = composite.post_run(post, only=names)
        for name, taken in delivered.items():
            event_ids.extend(taken.event_ids)
            refused += taken.refused
            by_destination[name] = by_destination.get(name, 0) + len(fitted.events) - taken.refused
        events += len(fitted.events)
    return _Posted(
        events, refused, split, trimmed, tuple(oversized_hops), tuple(event_ids), by_destination
    )


def topic_hops(run: SyncRun, snapshot: SchemaSnapshot, lineage: TopicLineage) -> tuple[Hop, ...]:
    """The topic's source hops, then its sink hops, with their column lineage: what the sync
    posts, and what the platform graph component draws."""
    return (*_source_hops(run, snapshot, lineage), *_sink_hops(run, snapshot, lineage))


def _field_prefix(run: SyncRun, topic: str, snapshot: SchemaSnapshot) -> str:
    """``after.`` while the records keep Debezium's envelope, ``""`` once a transform of the
    source connector unwrapped it (or the schema has no envelope)."""
    source = run.topology.source_connector_of(topic)
    if (source is not None and source.chain.reshapes_value) or not snapshot.debezium_envelope:
        return ""
    return ENVELOPE_PREFIX


def _topic_dataset_event(run: SyncRun, snapshot: SchemaSnapshot) -> DatasetEvent:
    """The topic as a dataset event: its schema and the owners its schema tag and connectors
    name (one GetTags, as the asset stage reads them)."""
    owners = topic_configured_owners(run, snapshot.topic)
    return build_dataset_event(
        _topic_spec(run, snapshot),
        [(owner.name, owner.source) for owner in owners],
        event_time=datetime.now(timezone.utc),
        producer=PRODUCER,
    )


def _topic_spec(run: SyncRun, snapshot: SchemaSnapshot, column_lineage=None) -> DatasetSpec:
    namespace, name = run.topic_dataset(snapshot.topic)
    return DatasetSpec(namespace, name, list(snapshot.columns), column_lineage)


def _source_hops(run: SyncRun, snapshot: SchemaSnapshot, lineage: TopicLineage) -> list[Hop]:
    hops = []
    prefix = _field_prefix(run, snapshot.topic, snapshot)
    for connector, edges in _by_connector(lineage.sources).items():
        try:
            inputs = tuple(
                DatasetSpec(
                    *source_table_dataset(
                        edge.table, sqlserver_scheme=run.settings.sqlserver_scheme
                    )
                )
                for edge in edges
            )
        except ValueError as error:
            raise SyncError(f"{snapshot.topic}: {error}") from None
        column_lineage = source_hop_column_lineage(
            list(snapshot.columns), inputs, field_prefix=prefix
        )
        hops.append(
            _hop(
                run,
                "source",
                connector,
                snapshot.topic,
                edges,
                inputs,
                (_topic_spec(run, snapshot, column_lineage),),
            )
        )
    return hops


def _sink_hops(run: SyncRun, snapshot: SchemaSnapshot, lineage: TopicLineage) -> list[Hop]:
    topic = _topic_spec(run, snapshot)
    prefix = _field_prefix(run, snapshot.topic, snapshot)
    hops = []
    for connector, edges in _by_connector(lineage.sinks).items():
        outputs = []
        for edge in edges:
            # Not posted: an edge to a Glue table that cannot exist (DataZone would keep a node
            # no table ever joins); the topic fails by name, its asset and mapping stay.
            problem = edge.table.ref.glue_name_problem
            if problem:
                raise SyncError(
                    f"{snapshot.topic}: lineage not posted: its sink edge ({edge.origin}) "
                    f"goes to {problem}"
                )
            # The sink creates and evolves its tables from the record's columns (plus the
            # `_cdc` struct the DebeziumTransform adds, which no topic field feeds).
            outputs.append(
                glue_table_spec(
                    snapshot.region,
                    run.settings.glue_table_account(snapshot.account_id),
                    edge.table.database,
                    edge.table.table,
                    list(snapshot.columns),
                    sink_hop_column_lineage(list(snapshot.columns), topic, field_prefix=prefix),
                )
            )
        hops.append(_hop(run, "sink", connector, snapshot.topic, edges, (topic,), outputs))
    return hops


def _by_connector(edges: Sequence) -> dict[str, list]:
    """The edges grouped by the connector that decided them (``""`` for none)."""
    grouped: dict[str, list] = {}
    for edge in edges:
        grouped.setdefault(edge.table.connector, []).append(edge)
    return grouped


#: The owner of a hop's job when no connector decided its edges (override or convention).
UNCONNECTED_OWNERS: dict[Side, str] = {"source": "debezium-source", "sink": "iceberg-sink"}


def _hop(
    run: SyncRun,
    side: Side,
    connector: str,
    topic: str,
    edges: Sequence,
    inputs: Sequence[DatasetSpec],
    outputs: Sequence[DatasetSpec],
) -> Hop:
    """One hop: the job ``kafka-connect.<connector>/<topic>``, or, for edges no connector
    decided, ``<DZLINEAGE_JOB_NAMESPACE>.<debezium-source|iceberg-sink>/<topic>``."""
    if connector:
        owner, job = connector, hop_job(connector, topic)
    else:
        owner = UNCONNECTED_OWNERS[side]
        job = hop_job(owner, topic, run.settings.job_namespace)
    return Hop(
        side,
        connector or None,
        owner,
        job,
        tuple(inputs),
        tuple(outputs),
        _weakest(edges),
        "; ".join(dict.fromkeys(e.reason for e in edges)),
    )


def _legacy_job(run: SyncRun, hop: Hop, topic: str) -> tuple[str, str]:
    """The job an earlier version posted this hop under: one per connector (``kafka-connect.
    <connector>``, shared by all its topics), or ``<owner>.<topic>`` for an unconnected hop.
    A record of that version names no jobs; closing these once, when its topic is re-posted
    under the per-hop jobs, takes their last run's edge out of the views."""
    if hop.connector:
        return CONNECTOR_JOB_NAMESPACE, hop.connector
    return run.settings.job_namespace, f"{hop.owner}.{topic}"


def _weakest(edges: Sequence) -> EdgeOrigin:
    return min((e.origin for e in edges), key=_ORIGIN_STRENGTH.__getitem__)


def _hop_key(hop: Hop) -> list:
    """What identifies a hop's content: jobs, datasets and their columns."""

    def dataset(spec: DatasetSpec) -> list:
        return [spec.namespace, spec.name, [c.name for c in spec.columns or ()]]

    return [
        hop.side,
        list(hop.job),
        [dataset(d) for d in hop.inputs],
        [dataset(d) for d in hop.outputs],
    ]
