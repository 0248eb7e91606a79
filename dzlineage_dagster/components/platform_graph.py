"""The platform's lineage in Dagster's own asset graph: a state-backed component.

Its state is the platform's topology, read by :func:`~dzlineage_dagster.sync.lineage.platform_graph.
read_platform_graph` with the sync's own lookups (connectors, registry schemas, Glue tables,
the mapping records); from it, external ``AssetSpec``s for every source table, topic and
Iceberg table with their ``deps``, so the asset graph draws source table -> topic -> Iceberg
table (key scheme: :mod:`dzlineage_dagster.core.lineage.platform_graph`). The state is written by
``dg utils refresh-defs-state`` (and on every load under ``dagster dev``); the asset check
``platform_graph_is_current`` compares it with the live topology. docs/dagster-graph.md says
how to use it.
"""

# No `from __future__ import annotations`: Resolvable reads the field types at run time.
import json
import logging
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetKey,
    AssetSpec,
    Definitions,
    MetadataValue,
    TableColumnDep,
    TableColumnLineage,
    TableSchema,
    asset_check,
)
from dagster.components import (
    ComponentLoadContext,
    DefsStateConfig,
    DefsStateConfigArgs,
    Resolvable,
    ResolvedDefsStateConfig,
    StateBackedComponent,
)

# Where dagster-fivetran, dagster-airbyte and dagster-dbt take it from: YAML's `translation`
# block, resolved into a function of (the default spec, the node).
from dagster.components.utils.translation import ResolvedTranslationFn

from dzlineage_dagster.assets.common import Advice, table_schema
from dzlineage_dagster.core.lineage.platform_graph import (
    DEFAULT_MAX_TOPICS,
    DrawnGraph,
    GraphScope,
    PlatformGraphState,
    PlatformNode,
)
from dzlineage_dagster.core.schemas.avro import Column
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.scopes import SCOPES_VARIABLE, read_scopes
from dzlineage_dagster.settings import (
    AWS_OPTION_VARIABLES,
    AWS_SIDES,
    InvalidSettings,
    LineageSettings,
    aws_side_options,
    env_name,
    side_role_variables,
)
from dzlineage_dagster.sync.lineage.platform_graph import live_digest, read_platform_graph
from dzlineage_dagster.sync.run_state import SyncRun

#: The state's key unless ``defs_state.key`` names another (one per deployment).
DEFAULT_STATE_KEY = "dzlineage_platform_graph"
STALENESS_CHECK = "platform_graph_is_current"
#: The asset-graph node that says what ``max_topics`` left out (drawn only when it left out some).
TRUNCATION_NOTE_KEY = AssetKey(["platform_graph", "topics_not_drawn"])
#: What the state says nothing about yet, or no more: the check tells how to refresh it.
REFRESH_HINT = "run `dg utils refresh-defs-state` (under `dagster dev`, reload the code location)"
NO_STATE = Advice(
    why=(
        "The component has not read the platform yet, so the asset graph draws no source "
        "tables, topics or Iceberg tables."
    ),
    what_to_do=f"Refresh the state: {REFRESH_HINT}.",
)
STALE_STATE = Advice(
    why=(
        "Connectors or registry schemas changed since the platform graph was read: the asset "
        "graph may draw edges that are gone and miss new ones (the sync's own lineage is not "
        "affected)."
    ),
    what_to_do=f"Refresh the state: {REFRESH_HINT}.",
)
SETTING_VARIABLES = frozenset(
    {
        SCOPES_VARIABLE,
        *(env_name(name) for name in LineageSettings.model_fields),
        *AWS_OPTION_VARIABLES.values(),
        *(variable for side in AWS_SIDES for variable in side_role_variables(side).values()),
    }
)


@dataclass
class PlatformGraphComponent(StateBackedComponent, Resolvable):
    """Source table -> Kafka topic -> Iceberg table, as external assets of the asset graph.

    ``settings`` are the sync's settings by variable name (``DZLINEAGE_DOMAIN_ID``: ...),
    usually ``{{ env.DZLINEAGE_... }}`` in defs.yaml; a value that is unset (None or empty)
    takes the setting's default. ``staleness_check_asset`` is the asset the state's staleness
    check is attached to (None: no check). ``databases``, ``connectors``, ``topic_prefixes`` and
    ``topic_pattern`` scope the graph to a team's part of a large platform, ``max_topics`` bounds
    it (docs/dagster-graph.md, "Large platforms"; :class:`GraphScope`).
    """

    settings: dict[str, str | None] = field(default_factory=dict)
    staleness_check_asset: str | None = "connector_topology"
    defs_state: ResolvedDefsStateConfig = field(
        default_factory=DefsStateConfigArgs.local_filesystem
    )
    #: Asset attributes to change on every node's spec (group_name, owners, tags, ...), with
    #: the node as ``{{ data.... }}`` (docs/dagster-graph.md: "Changing the specs").
    translation: ResolvedTranslationFn[PlatformNode] = None
    #: The scope (:class:`GraphScope`): topics read from or feeding one of these source or
    #: Iceberg databases; captured by one of these Debezium connectors; named with one of these
    #: prefixes; whose whole name matches this regular expression. Every filter given holds.
    databases: list[str] = field(default_factory=list)
    connectors: list[str] = field(default_factory=list)
    topic_prefixes: list[str] = field(default_factory=list)
    topic_pattern: str | None = None
    #: At most this many of the scope's topics, the first by name (None: all); the rest are
    #: named in a log line and the ``platform_graph/topics_not_drawn`` asset.
    max_topics: int | None = DEFAULT_MAX_TOPICS
    #: False leaves each node's ``dagster/column_schema`` and ``dagster/column_lineage`` out:
    #: most of what a load builds and serves the UI, for a scope of many thousand topics.
    column_metadata: bool = True
    #: The scope of ``DZLINEAGE_SCOPES`` to draw (docs/many-registries.md); None: the
    #: deployment's one registry, or its first scope. A named scope's nodes are keyed below its
    #: name (``<scope>/kafka/<topic>``): two scopes' topics of one name are two nodes.
    registry_scope: str | None = None

    def __post_init__(self) -> None:
        # A bad pattern or limit fails the load, naming it, not the first build from a state.
        _ = self.scope

    @property
    def scope(self) -> GraphScope:
        return GraphScope(
            databases=tuple(self.databases),
            connectors=tuple(self.connectors),
            topic_prefixes=tuple(self.topic_prefixes),
            topic_pattern=self.topic_pattern,
            max_topics=self.max_topics,
        )

    @property
    def defs_state_config(self) -> DefsStateConfig:
        key = DEFAULT_STATE_KEY + (f"__{self.registry_scope}" if self.registry_scope else "")
        return DefsStateConfig.from_args(self.defs_state, default_key=key)

    @property
    def key_prefix(self) -> tuple[str, ...]:
        return (self.registry_scope,) if self.registry_scope else ()

    @property
    def environ(self) -> dict[str, str]:
        """The component's settings as the variables they stand for (unset ones left out).

        defs.yaml's ``{{ env.X }}`` renders a value that reads as YAML as what it reads as: the
        one line of JSON ``DZLINEAGE_SCOPES`` holds (as ``dzlineage sandbox --scopes two``
        prints it) arrives as a mapping, a number as a number (``0`` too, which is set). A
        variable is text, so it is written back as JSON (which is YAML), the text it was."""
        return {
            name: value if isinstance(value, str) else json.dumps(value)
            for name, value in self.settings.items()
            if value is not None and value != ""
        }

    @property
    def drawn_scope(self) -> str | None:
        """The scope the graph draws: the named one, else the first of DZLINEAGE_SCOPES (None
        without scopes)."""
        first = next(iter(read_scopes(self.environ)), None)
        return self.registry_scope or (first.name if first else None)

    def sync_run(self, log: logging.Logger | None = None) -> SyncRun:
        """A sync run over the component's settings (read only: it writes nothing to AWS)."""
        unknown = sorted(set(self.settings) - SETTING_VARIABLES)
        if unknown:
            raise InvalidSettings(
                [
                    f"{name}: not a dzlineage setting (docs/settings.md lists them)"
                    for name in unknown
                ]
            )
        environ = self.environ
        scopes = {scope.name: scope for scope in read_scopes(environ)}
        if self.registry_scope and self.registry_scope not in scopes:
            raise InvalidSettings(
                [
                    f"registry_scope: {self.registry_scope!r} is no scope of {SCOPES_VARIABLE} "
                    f"(its scopes: {', '.join(scopes) or 'none, it is unset'})"
                ]
            )
        if scopes:
            environ = scopes[self.registry_scope or next(iter(scopes))].environ(environ)
        settings = LineageSettings.from_env(environ)
        resource = LineageSyncResource.with_settings(settings, aws_side_options(environ))
        return SyncRun(resource, log or logging.getLogger("dzlineage.platform_graph"))

    def write_state_to_path(self, state_path: Path) -> None:
        state = read_platform_graph(self.sync_run())
        # Whole or not at all: code servers loading side by side (two `dagster dev`s in one
        # checkout) each refresh the same local state and may read it while another writes.
        partial = state_path.with_name(f".{state_path.name}.{os.getpid()}")
        partial.write_text(state.to_json(), encoding="utf-8")
        os.replace(partial, state_path)

    def build_defs_from_state(
        self, context: ComponentLoadContext, state_path: Path | None
    ) -> Definitions:
        read = None
        if state_path is not None:
            read = PlatformGraphState.read(lambda: state_lines(state_path), self.scope)
        state = read[0] if read else None
        specs = []
        if read:
            drawn = read[1]
            nodes = drawn.nodes
            if not self.column_metadata:
                nodes = tuple(replace(node, columns=(), column_lineage={}) for node in nodes)
            specs = [self.get_asset_spec(node) for node in nodes]
            if drawn.truncation_note:
                logging.getLogger("dzlineage.platform_graph").warning(drawn.truncation_note)
                specs.append(truncation_note_spec(drawn))
        checks = [self._staleness_check(state)] if self.staleness_check_asset else []
        return Definitions(assets=specs, asset_checks=checks)

    def get_asset_spec(self, node: PlatformNode) -> AssetSpec:
        """A node's spec: the default, changed by ``translation``; a subclass may override it
        (the translator of dagster-fivetran and dagster-dbt, in one method)."""
        spec = node_asset_spec(node, self.key_prefix)
        return self.translation(spec, node) if self.translation else spec

    def _staleness_check(self, state: PlatformGraphState | None):
        @asset_check(
            asset=AssetKey.from_user_string(self.staleness_check_asset or ""),
            name=staleness_check_name(self.registry_scope),
            # Read by the connector sensor, which tells from it that a connector change left
            # the graph behind without listing the registry.
            metadata={
                "connectors_digest": state.connectors_digest if state else "",
                # The connector sensor of this scope compares its connectors with the digest.
                "registry_scope": self.drawn_scope or "",
            },
            description=(
                "The asset graph's platform lineage (source table -> topic -> Iceberg table) "
                "was read from the topology as it is now: compares a digest of the connectors "
                "and the registry (ListConnectors, ListSchemas) with the one the state was "
                "written from."
            ),
        )
        def platform_graph_is_current(context) -> AssetCheckResult:
            if state is None:
                return AssetCheckResult(
                    passed=False,
                    severity=AssetCheckSeverity.WARN,
                    description=f"the platform graph has no state yet: {REFRESH_HINT}",
                    metadata=NO_STATE.metadata(),
                )
            live = live_digest(self.sync_run(context.log))
            return AssetCheckResult(
                passed=live == state.digest,
                severity=AssetCheckSeverity.WARN,
                description=(
                    f"the graph matches the topology (state written {state.written_at})"
                    if live == state.digest
                    else (
                        f"connectors or registry schemas changed since the state was written "
                        f"({state.written_at}): {REFRESH_HINT}"
                    )
                ),
                metadata={
                    **({} if live == state.digest else STALE_STATE.metadata()),
                    "state_digest": state.digest,
                    "live_digest": live,
                    "state_written_at": state.written_at,
                },
            )

        return platform_graph_is_current


def state_lines(path: Path) -> Iterator[str]:
    """The state file's lines, one at a time (a large platform's state is hundreds of MB)."""
    with path.open(encoding="utf-8") as lines:
        yield from lines


def truncation_note_spec(drawn: DrawnGraph) -> AssetSpec:
    """A node of the asset graph saying what ``max_topics`` left out, beside what it drew."""
    return AssetSpec(
        key=TRUNCATION_NOTE_KEY,
        description=drawn.truncation_note,
        group_name="platform_graph",
        metadata={
            "topics_on_the_platform": drawn.topics,
            "topics_in_scope": drawn.in_scope,
            "topics_drawn": drawn.drawn,
            "first_topic_not_drawn": drawn.first_left_out,
        },
    )


def staleness_check_name(registry_scope: str | None) -> str:
    """The staleness check's name: one check per drawn scope on the same asset."""
    return f"{STALENESS_CHECK}__{registry_scope}" if registry_scope else STALENESS_CHECK


def node_asset_spec(node: PlatformNode, key_prefix: tuple[str, ...] = ()) -> AssetSpec:
    """The node as an external asset, keyed below ``key_prefix``: its deps, kinds, columns,
    column lineage, owners and DataZone link."""
    metadata: dict[str, object] = dict(node.facts)
    if node.columns:
        metadata["dagster/column_schema"] = column_schema(node.columns)
    if node.column_lineage:
        metadata["dagster/column_lineage"] = column_lineage(node.column_lineage, key_prefix)
    if node.url:
        metadata["datazone_asset_url"] = MetadataValue.url(node.url)
    return AssetSpec(
        key=asset_key(key_prefix + node.key),
        deps=[asset_key(key_prefix + dep) for dep in node.deps],
        description=node.description,
        group_name=node.group,
        kinds=set(node.kinds),
        owners=list(node.owners),
        metadata=metadata,
    )


# A graph names each node's key several times (its own, its children's deps, each column of
# their column lineage) and a source table, its topic and often its Iceberg table have the same
# columns: one Dagster value each, built once, rather than one per mention (the load of a large
# platform, docs/dagster-graph.md "Large platforms"). Both are immutable; the caches are
# bounded, so reloads do not keep every graph ever drawn.
@lru_cache(maxsize=1 << 17)
def asset_key(path: tuple[str, ...]) -> AssetKey:
    return AssetKey(list(path))


@lru_cache(maxsize=1 << 15)
def column_schema(columns: tuple[Column, ...]) -> TableSchema:
    return table_schema(columns)


def column_lineage(
    lineage: Mapping[str, tuple], key_prefix: tuple[str, ...] = ()
) -> TableColumnLineage:
    return TableColumnLineage(
        deps_by_column={
            column: [TableColumnDep(asset_key(key_prefix + dep.key), dep.column) for dep in deps]
            for column, deps in lineage.items()
        }
    )
