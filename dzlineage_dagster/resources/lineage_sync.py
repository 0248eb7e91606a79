"""The one resource the assets, checks, jobs and the sensor take: the settings and every AWS
service the sync reaches, built the same way for Definitions and for `dzlineage sync`."""

from __future__ import annotations

from collections.abc import Mapping
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
        cls, settings: LineageSettings, side_options: Mapping[str, dict[str, Any]] | None = None
    ) -> LineageSyncResource:
        """Every AWS resource, each with its side's options (`settings.aws_side_options`): the
        one place that decides which side's credentials a service is reached with."""
        data = {"side": "data", **(side_options or {}).get("data", {})}
        governance = {"side": "governance", **(side_options or {}).get("governance", {})}
        return cls(
            settings=settings,
            schema_registry=GlueSchemaRegistryResource(**data),
            data_catalog=GlueDataCatalogResource(**data),
            msk=MskResource(**data),
            mapping_parameters=SsmMappingResource(**governance),
            datazone=DataZoneResource(**governance),
        )

    @property
    def side_resources(self) -> dict[str, list[AwsClientResource]]:
        """The AWS resources of each side (:data:`~dzlineage_dagster.settings.AWS_SIDES`)."""
        sides: dict[str, list[AwsClientResource]] = {}
        for resource in self.aws_resources:
            sides.setdefault(resource.side or "", []).append(resource)
        return sides

    @property
    def aws_resources(self) -> list[AwsClientResource]:
        return [
            self.schema_registry,
            self.data_catalog,
            self.mapping_parameters,
            self.datazone,
            self.msk,
        ]
