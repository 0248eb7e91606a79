"""One topic, one asset: a topic this project already cataloged from another registry's
schema gets no second asset.

Both assets would carry the same name and the same ``sourceIdentifier`` (the topic's lineage
node), and DataZone links a node to one asset. The connectors usually tell which registry
holds a topic's value schemas (``core/connectors/topology.py``); this is the check for when they do not
(converters set in the Connect worker, a topic no known connector writes). A topic of the same
name on another cluster (another scope's, docs/many-registries.md) is another node: its asset's
``sourceIdentifier`` says so, and it is no reason to refuse.
"""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.catalog.curation import AssetContent
from dzlineage_dagster.core.catalog.forms import ASSET_COMMON_DETAILS_FORM_TYPE
from dzlineage_dagster.core.lineage.openlineage import dataset_source_identifier
from dzlineage_dagster.core.mapping.ssm_names import MappingRecord, registry_arn_of_schema
from dzlineage_dagster.sync.errors import SyncError
from dzlineage_dagster.sync.run_state import SyncRun


def refuse_second_asset(run: SyncRun, topic: str, schema_arn: str) -> None:
    """Raise :class:`SyncError` naming the asset when another registry's schema of ``topic``
    has one in this project (call it for a topic about to get its first asset)."""
    for record in _other_registries_records(run, topic, schema_arn):
        if record.topic != topic or not _same_node(run, record, topic):
            continue
        registry = registry_name_of(record.schema_arn)
        raise SyncError(
            f"{topic}: already cataloged as asset {record.asset_id} from schema "
            f"{record.schema_arn} of registry {registry}: no second asset for the same topic "
            "(one lineage node, one asset). Sync the registry that holds its value schemas; "
            f"if the topic moved from {registry} to {run.settings.registry_name}, retire it "
            f"there first (delete the old schema and sync {registry})"
        )


def _same_node(run: SyncRun, record: MappingRecord, topic: str) -> bool:
    """Whether ``record``'s asset stands for this run's ``topic`` node: its ``sourceIdentifier``
    is the topic's here (one GetAsset, only for a name two registries share). An asset that
    cannot be read, or says no node, counts as the same: refusing is the side that loses
    nothing."""
    try:
        asset = run.resource.datazone.client().get_asset(
            domainIdentifier=run.settings.domain_id, identifier=record.asset_id
        )
    except (ClientError, BotoCoreError):
        return True
    content = AssetContent.from_asset(asset)
    form = next((f for f in content.forms if f.type_name == ASSET_COMMON_DETAILS_FORM_TYPE), None)
    node = form.fields().get("sourceIdentifier") if form else None
    return node is None or node == dataset_source_identifier(*run.topic_dataset(topic))


def _other_registries_records(run: SyncRun, topic: str, schema_arn: str) -> list[MappingRecord]:
    """The mapping records of other registries' schemas that may describe ``topic``.

    When the run has read its whole mapping, all of them, for no call. Otherwise (a run over a
    few topics reads theirs by name) the records of the topic's schema name in the registries
    the connectors' converters name, by name: a GetParameters call per few registries.
    """
    if run.mappings.read_whole:
        return [r for r in run.mappings.all().values() if not run.in_registry(r)]
    prefix = schema_arn.split("/", 1)[0]  # arn:aws:glue:<region>:<account>:schema
    own = registry_name_of(schema_arn)
    candidates = [
        f"{prefix}/{registry}/{name}"
        for registry in sorted(run.topology.converter_registries() - {own})
        for name in (topic, f"{topic}-value")
    ]
    run.mappings.read(candidates)
    return [record for arn in candidates if (record := run.mappings.get(arn)) is not None]


def registry_name_of(schema_arn: str) -> str:
    """``arn:aws:glue:<region>:<account>:schema/<registry>/<schema>`` -> ``<registry>``."""
    return registry_arn_of_schema(schema_arn).rsplit("/", 1)[-1]
