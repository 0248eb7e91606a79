"""The core scenarios under each reading of what AWS's documents leave open (issue 18): the
sandbox's switches (:mod:`dzlineage_dagster.sandbox.server.ambiguities`) set one way or the
other for a whole scenario.

Two settings rather than the cartesian product of the switches (4 switches, 16 settings, an
hour of suite): ``as-first-modelled`` is every switch at the reading the sandbox answered first
(type re-creation makes a revision, ``UpdatedTime`` moves, Search sees a write at once, a
PostLineageEvent 409 means the event is held), ``the-other-reading`` every switch at the
other (ConflictException, a frozen ``UpdatedTime``, Search :data:`LAG` seconds behind, a 409
that stored nothing). Each value of each switch is run through every scenario; the switches
do not meet in any code path (types, change detection, Search, lineage posts are separate
stages), and test_aws_ambiguities.py tests each switch alone, in its own place.
"""

from __future__ import annotations

import json

import pytest

from dzlineage_dagster.core.catalog.forms import KAFKA_SCHEMA_FORM
from dzlineage_dagster_tests.stored_mapping import drop_mapping, stored_mappings
from dzlineage_dagster_tests.test_aws_ambiguities import (
    TOPIC,
    held_events,
    lag_free,
    schema_id,
    sweep_pass_runs,
    synced_until,
)
from dzlineage_dagster_tests.test_catalog_operators import (
    action_of,
    definition_of,
    sync_output,
)
from dzlineage_dagster_tests.test_catalog_sync import table_topics, topic_assets
from dzlineage_dagster_tests.test_catalog_types_extended import Team, with_team_field
from dzlineage_dagster_tests.test_connector_lineage import create_connector
from dzlineage_dagster_tests.test_lineage_truth import (
    NEW,
    OLD,
    SINK,
    delete_archive_sink,
    downstream_tables,
    table_id,
    timestamp_view_neighbours,
)
from dzlineage_dagster_tests.test_lineage_truth import TOPIC as ARCHIVE_TOPIC

#: Seconds Search lags behind writes in the other reading: longer than a scenario's steps
#: take, so the assets a step made are not yet searchable in the next.
LAG = 5.0

SETTINGS = {
    "as-first-modelled": {
        "type_recreation": "revision",
        "schema_updated_time": "moves",
        "search_lag_seconds": 0,
        "lineage_conflict": "duplicate",
    },
    "the-other-reading": {
        "type_recreation": "conflict",
        "schema_updated_time": "frozen",
        "search_lag_seconds": LAG,
        "lineage_conflict": "other",
        "run_event_merge": "latest",
        "node_schema": "merged",
    },
}


@pytest.fixture(params=list(SETTINGS))
def ambiguous(request, platform):
    """The seeded platform with the sandbox's switches at one of :data:`SETTINGS`."""
    platform.control.set_ambiguities(**SETTINGS[request.param])
    return platform


def assert_one_asset_per_table_topic(platform) -> None:
    assets = lag_free(platform, topic_assets)
    arns = {platform.schema_arn(topic) for topic in table_topics(platform)}
    assert {arn: len(assets.get(arn, [])) for arn in arns} == dict.fromkeys(arns, 1)


def assert_each_lineage_event_held_once(platform) -> None:
    held = held_events(platform)
    assert held and set(held.values()) == {1}, held


def test_first_sync_idle_rerun_new_version_deleted_and_recreated_schema(ambiguous, capsys):
    platform = ambiguous
    # Another team's revision of the product's form type that keeps all its fields: no
    # re-creation is needed, whether DataZone would answer one with a revision or a conflict.
    Team(platform).form_type(
        KAFKA_SCHEMA_FORM.name, with_team_field(KAFKA_SCHEMA_FORM.smithy_model())
    )
    first = sync_output(capsys)
    assert {action_of(first, topic) for topic in table_topics(platform)} == {"created"}
    assert_one_asset_per_table_topic(platform)
    assert_each_lineage_event_held_once(platform)
    assert "nothing to do" in sync_output(capsys)

    platform.register_new_version(TOPIC, "coupon")
    synced_until(capsys, TOPIC, "revised", sweep_pass_runs(platform))

    original = definition_of(platform, TOPIC)
    platform.client("glue").delete_schema(SchemaId=schema_id(platform))
    assert action_of(sync_output(capsys), TOPIC) == "deprecated"
    platform.create_schema(TOPIC, json.loads(original))
    assert action_of(sync_output(capsys), TOPIC) == "adopted"
    assert_one_asset_per_table_topic(platform)
    assert_each_lineage_event_held_once(platform)
    assert "nothing to do" in sync_output(capsys)


def test_reconcile_after_a_lost_mapping(ambiguous, capsys):
    platform = ambiguous
    sync_output(capsys)
    arn = platform.schema_arn(TOPIC)
    [asset_id] = lag_free(platform, topic_assets)[arn]
    drop_mapping(platform.settings, arn)
    platform.register_new_version(TOPIC, "coupon")  # no client-token replay of the creation

    out = sync_output(capsys, "--reconcile")
    # The sync row: the reconcile's repair adopted it (Search listed it), or the asset stage
    # did (CreateAsset refused the schema's second asset, and Search found the first).
    assert action_of(out, TOPIC) in ("adopted", "revised"), out
    assert stored_mappings(platform.settings)[arn].asset_id == asset_id
    assert_one_asset_per_table_topic(platform)
    out = sync_output(capsys, "--reconcile")
    assert "reconcile: nothing to repair" in out, out
    assert {action_of(out, topic) for topic in table_topics(platform)} == {"unchanged"}, out


def test_a_re_routed_sink_s_lineage(ambiguous, capsys):
    platform = ambiguous
    sync_output(capsys)
    assert downstream_tables(capsys, ARCHIVE_TOPIC) == {f"lakehouse.{OLD}"}
    platform.client("glue").create_table(DatabaseName="lakehouse", TableInput={"Name": NEW})
    config = delete_archive_sink(platform)
    create_connector(platform, SINK, {**config, "iceberg.tables": f"lakehouse.{NEW}"})
    sync_output(capsys)

    assert downstream_tables(capsys, ARCHIVE_TOPIC) == {f"lakehouse.{NEW}"}
    assert timestamp_view_neighbours(platform, table_id(platform, OLD), "upstream") == set()
    assert_each_lineage_event_held_once(platform)
