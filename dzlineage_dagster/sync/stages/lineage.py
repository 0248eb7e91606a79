"""The lineage stage: OpenLineage START and COMPLETE events for the edge topic -> Iceberg table,
posted once per content (the content's run id is kept in the topic's mapping record)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timezone

from botocore.exceptions import ClientError

from dzlineage_dagster.core.avro import Column
from dzlineage_dagster.core.openlineage import (
    DatasetSpec,
    build_run_events,
    deterministic_run_id,
    event_json,
    event_size_ok,
    glue_dataset,
    glue_source_identifier,
    lineage_client_token,
)
from dzlineage_dagster.core.table_mapping import TopicTableMapping
from dzlineage_dagster.sync.errors import SyncError, error_code
from dzlineage_dagster.sync.run_state import SyncRun
from dzlineage_dagster.sync.stages.schema import SchemaSnapshot

PRODUCER = "https://github.com/dzlineage/dzlineage-dagster"
LINEAGE_EVENT_LIMIT = 300_000


@dataclass(frozen=True)
class LineageOutcome:
    mapping: TopicTableMapping
    posted: bool
    run_id: str | None = None
    output_source_identifier: str | None = None
    columns_dropped: bool = False
    #: DataZone already had the events (their client tokens were used): nothing new posted.
    replayed: bool = False

    @property
    def summary(self) -> str:
        if self.mapping.table is None:
            return f"no edge: {self.mapping.reason}"
        state = "already posted" if self.replayed else "posted" if self.posted else "unchanged"
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


def plan_topic_lineage(run: SyncRun, snapshot: SchemaSnapshot) -> LineagePlan:
    mapping = run.mapper.map_topic(snapshot.topic)
    if mapping.table is None:
        return LineagePlan(mapping)
    where = (snapshot.region, snapshot.account_id, mapping.table.database, mapping.table.table)
    table_namespace, table_name = glue_dataset(*where)
    job_name = f"iceberg-sink.{snapshot.topic}"
    run_id = deterministic_run_id(
        run.settings.job_namespace, job_name, snapshot.schema_arn, str(snapshot.version),
        run.topic_namespace, table_namespace, table_name,
    )  # fmt: skip
    stored = run.mappings.get(snapshot.schema_arn)
    return LineagePlan(
        mapping,
        job_name,
        run_id,
        (table_namespace, table_name),
        glue_source_identifier(*where),
        already_posted=stored is not None and stored.lineage_fingerprint == run_id,
    )


def post_topic_lineage(run: SyncRun, snapshot: SchemaSnapshot) -> LineageOutcome:
    """Post START and COMPLETE events for the edge topic -> Iceberg table, once per content."""
    plan = plan_topic_lineage(run, snapshot)
    outcome = LineageOutcome(
        plan.mapping, False, plan.run_id, plan.output_source_identifier, columns_dropped=False
    )
    if plan.run_id is None or plan.already_posted:
        return outcome

    columns = list(snapshot.columns)
    payloads = _event_payloads(run, plan, snapshot, columns)
    if not all(event_size_ok(p, LINEAGE_EVENT_LIMIT) for _, p in payloads):
        run.log.warning(
            f"{snapshot.topic}: lineage events exceed DataZone's {LINEAGE_EVENT_LIMIT} bytes with "
            f"{len(columns)} columns in the schema facets; posting them without column facets"
        )
        payloads = _event_payloads(run, plan, snapshot, None)
        outcome = replace(outcome, columns_dropped=True)
        if not all(event_size_ok(p, LINEAGE_EVENT_LIMIT) for _, p in payloads):
            raise SyncError(
                f"lineage event for {snapshot.topic} exceeds {LINEAGE_EVENT_LIMIT} bytes"
            )
    datazone = run.resource.datazone.client()
    # A reconcile re-post is a new delivery of the same logical run: a token of its own, or
    # DataZone would replay the missing or failed delivery.
    delivery = (
        f"repost {run.started_at.isoformat()}" if snapshot.schema_arn in run.repost_lineage else ""
    )
    refused = 0
    for event_type, payload in payloads:
        try:
            datazone.post_lineage_event(
                domainIdentifier=run.settings.domain_id,
                event=payload.encode(),
                clientToken=lineage_client_token(plan.run_id, f"{event_type}{delivery}"),
            )
        except ClientError as error:
            # The token already posted this run's event (a rerun after a crash, within
            # DataZone's token window); only its eventTime differs, so DataZone refuses the
            # reuse instead of replaying: the event is there.
            if error_code(error) != "ConflictException":
                raise
            refused += 1
    # The asset stage of this run may have staged the record: it gets the run id on top.
    current = run.mappings.get(snapshot.schema_arn)
    if current is not None:
        run.mappings.stage(replace(current, lineage_fingerprint=plan.run_id))
    return replace(outcome, posted=True, replayed=refused == len(payloads))


def _event_payloads(
    run: SyncRun,
    plan: LineagePlan,
    snapshot: SchemaSnapshot,
    columns: list[Column] | None,
) -> list[tuple[str, str]]:
    """``(eventType, JSON)`` of the START and COMPLETE events of the edge."""
    table_namespace, table_name = plan.output_dataset
    events = build_run_events(
        job_namespace=run.settings.job_namespace,
        job_name=plan.job_name,
        inputs=[DatasetSpec(run.topic_namespace, snapshot.topic, columns)],
        outputs=[DatasetSpec(table_namespace, table_name, columns)],
        run_id=plan.run_id,
        event_time=datetime.now(timezone.utc),
        producer=PRODUCER,
    )
    return [(str(e.eventType.value), event_json(e)) for e in events]
