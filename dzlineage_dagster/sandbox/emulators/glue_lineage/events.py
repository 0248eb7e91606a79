"""The OpenLineage events Glue's ``PostLineageEvent`` accepts, and the datasets they name.

The guide ("Publishing data lineage programmatically") accepts run events and dataset events,
and refuses with ``InvalidInputException`` an event that "isn't valid OpenLineage JSON, is
missing required fields, has an unsupported eventType, or is larger than 300,000 bytes". A run
event is read as DataZone's lineage emulator reads one (:class:`RunEvent`), with the run's and
the job's facets kept too; the fields OpenLineage's schema requires of each kind
(``eventTime``, ``producer``, ``schemaURL``, and ``run`` + ``job`` or ``dataset``) are required.

Datasets are named as the guide's support matrix identifies them ("Datasets": a Data Catalog
table by its ARN, an S3 location by its OpenLineage namespace and name, S3 Tables and SageMaker
resources by their ARNs). Each dataset is resolved to its node's ``SourceIdentifier`` when the
event is read (:func:`resolved`):

- OpenLineage's Glue naming (namespace ``arn:aws:glue:<region>:<account>``, name
  ``table/<db>/<table>``) -> the table's ARN, ``arn:aws:glue:<region>:<account>:table/<db>/<table>``;
- a dataset with a ``symlinks`` facet naming a Glue table that way (what openlineage-spark
  reports for a write through the Data Catalog: the S3 location, symlinked to the table) -> the
  table's ARN: the guide's troubleshooting page says a write "to the table by name" resolves to
  the table's ARN, a write by path stays an S3 path (the sandbox's reading of where that
  resolution happens);
- ``s3://<bucket>`` + ``/path`` (or ``path``) -> ``s3://<bucket>/path``, one node whichever
  way the name starts;
- anything else, an ARN written as namespace + name included -> ``<namespace>/<name>``.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from typing import Any

from botocore.utils import parse_timestamp

from dzlineage_dagster.sandbox.emulators.datazone.lineage import DatasetRef, RunEvent
from dzlineage_dagster.sandbox.protocol.aws import AwsServiceError

#: PostLineageEvent's ``Event``: "The OpenLineage event as a JSON string, up to 300,000 bytes".
MAX_EVENT_BYTES = 300_000
INVALID_INPUT = "InvalidInputException"
_GLUE_CATALOG = re.compile(r"arn:aws[a-z-]*:glue:[a-z0-9-]+:\d{12}")


def invalid_input(message: str) -> AwsServiceError:
    return AwsServiceError(INVALID_INPUT, message, 400)


@dataclass(frozen=True)
class GlueRunEvent(RunEvent):
    """A run event, its datasets resolved to Glue's identities, with the facets of its run and
    job and a digest of the whole event (what tells a repost of the same event)."""

    run_facets: dict[str, Any] = field(default_factory=dict)
    job_facets: dict[str, Any] = field(default_factory=dict)
    digest: str = ""


@dataclass(frozen=True)
class GlueDatasetEvent:
    """A dataset event: a dataset's facets (its schema, owners ...) outside any run."""

    event_time: datetime
    #: Resolved to Glue's identity, as a run event's datasets are.
    dataset: DatasetRef
    facets: dict[str, Any]
    #: What tells a repost of the same event (see :class:`GlueRunEvent`).
    digest: str


GlueEvent = GlueRunEvent | GlueDatasetEvent


def parse_event(text: str) -> GlueEvent:
    """The event ``PostLineageEvent`` was given, or InvalidInputException naming what is wrong."""
    payload = text.encode("utf-8")
    if len(payload) > MAX_EVENT_BYTES:
        raise invalid_input(
            f"The lineage event is {len(payload):,} bytes; PostLineageEvent takes at most "
            f"{MAX_EVENT_BYTES:,}"
        )
    try:
        event = json.loads(payload)
    except ValueError as error:
        raise invalid_input(f"The lineage event is not valid JSON: {error}") from error
    if not isinstance(event, dict):
        raise invalid_input("The lineage event must be a JSON object")
    missing = [key for key in ("eventTime", "producer", "schemaURL") if not event.get(key)]
    if missing:
        raise invalid_input(f"The lineage event lacks required fields: {', '.join(missing)}")
    digest = hashlib.sha256(json.dumps(event, sort_keys=True).encode()).hexdigest()
    if "run" in event or "job" in event:
        if "run" not in event:
            raise invalid_input(
                "Job events are not supported: PostLineageEvent takes run events and dataset "
                "events (the event has a job and no run)"
            )
        return _run_event(payload, event, digest)
    if "dataset" in event:
        return _dataset_event(event, digest)
    raise invalid_input("The lineage event is neither a run event (run, job) nor a dataset event")


def _run_event(payload: bytes, event: dict[str, Any], digest: str) -> GlueRunEvent:
    try:
        parsed = RunEvent.parse(payload)
    except AwsServiceError as error:  # DataZone's reading of the same fields, Glue's error
        raise invalid_input(error.message) from error
    inputs = tuple(resolved(ref, parsed.facets_of(ref)) for ref in parsed.inputs)
    outputs = tuple(resolved(ref, parsed.facets_of(ref)) for ref in parsed.outputs)
    kept = {f.name: getattr(parsed, f.name) for f in fields(RunEvent)}
    return GlueRunEvent(
        **{
            **kept,
            "inputs": inputs,
            "outputs": outputs,
            "dataset_facets": tuple(
                (resolved(ref, facets), facets) for ref, facets in parsed.dataset_facets
            ),
        },
        run_facets=_facets(event["run"], "run"),
        job_facets=_facets(event["job"], "job"),
        digest=digest,
    )


def _dataset_event(event: dict[str, Any], digest: str) -> GlueDatasetEvent:
    dataset = event["dataset"]
    if not isinstance(dataset, dict) or not all(
        isinstance(dataset.get(key), str) and dataset[key] for key in ("namespace", "name")
    ):
        raise invalid_input("dataset needs a namespace and a name")
    facets = _facets(dataset, "dataset")
    return GlueDatasetEvent(
        event_time=_event_time(event),
        dataset=resolved(DatasetRef(dataset["namespace"], dataset["name"]), facets),
        facets=facets,
        digest=digest,
    )


def _event_time(event: dict[str, Any]) -> datetime:
    try:
        return parse_timestamp(event["eventTime"]).astimezone(timezone.utc)
    except (TypeError, ValueError) as error:
        raise invalid_input("eventTime must be an ISO 8601 date-time") from error


def _facets(holder: Any, where: str) -> dict[str, Any]:
    facets = holder.get("facets") if isinstance(holder, dict) else None
    if facets is None:
        return {}
    if not isinstance(facets, dict):
        raise invalid_input(f"{where}.facets must be an object")
    return facets


def resolved(ref: DatasetRef, facets: dict[str, Any]) -> DatasetRef:
    """``ref`` as Glue identifies it: the dataset whose ``<namespace>/<name>`` is its node's
    SourceIdentifier (see the module's docstring)."""
    glue_table = _glue_table_arn(ref) or next(
        (
            arn
            for link in _symlinks(facets)
            if (arn := _glue_table_arn(DatasetRef(link["namespace"], link["name"])))
        ),
        None,
    )
    if glue_table is not None:
        namespace, _, name = glue_table.partition("/")
        return DatasetRef(namespace, name)
    if ref.namespace.startswith("s3://"):
        return DatasetRef(ref.namespace.rstrip("/"), ref.name.lstrip("/"))
    return ref


def _glue_table_arn(ref: DatasetRef) -> str | None:
    if _GLUE_CATALOG.fullmatch(ref.namespace) and ref.name.startswith("table/"):
        return f"{ref.namespace}:{ref.name}"
    return None


def _symlinks(facets: dict[str, Any]) -> list[dict[str, str]]:
    symlinks = facets.get("symlinks")
    identifiers = symlinks.get("identifiers") if isinstance(symlinks, dict) else None
    return [
        link
        for link in (identifiers if isinstance(identifiers, list) else [])
        if isinstance(link, dict)
        and isinstance(link.get("namespace"), str)
        and isinstance(link.get("name"), str)
    ]
