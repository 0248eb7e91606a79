"""A small platform for the crash, fault and bad-input tests, and its end state read back.

The demo platform trimmed to one source table (plus the heartbeat topic), so enumerating
every write call of a sync stays fast; the end state is what a converged sync must leave, with
generated ids left out so two platforms compare equal.
"""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from dzlineage_dagster.sandbox.demo.seed import DEMO_PLATFORM, seed_platform
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.headless import run_headless_sync
from dzlineage_dagster_tests.clients import sandbox_client
from dzlineage_dagster_tests.stored_mapping import stored_mappings

KEPT_TABLES = ("inventory.customers",)


def write_small_platform(directory: Path) -> Path:
    spec = yaml.safe_load(DEMO_PLATFORM.read_text())
    spec["source_tables"] = {name: spec["source_tables"][name] for name in KEPT_TABLES}
    source = spec["connectors"]["shop-debezium-source"]["config"]
    source["table.include.list"] = ",".join(KEPT_TABLES)
    tables = spec["glue_catalog"]["tables"]
    kept_topics = {f"shop.{name}" for name in KEPT_TABLES}
    spec["glue_catalog"]["tables"] = {
        name: body
        for name, body in tables.items()
        if "from_topic" not in body or body["from_topic"] in kept_topics
    }
    path = directory / "small_platform.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def seed_small(sandbox: Any, spec_path: Path, monkeypatch: Any) -> dict[str, str]:
    """Empty the sandbox, seed the small platform, point the process at it; its environment."""
    sandbox.control.reset()
    environment = {**sandbox.environment(), **seed_platform(sandbox.endpoint_url, spec_path)}
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    sandbox.control.clear_calls()
    return environment


def headless_sync(environment: dict[str, str], *, reconcile: bool = False) -> tuple[int, str]:
    """`dzlineage sync` (``--reconcile``) in this process: its exit code and what it printed."""
    out = io.StringIO()
    code = run_headless_sync(
        LineageSettings.from_env(environment), dry_run=False, out=out, reconcile=reconcile
    )
    return code, out.getvalue()


@dataclass(frozen=True)
class CatalogState:
    #: schema ARN -> how many topic assets carry it.
    assets: dict[str, int]
    #: schema ARN -> (topic, whether the mapped asset exists, lineage run id or None).
    mappings: dict[str, tuple[str, bool, str | None]]
    #: (run id, event type) -> how many times DataZone holds that event.
    lineage_events: dict[tuple[str, str], int]
    #: (input dataset, output dataset) of every edge DataZone holds, with its count.
    edges: dict[tuple[str, str], int]
    #: schema ARN -> whether the catalog (SearchListings) shows its asset at its latest revision.
    listed_at_latest: dict[str, bool]


def catalog_state(environment: dict[str, str]) -> CatalogState:
    settings = LineageSettings.from_env(environment)
    datazone = sandbox_client(environment, "datazone")
    assets: Counter[str] = Counter()
    asset_ids: set[str] = set()
    latest_revisions: dict[str, tuple[str, str]] = {}
    for page in datazone.get_paginator("search").paginate(
        domainIdentifier=settings.domain_id,
        searchScope="ASSET",
        owningProjectIdentifier=settings.project_id,
    ):
        for item in page["items"]:
            asset = item["assetItem"]
            if asset["typeIdentifier"] == "KafkaTopicAssetType":
                assets[asset["externalIdentifier"]] += 1
                asset_ids.add(asset["identifier"])
                revision = datazone.get_asset(
                    domainIdentifier=settings.domain_id, identifier=asset["identifier"]
                )["revision"]
                latest_revisions[asset["identifier"]] = (asset["externalIdentifier"], revision)
    mappings = {}
    for record in stored_mappings(settings).values():
        mappings[record.schema_arn] = (
            record.topic,
            record.asset_id in asset_ids,
            record.lineage_fingerprint,
        )
    events: Counter[tuple[str, str]] = Counter()
    edges: Counter[tuple[str, str]] = Counter()
    for page in datazone.get_paginator("list_lineage_events").paginate(
        domainIdentifier=settings.domain_id
    ):
        for item in page["items"]:
            summary = item["eventSummary"]["openLineageRunEventSummary"]
            events[(summary["runId"], summary["eventType"])] += 1
            if summary["eventType"] == "COMPLETE":
                for source in summary["inputs"]:
                    for target in summary["outputs"]:
                        edges[(_dataset(source), _dataset(target))] += 1
    listed = {
        item["assetListing"]["entityId"]: item["assetListing"]["entityRevision"]
        for page in datazone.get_paginator("search_listings").paginate(
            domainIdentifier=settings.domain_id
        )
        for item in page["items"]
    }
    listed_at_latest = {
        arn: listed.get(asset_id) == revision
        for asset_id, (arn, revision) in latest_revisions.items()
    }
    return CatalogState(dict(assets), mappings, dict(events), dict(edges), listed_at_latest)


def _dataset(reference: dict[str, str]) -> str:
    return f"{reference['namespace']}/{reference['name']}"
