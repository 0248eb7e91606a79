"""The one resource the assets, checks, jobs and the sensor take: the settings and every AWS
service the sync reaches, built the same way for Definitions and for `dzlineage sync`."""

from __future__ import annotations

from typing import Any

from dagster import ConfigurableResource

from dzlineage_dagster.resources.base import AwsClientResource
from dzlineage_dagster.resources.datazone import DataZoneResource
from dzlineage_dagster.resources.glue_data_catalog import GlueDataCatalogResource
from dzlineage_dagster.resources.glue_schema_registry import GlueSchemaRegistryResource
from dzlineage_dagster.resources.msk import MskResource
from dzlineage_dagster.resources.ssm_mapping import SsmMappingResource
from dzlineage_dagster.settings import LineageSettings


class LineageSyncResource(ConfigurableResource):
    """Where the CDC platform and DataZone are, and a resource per AWS service to reach them."""

    settings: LineageSettings
    schema_registry: GlueSchemaRegistryResource
    data_catalog: GlueDataCatalogResource
    mapping_parameters: SsmMappingResource
    datazone: DataZoneResource
    msk: MskResource

    @classmethod
    def with_settings(
        cls, settings: LineageSettings, aws_options: dict[str, Any] | None = None
    ) -> LineageSyncResource:
        """Every AWS resource with the same options (see `settings.aws_resource_options`)."""
        aws = aws_options or {}
        return cls(
            settings=settings,
            schema_registry=GlueSchemaRegistryResource(**aws),
            data_catalog=GlueDataCatalogResource(**aws),
            mapping_parameters=SsmMappingResource(**aws),
            datazone=DataZoneResource(**aws),
            msk=MskResource(**aws),
        )

    @property
    def aws_resources(self) -> list[AwsClientResource]:
        return [
            self.schema_registry,
            self.data_catalog,
            self.mapping_parameters,
            self.datazone,
            self.msk,
        ]
