"""`dzlineage impact <topic|table[.column]>`: what the topic's latest schema version breaks.

The latest version of the topic's value schema is compared with the one before it
(:func:`~dzlineage_dagster.core.schemas.impact.compare_columns`); each change is followed to the
Iceberg columns written from it: the sink writes a table column from the topic column of its
name (the sync's sink-hop column lineage), among the columns the table has in the Glue Data
Catalog. Given a table (``lakehouse.orders``) or one of its columns, the topics feeding it are
compared and only what reaches it is shown. The report (sync/lineage/impact.py) also names the
assets downstream of the tables (Dagster keys, and the nodes of DataZone's lineage graph, or with
``--graph glue`` the Glue Data Catalog's) and the owners to tell.
``--format json`` prints one object per topic for CI, the text the same, section by section.
The exit code gates CI: 3 when a report is breaking (``--fail-on additive``: any column change;
``--fail-on never``: never), 2 when the lookup fails, else 0.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from dzlineage_dagster.cli.common import (
    SETUP_ERRORS,
    add_scope_option,
    in_each_scope,
    scope_settings,
    selected_scopes,
)
from dzlineage_dagster.cli.lineage import add_graph_option
from dzlineage_dagster.core.schemas.impact import ImpactReport
from dzlineage_dagster.scopes import ScopeConfig
from dzlineage_dagster.sync.catalog.owners import datazone_owners
from dzlineage_dagster.sync.checks.preflight import check_registry
from dzlineage_dagster.sync.errors import SyncError, describe_error
from dzlineage_dagster.sync.headless import start_run
from dzlineage_dagster.sync.lineage.impact import topic_impact
from dzlineage_dagster.sync.lineage.nodes import LineageQueryError, require_graph
from dzlineage_dagster.sync.run_state import SyncRun

#: The exit status of a report whose verdict ``--fail-on`` gates on (2 is a lookup that failed).
CHANGE_FOUND = 3
#: ``--fail-on``: the verdicts that make the command exit :data:`CHANGE_FOUND`.
FAIL_ON = {"breaking": {"breaking"}, "additive": {"breaking", "additive"}, "never": set()}


class NotInScope(SyncError):
    """The subject is no topic of the registry, nor a table one feeds."""


def impacts(run: SyncRun, subject: str, graph: str = "datazone") -> list[ImpactReport]:
    """``subject`` a topic, or ``<database>.<table>[.<column>]``: one report per topic, its
    downstream assets read from ``graph``'s lineage."""
    require_graph(run.settings, graph)
    owners = datazone_owners(run)
    if subject in run.registry_topics:
        return [topic_impact(run, subject, owners, graph=graph)]
    database, _, rest = subject.partition(".")
    table, _, column = rest.partition(".")
    feeding = [
        lineage.topic
        for lineage in run.topology.lineages()
        if lineage.topic in run.registry_topics
        and any(t.database == database and t.table == table for t in lineage.tables)
    ]
    if not feeding:
        raise NotInScope(
            f"{subject!r} is neither a topic of registry {run.settings.registry_name} nor an "
            "Iceberg table a topic feeds (<database>.<table>[.<column>])"
        )
    return [
        topic_impact(run, topic, owners, graph=graph).narrowed_to(
            f"{database}.{table}", column or None
        )
        for topic in feeding
    ]


def scope_impacts(scope: ScopeConfig | None, subject: str, graph: str) -> list[ImpactReport]:
    """:func:`impacts` in ``scope`` (None: the settings' one registry)."""
    settings, aws_options = scope_settings(scope)
    run = start_run(settings, logging.getLogger("dzlineage.impact"), aws_options)
    check_registry(run)
    return impacts(run, subject, graph)


def cmd_impact(args: argparse.Namespace) -> int:
    try:
        scopes = selected_scopes(args.scopes)
        answers, failures = in_each_scope(
            scopes,
            lambda scope: scope_impacts(scope, args.subject, args.graph),
            (LineageQueryError, *SETUP_ERRORS),
        )
        if not answers:
            raise SyncError("\n  ".join([f"{args.subject!r} is in no scope:", *map(str, failures)]))
    except (LineageQueryError, *SETUP_ERRORS) as error:
        print(f"dzlineage impact: {describe_error(error)}", file=sys.stderr)
        return 2
    # A scope that has it not is no news; one that could not be asked may have had it.
    for failure in failures:
        if not isinstance(failure.error, NotInScope):
            print(f"dzlineage impact: not looked up in {failure}", file=sys.stderr)
    # With scopes, each report names its scope: two scopes may each have a topic of the name.
    found = [(scope, report) for scope, reports in answers for report in reports]
    if args.format == "json":
        print(
            json.dumps(
                [
                    {**({"scope": scope.name} if scope else {}), **report.to_json()}
                    for scope, report in found
                ],
                indent=2,
            )
        )
    else:
        print(
            "\n\n".join(
                (f"== scope {scope.name} ==\n" if scope else "") + report.text()
                for scope, report in found
            )
        )
    return impact_status([report for _, report in found], args.fail_on)


def impact_status(reports: list[ImpactReport], fail_on: str) -> int:
    """:data:`CHANGE_FOUND` when a report's verdict is one ``fail_on`` gates on, else 0."""
    gated = FAIL_ON[fail_on]
    return CHANGE_FOUND if any(report.verdict in gated for report in reports) else 0


def add_impact_command(commands: argparse._SubParsersAction) -> None:
    impact = commands.add_parser(
        "impact",
        help="what a topic's latest schema version breaks downstream",
        description="Compare the topic's latest value schema version with the one before it "
        "(removed and renamed columns, type changes Iceberg cannot promote, nullability "
        "tightened, enum symbols removed, added columns) and name the Iceberg columns each "
        "change reaches, the assets downstream and their owners. Given an Iceberg table "
        "(<database>.<table>) or one of its columns, compare the topics feeding it. With "
        "DZLINEAGE_SCOPES set, every scope (or those --scope names) is asked, and each "
        "topic found reported. Exits 3 "
        "when a change is breaking (see --fail-on), 2 when the lookup fails, else 0.",
    )
    impact.add_argument("subject", metavar="TOPIC|TABLE[.COLUMN]")
    impact.add_argument("--format", choices=("text", "json"), default="text")
    impact.add_argument(
        "--fail-on",
        choices=tuple(FAIL_ON),
        default="breaking",
        help=f"exit {CHANGE_FOUND} when a report is breaking (default), breaking or additive "
        "('additive': any column change), or never; 2 when the lookup fails, else 0",
    )
    add_graph_option(impact)
    add_scope_option(impact, "look the topic or table up")
    impact.set_defaults(handler=cmd_impact)
