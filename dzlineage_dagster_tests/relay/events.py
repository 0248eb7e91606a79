"""OpenLineage events as the relay's producers send them, built with openlineage-python."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import schema_dataset, symlinks_dataset
from openlineage.client.serde import Serde

DEBEZIUM_PRODUCER = "https://github.com/debezium/debezium/tree/v3.2.0.Final/debezium-openlineage"
SPARK_PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.40.0/integration/spark"


def now() -> str:
    return datetime.now(timezone.utc).isoformat()


def schema_facet(columns: list[str], producer: str = SPARK_PRODUCER):
    fields = [schema_dataset.SchemaDatasetFacetFields(name=c, type="string") for c in columns]
    return schema_dataset.SchemaDatasetFacet(fields=fields, producer=producer)


def run_event(
    *,
    inputs: list[InputDataset] = (),
    outputs: list[OutputDataset] = (),
    run_id: str | None = None,
    state: RunState = RunState.COMPLETE,
    job: tuple[str, str] = ("spark", "nightly_revenue"),
    event_time: str | None = None,
    producer: str = SPARK_PRODUCER,
) -> RunEvent:
    return RunEvent(
        eventType=state,
        eventTime=event_time or now(),
        run=Run(runId=run_id or str(uuid.uuid4())),
        job=Job(namespace=job[0], name=job[1]),
        inputs=list(inputs),
        outputs=list(outputs),
        producer=producer,
    )


def symlinks_facet(
    identifiers: list[tuple[str, str]], producer: str = SPARK_PRODUCER
) -> symlinks_dataset.SymlinksDatasetFacet:
    """A ``symlinks`` facet of (namespace, name) identifiers of type TABLE."""
    return symlinks_dataset.SymlinksDatasetFacet(
        identifiers=[symlinks_dataset.Identifier(n, name, "TABLE") for n, name in identifiers],
        producer=producer,
    )


def glue_symlinked_output(
    location: str, region: str, account: str, database: str, table: str
) -> OutputDataset:
    """A table as openlineage-spark reports it: its storage path, symlinked to the Glue table."""
    symlinks = symlinks_facet([(f"arn:aws:glue:{region}:{account}", f"table/{database}/{table}")])
    bucket, _, path = location.removeprefix("s3://").partition("/")
    return OutputDataset(f"s3://{bucket}", path, facets={"symlinks": symlinks})


def debezium_events(
    *,
    topic_prefix: str,
    task_id: str,
    source: tuple[str, str],
    topic: tuple[str, str],
    run_id: str | None = None,
) -> list[RunEvent]:
    """What Debezium 3.2+'s OpenLineage integration sends for one captured table.

    The job is ``<topic.prefix>.<taskId>`` in namespace ``topic.prefix``; the source table
    and the topic arrive in two separate RUNNING events of one run.
    """
    run_id = run_id or str(uuid.uuid4())
    job = (topic_prefix, f"{topic_prefix}.{task_id}")
    return [
        run_event(
            inputs=[InputDataset(*source)],
            run_id=run_id,
            state=RunState.RUNNING,
            job=job,
            producer=DEBEZIUM_PRODUCER,
        ),
        run_event(
            outputs=[OutputDataset(*topic)],
            run_id=run_id,
            state=RunState.RUNNING,
            job=job,
            producer=DEBEZIUM_PRODUCER,
        ),
    ]


def to_json(event) -> str:
    return Serde.to_json(event)
