"""The Glue Data Catalog's lineage graph: DataZone's lineage graph with Glue's names.

Glue builds its graph as DataZone does (both take OpenLineage events, process them
asynchronously and answer ``GetLineageNode`` with a node and its neighbours), so this is
:class:`~dzlineage_dagster.sandbox.emulators.datazone.lineage.LineageGraph` with:

- the node types (the API documents ``TypeName`` but no values; these are the sandbox's):
  ``amazon.glue.JobLineageNodeType``, ``amazon.glue.JobRunLineageNodeType``,
  ``amazon.glue.DatasetLineageNodeType``;
- a job node's ``Name`` and ``SourceIdentifier`` both ``<namespace>.<name>`` (the guide names
  the job AWS records for a created table ``glue_manual.<database>.<table>``), a run node's
  ``SourceIdentifier`` ``<namespace>.<name>/<runId>``, a dataset node's the identity of
  :func:`~.events.resolved` and its ``Name`` ``<database>.<table>`` for a Data Catalog table;
- forms (``FormsOutput`` has only ``TypeName`` and ``Content``; the guide says a table's node
  has "its schema" and the console shows "schema, query text, and latest run", but names no
  form): every OpenLineage facet of a dataset, job or run node as a form whose ``TypeName`` is
  ``openlineage.<facet>`` (``openlineage.schema``, ``openlineage.columnLineage``,
  ``openlineage.ownership``, ``openlineage.sql`` ...) and whose ``Content`` is the facet's
  JSON, as the latest event gave it; a run node also has ``amazon.glue.JobRunEvents``, the
  events the run was built from (``{"runId", "events": [{"eventType", "eventTime"}]}``);
- dataset events: they update a dataset node's facets (making the node if need be) and draw
  no edge;
- the same event posted twice (Glue takes no client token): the sandbox's
  ``glue_lineage_repost`` switch (:mod:`dzlineage_dagster.sandbox.server.ambiguities`).
  ``same-run`` (default): a run node is its job's and run id's, and an event identical to one
  already processed changes nothing. ``new-event``: every accepted post is an event of its own,
  so a repost is one more entry in the run's ``amazon.glue.JobRunEvents`` (still one run node).

Edges as DataZone's aggregated view draws them (GetLineageNode has no timestamp): a dataset
to the latest run of each job that read or wrote it, a run to its own datasets; at most 250
each way, the model's limit.
"""

from __future__ import annotations

import json
from typing import Any

from dzlineage_dagster.sandbox.emulators.datazone.lineage import (
    DatasetRef,
    LineageEventRecord,
    LineageGraph,
    NodeVersion,
)
from dzlineage_dagster.sandbox.emulators.glue_lineage.events import (
    GlueDatasetEvent,
    GlueRunEvent,
)

FACET_FORM_PREFIX = "openlineage."
RUN_EVENTS_FORM = "amazon.glue.JobRunEvents"
#: LineageNodeReferenceList's ``max`` in botocore's model.
MAX_NEIGHBOURS = 250
_TABLE_NAMESPACE_SUFFIX = ":table"


class GlueLineageGraph(LineageGraph):
    """The lineage graph of one account's Data Catalog in one Region."""

    job_type = "amazon.glue.JobLineageNodeType"
    run_type = "amazon.glue.JobRunLineageNodeType"
    dataset_type = "amazon.glue.DatasetLineageNodeType"

    def __init__(self) -> None:
        super().__init__()
        #: The ``glue_lineage_repost=new-event`` reading, as set when an event is processed.
        self.repost_adds_event = False
        #: SourceIdentifier -> the node's Description (AWS's own job nodes name who made the
        #: table); kept apart from the nodes, which appear only once their event is processed.
        self.descriptions: dict[str, str] = {}
        self._digests: set[str] = set()
        self._run_events: dict[str, list[dict[str, str]]] = {}

    def job_name(self, event: GlueRunEvent) -> str:
        return f"{event.job.namespace}.{event.job.name}"

    def job_and_run_facets(self, event: GlueRunEvent) -> tuple[dict[str, Any], dict[str, Any]]:
        return event.job_facets, event.run_facets

    def dataset_name(self, ref: DatasetRef) -> str:
        if ref.namespace.endswith(_TABLE_NAMESPACE_SUFFIX):
            return ref.name.replace("/", ".")
        return ref.name

    def record(self, record: LineageEventRecord) -> None:
        event: GlueRunEvent | GlueDatasetEvent = record.event
        if event.digest in self._digests and not self.repost_adds_event:
            return
        self._digests.add(event.digest)
        if isinstance(event, GlueDatasetEvent):
            node = self._dataset_node(event.dataset, record)
            node.versions.append(NodeVersion(event.event_time, record.created_at, event.facets))
            return
        super().record(record)
        run = self.by_source(f"{self.job_name(event)}/{event.run_id}")
        self._run_events.setdefault(run.id, []).append(
            {"eventType": event.event_type, "eventTime": event.event_time.isoformat()}
        )

    def node_output(self, identifier: str) -> dict[str, Any] | None:
        """GetLineageNode's answer for the node with this id or SourceIdentifier, or None."""
        views = self.node_views(identifier, None, {})
        if not views:
            return None
        view = views[0]
        forms = [
            {"TypeName": f"{FACET_FORM_PREFIX}{form.name}", "Content": form.content}
            for form in view.forms
        ]
        if view.id in self._run_events:
            run_id = view.source_identifier.rsplit("/", 1)[-1]
            content = {"runId": run_id, "events": self._run_events[view.id]}
            forms.append({"TypeName": RUN_EVENTS_FORM, "Content": json.dumps(content)})
        answer: dict[str, Any] = {
            "Id": view.id,
            "TypeName": view.type_name,
            "SourceIdentifier": view.source_identifier,
            "EventTimestamp": view.event_time.timestamp(),
            "Name": view.name[:256],
            "UpstreamNodes": [{"Id": node_id} for node_id, _ in view.upstream[:MAX_NEIGHBOURS]],
            "DownstreamNodes": [{"Id": node_id} for node_id, _ in view.downstream[:MAX_NEIGHBOURS]],
            "FormsOutput": forms,
        }
        if view.source_identifier in self.descriptions:
            answer["Description"] = self.descriptions[view.source_identifier]
        return answer
