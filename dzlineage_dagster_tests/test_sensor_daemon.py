"""The registry sensor as the Dagster daemon runs it: ticks, run-key de-duplication, launched runs.

Calling the sensor function skips what a deployment relies on: the daemon drops a RunRequest
whose run_key an earlier tick already used, keeps the cursor between ticks and launches the
runs. Here Dagster's own sensor loop (``execute_sensor_iteration``, as its daemon tests drive it)
evaluates the sensor against a real instance whose run launcher executes each run in process.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pytest
from dagster import DagsterInstance, DagsterRunStatus, RunsFilter
from dagster._core.remote_origin import InProcessCodeLocationOrigin
from dagster._core.scheduler.instigation import TickStatus
from dagster._core.test_utils import (
    InProcessTestWorkspaceLoadTarget,
    create_test_daemon_workspace_context,
    freeze_time,
    instance_for_test,
)
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._daemon.sensor import execute_sensor_iteration
from dagster_graphql.test.utils import execute_dagster_graphql

from dzlineage_dagster_tests.platform import fresh_platform
from dzlineage_dagster_tests.ui_process import UI_STATE_QUERY, UI_STATE_VARIABLES, untruthful_ui

SENSOR = "registry_schema_sensor"
RUN_RANGE_START = "dagster/asset_partition_range_start"
RUN_RANGE_END = "dagster/asset_partition_range_end"
#: The seeded demo platform's registry, sorted as the sensor orders new partitions.
DEMO_TOPICS = [
    "__debezium-heartbeat.shop",
    "shop.archive.orders",
    "shop.inventory.customers",
    "shop.inventory.products",
    "shop.inventory.stock_levels",
    "shop.sales.order_lines",
    "shop.sales.orders",
    "shop.sales.payments",
]


@dataclass
class SensorDaemon:
    """One code location loaded in process, and the daemon's sensor loop over it."""

    instance: DagsterInstance
    context: object
    now: datetime

    def tick(self):
        """One daemon iteration, a minute after the last (the sensor's minimum interval)."""
        self.now += timedelta(seconds=61)
        with freeze_time(self.now):
            list(
                execute_sensor_iteration(
                    self.context,
                    logging.getLogger("sensor-daemon-test"),
                    threadpool_executor=None,
                    submit_threadpool_executor=None,
                )
            )
        return self.ticks()[0]

    def ticks(self):
        """The sensor's ticks, newest first."""
        location = next(iter(self.context.create_request_context().get_code_location_entries()))
        repository = (
            self.context.create_request_context()
            .get_code_location(location)
            .get_repository("__repository__")
        )
        sensor = repository.get_sensor(SENSOR)
        return self.instance.get_ticks(sensor.get_remote_origin_id(), sensor.selector_id)

    def runs(self, sensor: str = SENSOR):
        """Every run the sensor launched, oldest first."""
        return list(
            reversed(self.instance.get_runs(RunsFilter(tags={"dagster/sensor_name": sensor})))
        )

    def ui_state(self) -> dict:
        """The asset graph as the UI reads it (Dagster's GraphQL, over this workspace)."""
        request = self.context.create_request_context()
        return execute_dagster_graphql(request, UI_STATE_QUERY, UI_STATE_VARIABLES).data


@contextmanager
def sensor_daemon() -> Iterator[SensorDaemon]:
    origin = InProcessCodeLocationOrigin(
        LoadableTargetOrigin(
            module_name="dzlineage_dagster.definitions", working_directory=os.getcwd()
        ),
        location_name="dzlineage_dagster",
    )
    with (
        instance_for_test(
            synchronous_run_coordinator=True, synchronous_run_launcher=True
        ) as instance,
        create_test_daemon_workspace_context(
            InProcessTestWorkspaceLoadTarget(origin), instance
        ) as context,
    ):
        yield SensorDaemon(instance, context, datetime.now(timezone.utc))


@pytest.fixture
def platform(sandbox, monkeypatch):
    return fresh_platform(sandbox, monkeypatch)


def test_the_daemon_launches_one_run_per_change_even_when_the_same_topic_changes_twice(
    platform,
):
    topic = "shop.sales.orders"
    with sensor_daemon() as daemon:
        first = daemon.tick()
        assert first.status is TickStatus.SUCCESS, first.error
        assert daemon.instance.get_dynamic_partitions("kafka_topics") == DEMO_TOPICS
        [first_key] = first.run_keys
        assert first_key.startswith(f"{DEMO_TOPICS[0]}..{DEMO_TOPICS[-1]}")
        # The cursor keeps the change tokens of topics changed since its horizon (all of them,
        # just created), so the next tick tells a new change from one already requested.
        cursor = json.loads(first.cursor)["recent"]
        assert sorted(cursor) == DEMO_TOPICS
        [first_run] = daemon.runs()
        assert first_run.status is DagsterRunStatus.SUCCESS
        assert (first_run.tags[RUN_RANGE_START], first_run.tags[RUN_RANGE_END]) == (
            DEMO_TOPICS[0],
            DEMO_TOPICS[-1],
        )

        quiet = daemon.tick()
        assert quiet.status is TickStatus.SKIPPED
        assert json.loads(quiet.cursor)["recent"] == cursor
        assert len(daemon.runs()) == 1

        keys = []
        for column in ("first_change", "second_change"):
            platform.register_new_version(topic, column)
            changed = daemon.tick()
            assert changed.status is TickStatus.SUCCESS, (changed.status, changed.error)
            [key] = changed.run_keys
            keys.append(key)
            new_cursor = json.loads(changed.cursor)["recent"]
            assert {t for t in DEMO_TOPICS if new_cursor.get(t) != cursor.get(t)} == {topic}
            cursor = new_cursor

        # Same partition range both times, yet two keys: Dagster launches a run per new key.
        assert all(key.startswith(f"{topic}..{topic}") for key in keys)
        assert keys[0] != keys[1]
        runs = daemon.runs()
        assert len(runs) == 3, [r.tags.get("dagster/run_key") for r in runs]
        assert [r.tags["dagster/run_key"] for r in runs] == [first_key, *keys]
        for run in runs[1:]:
            assert run.status is DagsterRunStatus.SUCCESS
            assert (run.tags[RUN_RANGE_START], run.tags[RUN_RANGE_END]) == (topic, topic)

    # Each launched run revised the asset: DataZone holds the third revision of it.
    datazone = platform.client("datazone")
    search = datazone.search(
        domainIdentifier=platform.settings.domain_id,
        searchScope="ASSET",
        searchText=topic,
        owningProjectIdentifier=platform.settings.project_id,
    )
    [asset] = [
        item["assetItem"]
        for item in search["items"]
        if item["assetItem"].get("externalIdentifier") == platform.schema_arn(topic)
    ]
    revision = datazone.get_asset(
        domainIdentifier=platform.settings.domain_id, identifier=asset["identifier"]
    )["revision"]
    assert revision == "3"


def test_after_the_sensors_first_sync_nothing_reads_unsynced_and_every_check_says_why(platform):
    """The demo's first minutes, as the daemon runs them: the connector sensor has the topology
    observed, the registry sensor syncs every topic, the catalog checks run once after it.
    Then no partition reads "Unsynced" in the UI, and every check that did not pass says why
    and what to do on its own page."""
    with sensor_daemon() as daemon:
        daemon.tick()
        daemon.tick()  # the checks sensor sees the sync that succeeded
        launched = {
            sensor: [(r.job_name, r.status) for r in daemon.runs(sensor)]
            for sensor in (SENSOR, "connector_config_sensor", "catalog_checks_after_first_sync")
        }
        assert launched == {
            SENSOR: [("catalog_sync", DagsterRunStatus.SUCCESS)],
            "connector_config_sensor": [("connector_topology_refresh", DagsterRunStatus.SUCCESS)],
            "catalog_checks_after_first_sync": [("catalog_checks", DagsterRunStatus.SUCCESS)],
        }
        daemon.tick()
        assert len(daemon.runs("catalog_checks_after_first_sync")) == 1, "the checks ran again"
        state = daemon.ui_state()

    nodes = {"/".join(n["assetKey"]["path"]): n for n in state["nodes"]}
    topology = nodes["connector_topology"]
    assert topology["isObservable"] and topology["dataVersion"], topology
    # The demo platform's deliberate faults: the archive topic's table the convention
    # misnames, and the batch table no topic feeds. The platform graph's state is the
    # checkout's own, which other tests rewrite: current or not, it must say why.
    deliberate = {
        "connector_mapping_matches_convention",
        "every_iceberg_table_is_fed_by_a_topic",
        "platform_graph_is_current",
    }
    assert untruthful_ui(state, deliberate) == []
