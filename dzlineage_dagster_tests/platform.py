"""A freshly seeded demo platform per test, and ways to run the project against it."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

import boto3
from dagster import DagsterInstance, Definitions, ExecuteInProcessResult, build_sensor_context

from dzlineage_dagster.assets.common import kafka_topics
from dzlineage_dagster.boto3_sessions import new_session
from dzlineage_dagster.core.catalog.discovery import RegistryTopic, registry_topics
from dzlineage_dagster.definitions import defs
from dzlineage_dagster.sandbox.demo.accounts import side_session
from dzlineage_dagster.sandbox.demo.seed import (
    Column,
    debezium_value_schema,
    grant_type_policies,
    seed_platform,
)
from dzlineage_dagster.sensors import registry_schema_sensor, registry_schema_tick
from dzlineage_dagster.settings import LineageSettings

READ_PREFIXES = ("Get", "List", "Search", "Describe")


def writes(counts: Counter, *services: str) -> dict[str, int]:
    """The write calls among `counts` for these services (anything not a read)."""
    return {
        f"{service}.{operation}": n
        for (service, operation), n in counts.items()
        if service in services and not (operation or "").startswith(READ_PREFIXES)
    }


@dataclass
class DemoPlatform:
    sandbox: Any
    environment: dict[str, str]
    instance: DagsterInstance
    _clients: dict[str, Any] = field(default_factory=dict, repr=False)

    @cached_property
    def settings(self) -> LineageSettings:
        return LineageSettings.from_env(self.environment)

    @property
    def control(self):
        return self.sandbox.control

    def client(self, service: str, **config: Any):
        """A boto3 client for the sandbox; the plain ones are built once (building costs ms)."""
        if config:
            return self.sandbox.client(service, **config)
        if service not in self._clients:
            self._clients[service] = self.sandbox.client(service)
        return self._clients[service]

    def base_session(self) -> boto3.session.Session:
        """A session with the environment's own credentials (before any role is assumed)."""
        return new_session(
            aws_access_key_id=self.environment["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=self.environment["AWS_SECRET_ACCESS_KEY"],
            aws_session_token=self.environment.get("AWS_SESSION_TOKEN"),
            region_name=self.environment["AWS_REGION"],
        )

    def side_client(self, side: str, service: str):
        """A boto3 client with ``side``'s role, in its account (a two-account platform)."""
        if (side, service) not in self._clients:
            endpoint = self.environment["AWS_ENDPOINT_URL"]
            session = side_session(self.base_session(), side, endpoint)
            self._clients[side, service] = session.client(service, endpoint_url=endpoint)
        return self._clients[side, service]

    def grant_type_policies(self, project_id: str) -> None:
        """What an administrator grants a project of the test's (a steward's) so it may create
        form types, asset types and glossaries in a V2 domain, or one with domain units."""
        datazone = self.client("datazone")
        domain = datazone.get_domain(identifier=self.settings.domain_id)
        grant_type_policies(datazone, domain["id"], domain["rootDomainUnitId"], project_id)

    def listed_topics(self) -> dict[str, RegistryTopic]:
        pages = (
            self.client("glue")
            .get_paginator("list_schemas")
            .paginate(RegistryId={"RegistryName": self.settings.registry_name})
        )
        return registry_topics(item for page in pages for item in page["Schemas"])

    def registry_topics(self) -> list[str]:
        return list(self.listed_topics())

    def schema_arn(self, topic: str) -> str:
        return self.listed_topics()[topic].schema_arn

    def create_schema(self, name: str, definition: dict, compatibility: str = "BACKWARD") -> None:
        """A new Avro schema in the platform's registry."""
        self.client("glue").create_schema(
            RegistryId={"RegistryName": self.settings.registry_name},
            SchemaName=name,
            DataFormat="AVRO",
            Compatibility=compatibility,
            SchemaDefinition=json.dumps(definition),
        )

    def create_table_topic(self, topic: str, columns: list[Column]) -> None:
        """A table topic with the value schema Debezium would register for these columns."""
        self.create_schema(topic, debezium_value_schema(topic, columns))

    def register_new_version(self, topic: str, column: str) -> None:
        """A compatible new schema version: an optional column added to the envelope's row."""
        optional = {"name": column, "type": ["null", "string"], "default": None}
        self.register_with_column(topic, optional)

    def register_with_column(self, topic: str, column: dict, version: int | None = None) -> dict:
        """A new schema version: ``version``'s definition (the latest by default) with
        ``column`` added to the envelope's row; RegisterSchemaVersion's answer."""
        glue = self.client("glue")
        schema_id = {"SchemaArn": self.schema_arn(topic)}
        number = {"LatestVersion": True} if version is None else {"VersionNumber": version}
        base = glue.get_schema_version(SchemaId=schema_id, SchemaVersionNumber=number)
        envelope = json.loads(base["SchemaDefinition"])
        before = next(f for f in envelope["fields"] if f["name"] == "before")
        row = next(branch for branch in before["type"] if isinstance(branch, dict))
        row["fields"].append(column)
        return glue.register_schema_version(
            SchemaId=schema_id, SchemaDefinition=json.dumps(envelope)
        )

    def upstream_source_identifiers(self, node: dict, depth: int) -> set[str]:
        """sourceIdentifiers of the lineage nodes up to `depth` hops upstream of `node`."""
        datazone = self.client("datazone")
        found: set[str] = set()
        frontier = [node]
        for _ in range(depth):
            next_frontier = []
            for current in frontier:
                for reference in current.get("upstreamNodes", []):
                    upstream = datazone.get_lineage_node(
                        domainIdentifier=self.settings.domain_id, identifier=reference["id"]
                    )
                    found.add(upstream.get("sourceIdentifier", ""))
                    next_frontier.append(upstream)
            frontier = next_frontier
        return found

    def tick(
        self,
        cursor: str | None = None,
        now: datetime | None = None,
        definitions: Definitions = defs,
    ):
        """One evaluation of the registry sensor (at ``now``, when given, instead of the wall
        clock's time; with the resources of ``definitions``), with its partition requests
        applied."""
        with build_sensor_context(
            instance=self.instance,
            cursor=cursor,
            definitions=definitions,
            resources=definitions.resources,
        ) as context:
            result = (
                registry_schema_sensor(context)
                if now is None
                else registry_schema_tick(context, context.resources.lineage_sync, now)
            )
        self.apply_partition_requests(result)
        return result

    def apply_partition_requests(self, result) -> None:
        """A sensor result's partition requests, applied as Dagster's daemon applies them."""
        for request in getattr(result, "dynamic_partitions_requests", None) or []:
            if type(request).__name__ == "AddDynamicPartitionsRequest":
                self.instance.add_dynamic_partitions(
                    request.partitions_def_name, request.partition_keys
                )
            else:
                for key in request.partition_keys:
                    self.instance.delete_dynamic_partition(request.partitions_def_name, key)

    def sync(
        self, topics: list[str] | None = None, definitions: Definitions = defs
    ) -> ExecuteInProcessResult:
        """The catalog_sync job over the partition range from the first to the last topic
        (``definitions``: the project's, or a copy with other resources)."""
        keys = self.instance.get_dynamic_partitions(kafka_topics.name)
        if not keys:
            self.instance.add_dynamic_partitions(kafka_topics.name, self.registry_topics())
            keys = self.instance.get_dynamic_partitions(kafka_topics.name)
        chosen = topics or keys
        return definitions.resolve_job_def("catalog_sync").execute_in_process(
            instance=self.instance,
            tags={
                "dagster/asset_partition_range_start": chosen[0],
                "dagster/asset_partition_range_end": chosen[-1],
            },
            raise_on_error=False,
        )


#: Which DataZone domain version the ``platform`` fixture seeds: ``V1`` (default) or ``V2``
#: (SageMaker Unified Studio, with its grants), to run the scenario tests under either.
DOMAIN_VERSION_VARIABLE = "DZLINEAGE_TEST_DOMAIN_VERSION"


def fresh_platform(
    sandbox: Any,
    monkeypatch: Any,
    domain_version: str | None = None,
    *,
    two_accounts: bool = False,
) -> DemoPlatform:
    """``two_accounts``: the data side and DataZone in two accounts, each reached through its
    role (the sandbox's ``--accounts two``); :meth:`DemoPlatform.client` is then the third,
    the deployment's own, which reaches neither without a role."""
    sandbox.control.reset()
    version = domain_version or os.environ.get(DOMAIN_VERSION_VARIABLE, "V1")
    seeded = seed_platform(sandbox.endpoint_url, domain_version=version, two_accounts=two_accounts)
    environment = {**sandbox.environment(), **seeded}
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    sandbox.control.clear_calls()
    return DemoPlatform(sandbox, environment, DagsterInstance.ephemeral())
