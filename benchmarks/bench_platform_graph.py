"""The platform graph component's load at scale, side by side:
``python -m benchmarks.bench_platform_graph 1000 10000 30000 100000``.

For each estate size a synthetic state (the file ``dg utils refresh-defs-state`` writes) of N
table topics, each with its source table and Iceberg table (3N nodes, the demo's columns and
column lineage, the topics spread over 20 Debezium connectors each capturing its own database),
written by a child process, is loaded in a fresh child process the way the code location loads
it: the state read and the specs built (``build_defs_from_state``), merged with the sync's
``Definitions``, ``Definitions.validate_loadable``, and the repository snapshot the code server
sends to the webserver (``RepositorySnap.from_def``, serialized): what the UI waits for. Each
stage's CPU seconds, the load's wall seconds, the peak RSS of the process, the specs drawn and
the AWS calls made (counted at botocore's ``_make_api_call``: none, the load reads the state
only) are printed as one JSON line per load, then as one table.

``--yaml`` gives the component's attributes (default: every topic drawn, ``max_topics: null``);
where the state has more topics than the default ``max_topics``, the load is measured again
under ``--limited`` (default: the component's defaults). ``--profile N`` prints the cProfile
top entries of the load at N topics.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.synthetic_platform import SOURCE_CONNECTOR, synthetic_topics
from dzlineage_dagster.core.connectors.debezium import SourceEngine, SourceTable
from dzlineage_dagster.core.connectors.iceberg_sink import SinkTable
from dzlineage_dagster.core.connectors.topics import TopicKind
from dzlineage_dagster.core.connectors.topology import SinkEdge, SourceEdge, TopicLineage
from dzlineage_dagster.core.lineage.platform_graph import (
    DEFAULT_MAX_TOPICS,
    ColumnDep,
    PlatformGraphState,
    TopicGraph,
    iceberg_table_key,
    platform_nodes,
    source_table_key,
    topic_key,
)
from dzlineage_dagster.core.schemas.avro import Column

CHILD = (sys.executable, "-m", "benchmarks.bench_platform_graph")
SIZES = (1_000, 10_000, 30_000, 100_000)
#: The component drawing every topic; the default (``settings: {}``) stops at max_topics.
UNLIMITED = "settings: {}\nmax_topics: null"
CONNECTORS = 20
SINK_CONNECTOR = "shop-iceberg-sink"


def synthetic_state(count: int, connectors: int = CONNECTORS) -> PlatformGraphState:
    """The state of ``count`` table topics: topic ``i`` is written by connector ``i % connectors``
    from database ``shop_<connector>`` and sunk into Iceberg database ``lakehouse_<connector>``."""
    graphs = []
    for index, topic in enumerate(synthetic_topics(count)):
        shard = index % connectors
        connector = f"{SOURCE_CONNECTOR}-{shard:02d}"
        schema, table = topic.topic.split(".")[-2:]
        captured = SourceTable(
            SourceEngine.POSTGRES, f"shop_{shard:02d}", schema, table, "db.internal", "5432",
            connector,
        )  # fmt: skip
        sink = SinkTable(f"lakehouse_{shard:02d}", topic.glue_table, SINK_CONNECTOR, "glue")
        columns = tuple(Column(c.name, c.postgres_type, c.nullable, None) for c in topic.columns)
        source_key, key = source_table_key(captured), topic_key(topic.topic)
        table_key = iceberg_table_key(sink.database, sink.table)
        lineage = TopicLineage(
            topic=topic.topic,
            kind=TopicKind.TABLE,
            sources=(SourceEdge(captured, "connector", "captured by its connector"),),
            source_connector=connector,
            sinks=(SinkEdge(sink, "connector", "routed by the sink's cdc.target.pattern"),),
            sink_connectors=(SINK_CONNECTOR,),
            origin="connector",
            ambiguous_reason=None,
            reason="Debezium's topic.prefix and the sink's routing",
        )
        graphs.append(
            TopicGraph(
                lineage,
                columns=columns,
                source_column_lineage={c.name: (ColumnDep(source_key, c.name),) for c in columns},
                table_column_lineage={
                    table_key: {c.name: (ColumnDep(key, c.name),) for c in columns}
                },
                owners=(f"team:team_{shard:02d}",),
                url=f"https://portal.example/assets/{index}",
                facts={"schema_version": "1", "data_format": "AVRO"},
            )
        )
    return PlatformGraphState("synthetic", "2026-12-07T00:00:00+00:00", platform_nodes(graphs, {}))


def _count_aws_calls() -> list[str]:
    """Every AWS operation this process calls from now on (a benchmark's counter, nothing more)."""
    from botocore.client import BaseClient

    calls: list[str] = []
    make_api_call = BaseClient._make_api_call

    def counted(client, operation_name, api_params):
        calls.append(operation_name)
        return make_api_call(client, operation_name, api_params)

    BaseClient._make_api_call = counted
    return calls


def peak_rss_mb() -> float:
    """This process's peak RSS since its exec (``VmHWM``; ``ru_maxrss`` would count what the
    parent held when it forked the child)."""
    status = Path("/proc/self/status").read_text()
    (line,) = [line for line in status.splitlines() if line.startswith("VmHWM:")]
    return int(line.split()[1]) / 1024


def load(state_path: Path, component_yaml: str, profile: bool) -> dict[str, object]:
    """The code location's load of the component from ``state_path``, stage by stage."""
    calls = _count_aws_calls()
    # CPU seconds per stage (the machine's other load barely moves them), wall seconds in all.
    seconds: dict[str, float] = {}
    wall = time.perf_counter()
    stage = time.process_time()
    from dagster import Definitions
    from dagster._core.remote_representation.external_data import RepositorySnap
    from dagster._serdes import serialize_value
    from dagster.components.core.component_tree import ComponentTree

    from dzlineage_dagster.components import PlatformGraphComponent
    from dzlineage_dagster.definitions import defs as sync_defs

    seconds["import"] = time.process_time() - stage
    profiler = cProfile.Profile() if profile else None
    if profiler:
        profiler.enable()
    stage = time.process_time()
    component = PlatformGraphComponent.resolve_from_yaml(component_yaml)
    built = component.build_defs_from_state(ComponentTree.for_test().load_context, state_path)
    seconds["read state + build specs"] = time.process_time() - stage
    stage = time.process_time()
    defs = Definitions.merge(sync_defs, built)
    Definitions.validate_loadable(defs)
    seconds["merge + validate_loadable"] = time.process_time() - stage
    stage = time.process_time()
    snapshot = serialize_value(RepositorySnap.from_def(defs.get_repository_def()))
    seconds["repository snapshot"] = time.process_time() - stage
    if profiler:
        profiler.disable()
    report: dict[str, object] = {
        "seconds": seconds,
        "wall": time.perf_counter() - wall,
        "specs": len(built.assets or ()),
        "drawn": sum(1 for spec in built.assets or () if spec.key.path[0] == "kafka"),
        "snapshot_mb": len(snapshot) / 1e6,
        "peak_mb": peak_rss_mb(),
        "aws_calls": len(calls),
    }
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
        report["profile"] = out.getvalue()
    return report


def measure(count: int, yamls: list[str], profile: bool = False) -> list[dict[str, object]]:
    """Write the state of ``count`` topics (in a child: this process stays small) and load it
    in a fresh child process once per component YAML."""
    results = []
    with tempfile.TemporaryDirectory(prefix="dzlineage-graph-") as directory:
        state_path = Path(directory) / "state"
        subprocess.run([*CHILD, "--write-state", str(count), str(state_path)], check=True)
        state_mb = state_path.stat().st_size / 1e6
        for component_yaml in yamls:
            child = subprocess.run(
                [*CHILD, "--child", str(state_path)],
                input=json.dumps({"yaml": component_yaml, "profile": profile}),
                stdout=subprocess.PIPE, text=True, check=True,
            )  # fmt: skip
            results.append({"topics": count, "state_mb": state_mb, **json.loads(child.stdout)})
            # One JSON line per load as it is measured: a long run keeps what it measured.
            print(json.dumps({k: v for k, v in results[-1].items() if k != "profile"}), flush=True)
    return results


def table(results: list[dict[str, object]]) -> str:
    stages = list(results[0]["seconds"])
    rows = [
        ("topics on the platform", [f"{r['topics']:,}" for r in results]),
        ("topics drawn", [f"{r['drawn']:,}" for r in results]),
        ("specs", [f"{r['specs']:,}" for r in results]),
        ("state file (MB)", [f"{r['state_mb']:.0f}" for r in results]),
        *((f"{s} (CPU s)", [f"{r['seconds'][s]:.1f}" for r in results]) for s in stages),
        ("load in all (CPU s)", [f"{sum(r['seconds'].values()):.1f}" for r in results]),
        ("load in all (wall s)", [f"{r['wall']:.1f}" for r in results]),
        ("snapshot to the UI (MB)", [f"{r['snapshot_mb']:.0f}" for r in results]),
        ("peak RSS (MB)", [f"{r['peak_mb']:.0f}" for r in results]),
        ("AWS calls", [str(r["aws_calls"]) for r in results]),
    ]
    width = max(len(name) for name, _ in rows)
    lines = [
        f"| {name.ljust(width)} | " + " | ".join(v.rjust(9) for v in values) + " |"
        for name, values in rows
    ]
    lines.insert(1, f"|{'-' * (width + 2)}|" + "|".join("-" * 10 + ":" for _ in results) + "|")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("topics", type=int, nargs="*", default=SIZES)
    parser.add_argument(
        "--yaml", default=UNLIMITED, help="the component's attributes (default: no max_topics)"
    )
    parser.add_argument(
        "--limited",
        default="settings: {}",
        help="attributes measured too where the state has more than the default max_topics",
    )
    parser.add_argument("--profile", type=int, help="print the load's cProfile at N topics")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--write-state", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        given = json.load(sys.stdin)
        print(json.dumps(load(args.child, given["yaml"], given["profile"])))
        return 0
    if args.write_state:
        count, path = args.write_state
        Path(path).write_text(synthetic_state(int(count)).to_json(), encoding="utf-8")
        return 0
    if args.profile:
        print(measure(args.profile, [args.yaml], profile=True)[0]["profile"])
    results = []
    for count in args.topics:
        # The default limit changes nothing below it: measured where it draws fewer topics.
        limited = [args.limited] if args.limited and count > DEFAULT_MAX_TOPICS else []
        results += measure(count, [args.yaml, *limited])
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
