"""One ConfigurableResource per AWS service; each hands out real boto3 clients."""

from dzlineage_dagster.resources.base import AwsClientResource
from dzlineage_dagster.resources.catalog import CatalogResource
from dzlineage_dagster.resources.datazone import DataZoneResource
from dzlineage_dagster.resources.msk import MskResource
from dzlineage_dagster.resources.parameter_store import ParameterStoreResource
from dzlineage_dagster.resources.schema_registry import SchemaRegistryResource

__all__ = [
    "AwsClientResource",
    "CatalogResource",
    "DataZoneResource",
    "MskResource",
    "ParameterStoreResource",
    "SchemaRegistryResource",
]
