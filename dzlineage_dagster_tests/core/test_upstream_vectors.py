"""Upstream's own tests as the project's tests: Kafka's, Debezium's and Iceberg's name and
routing cases, translated into the vectors under ``fixtures/upstream/`` (one YAML file per
upstream test file; each vector names its test method, the file names the repository, path and
commit read). See docs/connector-naming.md for how they were translated.

A vector ``expect``s what upstream asserts, evaluated through the project's own parsing; a
vector with ``decline`` is a case the project does not evaluate (the answer depends on each
record): it asserts the honest answer, an ambiguous route with the reason, never a guess.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from dzlineage_dagster.core.connectors.debezium import (
    DebeziumConfigError,
    parse_debezium_source,
    sanitized_topic_name,
)
from dzlineage_dagster.core.connectors.iceberg_sink import (
    IcebergSinkConfigError,
    parse_iceberg_sink,
)
from dzlineage_dagster.core.connectors.java_regex import (
    InvalidJavaRegex,
    compile_java_regex,
    split_java_regex_list,
)
from dzlineage_dagster.core.connectors.topics import TopicKind, topic_name_problem
from dzlineage_dagster.core.connectors.topology import ConnectorDefinition, build_topology
from dzlineage_dagster.core.connectors.transforms import (
    TransformConfigError,
    parse_transform_chain,
)

UPSTREAM = Path(__file__).parent / "fixtures" / "upstream"
CONNECTOR = "upstream"


def load_vectors() -> list[Any]:
    params = []
    for path in sorted(UPSTREAM.glob("*.yaml")):
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        for index, vector in enumerate(document["vectors"]):
            vector_id = f"{path.stem}::{vector['test']}::{index}"
            params.append(pytest.param(document["upstream"], vector, id=vector_id))
    return params


VECTORS = load_vectors()


def test_every_vector_names_its_upstream_source_and_kind() -> None:
    for param in VECTORS:
        upstream, vector = param.values
        assert {"repository", "commit", "path"} <= set(upstream), param.id
        assert len(upstream["commit"]) == 40, param.id
        assert vector["kind"] in EVALUATORS, param.id
        assert "expect" in vector, param.id
        assert "decline" not in vector or "ambiguous" in vector["expect"], param.id


@pytest.mark.parametrize(("upstream", "vector"), VECTORS)
def test_upstream_vector(upstream: dict[str, str], vector: dict[str, Any]) -> None:
    EVALUATORS[vector["kind"]](vector, vector["expect"])


def refused(expect: dict[str, Any], error: Exception) -> None:
    assert "refused" in expect, f"unexpectedly refused: {error}"
    assert expect["refused"] in str(error)


def chain_of(transforms: dict[str, str]):
    return parse_transform_chain(CONNECTOR, transforms)


def router_config(step_type: str, settings: dict[str, str], alias: str = "r") -> dict[str, str]:
    return {
        "transforms": alias,
        f"transforms.{alias}.type": step_type,
        **{f"transforms.{alias}.{key}": value for key, value in settings.items()},
    }


def evaluate_router(vector: dict[str, Any], expect: dict[str, Any]) -> None:
    """A RegexRouter / logical-table router applied to one record's topic."""
    route_through(router_config(vector["type"], vector["settings"]), vector["topic"], expect)


def evaluate_chain(vector: dict[str, Any], expect: dict[str, Any]) -> None:
    """A whole ``transforms`` chain (Kafka Connect's ConnectorConfig) applied to one topic."""
    route_through(vector["config"], vector["topic"], expect)


def route_through(config: dict[str, str], topic: str, expect: dict[str, Any]) -> None:
    try:
        chain = chain_of(config)
    except TransformConfigError as error:
        return refused(expect, error)
    assert "refused" not in expect, "the configuration was accepted"
    routed = chain.route(topic)
    if "ambiguous" in expect:
        assert routed.is_ambiguous and expect["ambiguous"] in (routed.ambiguous_reason or "")
        return None
    assert not routed.is_ambiguous, routed.ambiguous_reason
    assert routed.topic == expect["topic"]
    if "merged" in expect:
        assert routed.merged is expect["merged"]
    return None


def evaluate_topic_name_matches(vector: dict[str, Any], expect: dict[str, Any]) -> None:
    """A TopicNameMatches predicate guarding a router: whether it applies to the topic."""
    config = {
        **router_config("org.apache.kafka.connect.transforms.RegexRouter", {}, "r"),
        "transforms.r.regex": ".*",
        "transforms.r.replacement": "matched",
        "transforms.r.predicate": "p",
        "predicates": "p",
        "predicates.p.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
        **({"predicates.p.pattern": vector["pattern"]} if "pattern" in vector else {}),
    }
    try:
        [step] = chain_of(config).steps
    except TransformConfigError as error:
        return refused(expect, error)
    assert "refused" not in expect, "the configuration was accepted"
    assert step.topic_condition is not None
    for topic in expect.get("matches", []):
        assert step.topic_condition.matches(topic), topic
    for topic in expect.get("does_not_match", []):
        assert not step.topic_condition.matches(topic), topic
    return None


def evaluate_regex_list(vector: dict[str, Any], expect: dict[str, Any]) -> None:
    """Debezium's Strings.listOfRegex / setOfRegex: the entries, each a compiled pattern."""
    try:
        entries = split_java_regex_list(vector["value"])
        for entry in entries:
            compile_java_regex(entry, case_insensitive=True)
    except InvalidJavaRegex as error:
        return refused(expect, error)
    assert "refused" not in expect, "the list was accepted"
    assert entries == expect["entries"]
    return None


def debezium(vector: dict[str, Any]):
    version = tuple(int(part) for part in str(vector.get("debezium_version", "3.6")).split("."))
    return parse_debezium_source(CONNECTOR, vector["config"], debezium_version=version)


def evaluate_table_filter(vector: dict[str, Any], expect: dict[str, Any]) -> None:
    """A Debezium connector's include/exclude lists on table ids."""
    source = debezium(vector)
    for key, captured in (("captured", True), ("not_captured", False)):
        for table_id in expect.get(key, []):
            parts = table_id.split(".")
            database, schema, table = parts if len(parts) == 3 else (parts[0], None, parts[1])
            if source.engine.has_schemas and len(parts) == 2:
                database, schema = source.databases[0], parts[0]
            assert source.captures(source.table(database, schema, table)) is captured, table_id


def evaluate_topic_naming(vector: dict[str, Any], expect: dict[str, Any]) -> None:
    """A Debezium naming strategy: a table's data-change topic and the other topics."""
    try:
        source = debezium(vector)
    except DebeziumConfigError as error:
        return refused(expect, error)
    assert "refused" not in expect, "the configuration was accepted"
    if "table" in vector:
        table = vector["table"]
        topic = source.raw_topic(
            source.table(table.get("database", ""), table.get("schema"), table["table"])
        )
        assert topic == expect["topic"]
    kinds = {kind.value: topic for topic, kind in source.special_topic_kinds().items()}
    for kind in (TopicKind.HEARTBEAT, TopicKind.TRANSACTION, TopicKind.SCHEMA_CHANGE):
        if kind.value in expect:
            assert kinds[kind.value] == expect[kind.value]
    return None


def evaluate_sanitize(vector: dict[str, Any], expect: dict[str, Any]) -> None:
    """AbstractTopicNamingStrategy.sanitizedTopicName (unicode: the unicode strategies)."""
    sanitized = sanitized_topic_name(vector["name"], unicode=vector.get("unicode", False))
    assert sanitized == expect["topic"]
    if "length" in expect:
        assert len(sanitized) == expect["length"]


def evaluate_merged_topic(vector: dict[str, Any], expect: dict[str, Any]) -> None:
    """A connector whose router merges shards: which tables the registry's merged topic shows
    (the router renames the value schema to ``<merged topic>.Envelope`` too)."""
    topology = build_topology(
        [ConnectorDefinition(CONNECTOR, vector["config"])],
        vector["topics"],
        value_schema_names=vector.get("value_schema_names"),
    )
    lineage = topology.lineage_for(expect["topic"])
    assert sorted(t.qualified for t in lineage.source_tables) == expect["sources"]
    if "ambiguous" in expect:
        assert expect["ambiguous"] in (lineage.ambiguous_reason or "")
    else:
        assert not lineage.is_ambiguous, lineage.ambiguous_reason


def evaluate_iceberg_config(vector: dict[str, Any], expect: dict[str, Any]) -> None:
    """IcebergSinkConfig (and Kafka Connect's sink settings): accepted or refused."""
    try:
        sink = parse_iceberg_sink(CONNECTOR, vector["config"])
    except IcebergSinkConfigError as error:
        assert error.refused
        return refused(expect, error)
    assert "refused" not in expect, "the configuration was accepted"
    assert list(sink.tables) == expect.get("tables", list(sink.tables))
    return None


def evaluate_iceberg_route(vector: dict[str, Any], expect: dict[str, Any]) -> None:
    """SinkWriter: the tables a record whose route field holds ``value`` is written to, and
    (with ``catalog``) whether a missing table gets it (IcebergWriterFactory)."""
    sink = parse_iceberg_sink(CONNECTOR, vector["config"])
    if "decline" in vector:
        routing = sink.route(vector["topic"], None, [vector["topic"]])
        assert expect["ambiguous"] in (routing.ambiguous_reason or "")
        return
    tables, problem = sink.tables_for_value(vector["value"])
    assert problem is None, problem
    assert [f"{t.database}.{t.table}" for t in tables] == expect["routed"]
    if "catalog" in vector:
        written = [
            t
            for t in tables
            if sink.missing_tables == "created" or t.table in vector["catalog"].get(t.database, [])
        ]
        assert [f"{t.database}.{t.table}" for t in written] == expect["written"]


def evaluate_topic_name(vector: dict[str, Any], expect: dict[str, Any]) -> None:
    """Kafka's Topic.validate, on a registry schema's topic name."""
    problem = topic_name_problem(vector["topic"], vector["topic"])
    if expect["valid"]:
        assert problem is None, problem
    else:
        assert problem is not None and expect["problem"] in problem


EVALUATORS = {
    "router": evaluate_router,
    "chain": evaluate_chain,
    "topic_name_matches": evaluate_topic_name_matches,
    "regex_list": evaluate_regex_list,
    "table_filter": evaluate_table_filter,
    "topic_naming": evaluate_topic_naming,
    "sanitize": evaluate_sanitize,
    "merged_topic": evaluate_merged_topic,
    "iceberg_config": evaluate_iceberg_config,
    "iceberg_route": evaluate_iceberg_route,
    "topic_name": evaluate_topic_name,
}
