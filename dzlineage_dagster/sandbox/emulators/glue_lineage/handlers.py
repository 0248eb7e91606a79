"""Glue's lineage operations, answered before moto (which has none of them).

The graph of each account and Region hangs on moto's own Glue backend, as the other gaps keep
their state on moto's objects, so moto's reset forgets it too. ``PostLineageEvent`` answers
once the event is accepted (an empty body, as the API reference says) and the event is
processed ``processing_seconds`` later (the sandbox's ``--glue-lineage-processing-seconds``;
AWS: "A successful response means that AWS Glue accepted the event. It doesn't mean that the
graph is already updated"); every read first processes what is due, so 0 (the default)
behaves synchronously.

``CreateTable`` is answered here too: moto makes the table, then the graph records what the
guide's "Lineage for AWS Glue Data Catalog tables and crawlers" says AWS records for every
created table, its storage location -> job ``glue_manual.<database>.<table>`` -> the table
(with its schema), the job's Description naming who made it; ``UpdateTable`` records it again
(a new run of that job) when the update changes the table's location or columns, and only
then. A resource link (a ``TableInput`` with a ``TargetTable``) gets none, and
``DeleteTable`` leaves the graph alone (the guide's "Considerations": "Federated tables and
resource links don't get lineage", "Deleting a table doesn't remove its lineage").
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from moto.glue.models import GlueBackend

from dzlineage_dagster.sandbox.emulators.datazone.common import new_id, now
from dzlineage_dagster.sandbox.emulators.datazone.lineage import (
    DatasetRef,
    LineageEventRecord,
)
from dzlineage_dagster.sandbox.emulators.glue_lineage.events import (
    GlueRunEvent,
    parse_event,
    resolved,
)
from dzlineage_dagster.sandbox.emulators.glue_lineage.graph import GlueLineageGraph
from dzlineage_dagster.sandbox.protocol.aws import AwsServiceError

#: The attribute of moto's GlueBackend that holds the account's lineage graph.
_GRAPH = "dzlineage_lineage_graph"
_LOCK = threading.Lock()
#: The job namespace of the lineage AWS records for a table made with CreateTable.
MANUAL_JOB_NAMESPACE = "glue_manual"
_SCHEMA_FACET_URL = "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json"
_AWS_PRODUCER = "https://aws.amazon.com/glue"


def lineage_graph(backend: GlueBackend) -> GlueLineageGraph:
    with _LOCK:
        graph = getattr(backend, _GRAPH, None)
        if graph is None:
            graph = GlueLineageGraph()
            setattr(backend, _GRAPH, graph)
        return graph


def post_lineage_event(
    backend: GlueBackend,
    event_text: str,
    caller: str,
    *,
    processing_seconds: float,
    repost_adds_event: bool,
    fails: bool = False,
) -> None:
    """Accept the event (InvalidInputException names what is wrong) for processing later;
    ``fails``: its processing fails (the sandbox's ``fail-after-accept`` fault)."""
    event = parse_event(event_text)
    graph = lineage_graph(backend)
    record = LineageEventRecord(new_id(), event_text.encode(), event, now(), caller)
    with _LOCK:
        graph.repost_adds_event = repost_adds_event
        graph.accept(record, timedelta(seconds=processing_seconds), fails)


def get_lineage_node(backend: GlueBackend, identifier: str) -> dict[str, Any]:
    graph = lineage_graph(backend)
    with _LOCK:
        graph.advance(now())
        answer = graph.node_output(identifier)
    if answer is None:
        raise AwsServiceError(
            "EntityNotFoundException", f"Lineage node {identifier} is not found", 400
        )
    return answer


def record_table_lineage(
    backend: GlueBackend,
    region: str,
    account_id: str,
    database: str,
    table_input: Mapping[str, Any],
    caller: str,
    *,
    processing_seconds: float,
) -> None:
    """What AWS records for a table made with CreateTable (and again when UpdateTable changes
    its location or columns): location -> job glue_manual.<db>.<table> -> table."""
    name = table_input["Name"]
    storage = table_input.get("StorageDescriptor") or {}
    columns = [
        {"name": column["Name"], "type": column.get("Type", "")}
        for column in storage.get("Columns") or []
    ]
    table = resolved(
        DatasetRef(f"arn:aws:glue:{region}:{account_id}", f"table/{database}/{name}"), {}
    )
    facets = {
        "schema": {"_producer": _AWS_PRODUCER, "_schemaURL": _SCHEMA_FACET_URL, "fields": columns}
    }
    location = _location(storage.get("Location"))
    run_id = str(uuid.uuid4())
    event = GlueRunEvent(
        event_type="COMPLETE",
        event_time=now(),
        run_id=run_id,
        job=DatasetRef(MANUAL_JOB_NAMESPACE, f"{database}.{name}"),
        inputs=(location,) if location else (),
        outputs=(table,),
        dataset_facets=((table, facets),),
        digest=f"{MANUAL_JOB_NAMESPACE}/{run_id}",
    )
    graph = lineage_graph(backend)
    record = LineageEventRecord(new_id(), b"", event, now(), caller)
    with _LOCK:
        graph.accept(record, timedelta(seconds=processing_seconds))
        graph.descriptions[f"{MANUAL_JOB_NAMESPACE}.{database}.{name}"] = f"Created by {caller}"


def lineage_changed(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """Whether an update of a table's input changes what its lineage says: "It records lineage
    again only when an update changes the table's location or columns"."""

    def shape(table_input: Mapping[str, Any]) -> tuple[Any, ...]:
        storage = table_input.get("StorageDescriptor") or {}
        columns = [(c.get("Name"), c.get("Type")) for c in storage.get("Columns") or []]
        return storage.get("Location"), columns

    return shape(before) != shape(after)


def _location(location: Any) -> DatasetRef | None:
    """An S3 location as the dataset Glue names it (``s3://bucket`` + ``/path``)."""
    if not isinstance(location, str) or not location.startswith("s3://"):
        return None
    bucket, _, path = location.removeprefix("s3://").partition("/")
    return resolved(DatasetRef(f"s3://{bucket}", f"/{path}"), {})
