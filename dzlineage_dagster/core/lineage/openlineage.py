"""OpenLineage run events for DataZone's PostLineageEvent, and the names that join them up.

DataZone links a lineage dataset node to a catalog asset by ``sourceIdentifier``: a Glue
table's node is its ARN (``arn:aws:glue:<region>:<account>:table/<db>/<table>``), and "in all
other cases" a dataset node's is ``<namespace>/<name>``, such as a Kafka topic named by
OpenLineage's convention ``kafka://{bootstrap server host}:{port}`` + ``{topic}`` (the
SageMaker Unified Studio user guide, "The importance of the sourceIdentifier attribute to
lineage nodes"). So a Glue table is posted as namespace ``arn:aws:glue:<region>:<account>:table``
and name ``<db>/<table>``: the documented ``<namespace>/<name>`` rule turns that into the ARN,
and so does a reading that joins OpenLineage's Glue naming at a colon (its namespace is not
OpenLineage's Glue namespace). OpenLineage's own Glue name (``arn:aws:glue:{region}:{account}``
+ ``table/{db}/{table}``) travels in the dataset's ``symlinks`` facet for other consumers.
``docs/lineage-nodes.md`` gives the sources and the alternatives.

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
    DatasetEvent,
    InputDataset,
    Job,
    OutputDataset,
    Run,
    RunEvent,
    RunState,
    StaticDataset,
)
from openlineage.client.facet_v2 import (
    DatasetFacet,
    column_lineage_dataset,
    ownership_dataset,
    schema_dataset,
    symlinks_dataset,
)
from openlineage.client.naming import dataset as naming
from openlineage.client.serde import Serde

from dzlineage_dagster.core.connectors.debezium import DebeziumSource, SourceEngine, SourceTable
from dzlineage_dagster.core.schemas.avro import Column

#: PostLineageEvent's largest event (the botocore model's ``LineageEvent`` max): what the sync
#: splits its events under and what the relay refuses above.
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


#: The namespace of the jobs that stand for a connector's hop of one topic.
CONNECTOR_JOB_NAMESPACE = "kafka-connect"
#: Between the owner and the topic in a hop's job name: no Kafka topic has it, so the last one
#: splits the name back into the two, whatever the owner's name holds.
HOP_JOB_SEPARATOR = "/"


def hop_job(owner: str, topic: str, namespace: str = CONNECTOR_JOB_NAMESPACE) -> tuple[str, str]:
    """The (namespace, name) of the job of one hop: ``owner`` (a connector, or a stand-in for
    edges no connector decided) moving ``topic``; named ``<owner>/<topic>``, so DataZone's job
    sourceIdentifier ``<namespace>.<owner>/<topic>`` says both and is unique per hop.

    One job per hop, not per connector: DataZone's timestamp view keeps only the latest run of
    each job, so the latest run of a hop's own job is that hop's whole truth.
    """
    if not owner:
        raise ValueError(f"the job of topic {topic!r}'s hop needs its connector's name")
    if not topic or HOP_JOB_SEPARATOR in topic:
        raise ValueError(
            f"topic {topic!r} cannot name a hop's job: a Kafka topic is 1 to 249 of "
            "a-z A-Z 0-9 . _ -"
        )
    return namespace, f"{owner}{HOP_JOB_SEPARATOR}{topic}"


#: The ``type`` of a Glue table's identifier in a ``symlinks`` facet (OpenLineage's example).
GLUE_SYMLINK_TYPE = "TABLE"


def glue_dataset(region: str, account_id: str, database: str, table: str) -> tuple[str, str]:
    """The (namespace, name) the project posts a Glue Data Catalog table as:
    ``arn:aws:glue:<region>:<account>:table`` + ``<db>/<table>``, which DataZone's documented
    ``<namespace>/<name>`` rule turns into the table's ARN, its node's sourceIdentifier.

    Only the account's default catalog: a federated catalog's table (S3 Tables,
    ``table/<catalog>/<db>/<table>``) is refused, as a ``/`` in a part would be.
    """
    for part, value in (("database", database), ("table", table)):
        if not value or "/" in value:
            raise ValueError(
                f"Glue {part} {value!r} cannot name a table of the default Glue Data Catalog "
                "(a federated catalog's table, such as S3 Tables', is not supported: see "
                "docs/lineage-nodes.md)"
            )
    return f"arn:aws:glue:{region}:{account_id}:table", f"{database}/{table}"


def openlineage_glue_name(
    region: str, account_id: str, database: str, table: str
) -> tuple[str, str]:
    """OpenLineage's naming of a Glue table (``arn:aws:glue:{region}:{account}`` +
    ``table/{db}/{table}``): the ``symlinks`` identifier other OpenLineage consumers join on."""
    named = naming.AWSGlue(
        region_name=region, account_id=account_id, database_name=database, table_name=table
    )
    return named.get_namespace(), named.get_name()


def glue_source_identifier(region: str, account_id: str, database: str, table: str) -> str:
    """The table's ARN: DataZone's sourceIdentifier for a Glue table's lineage node."""
    return dataset_source_identifier(*glue_dataset(region, account_id, database, table))


def dataset_source_identifier(namespace: str, name: str) -> str:
    """DataZone's sourceIdentifier for a dataset node: ``<namespace>/<name>``."""
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
    ``symlinks`` are other (namespace, name) identifiers of the same dataset (type ``TABLE``),
    its ``symlinks`` facet.
    """

    namespace: str
    name: str
    columns: Sequence[Column] | None = None
    column_lineage: Mapping[str, Sequence[FieldRef]] | None = None
    symlinks: tuple[tuple[str, str], ...] = ()


def glue_table_spec(
    region: str,
    account_id: str,
    database: str,
    table: str,
    columns: Sequence[Column] | None = None,
    column_lineage: Mapping[str, Sequence[FieldRef]] | None = None,
) -> DatasetSpec:
    """A Glue table as a dataset of a run: named by :func:`glue_dataset`, with OpenLineage's
    Glue name as its symlink."""
    return DatasetSpec(
        *glue_dataset(region, account_id, database, table),
        columns,
        column_lineage,
        symlinks=(openlineage_glue_name(region, account_id, database, table),),
    )


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


def build_dataset_event(
    dataset: DatasetSpec,
    owners: Sequence[tuple[str, str | None]],
    *,
    event_time: datetime,
    producer: str,
) -> DatasetEvent:
    """A dataset event: ``dataset``'s facets (its schema, from ``columns``) and its owners
    (``(name, type)``, OpenLineage's ``ownership`` facet), outside any run, for a consumer that
    takes static lineage (the Glue Data Catalog)."""
    if event_time.tzinfo is None:
        raise ValueError("event_time must be timezone-aware; OpenLineage times carry an offset")
    facets = _facets(dataset, producer)
    if owners:
        facets["ownership"] = ownership_dataset.OwnershipDatasetFacet(
            owners=[ownership_dataset.Owner(name=name, type=kind) for name, kind in owners],
            producer=producer,
        )
    return DatasetEvent(
        eventTime=event_time.isoformat(),
        producer=producer,
        dataset=StaticDataset(dataset.namespace, dataset.name, facets=facets),
    )


def _facets(dataset: DatasetSpec, producer: str) -> dict[str, DatasetFacet]:
    facets: dict[str, DatasetFacet] = {}
    if dataset.symlinks:
        identifiers = [
            symlinks_dataset.Identifier(namespace, name, GLUE_SYMLINK_TYPE)
            for namespace, name in dataset.symlinks
        ]
        facets["symlinks"] = symlinks_dataset.SymlinksDatasetFacet(
            identifiers=identifiers, producer=producer
        )
    if dataset.columns is None:
        return facets
    facets["schema"] = schema_dataset.SchemaDatasetFacet(
        fields=_schema_fields(dataset.columns), producer=producer
    )
    return facets


def _schema_fields(columns: Sequence[Column]) -> list[schema_dataset.SchemaDatasetFacetFields]:
    """The schema facet's fields; a struct column's fields nest under it (the facet's own
    ``fields`` of a field), also for a struct inside an array or a map."""
    return [
        schema_dataset.SchemaDatasetFacetFields(
            name=column.name,
            type=column.type,
            description=column.full_description() if column.symbols else column.description,
            fields=_schema_fields(column.fields),
        )
        for column in columns
    ]


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


def event_json(event: RunEvent | DatasetEvent) -> str:
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
class FittedRun:
    """One run whose every event fits PostLineageEvent's limit.

    ``split`` says the columns were spread over several events of the run (``parts`` of
    them), ``trimmed`` that even one column per event did not fit, so schema and column facets
    were left out (the datasets stay).
    """

    events: list[RunEvent]
    parts: int
    trimmed: bool

    @property
    def split(self) -> bool:
        return self.parts > 1


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
) -> FittedRun:
    """:func:`build_run_events`, split or trimmed so that no event passes ``limit`` bytes.

    An event that is too big is rebuilt as ``parts`` events (2, 4, 8, ...) of the same run,
    each carrying every dataset with every ``parts``-th column (schema facet and column lineage
    alike): the first part in the first of ``event_types`` when there are several (START), the
    last in the last (COMPLETE), the others RUNNING, as OpenLineage adds a running run's facets
    up. One run, not a run per part: a consumer that shows only a job's latest run (DataZone's
    timestamp view) would otherwise show one part. When one column per event still does not
    fit, the facets are dropped and the result says ``trimmed``: the dataset edges are never
    dropped.
    """
    common = {
        "job_namespace": job_namespace,
        "job_name": job_name,
        "run_id": run_id,
        "event_time": event_time,
        "producer": producer,
    }
    events = build_run_events(inputs=inputs, outputs=outputs, event_types=event_types, **common)
    if all(_fits(event, limit) for event in events):
        return FittedRun(events, parts=1, trimmed=False)
    widest = max(_width(dataset) for dataset in (*inputs, *outputs))
    parts = 2
    while parts <= max(widest, 1):
        states = _part_states(event_types, parts)
        split = [
            event
            for index, state in enumerate(states)
            for event in build_run_events(
                inputs=[_part(d, index, parts) for d in inputs],
                outputs=[_part(d, index, parts) for d in outputs],
                event_types=(state,),
                **common,
            )
        ]
        if all(_fits(event, limit) for event in split):
            return FittedRun(split, parts=parts, trimmed=False)
        parts *= 2
    bare = build_run_events(
        inputs=[DatasetSpec(d.namespace, d.name, symlinks=d.symlinks) for d in inputs],
        outputs=[DatasetSpec(d.namespace, d.name, symlinks=d.symlinks) for d in outputs],
        event_types=event_types,
        **common,
    )
    if not all(_fits(event, limit) for event in bare):
        raise ValueError(
            f"job {job_namespace}.{job_name}: even without facets its events pass {limit} "
            "bytes (too many datasets for one run)"
        )
    return FittedRun(bare, parts=1, trimmed=True)


def _part_states(event_types: Sequence[RunState], parts: int) -> list[RunState]:
    """The state of each part's event: the first and last of ``event_types`` at the ends."""
    first = event_types[0] if len(event_types) > 1 else RunState.RUNNING
    return [first, *[RunState.RUNNING] * (parts - 2), event_types[-1]]


def _fits(event: RunEvent, limit: int) -> bool:
    return event_size_ok(event_json(event), limit)


def _width(dataset: DatasetSpec) -> int:
    return max(len(dataset.columns or ()), len(dataset.column_lineage or {}))


def _part(dataset: DatasetSpec, index: int, parts: int) -> DatasetSpec:
    columns = None if dataset.columns is None else list(dataset.columns)[index::parts]
    lineage = None
    if dataset.column_lineage is not None:
        lineage = dict(list(dataset.column_lineage.items())[index::parts])
    return DatasetSpec(dataset.namespace, dataset.name, columns, lineage, dataset.symlinks)
