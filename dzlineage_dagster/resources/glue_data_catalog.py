"""AWS Glue Data Catalog: the Iceberg tables the topics' lineage points at."""

from __future__ import annotations

from typing import ClassVar

from dzlineage_dagster.resources.base import AwsClientResource


class GlueDataCatalogResource(AwsClientResource):
    """Reads tables from the Glue Data Catalog (service `glue`)."""

    service_names: ClassVar[tuple[str, ...]] = ("glue",)

    def table_exists(self, database: str, table: str) -> bool:
        glue = self.client()
        try:
            glue.get_table(DatabaseName=database, Name=table)
        except glue.exceptions.EntityNotFoundException:
            return False
        return True

    def table_names(self, database: str) -> list[str]:
        """Every table of ``database``, all pages."""
        tables = self.paginate("glue", "get_tables", "TableList", DatabaseName=database)
        return [table["Name"] for table in tables]
