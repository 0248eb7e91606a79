"""`dzlineage impact <topic|table[.column]>`: what the topic's latest schema version breaks.

The latest version of the topic's value schema is compared with the one before it
(:func:`~dzlineage_dagster.core.schemas.impact.compare_columns`); each change is followed to the
Iceberg columns written from it: the sink writes a table column from the topic column of its
name (the sync's sink-hop column lineage), among the columns the table has in the Glue Data
Catalog. Given a table (``lakehouse.orders``) or one of its columns, the topics feeding it are
compared and only what reaches it is shown. ``--format json`` prints one object per topic for
CI; the exit code is 0 unless the lookup fails (2).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import Any

from dzlineage_dagster.cli.common import SETUP_ERRORS
from dzlineage_dagster.core.lineage.openlineage import DatasetSpec, sink_hop_column_lineage
from dzlineage_dagster.core.lineage.platform_graph import (
    glue_table_columns,
    iceberg_table_key,
    topic_key,
)
from dzlineage_dagster.core.schemas.avro import parse_row_schema
from dzlineage_dagster.core.schemas.impact import (
    ColumnChange,
    affected_columns,
    compare_columns,
    verdict,
)
from dzlineage_dagster.core.schemas.json_schema import parse_json_row_schema
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.errors import SyncError, describe_error
from dzlineage_dagster.sync.headless import start_run
from dzlineage_dagster.sync.platform_graph import project_owners
from dzlineage_dagster.sync.run_state import SyncRun

#: The registry's data formats whose versions are read into columns.
ROW_PARSERS = {"AVRO": parse_row_schema, "JSON": parse_json_row_schema}


def topic_impact(run: SyncRun, topic: str) -> dict[str, Any]:
    """The changes of the topic's latest version and the Iceberg columns they reach."""
    listed = run.registry_topics[topic]
    registry = run.resource.schema_registry
    parse = ROW_PARSERS.get(registry.get_schema(listed.schema_arn).get("DataFormat", "AVRO"))
    if parse is None:
        raise SyncError(f"{topic}: only AVRO and JSON schemas are read into columns")
    latest = registry.get_schema_version(listed.schema_arn)
    number = int(latest["VersionNumber"])
    report: dict[str, Any] = {"topic": topic, "latest_version": number, "previous_version": None}
    if number == 1:
        return {
            **report,
            **{"verdict": "none", "changes": [], "affected": [], "tables": [], "owners": []},
        }
    previous = registry.get_schema_version(listed.schema_arn, number - 1)
    old_columns = parse(previous["SchemaDefinition"]).columns
    changes = compare_columns(old_columns, parse(latest["SchemaDefinition"]).columns)
    lineage = run.topology.lineage_for(topic)
    topic_spec = DatasetSpec(*topic_key(topic), old_columns)
    column_lineage = {}
    for edge in lineage.sinks:
        glue = run.resource.data_catalog.client()
        try:
            table = glue.get_table(DatabaseName=edge.table.database, Name=edge.table.table)
        except glue.exceptions.EntityNotFoundException:
            continue  # no table yet: nothing reads a column of it
        written = sink_hop_column_lineage(
            glue_table_columns(table["Table"]), topic_spec, field_prefix=""
        )
        column_lineage[iceberg_table_key(edge.table.database, edge.table.table)] = {
            column: [((ref.namespace, ref.name), ref.field) for ref in refs]
            for column, refs in written.items()
        }
    affected = affected_columns(changes, topic_key(topic), column_lineage)
    return {
        **report,
        "previous_version": number - 1,
        "verdict": verdict(changes),
        "changes": [vars(change) for change in changes],
        "affected": [
            {"table": ".".join(a.node[1:]), "column": a.column, "change": a.change.kind}
            for a in affected
        ],
        "tables": [str(table.ref) for table in lineage.tables],
        "owners": list(project_owners(run)),
    }


def impacts(run: SyncRun, subject: str) -> list[dict[str, Any]]:
    """``subject`` a topic, or ``<database>.<table>[.<column>]``: one report per topic."""
    if subject in run.registry_topics:
        return [topic_impact(run, subject)]
    database, _, rest = subject.partition(".")
    table, _, column = rest.partition(".")
    feeding = [
        lineage.topic
        for lineage in run.topology.lineages()
        if lineage.topic in run.registry_topics
        and any(t.database == database and t.table == table for t in lineage.tables)
    ]
    if not feeding:
        raise SyncError(
            f"{subject!r} is neither a topic of registry {run.settings.registry_name} nor an "
            "Iceberg table a topic feeds (<database>.<table>[.<column>])"
        )
    reports = []
    for topic in feeding:
        report = topic_impact(run, topic)
        reached = [
            a
            for a in report["affected"]
            if a["table"] == f"{database}.{table}" and (not column or a["column"] == column)
        ]
        kinds = {a["change"] for a in reached}
        changes = [c for c in report["changes"] if c["kind"] in kinds] if column else None
        reports.append(
            {**report, "affected": reached}
            | (
                {"changes": changes, "verdict": verdict(ColumnChange(**c) for c in changes)}
                if column
                else {}
            )
        )
    return reports


def cmd_impact(args: argparse.Namespace) -> int:
    try:
        run = start_run(LineageSettings.from_env(), logging.getLogger("dzlineage.impact"))
        reports = impacts(run, args.subject)
    except SETUP_ERRORS as error:
        print(f"dzlineage impact: {describe_error(error)}", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps(reports, indent=2))
        return 0
    for report in reports:
        if report["previous_version"] is None:
            print(
                f"{report['topic']} v{report['latest_version']}: its first version, nothing to compare"
            )
            continue
        versions = f"v{report['previous_version']} -> v{report['latest_version']}"
        print(f"{report['topic']} {versions}: {report['verdict']}")
        for change in report["changes"]:
            mark = "BREAKING" if change["breaking"] else "additive"
            print(f"  {mark:8}  {change['column']}: {change['detail']}")
        for reached in report["affected"]:
            print(f"  reaches   {reached['table']}.{reached['column']} ({reached['change']})")
        if report["affected"]:
            print(f"  owners    {', '.join(report['owners'])}")
    return 0


def add_impact_command(commands: argparse._SubParsersAction) -> None:
    impact = commands.add_parser(
        "impact",
        help="what a topic's latest schema version breaks downstream",
        description="Compare the topic's latest value schema version with the one before it "
        "(removed columns, type changes Iceberg cannot promote, nullability tightened, added "
        "columns) and name the Iceberg columns each change reaches. Given an Iceberg table "
        "(<database>.<table>) or one of its columns, compare the topics feeding it.",
    )
    impact.add_argument("subject", metavar="TOPIC|TABLE[.COLUMN]")
    impact.add_argument("--format", choices=("text", "json"), default="text")
    impact.set_defaults(handler=cmd_impact)
