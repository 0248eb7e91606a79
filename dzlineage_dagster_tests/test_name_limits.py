"""Names at, and one past, every length limit the sync touches, end to end (headless CLI sync).

Each name is derived from the limit it probes (the product's constants, checked against
botocore's models in the core tests), never written out. At a limit a topic gets one asset, a
valid mapping and its lineage edges; one past it the product either shortens or hashes the name
(DataZone's asset name, SSM's parameter name) or fails that topic by name, saying which limit,
while the other topics complete and nothing is half-written; a rerun writes nothing.

| limit | name the test builds |
|---|---|
| Kafka topic, 249 | a 249-character topic with a ``-value`` schema (GSR's 255 exactly); a 250-character one |
| DataZone asset name, 256 | ``<cluster>.<topic>`` of 256 and of 257 characters |
| SSM name, 1011 with the ARN; 15 levels | a prefix of 11 levels (names of exactly 15) whose
  readable mapping name for one topic is exactly the longest allowed, one character more for
  the next |
| Glue table name, 255 | sink targets of 255 and 256 characters, derived from the topic by the
  sink's ``cdc.target.pattern`` |
| DataZone ``externalIdentifier``, 600; lineage node identifier, 2086 | unreachable: the longest
  names AWS, Kafka and DNS allow still fit (checked without a sync) |

Tested elsewhere: PostLineageEvent's 300,000 bytes in ``test_catalog_hard_inputs.py``;
the settings (``DZLINEAGE_SSM_PREFIX`` levels and length) in ``test_bad_settings.py``; the
sandbox's Glue name limits in ``sandbox/test_moto_gaps.py``.
"""

from __future__ import annotations

import io
import json

import botocore.session

from dzlineage_dagster.checks import lineage_tables_exist_in_glue
from dzlineage_dagster.core.catalog.planning import MAX_ASSET_NAME_LENGTH
from dzlineage_dagster.core.connectors.table_mapping import MAX_GLUE_NAME_LENGTH
from dzlineage_dagster.core.connectors.topics import MAX_TOPIC_NAME_LENGTH
from dzlineage_dagster.core.identity.kafka import kafka_dataset_namespace
from dzlineage_dagster.core.lineage.openlineage import (
    dataset_source_identifier,
    glue_source_identifier,
)
from dzlineage_dagster.core.mapping.ssm_names import (
    HASH_NAMESPACE,
    MAX_HIERARCHY_LEVELS,
    MAX_PARAMETER_ARN_LENGTH,
    PARAMETER_ARN_PREFIX_ALLOWANCE,
    READABLE_NAMESPACE,
    MappingRecord,
    is_digest_parameter,
    parameter_name,
)
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.sandbox.demo.seed import Column, debezium_value_schema
from dzlineage_dagster.sync.headless import run_headless_sync
from dzlineage_dagster_tests.platform import writes
from dzlineage_dagster_tests.test_catalog_sync import topic_assets
from dzlineage_dagster_tests.test_connector_lineage import create_connector, posted_events

COLUMNS = [Column("id", "bigint", nullable=False), Column("note", "text", nullable=True)]
#: The longest name an SSM parameter may have after its leading slash, in any region.
MAX_SSM_NAME = MAX_PARAMETER_ARN_LENGTH - PARAMETER_ARN_PREFIX_ALLOWANCE
#: Levels of the mapping's own below the prefix: domain, project, namespace, name.
LEVELS_BELOW_PREFIX = 4
HISTORY_SUFFIX = "_cdc_history"

SOURCE = {
    "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
    "database.hostname": "lim-db.internal",
    "database.port": "5432",
    "database.dbname": "lim",
    "topic.prefix": "lim",
    "table.include.list": r"(public|history)\..*",
}


def dynamic_sink(topics_regex: str, target_pattern: str) -> dict[str, str]:
    """A sink that names each topic's table from its source table (``{db}`` is the schema)."""
    return {
        "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
        "topics.regex": topics_regex,
        "transforms": "debezium",
        "transforms.debezium.type": "org.apache.iceberg.connect.transforms.DebeziumTransform",
        "transforms.debezium.cdc.target.pattern": target_pattern,
        "iceberg.tables.dynamic-enabled": "true",
        "iceberg.tables.route-field": "_cdc.target",
        "iceberg.catalog.type": "glue",
        # The sandbox's Glue catalog has none of the routed tables: the sink creates them
        # (without auto-create it would write nothing to them, and post no edge).
        "iceberg.tables.auto-create-enabled": "true",
    }


def topic_of_length(prefix: str, length: int, filler: str) -> str:
    return prefix + filler * (length - len(prefix))


def headless(settings, *, dry_run: bool = False) -> tuple[int, str]:
    out = io.StringIO()
    return run_headless_sync(settings, dry_run=dry_run, out=out), out.getvalue()


def mapping_parameters(platform, prefix: str) -> dict[str, MappingRecord]:
    """Every one-per-topic mapping parameter under ``prefix`` (digests left out), parsed."""
    pages = platform.client("ssm").get_paginator("get_parameters_by_path")
    return {
        parameter["Name"]: MappingRecord.from_parameter_value(parameter["Value"])
        for page in pages.paginate(Path=prefix, Recursive=True)
        for parameter in page["Parameters"]
        if not is_digest_parameter(prefix, parameter["Name"])
    }


def test_names_at_each_limit_sync_and_one_past_fail_by_name_or_shorten(platform):
    cluster = platform.client("kafka").describe_cluster_v2(
        ClusterArn=platform.settings.msk_cluster_arn
    )["ClusterInfo"]["ClusterName"]
    longest_topic_for_name = MAX_ASSET_NAME_LENGTH - len(cluster) - len(".")
    glue_prefix = len("history_") + len(HISTORY_SUFFIX)  # what the pattern adds to the table
    topics = {
        # Kafka's limit, its schema named `<topic>-value`: GSR's 255 exactly.
        "kafka_at": topic_of_length("lim.public.", MAX_TOPIC_NAME_LENGTH, "k"),
        "kafka_past": topic_of_length("lim.public.", MAX_TOPIC_NAME_LENGTH + 1, "m"),
        "name_at": topic_of_length("lim.public.", longest_topic_for_name, "n"),
        "name_past": topic_of_length("lim.public.", longest_topic_for_name + 1, "n"),
        # The sink's pattern makes `history_<table>_cdc_history` of `lim.history.<table>`.
        "glue_at": "lim.history." + "g" * (MAX_GLUE_NAME_LENGTH - glue_prefix),
        "glue_past": "lim.history." + "g" * (MAX_GLUE_NAME_LENGTH - glue_prefix + 1),
    }
    assert all(len(t) <= MAX_TOPIC_NAME_LENGTH for k, t in topics.items() if k != "kafka_past")
    create_connector(platform, "lim-source", SOURCE)
    create_connector(
        platform, "lim-sink", dynamic_sink(r"lim\.public\..*", "lakehouse.{db}_{table}")
    )
    create_connector(
        platform,
        "lim-history-sink",
        dynamic_sink(r"lim\.history\..*", f"lakehouse.{{db}}_{{table}}{HISTORY_SUFFIX}"),
    )
    for key, topic in topics.items():
        schema_name = f"{topic}-value" if key == "kafka_at" else topic
        platform.create_schema(schema_name, debezium_value_schema(topic, COLUMNS))
    kafka_at_schema = platform.listed_topics()[topics["kafka_at"]].schema_name
    assert len(kafka_at_schema) == botocore_max("glue", "CreateSchema", "SchemaName")

    # An SSM prefix of the most levels the mapping allows, as long as makes `name_at`'s
    # readable mapping name the longest SSM takes: `name_past`'s is one character longer.
    settings = platform.settings
    scope = f"/{settings.domain_id}/{settings.project_id}/{READABLE_NAMESPACE}/"
    escaped = len(parameter_name("/p", platform.schema_arn(topics["name_at"]))) - len("/p/s/")
    prefix_length = len("/") + MAX_SSM_NAME - len(scope) - escaped
    levels = ["limits"] * (MAX_HIERARCHY_LEVELS - LEVELS_BELOW_PREFIX - 1)
    last = prefix_length - len("/" + "/".join(levels)) - len("/")
    ssm_prefix = "/" + "/".join([*levels, "p" * last])
    assert len(ssm_prefix) == prefix_length
    # One parameter a topic, named after its schema: the layout whose names SSM's limits bind
    # (the packed layout's bucket names are short whatever the schema's name).
    settings = settings.model_copy(
        update={"ssm_prefix": ssm_prefix, "ssm_mapping_layout": "per-topic"}
    )
    scoped = f"{ssm_prefix}/{settings.domain_id}/{settings.project_id}"

    # One past Kafka's limit names no topic: the dry run and the sync say so, once, and it
    # fails nothing (only deleting the schema could change it).
    not_a_topic = (
        f"  {topics['kafka_past']}: topic name of {MAX_TOPIC_NAME_LENGTH + 1} characters, more "
        f"than Kafka's {MAX_TOPIC_NAME_LENGTH}: its schema names no topic that can exist"
    )
    _, plan = headless(settings, dry_run=True)
    planned_errors = [line for line in plan.splitlines() if " FAILED " in line]
    assert [topics["glue_past"]] == [line.split()[0] for line in planned_errors], plan
    assert plan.count(not_a_topic) == 1, plan

    code, out = headless(settings)
    assert code == 1, out
    assert out.count(not_a_topic) == 1, out
    # One past Glue's limit: the topic's asset is made, its lineage is not posted.
    [glue_line] = [line for line in out.splitlines() if "FAILED" in line]
    assert topics["glue_past"] in glue_line
    assert "lineage:" in glue_line and f"Glue Data Catalog's {MAX_GLUE_NAME_LENGTH}" in glue_line
    assert f"{len(platform.listed_topics()) - 1} topics, 1 failed" in out

    assets = topic_assets(platform)
    arns = {key: platform.schema_arn(topic) for key, topic in topics.items()}
    assert arns["kafka_past"] not in assets
    records = mapping_parameters(platform, scoped)
    by_arn = {record.schema_arn: (name, record) for name, record in records.items()}
    # Nothing half-written: every topic asset has its mapping and every mapping its asset.
    assert {arn: [record.asset_id] for arn, (_, record) in by_arn.items()} == assets
    assert arns["kafka_past"] not in by_arn

    datazone = platform.client("datazone")
    asset_names = {}
    for key in ("kafka_at", "name_at", "name_past", "glue_at", "glue_past"):
        name, record = by_arn[arns[key]]
        assert record.topic == topics[key]
        asset = datazone.get_asset(domainIdentifier=settings.domain_id, identifier=record.asset_id)
        assert asset["externalIdentifier"] == arns[key]
        asset_names[key] = asset["name"]
        assert len(name.removeprefix("/")) <= MAX_SSM_NAME
        assert name.count("/") <= MAX_HIERARCHY_LEVELS
    # The topic past Glue's limit keeps its asset and mapping, with no lineage recorded.
    assert by_arn[arns["glue_past"]][1].lineage_fingerprint == ""
    # DataZone's name: whole at the limit, shortened one past it (its start kept, then `~` and
    # a hash of the whole name, so two long topics keep two names).
    assert asset_names["name_at"] == f"{cluster}.{topics['name_at']}"
    assert len(asset_names["name_at"]) == MAX_ASSET_NAME_LENGTH
    whole = f"{cluster}.{topics['name_past']}"
    assert len(asset_names["name_past"]) == MAX_ASSET_NAME_LENGTH
    kept, _, digest = asset_names["name_past"].rpartition("~")
    assert whole.startswith(kept) and len(digest) == 12 and kept
    assert len(asset_names["kafka_at"]) == MAX_ASSET_NAME_LENGTH
    assert len(set(asset_names.values())) == len(asset_names)
    # SSM: readable at the limit, hashed one past it, each at 15 levels.
    at_name = by_arn[arns["name_at"]][0]
    assert at_name.startswith(f"{scoped}/{READABLE_NAMESPACE}/")
    assert len(at_name.removeprefix("/")) == MAX_SSM_NAME
    assert at_name.count("/") == MAX_HIERARCHY_LEVELS
    assert by_arn[arns["name_past"]][0].startswith(f"{scoped}/{HASH_NAMESPACE}/")

    # Lineage: both hops of every topic within the limits, none of a failed one.
    run_topics = {key: topics[key] for key in ("kafka_at", "name_at", "name_past", "glue_at")}
    region, account = settings.msk_cluster_arn.split(":")[3:5]
    for key, topic in run_topics.items():
        schema, table = topic.split(".")[1:]
        suffix = HISTORY_SUFFIX if schema == "history" else ""
        glue_table = f"{schema}_{table}{suffix}"
        assert len(glue_table) <= MAX_GLUE_NAME_LENGTH
        node = platform.client("datazone").get_lineage_node(
            domainIdentifier=settings.domain_id,
            identifier=glue_source_identifier(region, account, "lakehouse", glue_table),
        )
        upstream = platform.upstream_source_identifiers(node, 4)
        assert any(i.endswith(f"/{topic}") for i in upstream), key
        assert f"postgres://lim-db.internal:5432/lim.{schema}.{table}" in upstream, key
    assert len(f"history_{topics['glue_at'].split('.')[2]}{HISTORY_SUFFIX}") == MAX_GLUE_NAME_LENGTH
    events = posted_events(platform)
    mentioned = json.dumps(events)
    assert topics["glue_past"] not in mentioned and topics["kafka_past"] not in mentioned

    # The catalog check names the table Glue cannot hold instead of failing on GetTable.
    check = lineage_tables_exist_in_glue(lineage_sync=LineageSyncResource.with_settings(settings))
    problems = json.dumps(check.metadata["problems"].value)
    assert not check.passed and topics["glue_past"] in problems
    assert f"Glue Data Catalog's {MAX_GLUE_NAME_LENGTH}" in problems

    # A rerun converges: the same failure, the same note, and not one write.
    platform.control.clear_calls()
    code, again = headless(settings)
    assert code == 1 and f"{len(platform.listed_topics()) - 1} topics, 1 failed" in again
    assert again.count(not_a_topic) == 1, again
    assert writes(platform.control.call_counts(), "datazone", "ssm") == {}
    assert mapping_parameters(platform, scoped) == records


def botocore_max(service: str, operation: str, *member_path: str) -> int:
    shape = botocore.session.get_session().get_service_model(service)
    shape = shape.operation_model(operation).input_shape
    for member in member_path:
        shape = shape.members[member]
    return shape.metadata["max"]


def test_the_longest_names_aws_allows_fit_every_identifier_built_from_them():
    # Limits no topic can reach: a schema ARN (the asset's externalIdentifier) and the lineage
    # nodes' sourceIdentifiers (GetLineageNode's identifier) built from the longest parts AWS,
    # Kafka and DNS allow, in the longest partition, with a region longer than any.
    partition, region, account = "aws-us-gov", "r" * 20, "1" * 12
    registry = "r" * botocore_max("glue", "CreateRegistry", "RegistryName")
    schema = "s" * botocore_max("glue", "CreateSchema", "SchemaName")
    schema_arn = f"arn:{partition}:glue:{region}:{account}:schema/{registry}/{schema}"
    assert len(schema_arn) <= botocore_max("datazone", "CreateAsset", "externalIdentifier")

    node_limit = botocore_max("datazone", "GetLineageNode", "identifier")
    longest_host = ".".join(["h" * 63] * 4)[:253]  # DNS: 253 characters, labels of 63
    topic_namespace = kafka_dataset_namespace(f"{longest_host}:65535")
    topic = "t" * MAX_TOPIC_NAME_LENGTH
    assert len(dataset_source_identifier(topic_namespace, topic)) <= node_limit
    longest_glue = "g" * MAX_GLUE_NAME_LENGTH
    table_arn = glue_source_identifier(region, account, longest_glue, longest_glue)
    assert len(table_arn.replace(":aws:", f":{partition}:")) <= node_limit
