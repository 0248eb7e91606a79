"""The one resource the assets, checks and jobs take: the settings and every AWS service."""

from __future__ import annotations

from dagster import ConfigurableResource

from dzlineage_dagster.resources.datazone import DataZoneResource
from dzlineage_dagster.resources.msk import MskResource
from dzlineage_dagster.resources.parameter_store import ParameterStoreResource
from dzlineage_dagster.resources.schema_registry import SchemaRegistryResource
from dzlineage_dagster.settings import LineageSettings


class CatalogResource(ConfigurableResource):
    """Where the CDC platform and the catalog are, and a resource per AWS service to reach them."""

    settings: LineageSettings
    registry: SchemaRegistryResource
    parameters: ParameterStoreResource
    datazone: DataZoneResource
    msk: MskResource
