"""Lineage of a team's own Dagster assets downstream of the platform: how their datasets and jobs
are named in OpenLineage, which of their dependencies are the platform's nodes, and the
cursor of materializations already posted (which also tells the assets gone from the location,
whose jobs get a closing run: :func:`closing_run_id`).

Names (docs/dagster-graph.md, "Posting your assets' lineage to DataZone"):

- an input on the platform graph's key (:mod:`~dzlineage_dagster.core.lineage.platform_graph`) is the
  very dataset the sync posts: ``iceberg/<db>/<table>`` the Glue table
  (:func:`~dzlineage_dagster.core.identity.glue.glue_dataset`), ``kafka/<topic>`` the topic;
- a Dagster asset is namespace ``dagster://<code location>``, name its key's parts joined by
  ``/`` (DataZone's sourceIdentifier ``dagster://<location>/<key/path>``), unless it says it is
  a Glue Data Catalog table (kind ``iceberg`` or ``glue`` and ``dagster/table_name``
  ``<db>.<table>``): then its Glue table, whose node is the table's ARN and links to the
  table's DataZone asset as the platform's tables do;
- the job writing it is namespace ``dagster://<code location>``, name the asset's key path: one
  job per asset, so DataZone's timestamp view (the latest run of each job) shows the asset's
  lineage of its latest materialization;
- the run is one per Dagster run and asset (:func:`materialization_run_id`), so a re-tick, a
  second partition of the same run or a restarted sensor makes the same run and client token.

Not a Dagster or boto3 module: the sensor (:mod:`dzlineage_dagster.downstream`) hands it plain
key paths and metadata.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from dzlineage_dagster.core.lineage.openlineage import deterministic_run_id

AssetPath = tuple[str, ...]
DAGSTER_NAMESPACE_SCHEME = "dagster://"
#: The kinds that say an asset with a ``dagster/table_name`` is a Glue Data Catalog table.
GLUE_TABLE_KINDS = frozenset({"iceberg", "glue"})
#: Dagster's own metadata key of the table an asset is (``<db>.<table>`` for a Glue table).
TABLE_NAME_METADATA = "dagster/table_name"


@dataclass(frozen=True)
class GlueTableRef:
    database: str
    table: str


@dataclass(frozen=True)
class TopicRef:
    topic: str


PlatformRef = GlueTableRef | TopicRef


def platform_ref(key: Sequence[str]) -> PlatformRef | None:
    """The platform dataset a key of the platform graph names, or None (a source table's key
    has no host, so it cannot name the sync's dataset; any other key is not the platform's)."""
    match tuple(key):
        case ("iceberg", database, table):
            return GlueTableRef(database, table)
        case ("kafka", topic):
            return TopicRef(topic)
    return None


def dagster_dataset(code_location: str, key: Sequence[str]) -> tuple[str, str]:
    """(namespace, name) of a Dagster asset that is not a Glue table: ``dagster://<location>``
    and the key's parts joined by ``/``."""
    if not code_location or "/" in code_location:
        raise ValueError(
            f"code location {code_location!r} cannot name a Dagster asset's dataset: give the "
            "location's name as workspace.yaml has it (no '/')"
        )
    return f"{DAGSTER_NAMESPACE_SCHEME}{code_location}", "/".join(key)


def asset_job(code_location: str, key: Sequence[str]) -> tuple[str, str]:
    """(namespace, name) of the job that materializes the asset: one job per asset."""
    return dagster_dataset(code_location, key)


def asset_glue_table(kinds: Collection[str], metadata: Mapping[str, object]) -> GlueTableRef | None:
    """The Glue table an asset is, when it says so (a Glue kind and ``<db>.<table>`` as its
    ``dagster/table_name``); None for any other asset.

    A table name of another shape on a Glue asset is an error, not a silent fallback to the
    Dagster node: the asset would land on a node its table's DataZone asset never joins.
    """
    if not GLUE_TABLE_KINDS & set(kinds):
        return None
    name = metadata.get(TABLE_NAME_METADATA)
    if name is None:
        return None
    parts = str(name).split(".")
    if len(parts) != 2 or not all(parts):
        raise ValueError(
            f"{TABLE_NAME_METADATA} {str(name)!r} of an asset of kind "
            f"{'/'.join(sorted(GLUE_TABLE_KINDS & set(kinds)))} must be the Glue table's "
            "'<database>.<table>' (the default Glue Data Catalog's), or drop the kind to post "
            "the asset as a Dagster dataset"
        )
    return GlueTableRef(*parts)


def materialization_run_id(dagster_run_id: str, key: Sequence[str], storage_id: int) -> str:
    """The OpenLineage run of an asset's materialization: derived from the Dagster run and the
    asset (every partition a run materializes is one lineage run), or, for a materialization
    reported without a run (``report_runless_asset_event``, Dagster's REST API), from its event
    log storage id."""
    origin = dagster_run_id or f"runless:{storage_id}"
    return deterministic_run_id("dagster-asset", origin, json.dumps(list(key)))


def closing_run_id(asset: str, last_posted: int) -> str:
    """The run that closes a gone asset's job: derived from the asset and the last
    materialization posted of it, so a tick retried after a crash replays the same closing."""
    return deterministic_run_id("dagster-asset closed", asset, str(last_posted))


def reopening_run_id(asset: str, closed_after: int, latest: int) -> str:
    """The run that shows an asset back under a closed key: its latest materialization, posted
    anew (its own run was posted before the closing, which DataZone now takes for the latest)."""
    return deterministic_run_id("dagster-asset reopened", asset, str(closed_after), str(latest))


@dataclass(frozen=True)
class DownstreamCursor:
    """What the sensor posted, per asset by its key's user string: ``posted``, the storage id of
    the last materialization posted of each asset still there; ``closed``, the same for each
    asset gone whose job was closed (so a closing DataZone failed is posted again, and an
    asset coming back under its key is shown again at once); ``tables``, the Glue table
    (``<db>.<table>``) of those that are one: what a closing run keeps as its output (any other
    asset's output is its own Dagster dataset, named by its key)."""

    posted: Mapping[str, int]
    tables: Mapping[str, str] = field(default_factory=dict)
    closed: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def decode(cls, text: str | None) -> DownstreamCursor:
        if not text:
            return cls({})
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = None
        # A cursor written before closings were kept is the bare map of storage ids.
        if isinstance(value, dict) and isinstance(value.get("posted"), dict):
            maps = (value["posted"], value.get("tables", {}), value.get("closed", {}))
        else:
            maps = (value, {}, {})
        posted, tables, closed = maps
        if not (
            all(isinstance(m, dict) for m in maps)
            and all(
                isinstance(k, str) and type(v) is int
                for m in (posted, closed)
                for k, v in m.items()
            )
            and all(isinstance(v, str) and (k in posted or k in closed) for k, v in tables.items())
        ):
            raise ValueError(
                f"downstream lineage sensor cursor {text!r} is not a JSON object of asset key -> "
                "storage id; reset the sensor's cursor in the UI (its next tick posts each "
                "asset's latest materialization)"
            )
        return cls(posted, tables, closed)

    def encode(self) -> str:
        return json.dumps(
            {
                "posted": dict(sorted(self.posted.items())),
                "tables": dict(sorted(self.tables.items())),
                "closed": dict(sorted(self.closed.items())),
            },
            separators=(",", ":"),
        )

    def after(self, asset: str) -> int | None:
        return self.posted.get(asset)

    def advanced(
        self, asset: str, storage_id: int, table: GlueTableRef | None = None
    ) -> DownstreamCursor:
        """Posted up to ``storage_id`` (an asset closed before is open again)."""
        tables = {k: v for k, v in self.tables.items() if k != asset}
        if table is not None:
            tables[asset] = f"{table.database}.{table.table}"
        closed = {k: v for k, v in self.closed.items() if k != asset}
        return DownstreamCursor({**self.posted, asset: storage_id}, tables, closed)

    def gone(self, present: Collection[str]) -> list[str]:
        """The assets posted before that are not among ``present`` (renamed or removed)."""
        return sorted(set(self.posted) - set(present))

    def output_of(self, asset: str) -> GlueTableRef | None:
        """The Glue table the asset wrote when posted; None: its own Dagster dataset."""
        table = self.tables.get(asset)
        return None if table is None else GlueTableRef(*table.split(".", 1))

    def closing(self, asset: str) -> DownstreamCursor:
        """The asset's job closed: it moves from ``posted`` to ``closed``."""
        return DownstreamCursor(
            {k: v for k, v in self.posted.items() if k != asset},
            self.tables,
            {**self.closed, asset: self.posted[asset]},
        )
