"""Reconcile planning: which repair each disagreement between registry, mapping and DataZone
gets, and none when they agree."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from dzlineage_dagster.core.catalog.reconcile import (
    CatalogAsset,
    LineageRuns,
    Repair,
    RepairKind,
    plan_repairs,
)
from dzlineage_dagster.core.lineage.state import HopJob, PostedLineage
from dzlineage_dagster.core.mapping.ssm_names import MappingRecord, registry_arn_of_schema

REGISTRY_ARN = "arn:aws:glue:us-east-1:123456789012:registry/shop"


def arn(topic: str) -> str:
    return f"arn:aws:glue:us-east-1:123456789012:schema/shop/{topic}"


def record(topic: str, asset_id: str, run_id: str = "") -> MappingRecord:
    return MappingRecord(
        schema_arn=arn(topic),
        topic=topic,
        asset_id=asset_id,
        asset_revision="1",
        schema_version=1,
        content_fingerprint="c",
        asset_type_revision="1",
        lineage_fingerprint=run_id,
        domain_id="dzd_a",
        project_id="p",
        registry_arn=REGISTRY_ARN,
    )


def healthy(*run_ids: str) -> LineageRuns:
    return LineageRuns(frozenset(run_ids), frozenset())


@given(st.lists(st.from_regex(r"[a-z]{1,8}\.[a-z]{1,8}", fullmatch=True), unique=True))
def test_a_catalog_that_agrees_needs_no_repair(topics):
    registry = {topic: arn(topic) for topic in topics}
    mappings = {arn(t): record(t, f"asset-{t}", f"run-{t}") for t in topics}
    assets = [CatalogAsset(f"asset-{t}", t, arn(t), "Kafka topic") for t in topics]
    lineage = healthy(*(f"run-{t}" for t in topics))
    assert plan_repairs(registry, mappings, {}, assets, lineage) == []


def test_each_disagreement_gets_its_repair():
    topics = ["a.gone", "b.gone_own", "c.swapped", "d.lost", "e.deprecated", "f.lineage"]
    topics += ["g.new", "h.unnamed"]
    registry = {topic: arn(topic) for topic in topics}
    mappings = {
        arn("a.gone"): record("a.gone", "deleted-1"),
        arn("b.gone_own"): record("b.gone_own", "deleted-2"),
        arn("c.swapped"): record("c.swapped", "asset-e"),
        arn("e.deprecated"): record("e.deprecated", "asset-e"),
        # One run a hop: the first is fine, the second failed.
        arn("f.lineage"): record("f.lineage", "asset-f", "run-f1,run-f2"),
        arn("h.unnamed"): record("h.unnamed", "asset-h"),
    }
    assets = [
        CatalogAsset("asset-b", "b", arn("b.gone_own")),
        CatalogAsset("asset-c", "c", arn("c.swapped")),
        CatalogAsset("asset-d", "renamed in the portal", arn("d.lost")),
        CatalogAsset("asset-e", "e", arn("e.deprecated"), "DEPRECATED: schema was deleted"),
        CatalogAsset("asset-f", "f", arn("f.lineage")),
        CatalogAsset("asset-h", "h", None),
    ]
    lineage = LineageRuns(frozenset({"run-f1"}), frozenset({"run-f2"}))
    # A new topic (g.new) is the sync's to create, not a repair.
    assert plan_repairs(registry, mappings, {}, assets, lineage) == [
        Repair(
            "a.gone",
            arn("a.gone"),
            RepairKind.RECREATE,
            "mapped asset deleted-1 is gone: create a new asset",
        ),
        Repair(
            "b.gone_own",
            arn("b.gone_own"),
            RepairKind.REMAP,
            "mapped asset deleted-2 is gone: map asset asset-b",
            "asset-b",
        ),
        Repair(
            "c.swapped",
            arn("c.swapped"),
            RepairKind.REMAP,
            "mapped asset asset-e belongs to schema e.deprecated: map asset asset-c",
            "asset-c",
        ),
        Repair(
            "d.lost",
            arn("d.lost"),
            RepairKind.ADOPT,
            "no mapping; asset asset-d ('renamed in the portal') carries the schema: adopt it",
            "asset-d",
        ),
        Repair(
            "e.deprecated",
            arn("e.deprecated"),
            RepairKind.RESTORE,
            "asset asset-e is deprecated but its schema is in the registry: revise it",
            "asset-e",
        ),
        Repair(
            "f.lineage",
            arn("f.lineage"),
            RepairKind.REPOST_LINEAGE,
            "lineage run run-f2 is FAILED in DataZone: re-post",
            "asset-f",
        ),
        Repair(
            "h.unnamed",
            arn("h.unnamed"),
            RepairKind.RECREATE,
            "mapped asset asset-h belongs to schema no schema: create a new asset",
        ),
    ]


def test_a_mapping_of_another_domain_is_rescoped_to_this_domains_asset():
    foreign = replace(record("a.t", "asset-elsewhere"), domain_id="dzd_other")
    assets = [CatalogAsset("asset-here", "a", arn("a.t"))]
    [repair] = plan_repairs({"a.t": arn("a.t")}, {}, {arn("a.t"): foreign}, assets, None)
    assert repair == Repair(
        "a.t",
        arn("a.t"),
        RepairKind.RESCOPE,
        "mapping records domain dzd_other / project p: map asset asset-here",
        "asset-here",
    )


def test_missing_lineage_is_reposted_and_unknown_lineage_state_is_not_checked():
    mappings = {arn("a.t"): record("a.t", "asset-a", "run-a1,run-a2")}
    assets = [CatalogAsset("asset-a", "a", arn("a.t"))]
    [repair] = plan_repairs({"a.t": arn("a.t")}, mappings, {}, assets, healthy())
    assert repair == Repair(
        "a.t",
        arn("a.t"),
        RepairKind.REPOST_LINEAGE,
        "lineage run run-a1, run-a2 is missing: re-post",
        "asset-a",
    )
    assert plan_repairs({"a.t": arn("a.t")}, mappings, {}, assets, None) == []


def test_a_record_s_posted_jobs_name_the_runs_to_look_for_and_an_unreadable_one_is_reposted():
    job = HopJob("sink", "kafka-connect", "shop-iceberg-sink")
    state = PostedLineage("content", "base", (job,))
    (run_id,) = state.run_ids("a.t")
    mappings = {arn("a.t"): record("a.t", "asset-a", state.encode())}
    assets = [CatalogAsset("asset-a", "a", arn("a.t"))]
    assert plan_repairs({"a.t": arn("a.t")}, mappings, {}, assets, healthy(run_id)) == []
    [missing] = plan_repairs({"a.t": arn("a.t")}, mappings, {}, assets, healthy())
    assert missing.detail == f"lineage run {run_id} is missing: re-post"

    edited = {arn("a.t"): record("a.t", "asset-a", '{"v": 2}')}
    [repair] = plan_repairs({"a.t": arn("a.t")}, edited, {}, assets, healthy())
    assert repair.kind is RepairKind.REPOST_LINEAGE
    assert repair.detail.startswith("the posted lineage state '{\"v\": 2}' is not readable")


def test_the_registry_of_a_schema_arn():
    assert registry_arn_of_schema(arn("x.y")) == REGISTRY_ARN


def test_an_asset_whose_product_fields_are_not_what_the_product_wrote_is_revised():
    """The record's content fingerprint is what the product last wrote; an asset whose owned
    fingerprint differs was edited there (None: its forms were not read, nothing is known)."""
    topics = ["a.edited", "b.kept", "c.unread", "d.edited_lineage"]
    registry = {topic: arn(topic) for topic in topics}
    mappings = {arn(t): record(t, f"asset-{t}") for t in topics}
    mappings[arn("d.edited_lineage")] = record("d.edited_lineage", "asset-d", "run-d")
    assets = [
        CatalogAsset("asset-a.edited", "a", arn("a.edited"), owned_fingerprint="edited"),
        CatalogAsset("asset-b.kept", "b", arn("b.kept"), owned_fingerprint="c"),
        CatalogAsset("asset-c.unread", "c", arn("c.unread")),
        CatalogAsset("asset-d", "d", arn("d.edited_lineage"), owned_fingerprint="edited"),
    ]
    edited = "fields the product owns are not what it last wrote (edited in DataZone): revise it"
    assert plan_repairs(registry, mappings, {}, assets, healthy()) == [
        Repair(
            "a.edited",
            arn("a.edited"),
            RepairKind.PRODUCT_FIELDS,
            f"asset asset-a.edited: {edited}",
            "asset-a.edited",
        ),
        Repair(
            "d.edited_lineage",
            arn("d.edited_lineage"),
            RepairKind.PRODUCT_FIELDS,
            f"asset asset-d: {edited}",
            "asset-d",
        ),
        Repair(
            "d.edited_lineage",
            arn("d.edited_lineage"),
            RepairKind.REPOST_LINEAGE,
            "lineage run run-d is missing: re-post",
            "asset-d",
        ),
    ]
