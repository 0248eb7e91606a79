"""A CDC platform of N synthetic table topics, for benchmarks.

Each topic is one of the demo platform's tables under a numbered name
(``shop.sales.orders_0042``), with that table's columns: a Debezium envelope value schema in
the registry and an Iceberg table in Glue named as the sink's ``cdc.target.pattern`` names it
(``sales_orders_0042``). :func:`platform_document` writes the platform in the demo file's format,
so ``dzlineage sandbox --seed FILE`` takes it too.

:func:`seed_synthetic_platform` seeds it through boto3 with ``seed.py``'s builders: ``seed.py``
itself makes the platform without tables (cluster, registries, database, connectors, DataZone),
then the topics' schemas and tables are created concurrently. One after the other, 1000 topics
(2000 calls) take about 15 s; concurrently about 7-11 s on two cores, bound by the endpoint's
CPU time per call.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import boto3
import yaml
from botocore.config import Config

from dzlineage_dagster.sandbox.demo.seed import (
    DEMO_PLATFORM,
    Column,
    PlatformSpec,
    SourceTable,
    debezium_value_schema,
    iceberg_table_input,
    load_platform_spec,
    seed_platform,
)
from dzlineage_dagster.sandbox.server.control import SANDBOX_CREDENTIALS, SANDBOX_REGION

SOURCE_CONNECTOR = "shop-debezium-source"
SINK_CONNECTOR = "shop-iceberg-sink"
SEED_WORKERS = 8
#: The column a new schema version adds (nullable, so the version stays BACKWARD compatible).
ADDED_COLUMN = Column("added_by_benchmark", "text", nullable=True)


@dataclass(frozen=True)
class SyntheticTopic:
    topic: str
    glue_table: str
    columns: tuple[Column, ...]
    schema_arn: str = ""
    version: int = 1


def _demo_document() -> dict[str, Any]:
    return yaml.safe_load(DEMO_PLATFORM.read_text())


def _numbered_tables(count: int) -> list[tuple[str, SourceTable]]:
    """``(<schema>.<table>_<n>, the demo table it copies)`` for ``count`` tables."""
    demo_tables = load_platform_spec(DEMO_PLATFORM).source_tables
    copies = [demo_tables[index % len(demo_tables)] for index in range(count)]
    return [(f"{t.schema}.{t.table}_{index:04d}", t) for index, t in enumerate(copies)]


def platform_document(count: int) -> dict[str, Any]:
    """The demo platform file with ``count`` numbered tables instead of the demo's six."""
    document = _demo_document()
    demo_bodies = document["source_tables"]
    tables = {
        name: {"columns": copy.deepcopy(demo_bodies[f"{demo.schema}.{demo.table}"]["columns"])}
        for name, demo in _numbered_tables(count)
    }
    prefix = document["connectors"][SOURCE_CONNECTOR]["config"]["topic.prefix"]
    document["source_tables"] = tables
    source = document["connectors"][SOURCE_CONNECTOR]["config"]
    source["table.include.list"] = ",".join(tables)
    # No heartbeat topic: the registry holds exactly the N table topics being measured.
    source["heartbeat.interval.ms"] = "0"
    document["glue_catalog"]["tables"] = {
        _glue_table_name(name): {"from_topic": f"{prefix}.{name}"} for name in tables
    }
    return document


def _glue_table_name(source_table: str) -> str:
    # The sink's cdc.target.pattern is lakehouse.{db}_{table}.
    return source_table.replace(".", "_")


def synthetic_topics(count: int) -> list[SyntheticTopic]:
    """The topics of :func:`platform_document`, each with the Glue table it feeds."""
    prefix = _demo_document()["connectors"][SOURCE_CONNECTOR]["config"]["topic.prefix"]
    return [
        SyntheticTopic(f"{prefix}.{name}", _glue_table_name(name), demo.column_versions()[0])
        for name, demo in _numbered_tables(count)
    ]


@dataclass
class SeededPlatform:
    """What was seeded: the variables that point the project at it, and its topics."""

    endpoint_url: str
    environment: dict[str, str]
    topics: dict[str, SyntheticTopic]

    @property
    def glue_database(self) -> str:
        return self.environment["DZLINEAGE_GLUE_DATABASE"]

    @property
    def registry_name(self) -> str:
        return self.environment["DZLINEAGE_REGISTRY_NAME"]


def boto3_client(endpoint_url: str, service: str, **config: Any) -> Any:
    """A boto3 client for the sandbox with its dummy credentials."""
    session = boto3.session.Session(
        aws_access_key_id=SANDBOX_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=SANDBOX_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=SANDBOX_CREDENTIALS["AWS_SESSION_TOKEN"],
        region_name=SANDBOX_REGION,
    )
    return session.client(service, endpoint_url=endpoint_url, config=Config(**config))


def write_platform_file(document: dict[str, Any], path: Path) -> PlatformSpec:
    """Write a platform file and read it back as ``--seed`` would (which checks it)."""
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return load_platform_spec(path)


@contextmanager
def _platform_file(document: dict[str, Any]) -> Iterator[tuple[Path, PlatformSpec]]:
    with tempfile.TemporaryDirectory(prefix="dzlineage-bench-") as directory:
        path = Path(directory) / "platform.yaml"
        yield path, write_platform_file(document, path)


@dataclass(frozen=True)
class _TopicSeeder:
    """Creates one topic's registry schema and Iceberg table (thread-safe: boto3 clients are)."""

    glue: Any
    spec: PlatformSpec
    warehouse: str

    def __call__(self, topic: SyntheticTopic) -> SyntheticTopic:
        database = self.spec.catalog["database"]
        created = self.glue.create_schema(
            RegistryId={"RegistryName": self.spec.registry["name"]},
            SchemaName=topic.topic,
            DataFormat="AVRO",
            Compatibility=self.spec.registry.get("compatibility", "BACKWARD"),
            SchemaDefinition=json.dumps(debezium_value_schema(topic.topic, topic.columns)),
        )
        table = iceberg_table_input(
            topic.glue_table,
            topic.columns,
            database=database,
            warehouse=self.warehouse,
            fed_by_cdc=True,
        )
        self.glue.create_table(DatabaseName=database, TableInput=table)
        return replace(topic, schema_arn=created["SchemaArn"])


def seed_synthetic_platform(endpoint_url: str, count: int) -> SeededPlatform:
    """Seed the platform of ``count`` topics on an (empty) endpoint."""
    # seed.py makes what is not per topic (the platform of no tables); topics go concurrently.
    with _platform_file(platform_document(0)) as (skeleton, spec):
        environment = seed_platform(endpoint_url, skeleton)
    account_id = boto3_client(endpoint_url, "sts").get_caller_identity()["Account"]
    seeder = _TopicSeeder(
        glue=boto3_client(endpoint_url, "glue", max_pool_connections=SEED_WORKERS),
        spec=spec,
        warehouse=spec.catalog["warehouse"].replace("${account_id}", account_id),
    )
    with ThreadPoolExecutor(SEED_WORKERS) as pool:
        seeded = list(pool.map(seeder, synthetic_topics(count)))
    return SeededPlatform(endpoint_url, environment, {t.topic: t for t in seeded})


def register_new_version(platform: SeededPlatform, topic: str) -> SyntheticTopic:
    """Give ``topic``'s schema a new version (one nullable column more), as an ALTER TABLE would."""
    current = platform.topics[topic]
    columns = (*current.columns, ADDED_COLUMN)
    glue = boto3_client(platform.endpoint_url, "glue")
    glue.register_schema_version(
        SchemaId={"SchemaArn": current.schema_arn},
        SchemaDefinition=json.dumps(debezium_value_schema(topic, columns)),
    )
    platform.topics[topic] = replace(current, columns=columns, version=current.version + 1)
    return platform.topics[topic]


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Write the platform file of N synthetic topics.")
    parser.add_argument("topics", type=int)
    parser.add_argument("path", type=Path)
    args = parser.parse_args(argv)
    spec = write_platform_file(platform_document(args.topics), args.path)
    print(
        f"{args.path}: {len(spec.source_tables)} table topics (dzlineage sandbox --seed {args.path})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
