"""The platform graph component on the seeded demo: its state is written from the sandbox with
the sync's own lookups, its specs draw every edge the sync posts to DataZone, a re-routed sink
changes the graph once the state is refreshed, and the staleness check says when it is due."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from dagster import (
    AssetCheckKey,
    AssetKey,
    AssetSelection,
    DagsterInstance,
    Definitions,
    TableColumnDep,
    build_sensor_context,
    define_asset_job,
)
from dagster.components.core.component_tree import ComponentTree
from dagster.components.utils.project_paths import get_local_state_path

import dzlineage_dagster
from benchmarks.bench_platform_graph import synthetic_state
from benchmarks.synthetic_platform import synthetic_topics
from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.components import PlatformGraphComponent
from dzlineage_dagster.components.platform_graph import (
    DEFAULT_STATE_KEY,
    SETTING_VARIABLES,
    TRUNCATION_NOTE_KEY,
)
from dzlineage_dagster.core.lineage.platform_graph import PlatformGraphState
from dzlineage_dagster.definitions import defs as sync_defs
from dzlineage_dagster.sensors import connector_config_sensor, platform_graph_staleness
from dzlineage_dagster.settings import InvalidSettings, MissingSettings
from dzlineage_dagster.sync.lineage.platform_graph import live_digest
from dzlineage_dagster_tests.test_connector_lineage import create_connector, posted_events
from dzlineage_dagster_tests.test_lineage_truth import SINK, TOPIC, delete_archive_sink

GRAPH_KINDS = ("source", "kafka", "iceberg")
CHECK = AssetCheckKey(AssetKey("connector_topology"), "platform_graph_is_current")


def component_for(environment: dict[str, str]) -> PlatformGraphComponent:
    return PlatformGraphComponent(
        settings={k: v for k, v in environment.items() if k.startswith("DZLINEAGE_")}
    )


def graph_defs(component: PlatformGraphComponent, state_path: Path) -> Definitions:
    """The component's definitions from a freshly written state, merged with the sync's (whose
    connector_topology the staleness check is on)."""
    component.write_state_to_path(state_path)
    built = component.build_defs_from_state(ComponentTree.for_test().load_context, state_path)
    return Definitions.merge(sync_defs, built)


def connector_sensor_tick(defs: Definitions, instance):
    """The connector sensor's tick in the code location ``defs`` once it has recorded the
    connectors as they are (its first tick records them and has them observed)."""
    cursor = None
    for _ in range(2):
        with build_sensor_context(
            instance=instance, definitions=defs, resources=defs.resources, cursor=cursor
        ) as context:
            result = connector_config_sensor(context)
        cursor = result.cursor
    return result


def dataset_name(key: AssetKey) -> str:
    """The OpenLineage dataset name the sync posts for the node (Debezium's naming, and the
    Glue form whose `<namespace>/<name>` is the table's ARN: docs/lineage-nodes.md)."""
    kind, *rest = key.path
    if kind == "source":
        return ".".join(rest[1:])
    if kind == "kafka":
        return rest[0]
    assert kind == "iceberg", key
    return f"{rest[0]}/{rest[1]}"


def graph_edges(defs: Definitions) -> set[tuple[str, str]]:
    graph = defs.resolve_asset_graph()
    return {
        (dataset_name(parent), dataset_name(key))
        for key in graph.get_all_asset_keys()
        if key.path[0] in GRAPH_KINDS
        for parent in graph.get(key).parent_keys
    }


def posted_edges(platform) -> set[tuple[str, str]]:
    return {
        (given["name"], made["name"])
        for event in posted_events(platform)
        for given in event["inputs"]
        for made in event["outputs"]
    }


def check_passed(defs: Definitions, instance) -> bool:
    job = define_asset_job("staleness", selection=AssetSelection.checks(CHECK))
    result = (
        Definitions.merge(defs, Definitions(jobs=[job]))
        .resolve_job_def("staleness")
        .execute_in_process(instance=instance)
    )
    (evaluation,) = result.get_asset_check_evaluations()
    return evaluation.passed


@pytest.fixture
def synced(platform, capsys):
    assert dzlineage(["sync"]) == 0
    capsys.readouterr()
    return platform


def test_the_graph_draws_every_edge_the_sync_posts_with_columns_owners_and_links(synced, tmp_path):
    defs = graph_defs(component_for(synced.environment), tmp_path / "state")
    Definitions.validate_loadable(defs)
    assert graph_edges(defs) == posted_edges(synced)
    # The demo's merged topic: both shards upstream, the archive sink's table downstream.
    graph = defs.resolve_asset_graph()
    archive = AssetKey(["kafka", TOPIC])
    assert graph.get(archive).parent_keys == {
        AssetKey(["source", "postgres", "shop", "sales", f"orders_archive_{year}"])
        for year in (2025, 2026)
    }
    assert graph.get(archive).child_keys == {AssetKey(["iceberg", "lakehouse", "orders_history"])}

    specs = {spec.key: spec for spec in defs.resolve_all_asset_specs()}
    table = specs[AssetKey(["iceberg", "lakehouse", "sales_orders"])]
    topic = specs[AssetKey(["kafka", "shop.sales.orders"])]
    source = specs[AssetKey(["source", "postgres", "shop", "sales", "orders"])]
    assert table.kinds == {"iceberg", "glue"} and topic.kinds == {"kafka"}
    assert source.kinds == {"postgres"}
    assert source.group_name == topic.group_name == "shop_debezium_source"
    assert table.group_name == "lakehouse"
    # The Iceberg table's columns as Glue holds them (with the sink's `_cdc`), each written
    # from the topic's column of its name, which the source table's column feeds.
    columns = [c.name for c in table.metadata["dagster/column_schema"].columns]
    assert columns == ["id", "customer_id", "order_date", "status", "total", "_cdc"]
    lineage = table.metadata["dagster/column_lineage"].deps_by_column
    assert lineage["total"] == [TableColumnDep(topic.key, "total")]
    assert "_cdc" not in lineage
    topic_lineage = topic.metadata["dagster/column_lineage"].deps_by_column
    assert topic_lineage["total"] == [TableColumnDep(source.key, "total")]
    # Owners: the DataZone project owning the topic's asset; its link: that asset's page.
    project = synced.client("datazone").get_project(
        domainIdentifier=synced.settings.domain_id, identifier=synced.settings.project_id
    )
    assert topic.owners == [f"team:{project['name']}"]
    url = topic.metadata["datazone_asset_url"].url
    assert url.endswith("/" + datazone_asset_id(synced, "shop.sales.orders"))


def datazone_asset_id(platform, topic: str) -> str:
    (item,) = [
        item["assetItem"]
        for page in platform.client("datazone")
        .get_paginator("search")
        .paginate(domainIdentifier=platform.settings.domain_id, searchScope="ASSET")
        for item in page["items"]
        if item.get("assetItem", {}).get("externalIdentifier") == platform.schema_arn(topic)
    ]
    return item["identifier"]


def test_a_re_routed_sink_changes_the_graph_once_refreshed_and_the_check_says_when(
    platform, tmp_path
):
    component = component_for(platform.environment)
    state = tmp_path / "state"
    before = graph_defs(component, state)
    archive, old, new = (
        AssetKey(["kafka", TOPIC]),
        AssetKey(["iceberg", "lakehouse", "orders_history"]),
        AssetKey(["iceberg", "lakehouse", "orders_history_v2"]),
    )
    assert before.resolve_asset_graph().get(archive).child_keys == {old}
    assert check_passed(before, platform.instance)

    platform.client("glue").create_table(
        DatabaseName="lakehouse", TableInput={"Name": "orders_history_v2"}
    )
    config = delete_archive_sink(platform)
    create_connector(platform, SINK, {**config, "iceberg.tables": "lakehouse.orders_history_v2"})
    assert not check_passed(before, platform.instance)

    # The connector sensor, which reads only the connectors, says so too.
    assert "platform graph in Dagster's asset graph was drawn from other" in (
        connector_sensor_tick(before, platform.instance).skip_reason.skip_message
    )

    after = graph_defs(component, state)
    graph = after.resolve_asset_graph()
    assert graph.get(archive).child_keys == {new}
    assert old not in graph.get_all_asset_keys()
    assert check_passed(after, platform.instance)
    assert connector_sensor_tick(after, platform.instance).skip_reason.skip_message == (
        "no connector configuration changed"
    )


def test_a_new_schema_version_makes_the_state_stale(platform, tmp_path):
    component = component_for(platform.environment)
    defs = graph_defs(component, tmp_path / "state")
    platform.register_new_version("shop.sales.orders", "coupon")
    assert not check_passed(defs, platform.instance)
    refreshed = graph_defs(component, tmp_path / "state")
    assert check_passed(refreshed, platform.instance)
    topic = refreshed.resolve_assets_def(AssetKey(["kafka", "shop.sales.orders"])).specs_by_key
    columns = topic[AssetKey(["kafka", "shop.sales.orders"])].metadata["dagster/column_schema"]
    assert "coupon" in [c.name for c in columns.columns]


def test_without_state_the_graph_is_empty_and_the_check_says_to_refresh(platform):
    built = component_for(platform.environment).build_defs_from_state(
        ComponentTree.for_test().load_context, None
    )
    defs = Definitions.merge(sync_defs, built)
    assert not [k for k in defs.resolve_all_asset_keys() if k.path[0] == "kafka"]
    assert not check_passed(defs, platform.instance)


def test_the_project_s_defs_yaml_reads_the_sync_s_settings_from_the_environment(platform):
    tree = ComponentTree.for_project(Path(dzlineage_dagster.__file__).parent)
    component = tree.load_component("platform_graph", expected_type=PlatformGraphComponent)
    given = {name: value for name, value in component.settings.items() if value}
    assert given == {k: v for k, v in os.environ.items() if k in component.settings and v}
    assert given["DZLINEAGE_DOMAIN_ID"] == platform.settings.domain_id
    assert component.sync_run().settings == platform.settings
    # Every setting the sync reads, both sides' roles included: a deployment configures the
    # graph exactly as it configures the sync.
    assert set(component.settings) == SETTING_VARIABLES


def test_yaml_s_translation_changes_every_node_s_spec_with_the_node_at_hand(synced, tmp_path):
    component = PlatformGraphComponent.resolve_from_yaml(
        """
settings: {}
translation:
  group_name: "cdc_{{ data.kind }}"
  tags:
    platform: cdc
"""
    )
    component.settings = component_for(synced.environment).settings
    defs = graph_defs(component, tmp_path / "state")
    specs = {spec.key: spec for spec in defs.resolve_all_asset_specs()}
    table = specs[AssetKey(["iceberg", "lakehouse", "sales_orders"])]
    topic = specs[AssetKey(["kafka", "shop.sales.orders"])]
    assert (table.group_name, topic.group_name) == ("cdc_iceberg_table", "cdc_topic")
    assert table.tags["platform"] == topic.tags["platform"] == "cdc"
    # What the translation leaves alone is the default spec's: the graph's edges stay.
    assert graph_edges(defs) == posted_edges(synced)


def test_a_setting_the_sync_does_not_know_or_one_missing_is_named():
    with pytest.raises(InvalidSettings, match="DZLINEAGE_DOMAIN: not a dzlineage setting"):
        PlatformGraphComponent(settings={"DZLINEAGE_DOMAIN": "dzd_x"}).sync_run()
    with pytest.raises(MissingSettings, match="DZLINEAGE_MSK_CLUSTER_ARN"):
        PlatformGraphComponent(settings={"DZLINEAGE_DOMAIN_ID": None}).sync_run()


def test_dg_refreshes_the_state_and_lists_the_graph_beside_the_sync_s_assets(platform, tmp_path):
    root = Path(dzlineage_dagster.__file__).resolve().parent.parent
    dg = Path(sys.executable).with_name("dg")
    environment = {**os.environ, "DAGSTER_HOME": str(tmp_path), "PYTHONPATH": str(root)}
    refreshed = subprocess.run(
        [str(dg), "utils", "refresh-defs-state"],
        cwd=root, env=environment, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert refreshed.returncode == 0, refreshed.stdout + refreshed.stderr
    # Written from this sandbox's platform: its digest is the live one.
    state_file = get_local_state_path(DEFAULT_STATE_KEY, root)
    state = PlatformGraphState.from_json(state_file.read_text())
    assert state.digest == live_digest(component_for(platform.environment).sync_run())
    listed = subprocess.run(
        [str(dg), "list", "defs", "--json"],
        cwd=root, env=environment, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    keys = {asset["asset_key"] for asset in json.loads(listed.stdout)["assets"]}
    assert {
        "connector_topology",
        "kafka/shop.sales.orders",
        "iceberg/lakehouse/sales_orders",
    } <= keys


def test_yaml_scopes_a_large_graph_and_its_limit_says_what_it_left_out(tmp_path, caplog):
    state = tmp_path / "state"
    state.write_text(synthetic_state(60, connectors=3).to_json())
    component = PlatformGraphComponent.resolve_from_yaml(
        """
settings: {}
connectors: [shop-debezium-source-01]
databases: [lakehouse_01]
topic_prefixes: [shop.sales.]
max_topics: 4
"""
    )
    with caplog.at_level("WARNING", logger="dzlineage.platform_graph"):
        defs = component.build_defs_from_state(ComponentTree.for_test().load_context, state)
    Definitions.validate_loadable(defs)
    note = defs.resolve_assets_def(TRUNCATION_NOTE_KEY).specs_by_key[TRUNCATION_NOTE_KEY]
    specs = {spec.key: spec for spec in graph_specs(defs)}
    topics = sorted(key.path[1] for key in specs if key.path[0] == "kafka")
    # Connector 01's topics (every third) named shop.sales.*: the first 4 by name, each with its
    # source and Iceberg table.
    names = [t.topic for t in synthetic_topics(60)]
    in_scope = sorted(name for name in names[1::3] if name.startswith("shop.sales."))
    assert topics == in_scope[:4]
    assert len(specs) == 3 * 4
    assert {spec.group_name for spec in specs.values()} == {
        "shop_debezium_source_01",
        "lakehouse_01",
    }
    message = (
        f"the platform graph draws 4 of the {len(in_scope)} topics in its scope "
        "(60 on the platform)"
    )
    assert message in note.description and message in caplog.text
    assert note.metadata["first_topic_not_drawn"] == in_scope[4]
    # Unscoped under the limit: every node of the state, and no note.
    unscoped = PlatformGraphComponent().build_defs_from_state(
        ComponentTree.for_test().load_context, state
    )
    assert len(graph_specs(unscoped)) == 3 * 60
    assert TRUNCATION_NOTE_KEY not in unscoped.resolve_all_asset_keys()
    # Without column metadata: the same nodes and edges, no columns or column lineage.
    full = {spec.key: spec for spec in graph_specs(unscoped)}
    bare = PlatformGraphComponent.resolve_from_yaml(
        "settings: {}\ncolumn_metadata: false"
    ).build_defs_from_state(ComponentTree.for_test().load_context, state)
    for spec in graph_specs(bare):
        assert spec.deps == full[spec.key].deps and spec.owners == full[spec.key].owners
        assert set(full[spec.key].metadata) - set(spec.metadata) == {
            "dagster/column_schema",
            "dagster/column_lineage",
        } - ({"dagster/column_lineage"} if spec.key.path[0] == "source" else set())
    assert len(graph_specs(bare)) == len(full)


def graph_specs(defs: Definitions) -> list:
    """The specs of the platform's nodes (not the staleness check's asset, nor the note)."""
    return [s for s in defs.resolve_all_asset_specs() if s.key.path[0] in GRAPH_KINDS]


def test_a_bad_topic_pattern_or_limit_in_yaml_is_named():
    with pytest.raises(ValueError, match=r"topic_pattern 'shop\.\(' is not a regular expression"):
        PlatformGraphComponent.resolve_from_yaml("settings: {}\ntopic_pattern: 'shop.('")
    with pytest.raises(ValueError, match="max_topics must be at least 1"):
        PlatformGraphComponent.resolve_from_yaml("settings: {}\nmax_topics: 0")


def test_each_scope_draws_its_own_graph_keyed_below_its_name(synced, tmp_path):
    """Two components, one per scope of DZLINEAGE_SCOPES: the first scope's nodes keep their
    keys, the named scope's are keyed below its name with its own staleness check, so two
    scopes' topics of one name are two nodes. (Both scopes name the demo's registry here: what
    differs is the keys.)"""
    settings = synced.settings
    scopes = (
        "scopes:\n"
        f"  - {{name: shop, registry_name: {settings.registry_name}}}\n"
        f"  - {{name: shop_copy, registry_name: {settings.registry_name}}}\n"
    )
    environment = {**synced.environment, "DZLINEAGE_SCOPES": scopes}
    first = graph_defs(component_for(environment), tmp_path / "first")
    named = PlatformGraphComponent(
        settings=component_for(environment).settings, registry_scope="shop_copy"
    )
    assert named.defs_state_config.key != component_for(environment).defs_state_config.key
    second = graph_defs(named, tmp_path / "second")
    first_keys = {spec.key for spec in first.resolve_all_asset_specs()}
    second_keys = {spec.key for spec in second.resolve_all_asset_specs()} - first_keys
    assert AssetKey(["kafka", "shop.sales.orders"]) in first_keys
    assert AssetKey(["shop_copy", "kafka", "shop.sales.orders"]) in second_keys
    topic = next(s for s in second.resolve_all_asset_specs() if s.key.path[-1] == TOPIC)
    assert topic.key.path[0] == "shop_copy"
    assert all(dep.asset_key.path[0] == "shop_copy" for dep in topic.deps)
    check_names = {key.name for key in second.resolve_asset_graph().asset_check_keys}
    assert "platform_graph_is_current__shop_copy" in check_names
    # Each scope's connector sensor compares its own connectors with its own scope's graph.
    with build_sensor_context(instance=DagsterInstance.ephemeral(), definitions=second) as context:
        assert "drawn from other connector" in platform_graph_staleness(
            context, "connectors as they are now", "shop_copy"
        )
        assert platform_graph_staleness(context, "connectors as they are now", "shop") == ""
    with build_sensor_context(instance=DagsterInstance.ephemeral(), definitions=first) as context:
        assert "drawn from other connector" in platform_graph_staleness(
            context, "connectors as they are now", "shop"
        )

    with pytest.raises(InvalidSettings, match=r"'nope' is no scope of DZLINEAGE_SCOPES.*shop"):
        PlatformGraphComponent(
            settings=component_for(environment).settings, registry_scope="nope"
        ).sync_run()


def test_defs_yaml_passes_one_line_json_scopes_and_a_zero_on_as_text(monkeypatch):
    """defs.yaml's `{{ env.X }}` renders a value as the YAML it reads as: the sandbox's one
    line of JSON DZLINEAGE_SCOPES arrived as a mapping (the code location failed to load:
    'dict' object has no attribute 'strip'), and a 0 as a falsy number, dropped as unset."""
    cluster = "arn:aws:kafka:us-east-1:111111111111:cluster/cdc/0a1b2c3d-1"
    scopes = {
        "scopes": [
            {"name": "shop", "registry_name": "shop-cdc", "msk_cluster_arn": cluster},
            {"name": "billing", "registry_name": "billing-cdc", "msk_cluster_arn": cluster},
        ]
    }
    monkeypatch.setenv("DZLINEAGE_SCOPES", json.dumps(scopes))
    monkeypatch.setenv("DZLINEAGE_LINEAGE_READBACK_WAIT_SECONDS", "0")
    tree = ComponentTree.for_project(Path(dzlineage_dagster.__file__).parent)
    component = tree.load_component("platform_graph", expected_type=PlatformGraphComponent)
    assert component.drawn_scope == "shop"
    assert json.loads(component.environ["DZLINEAGE_SCOPES"]) == scopes
    assert component.environ["DZLINEAGE_LINEAGE_READBACK_WAIT_SECONDS"] == "0"
