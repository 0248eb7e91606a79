"""AWS Glue Data Catalog: the Iceberg tables the topics' lineage points at."""

from __future__ import annotations

from typing import Any, ClassVar

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

    def tables(self, database: str) -> list[dict[str, Any]]:
        """Every table of ``database`` (GetTables, all pages); [] when it does not exist."""
        glue = self.client()
        try:
            return self.paginate("glue", "get_tables", "TableList", DatabaseName=database)
        except glue.exceptions.EntityNotFoundException:
            return []

    def table_names(self, database: str) -> list[str]:
        """The names of every table of ``database``; [] when it does not exist."""
        return [table["Name"] for table in self.tables(database)]
