"""OpenLineage run events for DataZone's PostLineageEvent, and the names that join them up.

DataZone links a lineage dataset node to a catalog asset by ``sourceIdentifier``: an ARN for
a Glue table (``arn:aws:glue:<region>:<account>:table/<db>/<table>``, from the OpenLineage
Glue naming ``arn:aws:glue:{region}:{account}`` + ``table/{db}/{table}``), and
``<namespace>/<name>`` for any other dataset, such as a Kafka topic named by OpenLineage's
convention ``kafka://{bootstrap server host}:{port}`` + ``{topic}`` (the SageMaker Unified
Studio user guide, "The importance of the sourceIdentifier attribute to lineage nodes").

PostLineageEvent takes an ``event`` blob of at most 300000 bytes and a ``clientToken`` of 1
to 128 characters from ``[\\x21-\\x7E]`` (botocore's DataZone model), which makes a retried
post idempotent when the token is derived from the event.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from openlineage.client.event_v2 import (
    InputDataset,
    Job,
    OutputDataset,
    Run,
    RunEvent,
    RunState,
)
from openlineage.client.facet_v2 import column_lineage_dataset, schema_dataset
from openlineage.client.naming import dataset as naming
from openlineage.client.serde import Serde

from dzlineage_dagster.core.avro import Column
from dzlineage_dagster.core.debezium import DebeziumSource, SourceEngine, SourceTable

MAX_EVENT_BYTES = 300_000
#: Names the project's deterministic run ids, so they never equal another producer's uuid5.
RUN_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "urn:dzlineage-dagster:lineage-run")


def kafka_dataset_namespace(bootstrap_servers: str) -> str:
    """``kafka://<host:port>`` of the first bootstrap server, as Debezium's own lineage names it.

    Accepts a ``bootstrap.servers`` list (``b-1.x:9098,b-2.x:9098``), with or without a
    listener scheme (``SASL_SSL://b-1.x:9098``).
    """
    first = bootstrap_servers.split(",")[0].strip()
    address = first.split("://", 1)[-1]
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(
            f"bootstrap servers {bootstrap_servers!r} must start with host:port, "
            "e.g. 'b-1.cluster.kafka.us-east-1.amazonaws.com:9098'"
        )
    return naming.Kafka(bootstrap_server_host=host, port=port, topic="-").get_namespace()


def preferred_broker_string(broker_strings: Mapping[str, str]) -> str:
    """The cluster's bootstrap string the graph's Kafka namespace is taken from: IAM, then TLS, then plaintext.

    The keys are GetBootstrapBrokers' (``BootstrapBrokerStringSaslIam``, ...).
    """
    for key in ("BootstrapBrokerStringSaslIam", "BootstrapBrokerStringTls"):
        if broker_strings.get(key):
            return broker_strings[key]
    return broker_strings.get("BootstrapBrokerString", "")


def topic_dataset(
    topic: str, cluster_bootstrap_servers: str, source: DebeziumSource | None = None
) -> tuple[str, str]:
    """The (namespace, name) of a topic, the same node Debezium's own OpenLineage posts.

    Debezium names topics by the first server of its connector's
    ``openlineage.integration.dataset.kafka.bootstrap.servers`` or
    ``schema.history.internal.kafka.bootstrap.servers``; a topic that no such connector writes
    takes the cluster's bootstrap servers. Both hops of a topic must use this one function so
    the topic stays one node.
    """
    servers = (source.lineage_bootstrap_servers if source else None) or cluster_bootstrap_servers
    return kafka_dataset_namespace(servers), topic


#: How SQL Server source tables are named: Debezium's own OpenLineage writes ``sqlserver://``,
#: the OpenLineage naming spec says ``mssql://``. Debezium's is the default so the nodes join.
SQLSERVER_SCHEMES = ("sqlserver", "mssql")


def source_table_dataset(
    table: SourceTable, *, sqlserver_scheme: str = "sqlserver"
) -> tuple[str, str]:
    """The (namespace, name) of a captured source table, as Debezium 3.2+ names it.

    Postgres ``postgres://{host}:{port}`` + ``{db}.{schema}.{table}``, MySQL/MariaDB
    ``mysql://{host}:{port}`` + ``{db}.{table}``, Oracle ``oracle://{host}:{port}`` +
    ``{service}.{schema}.{table}`` (the PDB when the connector has one), SQL Server
    ``{sqlserver_scheme}://{host}:{port}`` + ``{db}.{schema}.{table}``.
    """
    if not table.hostname:
        raise ValueError(
            f"source table {table.qualified} of connector {table.connector!r} has no "
            "database.hostname: its dataset cannot be named"
        )
    host, port = table.hostname, table.port
    if table.engine is SourceEngine.POSTGRES:
        named: naming.DatasetNaming = naming.Postgres(
            host=host,
            port=port,
            database=table.database,
            schema=table.schema or "",
            table=table.table,
        )
    elif table.engine is SourceEngine.MYSQL:
        named = naming.MySQL(host=host, port=port, database=table.database, table=table.table)
    elif table.engine is SourceEngine.ORACLE:
        named = naming.Oracle(
            host=host,
            port=port,
            service_name=table.database,
            schema=table.schema or "",
            table=table.table,
        )
    else:
        if sqlserver_scheme not in SQLSERVER_SCHEMES:
            raise ValueError(
                f"sqlserver_scheme {sqlserver_scheme!r} must be one of {SQLSERVER_SCHEMES}"
            )
        return f"{sqlserver_scheme}://{host}:{port}", table.qualified
    return named.get_namespace(), named.get_name()


#: The namespace of the jobs that stand for connectors (one job per connector).
CONNECTOR_JOB_NAMESPACE = "kafka-connect"


def connector_job(connector_name: str, namespace: str = CONNECTOR_JOB_NAMESPACE) -> tuple[str, str]:
    """The (namespace, name) of the job standing for one connector: stable across its runs."""
    if not connector_name:
        raise ValueError("a connector job needs the connector's name")
    return namespace, connector_name


def glue_dataset(region: str, account_id: str, database: str, table: str) -> tuple[str, str]:
    """The OpenLineage (namespace, name) of a Glue Data Catalog table."""
    named = naming.AWSGlue(
        region_name=region, account_id=account_id, database_name=database, table_name=table
    )
    return named.get_namespace(), named.get_name()


def glue_source_identifier(region: str, account_id: str, database: str, table: str) -> str:
    """The table's ARN: DataZone's sourceIdentifier for a Glue table's lineage node."""
    namespace, name = glue_dataset(region, account_id, database, table)
    return f"{namespace}:{name}"


def dataset_source_identifier(namespace: str, name: str) -> str:
    """DataZone's sourceIdentifier for a dataset node that is not an AWS resource."""
    return f"{namespace}/{name}"


@dataclass(frozen=True)
class FieldRef:
    """One field of an input dataset that an output field is copied from."""

    namespace: str
    name: str
    field: str


#: Where Debezium's envelope keeps the row after a change: topic fields are ``after.<column>``.
ENVELOPE_AFTER = "after."


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset of a run; ``columns`` (when known) become its schema facet.

    ``column_lineage`` (outputs only) maps each output field to the input fields it is copied
    from unchanged, and becomes the ``columnLineage`` facet (DIRECT / IDENTITY).
    """

    namespace: str
    name: str
    columns: Sequence[Column] | None = None
    column_lineage: Mapping[str, Sequence[FieldRef]] | None = None


def source_hop_column_lineage(
    topic_columns: Sequence[Column],
    sources: Sequence[DatasetSpec],
    *,
    field_prefix: str = ENVELOPE_AFTER,
) -> dict[str, list[FieldRef]]:
    """Topic field ``after.<column>`` -> the same column of every source table that has it.

    A topic merged from several tables (a logical-table router) gets one input per table.
    ``field_prefix`` is ``""`` when the source connector unwraps the envelope
    (``TransformChain.reshapes_value``, e.g. ExtractNewRecordState).
    """
    lineage: dict[str, list[FieldRef]] = {}
    for column in topic_columns:
        inputs = [
            FieldRef(source.namespace, source.name, column.name)
            for source in sources
            if source.columns is None or any(c.name == column.name for c in source.columns)
        ]
        if inputs:
            lineage[field_prefix + column.name] = inputs
    return lineage


def sink_hop_column_lineage(
    table_columns: Sequence[Column], topic: DatasetSpec, *, field_prefix: str = ENVELOPE_AFTER
) -> dict[str, list[FieldRef]]:
    """Iceberg column -> the topic's ``after.<column>`` it is written from.

    Columns the topic does not carry (the ``_cdc`` struct the DebeziumTransform adds) have no
    input and are left out.
    """
    topic_names = None if topic.columns is None else {c.name for c in topic.columns}
    return {
        column.name: [FieldRef(topic.namespace, topic.name, field_prefix + column.name)]
        for column in table_columns
        if topic_names is None or column.name in topic_names
    }


def build_run_events(
    *,
    job_namespace: str,
    job_name: str,
    inputs: Sequence[DatasetSpec],
    outputs: Sequence[DatasetSpec],
    run_id: str,
    event_time: datetime,
    producer: str,
    event_types: Sequence[RunState] = (RunState.START, RunState.COMPLETE),
) -> list[RunEvent]:
    """The events of one run (by default START and COMPLETE), moving ``inputs`` to ``outputs``.

    Every event carries the same ``run_id``, ``event_time``, inputs and outputs. A consumer
    that builds lineage from any run event (DataZone) needs only ``(RunState.COMPLETE,)``.
    ``producer`` must be a URI (the specification's format), e.g. the project's repository URL
    with a version.
    """
    if event_time.tzinfo is None:
        raise ValueError("event_time must be timezone-aware; OpenLineage times carry an offset")
    job = Job(namespace=job_namespace, name=job_name)
    run = Run(runId=run_id)
    return [
        RunEvent(
            eventType=state,
            eventTime=event_time.isoformat(),
            run=run,
            job=job,
            inputs=[
                InputDataset(dataset.namespace, dataset.name, facets=_facets(dataset, producer))
                for dataset in inputs
            ],
            outputs=[
                OutputDataset(
                    dataset.namespace,
                    dataset.name,
                    facets={
                        **_facets(dataset, producer),
                        **_column_lineage_facet(dataset, producer),
                    },
                )
                for dataset in outputs
            ],
            producer=producer,
        )
        for state in event_types
    ]


def _facets(dataset: DatasetSpec, producer: str) -> dict[str, schema_dataset.SchemaDatasetFacet]:
    if dataset.columns is None:
        return {}
    fields = [
        schema_dataset.SchemaDatasetFacetFields(
            name=column.name, type=column.type, description=column.description
        )
        for column in dataset.columns
    ]
    return {"schema": schema_dataset.SchemaDatasetFacet(fields=fields, producer=producer)}


_IDENTITY = column_lineage_dataset.Transformation(type="DIRECT", subtype="IDENTITY")


def _column_lineage_facet(
    dataset: DatasetSpec, producer: str
) -> dict[str, column_lineage_dataset.ColumnLineageDatasetFacet]:
    if not dataset.column_lineage:
        return {}
    fields = {
        output: column_lineage_dataset.Fields(
            inputFields=[
                column_lineage_dataset.InputField(
                    namespace=ref.namespace,
                    name=ref.name,
                    field=ref.field,
                    transformations=[_IDENTITY],
                )
                for ref in inputs
            ]
        )
        for output, inputs in dataset.column_lineage.items()
    }
    return {
        "columnLineage": column_lineage_dataset.ColumnLineageDatasetFacet(
            fields=fields, producer=producer
        )
    }


def deterministic_run_id(*parts: str) -> str:
    """A UUID (version 5) derived from ``parts``: the same logical run always gets the same id.

    The parts are encoded as a JSON list, so ``("a.b", "c")`` and ``("a", "b.c")`` differ.
    """
    if not parts:
        raise ValueError("a run id needs at least one part")
    return str(uuid.uuid5(RUN_ID_NAMESPACE, json.dumps(list(parts))))


def event_json(event: RunEvent) -> str:
    """The event as compact JSON for PostLineageEvent (keys sorted, nulls left out)."""
    return Serde.to_json(event, separators=(",", ":"))


def lineage_client_token(run_id: str, event_type: str, retry_of: str | None = None) -> str:
    """PostLineageEvent's clientToken for one event of a run: 64 hex characters.

    Derived from the run and the event type, not from the event's text (its ``eventTime``
    moves), so a retry or a rerun of the same logical run replays instead of posting twice.
    ``retry_of`` (the ids of the run's events DataZone failed after accepting them) makes a
    new token: the old one would replay the failed acceptance instead of posting again.
    """
    text = f"{run_id}\n{event_type}" + (f"\nretry-of:{retry_of}" if retry_of else "")
    return hashlib.sha256(text.encode()).hexdigest()


def event_size_ok(event_json: str, limit: int = MAX_EVENT_BYTES) -> bool:
    """Whether the event fits PostLineageEvent's blob limit, counted in UTF-8 bytes."""
    return len(event_json.encode("utf-8")) <= limit


@dataclass(frozen=True)
class FittedRuns:
    """Runs whose every event fits PostLineageEvent's limit.

    ``runs`` holds the events of each run (by default a START/COMPLETE pair); ``split`` says the columns were spread over
    several runs (ids derived from the original run id), ``trimmed`` that even one column per
    run did not fit, so schema and column facets were left out (the datasets stay).
    """

    runs: list[list[RunEvent]]
    split: bool
    trimmed: bool

    @property
    def events(self) -> list[RunEvent]:
        return [event for run in self.runs for event in run]


def build_fitted_run_events(
    *,
    job_namespace: str,
    job_name: str,
    inputs: Sequence[DatasetSpec],
    outputs: Sequence[DatasetSpec],
    run_id: str,
    event_time: datetime,
    producer: str,
    limit: int = MAX_EVENT_BYTES,
    event_types: Sequence[RunState] = (RunState.START, RunState.COMPLETE),
) -> FittedRuns:
    """:func:`build_run_events`, split or trimmed so that no event passes ``limit`` bytes.

    An event that is too big is rebuilt as ``parts`` runs (2, 4, 8, ...), each carrying every
    dataset with every ``parts``-th column (schema facet and column lineage alike), each run
    with its own deterministic id so the parts' client tokens differ. When one column per run
    still does not fit, the facets are dropped and the result says ``trimmed``: the dataset
    edges are never dropped.
    """
    common = {
        "job_namespace": job_namespace,
        "job_name": job_name,
        "event_time": event_time,
        "producer": producer,
        "event_types": event_types,
    }
    events = build_run_events(inputs=inputs, outputs=outputs, run_id=run_id, **common)
    if all(_fits(event, limit) for event in events):
        return FittedRuns([events], split=False, trimmed=False)
    widest = max(_width(dataset) for dataset in (*inputs, *outputs))
    parts = 2
    while parts <= max(widest, 1):
        runs = [
            build_run_events(
                inputs=[_part(d, index, parts) for d in inputs],
                outputs=[_part(d, index, parts) for d in outputs],
                run_id=deterministic_run_id(run_id, f"part {index + 1} of {parts}"),
                **common,
            )
            for index in range(parts)
        ]
        if all(_fits(event, limit) for run in runs for event in run):
            return FittedRuns(runs, split=True, trimmed=False)
        parts *= 2
    bare = build_run_events(
        inputs=[DatasetSpec(d.namespace, d.name) for d in inputs],
        outputs=[DatasetSpec(d.namespace, d.name) for d in outputs],
        run_id=run_id,
        **common,
    )
    if not all(_fits(event, limit) for event in bare):
        raise ValueError(
            f"job {job_namespace}.{job_name}: even without facets its events pass {limit} "
            "bytes (too many datasets for one run)"
        )
    return FittedRuns([bare], split=False, trimmed=True)


def _fits(event: RunEvent, limit: int) -> bool:
    return event_size_ok(event_json(event), limit)


def _width(dataset: DatasetSpec) -> int:
    return max(len(dataset.columns or ()), len(dataset.column_lineage or {}))


def _part(dataset: DatasetSpec, index: int, parts: int) -> DatasetSpec:
    columns = None if dataset.columns is None else list(dataset.columns)[index::parts]
    lineage = None
    if dataset.column_lineage is not None:
        lineage = dict(list(dataset.column_lineage.items())[index::parts])
    return DatasetSpec(dataset.namespace, dataset.name, columns, lineage)
