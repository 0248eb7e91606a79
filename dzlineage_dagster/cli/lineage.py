"""`dzlineage trace` and `dzlineage orphans`: ask a lineage graph the questions people ask
("what feeds this table?", "what breaks if I drop this topic?", "can I delete this?").

Both read the graph the sync (and any other producer) posted, through GetLineageNode by
sourceIdentifier: DataZone's by default, at the moment the command started (the timestamp
view: the latest run of each job, so what a job's newer run no longer says is gone), or with
``--graph glue`` the Glue Data Catalog's (where AWS's own Spark and CreateTable lineage lands
beside the sync's; docs/glue-lineage.md). They answer the same against AWS and the sandbox. A name a user types is
resolved against the datasets the settings name: the registry's topics (named as the sync
names them), the Glue tables of the configured database, and the source tables found upstream
of those topics; :mod:`dzlineage_dagster.core.lineage.graph` resolves, walks and renders.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from dzlineage_dagster.cli.common import (
    SETUP_ERRORS,
    ScopeFailure,
    add_scope_option,
    in_each_scope,
    scope_settings,
    selected_scopes,
)
from dzlineage_dagster.core.connectors.topics import TopicKind, classify_topic
from dzlineage_dagster.core.lineage.graph import (
    GraphNode,
    LineageGraph,
    LineageNode,
    choose_dataset,
    near_matches,
    node_kind,
    records_table_creation,
    render,
    render_history,
)
from dzlineage_dagster.core.lineage.openlineage import (
    dataset_source_identifier,
    glue_source_identifier,
)
from dzlineage_dagster.core.ownership.owners import InvalidOwner
from dzlineage_dagster.scopes import ScopeConfig
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.catalog.owners import datazone_owners, topic_owners
from dzlineage_dagster.sync.checks.preflight import check_cluster, check_registry
from dzlineage_dagster.sync.errors import describe_error
from dzlineage_dagster.sync.lineage.nodes import (
    GRAPHS,
    DataZoneLineage,
    LineageQueryError,
    LineageReader,
    lineage_reader,
)
from dzlineage_dagster.sync.lineage.platform_graph import platform_datasets

#: Topics that carry table data; the others (heartbeats, schema changes, ...) feed no table.
DATA_TOPIC_KINDS = (TopicKind.TABLE, TopicKind.OTHER)
KINDS = ("glue_table", "topic", "source_table")


@dataclass
class LineageCatalog:
    """What the settings name: the registry's topics, the database's Glue tables, and the
    lineage graph read (DataZone's or the Glue Data Catalog's)."""

    run: Any  # a SyncRun: the settings, the resource and the run's lookups (topic namespace)
    lineage: LineageReader

    @classmethod
    def from_environment(
        cls, graph: str = "datazone", scope: ScopeConfig | None = None
    ) -> LineageCatalog:
        """The catalog the environment's settings name, or ``scope``'s (DZLINEAGE_SCOPES)."""
        import logging

        from dzlineage_dagster.sync.headless import start_run

        settings, aws_options = scope_settings(scope)
        run = start_run(settings, logging.getLogger("dzlineage.lineage"), aws_options)
        # Every query reads the registry and the cluster: a wrong setting is named up front.
        check_registry(run)
        check_cluster(run)
        return cls(run, lineage_reader(run, graph))

    @property
    def settings(self) -> LineageSettings:
        return self.run.settings

    def topic_ids(self, topic: str) -> list[str]:
        """The ids a topic may have: as the sync names it first, then the other namespace style
        (a cluster renamed, or lineage posted by another producer)."""
        kafka = self.run.kafka_cluster
        namespaces = dict.fromkeys(
            [kafka.namespace, kafka.bootstrap_namespace, kafka.cluster_namespace]
        )
        return [dataset_source_identifier(namespace, topic) for namespace in namespaces]

    @cached_property
    def platform_ids(self) -> frozenset[str]:
        """The platform's own nodes (as the sync names them, a topic by either namespace
        style too): a node of the graph that is none of them is not shown by their names."""
        styles = {i for topic in self.run.registry_topics for i in self.topic_ids(topic)}
        return platform_datasets(self.run).identities | styles

    def data_topics(self) -> list[str]:
        return [t for t in self.run.registry_topics if classify_topic(t) in DATA_TOPIC_KINDS]

    def table_ids(self) -> list[str]:
        arn = self.settings.msk_cluster_arn.split(":")
        region, account = arn[3], self.settings.glue_table_account(arn[4])
        database = self.settings.glue_database
        return [
            glue_source_identifier(region, account, database, table)
            for table in self.run.table_names(database)
        ]

    def resolve(self, text: str, kind: str | None = None) -> str:
        """The sourceIdentifier ``text`` names; LineageQueryError says why there is none."""
        if "://" in text or text.startswith("arn:"):
            return text
        topics = set(self.run.registry_topics)
        known = [self.topic_ids(t)[0] for t in sorted(topics)] + self.table_ids()
        candidates = choose_dataset(text, known, kind)
        if kind in (None, "source_table"):
            # Source tables are known only from the lineage: upstream of the matching topics.
            sources = self._sources_of(t for t in topics if _may_name(text, t))
            candidates = choose_dataset(text, [*known, *sources], kind)
            known += sources
        candidates = [self._existing_topic_id(c, topics) for c in candidates]
        if len(candidates) > 1:
            # Several of one kind: the ones the graph has a node for are the ones meant.
            candidates = [c for c in candidates if self.lineage.node(c)] or candidates
        if len(candidates) == 1:
            return candidates[0]
        if not candidates:
            hint = near_matches(text, known)
            suggestion = f"; did you mean {', '.join(hint)}?" if hint else ""
            raise LineageQueryError(
                f"no {kind or 'dataset'} named {text!r} among the registry "
                f"{self.settings.registry_name}'s topics, the Glue database "
                f"{self.settings.glue_database}'s tables and their source tables{suggestion}"
            )
        listed = "\n  ".join(candidates)
        raise LineageQueryError(
            f"{text!r} names {len(candidates)} datasets; give one in full (or --kind):\n  {listed}"
        )

    def _sources_of(self, topics: Iterable[str]) -> list[str]:
        """The datasets one job upstream of these topics (their source tables)."""
        found = []
        for topic in topics:
            node = self._topic_node(topic)
            if node is not None:
                found += [
                    d.source_identifier for d, _ in self.lineage.datasets_beyond(node, "upstream")
                ]
        return found

    def _topic_node(self, topic: str) -> LineageNode | None:
        return next(
            (n for n in map(self.lineage.node, self.topic_ids(topic)) if n is not None), None
        )

    def _existing_topic_id(self, candidate: str, topics: set[str]) -> str:
        """A topic's id as the graph has it, when the lineage names it in another namespace."""
        if node_kind(candidate) != "topic":
            return candidate
        topic = candidate.split("/", 3)[-1]
        node = self._topic_node(topic) if topic in topics else None
        return node.source_identifier if node else candidate

    def owners_of(self, graph: LineageGraph) -> tuple[dict[str, list[str]], list[str]]:
        """Whom to call about the graph's topics of this registry (their configured owners,
        then the DataZone project's), and a note for each topic whose configuration names a
        wrong owner (it is shown with the project's). One GetTags a topic, one GetProject and
        one ListProjectMemberships."""
        topics = [
            node
            for node in graph.nodes.values()
            if node.kind == "topic" and node.label in self.run.registry_topics
        ]
        if not topics:
            return {}, []
        project = datazone_owners(self.run)
        owners, notes = {}, []
        for node in topics:
            try:
                found = topic_owners(self.run, node.label, project)
            except InvalidOwner as error:
                notes.append(f"{node.label}: {error}")
                found = project
            owners[node.id] = [owner.name for owner in found]
        return owners, notes

    def orphans(self) -> dict[str, list[str]]:
        """Topics that feed no table, and tables nothing feeds."""
        lonely_topics = []
        for topic in self.data_topics():
            node = self._topic_node(topic)
            feeds = node is not None and any(
                node_kind(d.source_identifier) == "glue_table"
                for d, _ in self.lineage.datasets_beyond(node, "downstream")
            )
            if not feeds:
                lonely_topics.append(topic)
        unfed_tables = []
        for table_id in self.table_ids():
            node = self.lineage.node(table_id)
            fed = node is not None and any(
                not records_table_creation(job)
                for _, job in self.lineage.datasets_beyond(node, "upstream")
            )
            if not fed:
                unfed_tables.append(table_id)
        return {
            "topics_without_downstream_table": lonely_topics,
            "tables_without_upstream": unfed_tables,
        }


def _may_name(text: str, topic: str) -> bool:
    """Whether ``text`` may name a source table of the topic: both end with the same table name
    (a router may have renamed the topic, not the table)."""
    return text.lower().rsplit(".", 1)[-1] == topic.lower().rsplit(".", 1)[-1]


def find_dataset(
    text: str, kind: str | None, graph: str, scopes: list[ScopeConfig] | None
) -> tuple[LineageCatalog, str, list[ScopeFailure]]:
    """The catalog of the scope whose datasets ``text`` names, the sourceIdentifier it names,
    and the scopes that did not answer (without it, or not readable). Without scopes: the
    settings' one catalog. LineageQueryError when no scope, or two with different datasets,
    have it (each scope's answer named)."""

    def resolved(scope: ScopeConfig | None) -> tuple[LineageCatalog, str]:
        catalog = LineageCatalog.from_environment(graph, scope)
        return catalog, catalog.resolve(text, kind)

    answers, failures = in_each_scope(scopes, resolved, (LineageQueryError, *SETUP_ERRORS))
    roots = {root for _, (_, root) in answers}
    if len(roots) == 1:
        (catalog, root) = answers[0][1]
        return catalog, root, failures
    if not answers:
        raise LineageQueryError("\n  ".join([f"{text!r} is in no scope:", *map(str, failures)]))
    found = "\n  ".join(f"scope {scope.name}: {root}" for scope, (_, root) in answers)
    raise LineageQueryError(
        f"{text!r} names datasets in {len(answers)} scopes; choose one with --scope:\n  {found}"
    )


def cmd_trace(args: argparse.Namespace) -> int:
    direction = "downstream" if args.downstream else "upstream"
    try:
        scopes = selected_scopes(args.scopes)
        catalog, root, failures = find_dataset(args.dataset, args.kind, args.graph, scopes)
        # A scope that has it not is no news; one that could not be asked may have had it.
        for failure in failures:
            if not isinstance(failure.error, LineageQueryError):
                print(f"dzlineage trace: not looked up in {failure}", file=sys.stderr)
        if args.history:
            return _print_history(catalog, root, direction, args)
        graph = catalog.lineage.walk(root, direction, args.depth)
        graph.name_apart_from(catalog.platform_ids)
        owners, notes = catalog.owners_of(graph) if args.owners else ({}, [])
    except (LineageQueryError, *SETUP_ERRORS) as error:
        print(f"dzlineage trace: {describe_error(error)}", file=sys.stderr)
        return 2
    for note in notes:
        print(f"dzlineage trace: {note}", file=sys.stderr)
    print(render(graph, root, direction, args.format, columns=args.columns, owners=owners))
    return 0


def _print_history(
    catalog: LineageCatalog, root: str, direction: str, args: argparse.Namespace
) -> int:
    if args.format not in ("text", "json"):
        print(f"dzlineage trace: --history prints text or json, not {args.format}", file=sys.stderr)
        return 2
    if not isinstance(catalog.lineage, DataZoneLineage):
        print(
            "dzlineage trace: --history reads DataZone's node history (ListLineageNodeHistory); "
            f"{catalog.lineage.where} keeps none (GetLineageNode shows the latest only)",
            file=sys.stderr,
        )
        return 2
    revisions, truncated = catalog.lineage.history(root, direction)
    print(
        render_history(
            root,
            direction,
            revisions,
            args.format,
            truncated=truncated,
            platform=catalog.platform_ids,
        )
    )
    return 0


def cmd_orphans(args: argparse.Namespace) -> int:
    """The orphans of the settings' registry, or of each scope's (a section each)."""

    def orphans(scope: ScopeConfig | None) -> tuple[LineageCatalog, dict[str, list[str]]]:
        catalog = LineageCatalog.from_environment(args.graph, scope)
        return catalog, catalog.orphans()

    try:
        scopes = selected_scopes(args.scopes)
        answers, failures = in_each_scope(scopes, orphans, (LineageQueryError, *SETUP_ERRORS))
    except (LineageQueryError, *SETUP_ERRORS) as error:
        print(f"dzlineage orphans: {describe_error(error)}", file=sys.stderr)
        return 2
    for failure in failures:
        print(f"dzlineage orphans: {failure}", file=sys.stderr)
    if args.format == "json":
        found = {scope.name if scope else None: found for scope, (_, found) in answers}
        print(json.dumps(found[None] if scopes is None else found, indent=2))
        return 2 if failures else 0
    for scope, (catalog, found) in answers:
        if scope is not None:
            print(f"== scope {scope.name} ==")
        _print_orphans(catalog.settings, found)
    return 2 if failures else 0


def _print_orphans(settings: LineageSettings, found: dict[str, list[str]]) -> None:
    topics, tables = found["topics_without_downstream_table"], found["tables_without_upstream"]
    print(f"topics of registry {settings.registry_name} that feed no table ({len(topics)}):")
    print("".join(f"  {t}\n" for t in topics) or "  (none)\n", end="")
    print(f"tables of Glue database {settings.glue_database} that nothing feeds ({len(tables)}):")
    labelled = (f"  {GraphNode(t, node_kind(t)).label}  {t}\n" for t in tables)
    print("".join(labelled) or "  (none)\n", end="")


def add_lineage_commands(commands: argparse._SubParsersAction) -> None:
    """Register `trace` and `orphans` on the `dzlineage` command."""
    trace = commands.add_parser(
        "trace",
        help="what feeds a dataset, or what depends on it, from a lineage graph",
        description="Walk DataZone's lineage graph (or the Glue Data Catalog's, --graph glue) "
        "from DATASET: a Glue table "
        "(`lakehouse.sales_orders`), a topic (`shop.sales.orders`), a source table "
        "(`inventory.customers`) or a full sourceIdentifier. Upstream by default (what feeds "
        "it); --downstream for what depends on it (what breaks if it goes). With "
        "DZLINEAGE_SCOPES set, DATASET is looked up in every scope (or those --scope names) "
        "and traced from the one that has it.",
    )
    trace.add_argument("dataset", metavar="DATASET")
    way = trace.add_mutually_exclusive_group()
    way.add_argument("--upstream", action="store_true", help="what feeds DATASET (default)")
    way.add_argument("--downstream", action="store_true", help="what depends on DATASET")
    trace.add_argument(
        "--depth", type=int, default=None, metavar="N", help="at most N dataset hops"
    )
    trace.add_argument(
        "--format", choices=("text", "json", "mermaid", "dot"), default="text", help="output format"
    )
    trace.add_argument("--columns", action="store_true", help="show the column lineage of each hop")
    trace.add_argument(
        "--kind", choices=KINDS, default=None, help="what DATASET names when a name fits several"
    )
    trace.add_argument(
        "--history",
        action="store_true",
        help="what fed DATASET (or what read it, --downstream) over time, newest first: one "
        "line per change of its neighbours, from DataZone's node history "
        "(ListLineageNodeHistory; at most the 50 latest revisions)",
    )
    trace.add_argument(
        "--no-owners",
        dest="owners",
        action="store_false",
        help="leave out each topic's owners (its schema's owner tag, its connectors' "
        "dzlineage.owners, the DataZone project's owners; docs/impact.md)",
    )
    add_graph_option(trace)
    add_scope_option(trace, "look DATASET up")
    trace.set_defaults(handler=cmd_trace)

    orphans = commands.add_parser(
        "orphans",
        help="topics that feed no table and tables nothing feeds (can I delete this?)",
        description="List the registry's data topics with no downstream Glue table and the "
        "configured Glue database's tables with no upstream, per DataZone's lineage graph "
        "(or the Glue Data Catalog's, --graph glue). With DZLINEAGE_SCOPES set, one section "
        "per scope; exits 2 if a scope could not be read (the others are listed).",
    )
    add_graph_option(orphans)
    orphans.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="output format (with scopes: a section, or a JSON object, per scope)",
    )
    add_scope_option(orphans, "list orphans")
    orphans.set_defaults(handler=cmd_orphans)


def add_graph_option(command: argparse.ArgumentParser) -> None:
    """``--graph``: which lineage graph a command reads."""
    command.add_argument(
        "--graph",
        choices=GRAPHS,
        default=GRAPHS[0],
        help="the lineage graph to read: DataZone's (default), or the Glue Data Catalog's, "
        "where the sync posts when DZLINEAGE_LINEAGE_DESTINATIONS names glue "
        "(docs/glue-lineage.md)",
    )
