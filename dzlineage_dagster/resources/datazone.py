"""Amazon DataZone: custom types, topic assets and lineage events."""

from __future__ import annotations

from typing import Any, ClassVar

from dzlineage_dagster.resources.base import AwsClientResource


class DataZoneResource(AwsClientResource):
    """Talks to one DataZone domain's API (service `datazone`)."""

    service_names: ClassVar[tuple[str, ...]] = ("datazone",)

    def search_assets(
        self, domain_id: str, *, text: str | None = None, owning_project_id: str | None = None
    ) -> list[dict[str, Any]]:
        """`assetItem`s of every matching search result, all pages."""
        params: dict[str, Any] = {"domainIdentifier": domain_id, "searchScope": "ASSET"}
        if text:
            params["searchText"] = text
        if owning_project_id:
            params["owningProjectIdentifier"] = owning_project_id
        items = self.paginate("datazone", "search", "items", page_size=50, **params)
        return [item["assetItem"] for item in items if "assetItem" in item]

    def search_typed_assets(
        self, domain_id: str, *, owning_project_id: str, type_name: str
    ) -> tuple[list[dict[str, Any]], int]:
        """Every asset of one type and owning project with its forms, and the pages it took
        (Search, 50 a page)."""
        pages = (
            self.client()
            .get_paginator("search")
            .paginate(
                domainIdentifier=domain_id,
                searchScope="ASSET",
                owningProjectIdentifier=owning_project_id,
                filters={"filter": {"attribute": "typeName", "value": type_name}},
                additionalAttributes=["FORMS"],
                PaginationConfig={"PageSize": 50},
            )
        )
        items, count = [], 0
        for page in pages:
            count += 1
            items.extend(item["assetItem"] for item in page.get("items", []) if "assetItem" in item)
        return items, count

    def lineage_event_summaries(self, domain_id: str) -> tuple[list[dict[str, Any]], int]:
        """Every lineage event of the domain (ListLineageEvents, 50 a page), and the pages."""
        pages = (
            self.client()
            .get_paginator("list_lineage_events")
            .paginate(domainIdentifier=domain_id, PaginationConfig={"PageSize": 50})
        )
        items, count = [], 0
        for page in pages:
            count += 1
            items.extend(page.get("items", []))
        return items, count
