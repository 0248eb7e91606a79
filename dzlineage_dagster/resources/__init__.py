"""One ConfigurableResource per AWS service, each handing out real boto3 clients, and the
resource that bundles them with the settings for a sync."""

from dzlineage_dagster.resources.base import AwsClientResource
from dzlineage_dagster.resources.change_queue import ChangeQueueResource
from dzlineage_dagster.resources.datazone import DataZoneResource
from dzlineage_dagster.resources.glue_data_catalog import GlueDataCatalogResource
from dzlineage_dagster.resources.glue_schema_registry import GlueSchemaRegistryResource
from dzlineage_dagster.resources.lineage_sync import LineageSyncResource
from dzlineage_dagster.resources.msk import MskResource
from dzlineage_dagster.resources.ssm_mapping import SsmMappingResource

__all__ = [
    "AwsClientResource",
    "ChangeQueueResource",
    "DataZoneResource",
    "GlueDataCatalogResource",
    "GlueSchemaRegistryResource",
    "LineageSyncResource",
    "MskResource",
    "SsmMappingResource",
]
