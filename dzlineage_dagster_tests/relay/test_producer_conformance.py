"""Real producers' OpenLineage events, posted through `dzlineage relay` after a sync, join the
platform's lineage nodes: one node per topic and per table, one connected graph.

Each sample in ``producers/`` is one producer's emission for one case (the events of one run,
in the order the producer sends them), rebuilt from the producer's own code or tests; the
sample names the repository, the paths and the commit it was rebuilt from, and what was changed
(only hosts, databases and tables pointed at the demo platform, and facets that no local
OpenLineage schema covers left out; the facets kept name the schema versions of the local copies
in their ``_schemaURL``). ``{{...}}`` placeholders stand for what only the seeded
sandbox knows (broker hosts, the account, the source database's endpoint) and for the run's id
and time. A sample says which of the platform's datasets each of its datasets must land on:

- ``topic T``: the node the sync's lineage gives topic T;
- ``source-of T``: the node the sync's first hop gives T's source table;
- ``glue db.table``: the Glue table's ARN, DataZone's node for the table;
- ``cluster-topic T``: a topic the registry does not know, on the platform's cluster: the
  platform's Kafka namespace with T;
- ``source-db T``: a table the connectors do not capture, on the captured database's server:
  the source tables' namespace with T;
- ``as-sent``: a dataset outside the platform (a query result location): its own name.

A sample may change a connector's configuration before the events (what the producer needs to
emit them; the platform's identities must not move), set relay settings, and name a dataset
whose ``dzlineage trace --upstream`` must reach a source table.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from benchmarks.relay_process import relay_environment, running_relay
from dzlineage_dagster.cli import main as dzlineage
from dzlineage_dagster.core.lineage.openlineage import glue_source_identifier, hop_job
from dzlineage_dagster_tests.openlineage_spec import validate_openlineage_event
from dzlineage_dagster_tests.relay.conftest import lineage_events
from dzlineage_dagster_tests.relay.test_relay_debezium import debezium_config
from dzlineage_dagster_tests.test_lineage_truth import update_connector

SAMPLES = sorted(Path(__file__).with_name("producers").glob("*.json"))
#: What a run's node shows when its events name different datasets (Debezium sends a run's
#: table and its topic in two RUNNING events), which DataZone does not document: the sandbox's
#: ``run_event_merge`` switch, its default first. A run of several events is checked under both.
RUN_READINGS = ("merge", "latest")
SOURCE_CONNECTOR = "shop-debezium-source"
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


def load_sample(path: Path) -> dict[str, Any]:
    sample = json.loads(path.read_text())
    source = sample["source"]
    assert re.fullmatch(r"[0-9a-f]{40}|unknown \(rebuilt from .+\)", source["commit"]), path.name
    assert source["repository"] and source["paths"], path.name
    return sample


def platform_values(platform) -> dict[str, str]:
    """What the placeholders of the samples stand for on this seeded platform."""
    settings = platform.settings
    arn = settings.msk_cluster_arn.split(":")
    brokers = platform.client("kafka").get_bootstrap_brokers(ClusterArn=settings.msk_cluster_arn)
    config = debezium_config(platform, SOURCE_CONNECTOR)
    values = {
        "region": arn[3],
        "account": settings.glue_table_account(arn[4]),
        "postgres_host": config["database.hostname"],
        "postgres_port": config["database.port"],
        "postgres_db": config["database.dbname"],
        "brokers_iam": brokers["BootstrapBrokerStringSaslIam"],
        "brokers_tls": brokers["BootstrapBrokerStringTls"],
    }
    for listener, key in (
        ("iam", "BootstrapBrokerStringSaslIam"),
        ("tls", "BootstrapBrokerStringTls"),
    ):
        for number, broker in enumerate(brokers[key].split(","), start=1):
            values[f"broker_{listener}_{number}"] = broker
    return values


def filled(value: Any, values: Mapping[str, str]) -> Any:
    """``value`` with every ``{{name}}`` replaced; a placeholder no value is known for fails."""
    if isinstance(value, str):

        def replace(match: re.Match) -> str:
            assert match[1] in values, f"no value for the placeholder {match[0]}"
            return values[match[1]]

        return _PLACEHOLDER.sub(replace, value)
    if isinstance(value, list):
        return [filled(item, values) for item in value]
    if isinstance(value, dict):
        return {key: filled(item, values) for key, item in value.items()}
    return value


def first_hops(platform) -> dict[str, tuple[str, str]]:
    """Each topic's (source table, topic) sourceIdentifiers, as the sync's latest run of the
    topic's first hop (the Debezium connector's) names them."""
    newest: dict[str, dict] = {}
    for item in lineage_events(platform):  # newest first
        summary = item["eventSummary"]["openLineageRunEventSummary"]
        job = summary["job"]
        owner, _, topic = job["name"].partition("/")
        if owner == SOURCE_CONNECTOR and hop_job(owner, topic) == (job["namespace"], job["name"]):
            newest.setdefault(topic, summary)
    hops = {}
    for topic, summary in newest.items():
        # One table, one topic: not a merged topic (several tables) nor a closed hop.
        if len(summary["inputs"]) == 1 and len(summary["outputs"]) == 1:
            (source,), (output,) = summary["inputs"], summary["outputs"]
            hops[topic] = (
                f"{source['namespace']}/{source['name']}",
                f"{output['namespace']}/{output['name']}",
            )
    return hops


def expected_identity(
    token: str, dataset: Mapping[str, str], hops: Mapping[str, tuple[str, str]], values
) -> str:
    """The sourceIdentifier ``token`` says ``dataset`` must land on."""
    if token == "as-sent":
        return f"{dataset['namespace']}/{dataset['name']}"
    kind, _, name = token.partition(" ")
    if kind == "topic":
        return hops[name][1]
    if kind == "source-of":
        return hops[name][0]
    if kind in ("cluster-topic", "source-db"):
        source, topic = next(iter(hops.values()))
        namespace = (topic if kind == "cluster-topic" else source).rsplit("/", 1)[0]
        return f"{namespace}/{name}"
    if kind == "glue":
        database, table = name.split(".")
        return glue_source_identifier(values["region"], values["account"], database, table)
    raise AssertionError(f"unknown expectation {token!r}")


def run_datasets(events: list[dict[str, Any]], side: str) -> list[dict[str, str]]:
    """The run's datasets on one side, over all its events, each once, in order of appearance."""
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for event in events:
        for dataset in event.get(side) or []:
            seen.setdefault((dataset["namespace"], dataset["name"]), dataset)
    return list(seen.values())


def neighbours(platform, node: dict, direction: str) -> list[str]:
    """sourceIdentifiers of the nodes next to ``node`` (``upstreamNodes``/``downstreamNodes``)."""
    datazone = platform.client("datazone")
    return sorted(
        datazone.get_lineage_node(
            domainIdentifier=platform.settings.domain_id, identifier=reference["id"]
        )["sourceIdentifier"]
        for reference in node.get(f"{direction}Nodes", [])
    )


def trace(capsys, *arguments: str) -> dict[str, Any]:
    """``dzlineage trace ... --format json`` as a user runs it, parsed."""
    capsys.readouterr()
    code = dzlineage(["trace", *arguments, "--format", "json", "--no-owners"])
    printed = capsys.readouterr()
    assert code == 0, f"dzlineage trace {' '.join(arguments)}: {printed.err}"
    return json.loads(printed.out)


def change_connectors(platform, sample: dict, values: Mapping[str, str], hops) -> None:
    """Apply what the producer needs in its connector's configuration to emit the sample's
    events, sync again, and check the platform's names did not move with it (a moved name
    strands every producer already joined to the old one)."""
    for connector, changes in filled(sample["connector_changes"], values).items():
        update_connector(platform, connector, {**debezium_config(platform, connector), **changes})
    assert platform.sync().success
    after = first_hops(platform)
    moved = {
        topic: (hop, after.get(topic)) for topic, hop in hops.items() if after.get(topic) != hop
    }
    assert not moved, f"the sync renamed datasets when a connector's settings changed: {moved}"


def post_through_relay(platform, spool: Path, events: list[dict], settings: Mapping[str, str]):
    """Each event, as the producer's bytes, through a `dzlineage relay` process."""
    environment = relay_environment(platform.environment, **settings)
    with running_relay(environment, spool) as relay:
        answers = [relay.post(json.dumps(event).encode()) for event in events]
        relay.stop()
    for status, answer in answers:
        assert (status, answer.get("status")) == (200, "forwarded"), answer


def assert_run_joins(platform, sample: dict, events: list[dict], hops, values) -> None:
    """The run's node (DataZone's ``<job namespace>.<job name>/<runId>``) is next to exactly
    the nodes the sample expects: the platform's own, no parallel one. A node is the one
    dataset with its sourceIdentifier, so equal identifiers are the same node."""
    job, run_id = events[0]["job"], events[0]["run"]["runId"]
    run = platform.client("datazone").get_lineage_node(
        domainIdentifier=platform.settings.domain_id,
        identifier=f"{job['namespace']}.{job['name']}/{run_id}",
    )
    for side, direction in (("inputs", "upstream"), ("outputs", "downstream")):
        datasets, tokens = run_datasets(events, side), filled(sample["expect"][side], values)
        assert len(tokens) == len(datasets), f"the sample expects {tokens} for its {side}"
        expected = sorted(
            expected_identity(token, dataset, hops, values)
            for token, dataset in zip(tokens, datasets, strict=True)
        )
        assert neighbours(platform, run, direction) == expected, f"the run's {side}"


def assert_trace_names_topics_by_their_nodes(capsys, sample: dict, hops) -> None:
    """`trace` from a topic's source table downstream labels no node with the topic's name but
    the topic's own node (a parallel node would show as the topic, with its owners)."""
    for side in sample["expect"].values():
        for token in side:
            kind, _, topic = token.partition(" ")
            if kind != "topic":
                continue
            found = trace(capsys, hops[topic][0], "--downstream")
            named = {
                n["id"] for n in found["nodes"] if n["kind"] == "topic" and n["label"] == topic
            }
            assert named == {hops[topic][1]}, f"the nodes `trace` calls topic {topic}"


def cases():
    """One test per sample; a sample of several events once per reading of a run's node."""
    for path in SAMPLES:
        if len(json.loads(path.read_text())["events"]) == 1:
            yield pytest.param(path, RUN_READINGS[0], id=path.stem)
        else:
            yield from (pytest.param(path, r, id=f"{path.stem}-{r}") for r in RUN_READINGS)


@pytest.mark.parametrize(("path", "run_reading"), cases())
def test_a_producers_events_join_the_platforms_nodes(platform, tmp_path, capsys, path, run_reading):
    sample = load_sample(path)
    if run_reading != RUN_READINGS[0]:  # the default needs no switch
        platform.control.set_ambiguities(run_event_merge=run_reading)
    assert platform.sync().success
    values = platform_values(platform)
    hops = first_hops(platform)
    if "connector_changes" in sample:
        change_connectors(platform, sample, values, hops)

    # One run; its events a millisecond apart, in the order the producer sends them.
    run, start = {**values, "run_id": str(uuid.uuid4())}, datetime.now(timezone.utc)
    events = [
        filled(event, {**run, "now": (start + timedelta(milliseconds=i)).isoformat()})
        for i, event in enumerate(sample["events"])
    ]
    for event in events:
        validate_openlineage_event(json.dumps(event))
    post_through_relay(
        platform, tmp_path / "spool.db", events, filled(sample.get("relay_settings", {}), values)
    )

    assert_run_joins(platform, sample, events, hops, values)
    assert_trace_names_topics_by_their_nodes(capsys, sample, hops)
    if "trace" in sample:
        wanted = sample["trace"]
        reached = {node["id"] for node in trace(capsys, wanted["dataset"], "--upstream")["nodes"]}
        source = expected_identity(wanted["reaches"], {}, hops, values)
        assert source in reached, f"`trace {wanted['dataset']} --upstream` misses {source}"
