"""The lineage Amazon EMR posts to the Glue Data Catalog for the demo's Spark job.

On EMR (emr-spark-8.2.0 and later) every Spark write is sent to Glue's lineage without anyone
asking: the service registers openlineage-spark's listener with the Glue transport
(``spark.openlineage.transport.type=amazon_glue_api``) and column lineage on
(``spark.openlineage.columnLineage.datasetLineageEnabled=true``), as the Glue developer guide's
"Automatic lineage capture from AWS services" says. The demo runs no Spark, so the
``daily_revenue`` asset (:mod:`.downstream`) posts what that listener would for the nightly
job ``INSERT INTO lakehouse.daily_revenue SELECT ... FROM lakehouse.sales_orders GROUP BY``.

The shape is rebuilt from openlineage-spark (its ``AwsUtils.getGlueArn`` and Iceberg catalog
handler): an Iceberg table read or written through the Glue catalog is reported as its S3
location (namespace ``s3://<bucket>``, name the path) with a ``symlinks`` facet of type TABLE
naming it in OpenLineage's Glue naming (``arn:aws:glue:<region>:<account>`` +
``table/<db>/<table>``), which Glue resolves to the table's ARN; the output carries
``columnLineage`` with the direct dependencies per column and, as ``datasetLineageEnabled``
makes it, the indirect ones (the GROUP BY) under ``dataset``; the job is named
``<appName>.<command>.<output>`` in the ``default`` namespace. A START and a COMPLETE of one
run are posted. EMR's run and job facets (``processing_engine``, ``spark_properties``,
``jobType``, ``sql``) are left out: the demo has nothing true to put in them.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    column_lineage_dataset,
    schema_dataset,
    symlinks_dataset,
)

from dzlineage_dagster.boto3_sessions import new_session
from dzlineage_dagster.core.lineage.openlineage import event_json
from dzlineage_dagster.sandbox.demo.accounts import side_session

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.40.0/integration/spark"
APP_NAME = "daily_revenue"
#: openlineage-spark's name for an Iceberg INSERT INTO (a DataSourceV2 AppendData).
COMMAND = "append_data_exec_v1"
DATABASE, SOURCE, TARGET = "lakehouse", "sales_orders", "daily_revenue"
#: target column -> (source column, transformation subtype), the job's SELECT.
DIRECT = {"day": ("order_date", "IDENTITY"), "revenue": ("total", "AGGREGATION")}
GROUPED_BY = "order_date"


@dataclass(frozen=True)
class CatalogTable:
    """A Glue table as Spark's Iceberg catalog reads it: its location and columns."""

    database: str
    name: str
    location: str
    columns: tuple[tuple[str, str], ...]

    @classmethod
    def read(cls, glue: Any, database: str, name: str) -> CatalogTable:
        storage = glue.get_table(DatabaseName=database, Name=name)["Table"]["StorageDescriptor"]
        columns = tuple((c["Name"], c["Type"]) for c in storage.get("Columns", []))
        return cls(database, name, storage["Location"], columns)

    @property
    def namespace(self) -> str:
        return "s3://" + self.location.removeprefix("s3://").split("/", 1)[0]

    @property
    def path(self) -> str:
        return self.location.removeprefix(self.namespace).lstrip("/")

    def facets(self, glue_catalog: str) -> dict[str, Any]:
        return {
            "schema": schema_dataset.SchemaDatasetFacet(
                fields=[
                    schema_dataset.SchemaDatasetFacetFields(name=name, type=type_)
                    for name, type_ in self.columns
                ],
                producer=PRODUCER,
            ),
            "symlinks": symlinks_dataset.SymlinksDatasetFacet(
                identifiers=[
                    symlinks_dataset.Identifier(
                        namespace=glue_catalog,
                        name=f"table/{self.database}/{self.name}",
                        type="TABLE",
                    )
                ],
                producer=PRODUCER,
            ),
        }


def spark_run_events(
    source: CatalogTable, target: CatalogTable, glue_catalog: str, run_id: str, when: datetime
) -> list[str]:
    """START and COMPLETE of the job's run, as JSON for PostLineageEvent."""

    def from_source(column: str, kind: str, subtype: str) -> column_lineage_dataset.InputField:
        return column_lineage_dataset.InputField(
            namespace=source.namespace,
            name=source.path,
            field=column,
            transformations=[column_lineage_dataset.Transformation(type=kind, subtype=subtype)],
        )

    column_lineage = column_lineage_dataset.ColumnLineageDatasetFacet(
        fields={
            target_column: column_lineage_dataset.Fields(
                inputFields=[from_source(source_column, "DIRECT", subtype)]
            )
            for target_column, (source_column, subtype) in DIRECT.items()
        },
        dataset=[from_source(GROUPED_BY, "INDIRECT", "GROUP_BY")],
        producer=PRODUCER,
    )
    job_name = f"{APP_NAME}.{COMMAND}.{target.database}_{target.name}"
    return [
        event_json(
            RunEvent(
                eventType=state,
                eventTime=when.isoformat(),
                run=Run(runId=run_id),
                job=Job(namespace="default", name=job_name),
                inputs=[
                    InputDataset(source.namespace, source.path, facets=source.facets(glue_catalog))
                ],
                outputs=[
                    OutputDataset(
                        target.namespace,
                        target.path,
                        facets={**target.facets(glue_catalog), "columnLineage": column_lineage},
                    )
                ],
                producer=PRODUCER,
            )
        )
        for state in (RunState.START, RunState.COMPLETE)
    ]


def post_spark_lineage(glue: Any, region: str, account_id: str) -> list[str]:
    """Post what EMR's listener posts for one run of the nightly job; returns the events."""
    events = spark_run_events(
        CatalogTable.read(glue, DATABASE, SOURCE),
        CatalogTable.read(glue, DATABASE, TARGET),
        f"arn:aws:glue:{region}:{account_id}",
        str(uuid.uuid4()),
        datetime.now(timezone.utc),
    )
    for event in events:
        glue.post_lineage_event(Event=event)
    return events


def post_spark_lineage_from_environment() -> list[str]:
    """:func:`post_spark_lineage` in the account the job runs in: the data side's (the Glue
    catalog's), through its role when the sandbox has two accounts, as the project reaches it."""
    # Here, not at the top: the settings import dagster, which the sandbox alone never needs.
    from dzlineage_dagster.settings import side_role_variables

    session = new_session()
    if os.environ.get(side_role_variables("data")["role_arn"]):
        session = side_session(session, "data", os.environ.get("AWS_ENDPOINT_URL"))
    account_id = session.client("sts").get_caller_identity()["Account"]
    return post_spark_lineage(session.client("glue"), session.region_name, account_id)
