"""AWS Glue Schema Registry: the schemas Debezium registers, one per topic."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from dzlineage_dagster.resources.base import AwsClientResource

#: The status of a schema version producers can use (botocore's SchemaVersionStatus).
AVAILABLE = "AVAILABLE"


class GlueSchemaRegistryResource(AwsClientResource):
    """Reads schemas and their versions from the Glue Schema Registry (service `glue`)."""

    service_names: ClassVar[tuple[str, ...]] = ("glue",)

    def list_schemas(self, registry_name: str) -> Iterator[dict[str, Any]]:
        """Every `SchemaListItem` of the registry (with `UpdatedTime`), page by page as they
        are read: one page is held at a time, not the registry (100,000 schemas: 1,000
        pages)."""
        return self.paginate_lazily(
            "glue",
            "list_schemas",
            "Schemas",
            page_size=100,  # ListSchemas' maximum
            RegistryId={"RegistryName": registry_name},
        )

    def registry_arn(self, registry_name: str) -> str:
        return self.client().get_registry(RegistryId={"RegistryName": registry_name})["RegistryArn"]

    def get_schema(self, schema_arn: str) -> dict[str, Any]:
        return self.client().get_schema(SchemaId={"SchemaArn": schema_arn})

    def schema_named(self, registry_name: str, schema_name: str) -> dict[str, Any] | None:
        """GetSchema by name; None when the registry holds no schema of that name."""
        client = self.client()
        try:
            return client.get_schema(
                SchemaId={"RegistryName": registry_name, "SchemaName": schema_name}
            )
        except client.exceptions.EntityNotFoundException:
            return None

    def get_schema_version(self, schema_arn: str, version_number: int | None = None) -> dict:
        """The definition of one version; when `version_number` is None, the latest one a
        producer can use: a version that failed the schema's compatibility check (`Status`
        FAILURE), is still being checked (PENDING) or is being deleted was never served, yet
        may be numbered the latest. Then the newest AVAILABLE one is read (one
        ListSchemaVersions more); none at all: the latest as it is."""
        client = self.client()
        schema_id = {"SchemaArn": schema_arn}
        if version_number is not None:
            return client.get_schema_version(
                SchemaId=schema_id, SchemaVersionNumber={"VersionNumber": version_number}
            )
        latest = client.get_schema_version(
            SchemaId=schema_id, SchemaVersionNumber={"LatestVersion": True}
        )
        if latest.get("Status", AVAILABLE) == AVAILABLE:
            return latest
        usable = self.available_versions(schema_arn)
        if not usable:
            return latest
        return self.get_schema_version(schema_arn, usable[-1])

    def available_versions(self, schema_arn: str) -> list[int]:
        """The numbers of the schema's AVAILABLE versions, ascending (ListSchemaVersions)."""
        listed = self.paginate(
            "glue",
            "list_schema_versions",
            "Schemas",
            page_size=100,  # ListSchemaVersions' maximum
            SchemaId={"SchemaArn": schema_arn},
        )
        return sorted(int(v["VersionNumber"]) for v in listed if v["Status"] == AVAILABLE)

    def schema_arn_of_version(self, schema_version_id: str) -> str | None:
        """The ARN of the schema a version id belongs to (GetSchemaVersion); None when the
        version is gone."""
        client = self.client()
        try:
            return client.get_schema_version(SchemaVersionId=schema_version_id)["SchemaArn"]
        except client.exceptions.EntityNotFoundException:
            return None
