"""The one resource the assets, checks, jobs and the sensor take: the settings and every AWS
service the sync reaches, built the same way for Definitions and for `dzlineage sync`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dagster import ConfigurableResource
from pydantic import Field

from dzlineage_dagster.resources.base import AwsClientResource
from dzlineage_dagster.resources.datazone import DataZoneResource
from dzlineage_dagster.resources.glue_data_catalog import GlueDataCatalogResource
from dzlineage_dagster.resources.glue_schema_registry import GlueSchemaRegistryResource
from dzlineage_dagster.resources.msk import MskResource
from dzlineage_dagster.resources.ssm_mapping import SsmMappingResource
from dzlineage_dagster.scopes import ScopeConfig, scoped_settings
from dzlineage_dagster.settings import LineageSettings

#: Each AWS resource's attribute, class and side (settings.AWS_SIDES), the data side's first:
#: the one place that decides which side's credentials reach a service (doctor's rows follow
#: this order). The data side reads the registry, the Glue catalog, MSK and MSK Connect; the
#: governance side writes DataZone and the SSM mapping.
AWS_RESOURCES: dict[str, tuple[type[AwsClientResource], str]] = {
    "schema_registry": (GlueSchemaRegistryResource, "data"),
    "data_catalog": (GlueDataCatalogResource, "data"),
    "msk": (MskResource, "data"),
    "datazone": (DataZoneResource, "governance"),
    "mapping_parameters": (SsmMappingResource, "governance"),
}


def side_attributes() -> dict[str, tuple[str, ...]]:
    """Each side's AWS resources by attribute name, data side first."""
    sides: dict[str, list[str]] = {}
    for name, (_, side) in AWS_RESOURCES.items():
        sides.setdefault(side, []).append(name)
    return {side: tuple(names) for side, names in sides.items()}


class LineageSyncResource(ConfigurableResource):
    """Where the CDC platform and DataZone are, and a resource per AWS service to reach them."""

    settings: LineageSettings
    schema_registry: GlueSchemaRegistryResource
    data_catalog: GlueDataCatalogResource
    mapping_parameters: SsmMappingResource
    datazone: DataZoneResource
    msk: MskResource
    scopes: list[ScopeConfig] = Field(
        default=[],
        description=(
            "The registries this deployment serves (DZLINEAGE_SCOPES, docs/scopes.md), each "
            "with its own settings, Region and role; empty: the settings' one registry."
        ),
    )

    @classmethod
    def with_settings(
        cls,
        settings: LineageSettings,
        side_options: Mapping[str, dict[str, Any]] | None = None,
        scopes: list[ScopeConfig] | None = None,
    ) -> LineageSyncResource:
        """Every AWS resource, each with its side's options (`settings.aws_side_options`)."""
        return cls(
            settings=settings,
            scopes=scopes or [],
            **{
                name: resource_class(**{"side": side, **(side_options or {}).get(side, {})})
                for name, (resource_class, side) in AWS_RESOURCES.items()
            },
        )

    @property
    def scope_names(self) -> list[str | None]:
        """Each scope's name, or ``[None]``: the settings' one registry, unnamed."""
        return [scope.name for scope in self.scopes] or [None]

    def scope(self, name: str) -> ScopeConfig:
        """The scope called ``name``; KeyError names the scopes there are."""
        for scope in self.scopes:
            if scope.name == name:
                return scope
        known = ", ".join(scope.name for scope in self.scopes) or "none (DZLINEAGE_SCOPES unset)"
        raise KeyError(f"no scope {name!r} in DZLINEAGE_SCOPES; its scopes: {known}")

    def for_scope(self, name: str | None) -> LineageSyncResource:
        """The resource as scope ``name`` sees it (None: the settings' one registry): its
        settings, and its Region and role on the data side's AWS resources."""
        if name is None:
            return self
        scope = self.scope(name)
        options = scope.data_side_options()
        return type(self)(
            settings=scoped_settings(self.settings, scope),
            scopes=[scope],
            **{
                attribute: (
                    getattr(self, attribute).with_options(**options)
                    if side == "data"
                    else getattr(self, attribute)
                )
                for attribute, (_, side) in AWS_RESOURCES.items()
            },
        )

    @property
    def aws_resources(self) -> list[AwsClientResource]:
        return [getattr(self, name) for name in AWS_RESOURCES]
