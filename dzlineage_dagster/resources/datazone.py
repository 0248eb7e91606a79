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

    def portal_url(self, domain_id: str) -> str | None:
        return self.client().get_domain(identifier=domain_id).get("portalUrl")
