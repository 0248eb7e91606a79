"""The README's main job, seen by a newcomer: `dzlineage demo`, then the Dagster UI in Chromium.

The expected topics and DataZone assets come from the demo's sandbox itself (through boto3),
not from the project's code, so the UI is checked against what AWS would hold.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, expect, sync_playwright
from playwright.sync_api import Error as PlaywrightError

from dzlineage_dagster.sandbox.demo.seed import load_platform_spec
from dzlineage_dagster_tests.clients import sandbox_client
from dzlineage_dagster_tests.ui_process import (
    PARTITIONED_ASSETS,
    PER_TOPIC_CHECK,
    UI_STATE_QUERY,
    UI_STATE_VARIABLES,
    DemoProcess,
    graphql,
    running_demo,
    untruthful_ui,
    wait_for_sensor_runs,
)

pytestmark = pytest.mark.browser

SENSOR = "registry_schema_sensor"
SYNC_JOB = "catalog_sync"
CHECKS_SENSOR = "catalog_checks_after_first_sync"
#: From `dzlineage demo` starting to the sensor's run having finished. The daemon evaluates the
#: sensor on start and then every 30 s; an idle 2-core machine needs about 40 s, a busy one 150.
#: These waits guard against a hang only (several times what a loaded machine needs): the test
#: asserts what the UI shows, never how soon; the demo's speed is the benchmarks' to measure.
DEMO_SYNCED_WITHIN_S = 900
#: ... and to the catalog checks the first sync sets off having run (the sensor's next tick,
#: within 30 s, then a run of one process).
DEMO_CHECKED_WITHIN_S = DEMO_SYNCED_WITHIN_S + 300
DEMO_STARTUP_TIMEOUT_S = 300
UI_TIMEOUT_MS = 90_000
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: The sync's own assets among the platform graph's many (the catalog renders only the rows in
#: view, the global lineage collapses groups once there are several).
SYNC_GROUP = 'group:"datazone_lineage"'
SYNC_GROUP_SELECTION = urllib.parse.urlencode({"asset-selection": SYNC_GROUP})
#: The demo's team asset downstream of a CDC Iceberg table (its second code location).
DOWNSTREAM_ASSET = "daily_revenue"
ASSET_EDGES_QUERY = "{ assetNodes { assetKey { path } dependencyKeys { path } } }"
#: The demo's deliberate faults (the README's "What the demo's checks show").
DELIBERATE_FAULTS = {
    "every_table_topic_has_a_sink",
    "connector_mapping_matches_convention",
    "every_iceberg_table_is_fed_by_a_topic",
}
#: The README's default DZLINEAGE_ASSET_URL_TEMPLATE.
ASSET_URL_TEMPLATE = "{portal_url}/projects/{project_id}/data/inventory/{asset_id}"


@pytest.fixture
def chromium_executable() -> str:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium:
        return chromium
    reason = "no chromium or chromium-browser on PATH (scripts/ensure-chromium installs it)"
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the browser test: {reason}")
    pytest.skip(reason)


@pytest.fixture
def browser(chromium_executable: str) -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_executable, args=CHROMIUM_ARGS, timeout=60_000
        )
        yield browser
        browser.close()


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[DemoProcess]:
    with running_demo(tmp_path, startup_timeout=DEMO_STARTUP_TIMEOUT_S) as demo:
        yield demo
    leftovers = demo.leftover_processes()
    assert not leftovers, "dzlineage demo left processes behind:\n" + "\n".join(leftovers)
    assert demo.stopped_by_sigterm, "SIGTERM to dzlineage demo did not stop its Dagster tree"


class Screenshots:
    def __init__(self, page: Page, directory: Path) -> None:
        self.page = page
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.count = 0

    def take(self, name: str) -> None:
        self.count += 1
        self.page.screenshot(path=self.directory / f"{self.count:02d}-{name}.png", full_page=True)


def registry_schema_arns(environment: dict[str, str]) -> dict[str, str]:
    """Topic -> schema ARN of every schema in the demo's registry."""
    pages = (
        sandbox_client(environment, "glue")
        .get_paginator("list_schemas")
        .paginate(RegistryId={"RegistryName": environment["DZLINEAGE_REGISTRY_NAME"]})
    )
    return {s["SchemaName"]: s["SchemaArn"] for page in pages for s in page["Schemas"]}


def datazone_asset_id(environment: dict[str, str], schema_arn: str) -> str:
    """The id of the project's DataZone asset whose externalIdentifier is the schema ARN."""
    datazone = sandbox_client(environment, "datazone")
    pages = datazone.get_paginator("search").paginate(
        domainIdentifier=environment["DZLINEAGE_DOMAIN_ID"],
        owningProjectIdentifier=environment["DZLINEAGE_PROJECT_ID"],
        searchScope="ASSET",
    )
    ids = [
        item["assetItem"]["identifier"]
        for page in pages
        for item in page["items"]
        if item.get("assetItem", {}).get("externalIdentifier") == schema_arn
    ]
    assert len(ids) == 1, f"expected one DataZone asset for {schema_arn}, found {ids}"
    return ids[0]


def datazone_asset_url(environment: dict[str, str], asset_id: str) -> str:
    datazone = sandbox_client(environment, "datazone")
    portal_url = datazone.get_domain(identifier=environment["DZLINEAGE_DOMAIN_ID"])["portalUrl"]
    return ASSET_URL_TEMPLATE.format(
        portal_url=portal_url.rstrip("/"),
        project_id=environment["DZLINEAGE_PROJECT_ID"],
        asset_id=asset_id,
    )


def open_ui_page(page: Page, demo: DemoProcess, path: str) -> None:
    page.goto(f"{demo.ui_url}{path}", wait_until="domcontentloaded", timeout=UI_TIMEOUT_MS)


def visible_text(page: Page, text: str) -> Locator:
    return page.get_by_text(text, exact=True).filter(visible=True).first


def check_partitioned_assets_listed(page: Page, demo: DemoProcess, shots: Screenshots) -> None:
    open_ui_page(page, demo, f"/assets?{SYNC_GROUP_SELECTION}")
    for asset in PARTITIONED_ASSETS:
        expect(page.locator(f'a[href="/assets/{asset}"]')).to_be_visible(timeout=UI_TIMEOUT_MS)
    shots.take("assets")
    open_ui_page(page, demo, f"/asset-groups~{urllib.parse.quote(SYNC_GROUP)}")
    for asset in PARTITIONED_ASSETS:
        expect(visible_text(page, asset)).to_be_visible(timeout=UI_TIMEOUT_MS)
    shots.take("asset-graph")


def check_topics_are_partitions(
    page: Page, demo: DemoProcess, shots: Screenshots, topics: list[str]
) -> None:
    open_ui_page(page, demo, f"/assets?{SYNC_GROUP_SELECTION}")
    # Each of the three partitioned assets counts one partition per topic.
    expect(page.get_by_text(f"{len(topics)} partitions", exact=True)).to_have_count(
        len(PARTITIONED_ASSETS), timeout=UI_TIMEOUT_MS
    )
    open_ui_page(page, demo, "/assets/registry_schema?view=partitions")
    for topic in topics:
        expect(visible_text(page, topic)).to_be_visible(timeout=UI_TIMEOUT_MS)
    shots.take("registry_schema-partitions")


def check_partition_shows_datazone_asset(
    page: Page,
    demo: DemoProcess,
    shots: Screenshots,
    topic: str,
    asset_id: str,
    asset_url: str,
) -> None:
    query = urllib.parse.urlencode({"view": "partitions", "partition": topic})
    open_ui_page(page, demo, f"/assets/datazone_topic_asset?{query}")
    id_row = page.get_by_role("row").filter(has_text="datazone_asset_id")
    expect(id_row).to_contain_text(asset_id, timeout=UI_TIMEOUT_MS)
    link = page.get_by_role("link", name=asset_url, exact=True)
    expect(link).to_have_attribute("href", asset_url, timeout=UI_TIMEOUT_MS)
    shots.take(f"datazone_topic_asset-{topic}")


def expected_platform_edges() -> set[tuple[str, str]]:
    """source table -> topic -> Iceberg table, from the demo's platform file: the connector's
    database, each captured table's topic, each Glue table's topic (docs/dagster-graph.md's
    key scheme)."""
    spec = load_platform_spec()
    database = spec.source_connector.config["database.dbname"]
    edges = {
        (f"source/postgres/{database}/{table.schema}/{table.table}", f"kafka/{spec.topic(table)}")
        for table in spec.source_tables
    }
    edges |= {
        (f"kafka/{table.from_topic}", f"iceberg/{spec.catalog['database']}/{table.name}")
        for table in spec.glue_tables
        if table.from_topic
    }
    return edges


def check_platform_graph(page: Page, demo: DemoProcess, shots: Screenshots) -> None:
    """The asset graph draws every platform edge, and the team's asset downstream of one."""
    nodes = graphql(demo.ui_url, ASSET_EDGES_QUERY)["assetNodes"]
    graph_edges = {
        ("/".join(dep["path"]), "/".join(node["assetKey"]["path"]))
        for node in nodes
        for dep in node["dependencyKeys"]
    }
    missing = expected_platform_edges() - graph_edges
    assert not missing, f"the asset graph lacks the platform edges {sorted(missing)}"
    table = ["iceberg", "lakehouse", "sales_orders"]
    assert ("/".join(table), DOWNSTREAM_ASSET) in graph_edges
    query = urllib.parse.urlencode(
        {"view": "lineage", "lineageScope": "neighbors", "lineageDepth": 2}
    )
    open_ui_page(page, demo, f"/assets/{'/'.join(table)}?{query}")
    for label in ("orders", "shop.sales.orders", "sales_orders", DOWNSTREAM_ASSET):
        expect(visible_text(page, label)).to_be_visible(timeout=UI_TIMEOUT_MS)
    shots.take("platform-graph-lineage")


def check_nothing_unsynced_and_every_red_explained(
    page: Page, demo: DemoProcess, shots: Screenshots
) -> None:
    """After the first sync and the checks it sets off: no partition reads "Unsynced", and
    every check that did not pass is one of the demo's deliberate faults and says why and what
    to do on its page."""
    state = graphql(demo.ui_url, UI_STATE_QUERY, UI_STATE_VARIABLES)
    assert untruthful_ui(state, DELIBERATE_FAULTS) == []
    failing = {
        check["name"]
        for node in state["nodes"]
        for check in node["assetChecksOrError"].get("checks", [])
        if check["name"] != PER_TOPIC_CHECK
        and not check["executionForLatestMaterialization"]["evaluation"]["success"]
    }
    assert failing == DELIBERATE_FAULTS, sorted(failing)
    open_ui_page(page, demo, "/assets/connector_topology?view=checks")
    expect(visible_text(page, "every_table_topic_has_a_sink")).to_be_visible(timeout=UI_TIMEOUT_MS)
    shots.take("connector_topology-checks")


def test_demo_ui_shows_every_topic_synced_into_datazone(
    browser: Browser, demo: DemoProcess, tmp_path: Path
) -> None:
    environment = demo.environment()
    schema_arns = registry_schema_arns(environment)
    spec = load_platform_spec()
    table_topic = spec.topic(spec.source_tables[0])
    assert table_topic in schema_arns, f"{table_topic} not in the demo registry {schema_arns}"

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    # Dagster's first-visit "Join the community" dialog would cover the page.
    context.add_init_script("window.localStorage.setItem('communityNux', '\"1\"')")
    page = context.new_page()
    page.set_default_timeout(UI_TIMEOUT_MS)
    shots = Screenshots(page, tmp_path / "screenshots")
    try:
        check_partitioned_assets_listed(page, demo, shots)
        check_platform_graph(page, demo, shots)

        runs = wait_for_sensor_runs(
            demo.ui_url, SENSOR, timeout=demo.seconds_left(DEMO_SYNCED_WITHIN_S)
        )
        unsuccessful = [r for r in runs if (r["jobName"], r["status"]) != (SYNC_JOB, "SUCCESS")]
        assert not unsuccessful, f"{SENSOR} launched runs that did not succeed: {unsuccessful}"

        check_topics_are_partitions(page, demo, shots, sorted(schema_arns))
        asset_id = datazone_asset_id(environment, schema_arns[table_topic])
        asset_url = datazone_asset_url(environment, asset_id)
        check_partition_shows_datazone_asset(page, demo, shots, table_topic, asset_id, asset_url)

        checked = wait_for_sensor_runs(
            demo.ui_url, CHECKS_SENSOR, timeout=demo.seconds_left(DEMO_CHECKED_WITHIN_S)
        )
        assert [(r["jobName"], r["status"]) for r in checked] == [("catalog_checks", "SUCCESS")]
        check_nothing_unsynced_and_every_red_explained(page, demo, shots)
    except (AssertionError, PlaywrightError, TimeoutError) as error:
        with contextlib.suppress(PlaywrightError):
            shots.take("failure")
        pytest.fail(
            f"{error}\n\nscreenshots: {shots.directory}\ndzlineage demo output: {demo.log_path}"
        )
    finally:
        context.close()
