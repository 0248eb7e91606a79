"""AWS Glue Data Catalog: the Iceberg tables the topics' lineage points at."""

from __future__ import annotations

from typing import Any, ClassVar

from dzlineage_dagster.resources.base import AwsClientResource


class GlueDataCatalogResource(AwsClientResource):
    """Reads tables from the Glue Data Catalog (service `glue`). ``catalog_id`` (the settings'
    `glue_catalog_id`) names another account's catalog; None is the caller's own."""

    service_names: ClassVar[tuple[str, ...]] = ("glue",)

    def table_exists(self, database: str, table: str, catalog_id: str | None = None) -> bool:
        return self.table(database, table, catalog_id) is not None

    def table(
        self, database: str, table: str, catalog_id: str | None = None
    ) -> dict[str, Any] | None:
        """GetTable's ``Table``; None when the table or its database does not exist."""
        glue = self.client()
        try:
            return glue.get_table(DatabaseName=database, Name=table, **_catalog(catalog_id))[
                "Table"
            ]
        except glue.exceptions.EntityNotFoundException:
            return None

    def tables(self, database: str, catalog_id: str | None = None) -> list[dict[str, Any]]:
        """Every table of ``database`` (GetTables, all pages); [] when it does not exist."""
        glue = self.client()
        try:
            return self.paginate(
                "glue", "get_tables", "TableList", DatabaseName=database, **_catalog(catalog_id)
            )
        except glue.exceptions.EntityNotFoundException:
            return []

    def table_names(self, database: str, catalog_id: str | None = None) -> list[str]:
        """The names of every table of ``database``; [] when it does not exist."""
        return [table["Name"] for table in self.tables(database, catalog_id)]


def _catalog(catalog_id: str | None) -> dict[str, str]:
    # Glue: "If none is provided, the Amazon Web Services account ID is used by default."
    return {"CatalogId": catalog_id} if catalog_id else {}
