"""The schema -> asset mapping as the product keeps it, read and hand-edited through the
product's own store (:mod:`dzlineage_dagster.sync.catalog.mapping_store`), so that a test holds in
either SSM layout (``DZLINEAGE_SSM_MAPPING_LAYOUT``) and never parses parameters itself."""

from __future__ import annotations

from dzlineage_dagster.core.mapping.ssm_names import MappingRecord
from dzlineage_dagster.resources import LineageSyncResource
from dzlineage_dagster.settings import LineageSettings
from dzlineage_dagster.sync.catalog.mapping_store import MappingStore
from dzlineage_dagster.sync.run_state import SyncRun


def mapping_store(settings: LineageSettings, **scope: str) -> MappingStore:
    """A new run's store for the settings' scope, or another one (``domain_id``, ``project_id``)."""
    return SyncRun(LineageSyncResource.with_settings(settings.model_copy(update=scope))).mappings


def stored_mappings(settings: LineageSettings, **scope: str) -> dict[str, MappingRecord]:
    """Schema ARN -> record, every mapping of the scope, read as a run reads it (read-only:
    records of an earlier layout are read as moved, nothing is written)."""
    store = mapping_store(settings, **scope)
    store.read_only = True
    return store.all()


def put_mapping(settings: LineageSettings, record: MappingRecord) -> None:
    """Overwrite the schema's mapping with ``record``, as a hand edit of SSM would."""
    store = mapping_store(settings)
    store.read([record.schema_arn])
    store.stage(record)
    store.commit(record.schema_arn)


def drop_mapping(settings: LineageSettings, schema_arn: str) -> None:
    """Lose the schema's mapping, as an operator deleting its parameter would."""
    mapping_store(settings).delete(schema_arn)
