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
from collections.abc import Sequence
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
from openlineage.client.facet_v2 import schema_dataset
from openlineage.client.serde import Serde

from dzlineage_dagster.core.avro import Column

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
    return f"kafka://{address}"


def glue_dataset(region: str, account_id: str, database: str, table: str) -> tuple[str, str]:
    """The OpenLineage (namespace, name) of a Glue Data Catalog table."""
    return f"arn:aws:glue:{region}:{account_id}", f"table/{database}/{table}"


def glue_source_identifier(region: str, account_id: str, database: str, table: str) -> str:
    """The table's ARN: DataZone's sourceIdentifier for a Glue table's lineage node."""
    namespace, name = glue_dataset(region, account_id, database, table)
    return f"{namespace}:{name}"


def dataset_source_identifier(namespace: str, name: str) -> str:
    """DataZone's sourceIdentifier for a dataset node that is not an AWS resource."""
    return f"{namespace}/{name}"


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset of a run; ``columns`` (when known) become its schema facet."""

    namespace: str
    name: str
    columns: Sequence[Column] | None = None


def build_run_events(
    *,
    job_namespace: str,
    job_name: str,
    inputs: Sequence[DatasetSpec],
    outputs: Sequence[DatasetSpec],
    run_id: str,
    event_time: datetime,
    producer: str,
) -> list[RunEvent]:
    """A START and a COMPLETE event of one run, moving ``inputs`` to ``outputs``.

    A run must start and end for the lineage to be complete, so both are always built, with
    the same ``run_id`` and ``event_time``. ``producer`` must be a URI (the specification's
    format), e.g. the project's repository URL with a version.
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
                OutputDataset(dataset.namespace, dataset.name, facets=_facets(dataset, producer))
                for dataset in outputs
            ],
            producer=producer,
        )
        for state in (RunState.START, RunState.COMPLETE)
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


def lineage_client_token(run_id: str, event_type: str) -> str:
    """PostLineageEvent's clientToken for one event of a run: 64 hex characters.

    Derived from the run and the event type, not from the event's text (its ``eventTime``
    moves), so a retry or a rerun of the same logical run replays instead of posting twice.
    """
    return hashlib.sha256(f"{run_id}\n{event_type}".encode()).hexdigest()


def event_size_ok(event_json: str, limit: int = MAX_EVENT_BYTES) -> bool:
    """Whether the event fits PostLineageEvent's blob limit, counted in UTF-8 bytes."""
    return len(event_json.encode("utf-8")) <= limit
