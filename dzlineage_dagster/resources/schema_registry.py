"""AWS Glue: the Schema Registry Debezium registers into, and the Data Catalog it feeds."""

from __future__ import annotations

from typing import Any, ClassVar

from dzlineage_dagster.resources.base import AwsClientResource


class SchemaRegistryResource(AwsClientResource):
    """Reads schemas from the Glue Schema Registry and tables from the Data Catalog (`glue`)."""

    service_names: ClassVar[tuple[str, ...]] = ("glue",)

    def list_schemas(self, registry_name: str) -> list[dict[str, Any]]:
        """Every `SchemaListItem` of the registry (with `UpdatedTime`), all pages."""
        return self.paginate(
            "glue",
            "list_schemas",
            "Schemas",
            page_size=100,  # ListSchemas' maximum
            RegistryId={"RegistryName": registry_name},
        )

    def get_schema(self, schema_arn: str) -> dict[str, Any]:
        return self.client().get_schema(SchemaId={"SchemaArn": schema_arn})

    def get_schema_version(self, schema_arn: str, version_number: int | None = None) -> dict:
        """The definition of one version (the latest when `version_number` is None)."""
        version = (
            {"LatestVersion": True} if version_number is None else {"VersionNumber": version_number}
        )
        return self.client().get_schema_version(
            SchemaId={"SchemaArn": schema_arn}, SchemaVersionNumber=version
        )

    def table_exists(self, database: str, table: str) -> bool:
        """Whether the Glue Data Catalog (same service) has the table the lineage points at."""
        glue = self.client()
        try:
            glue.get_table(DatabaseName=database, Name=table)
        except glue.exceptions.EntityNotFoundException:
            return False
        return True
