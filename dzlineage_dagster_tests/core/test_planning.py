from __future__ import annotations

import dataclasses

import botocore.session
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dzlineage_dagster.core.catalog.planning import (
    MAX_ASSET_NAME_LENGTH,
    ActionKind,
    DesiredTopicState,
    asset_action,
    datazone_asset_name,
)
from dzlineage_dagster.core.mapping.ssm_names import MappingRecord


def arn(schema: str) -> str:
    return f"arn:aws:glue:us-east-1:123456789012:schema/r/{schema}"


def state(
    topic: str, version: int = 1, fingerprint: str = "f1", schema: str = ""
) -> DesiredTopicState:
    return DesiredTopicState(topic, arn(schema or f"{topic}-value"), version, fingerprint)


def record_of(desired: DesiredTopicState, asset_id: str = "a1", **changes) -> MappingRecord:
    record = desired.to_record(asset_id=asset_id, asset_revision="1", asset_type_revision="1")
    return dataclasses.replace(record, **changes)


def test_create_revise_unchanged() -> None:
    orders = state("orders")
    assert asset_action(orders, None) is ActionKind.CREATE
    assert asset_action(orders, record_of(orders)) is ActionKind.UNCHANGED
    assert asset_action(state("orders", version=2), record_of(orders)) is ActionKind.REVISE
    assert asset_action(state("orders", fingerprint="f2"), record_of(orders)) is ActionKind.REVISE


def test_a_record_made_from_a_desired_state_is_unchanged_against_it() -> None:
    desired = state("orders", version=3, fingerprint="f9")
    record = desired.to_record(
        asset_id="a1", asset_revision="2", asset_type_revision="1", lineage_fingerprint="run"
    )
    assert (record.schema_version, record.content_fingerprint) == (3, "f9")
    assert record.lineage_fingerprint == "run"
    assert asset_action(desired, record) is ActionKind.UNCHANGED


@pytest.mark.parametrize(
    "change",
    [
        {"topic": "other"},
        {"schema_arn": arn("other")},
        {"schema_version": 2},
        {"content_fingerprint": "f2"},
    ],
)
def test_asset_action_revises_when_any_compared_part_differs(change: dict) -> None:
    desired = state("orders")
    stored = record_of(desired)
    assert asset_action(desired, None) is ActionKind.CREATE
    assert asset_action(desired, stored) is ActionKind.UNCHANGED
    assert asset_action(desired, dataclasses.replace(stored, asset_revision="9")) is (
        ActionKind.UNCHANGED
    )
    assert asset_action(desired, dataclasses.replace(stored, **change)) is ActionKind.REVISE


def test_asset_name_limit_is_datazones() -> None:
    shape = botocore.session.get_session().get_service_model("datazone").shape_for("AssetName")
    assert (shape.metadata["min"], shape.metadata["max"]) == (1, MAX_ASSET_NAME_LENGTH)
    assert "pattern" not in shape.metadata


def test_asset_name_is_cluster_dot_topic() -> None:
    assert (
        datazone_asset_name("demo-cluster", "cdc.public.orders") == "demo-cluster.cdc.public.orders"
    )
    with pytest.raises(ValueError, match="cluster name and a topic"):
        datazone_asset_name("", "t")


KAFKA_TOPICS = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
    min_size=1,
    max_size=249,
)
CLUSTERS = st.from_regex(r"\A[0-9A-Za-z][0-9A-Za-z\-]{0,63}\Z")


@settings(max_examples=200)
@given(CLUSTERS, KAFKA_TOPICS, KAFKA_TOPICS)
def test_asset_names_fit_and_stay_distinct(cluster: str, first: str, second: str) -> None:
    names = datazone_asset_name(cluster, first), datazone_asset_name(cluster, second)
    assert all(1 <= len(name) <= MAX_ASSET_NAME_LENGTH for name in names)
    assert (names[0] == names[1]) == (first == second)
    assert datazone_asset_name(cluster, first) == names[0]


def test_long_names_are_shortened_with_a_hash_and_keep_their_start() -> None:
    name = datazone_asset_name("c", "t" * 300)
    assert len(name) == MAX_ASSET_NAME_LENGTH
    assert name.startswith("c.ttt") and name[-13] == "~"
    assert datazone_asset_name("c", "t" * 299) != name
    assert datazone_asset_name("c", "t" * 254) == "c." + "t" * 254
