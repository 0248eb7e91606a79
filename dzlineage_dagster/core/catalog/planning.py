"""What a topic's DataZone asset needs, decided without calling AWS, and what it is named.

The registry says what should exist (:class:`DesiredTopicState`); the SSM mapping store says
what was made (:class:`MappingRecord`); :func:`asset_action` compares the two.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import Enum

from dzlineage_dagster.core.mapping.ssm_names import MappingRecord

#: botocore's DataZone model: ``AssetName`` is 1 to 256 characters, with no pattern.
MAX_ASSET_NAME_LENGTH = 256
#: Kafka topic and MSK cluster names never contain it, so a shortened name can't equal a
#: name that was short enough to keep.
_SHORTENED_MARK = "~"
_SHORTENED_HASH_LENGTH = 12


@dataclass(frozen=True)
class DesiredTopicState:
    """A topic as the registry describes it now.

    ``content_fingerprint`` covers everything whose change warrants a new asset revision
    (e.g. :func:`~dzlineage_dagster.core.catalog.forms.forms_fingerprint` of the forms).
    """

    topic: str
    schema_arn: str
    schema_version: int
    content_fingerprint: str

    def to_record(
        self,
        *,
        asset_id: str,
        asset_revision: str,
        asset_type_revision: str,
        lineage_fingerprint: str = "",
        registry_arn: str = "",
    ) -> MappingRecord:
        """The mapping to store once the topic's asset has this id and revision."""
        return MappingRecord(
            schema_arn=self.schema_arn,
            topic=self.topic,
            asset_id=asset_id,
            asset_revision=asset_revision,
            schema_version=self.schema_version,
            content_fingerprint=self.content_fingerprint,
            asset_type_revision=asset_type_revision,
            lineage_fingerprint=lineage_fingerprint,
            registry_arn=registry_arn,
        )


class ActionKind(Enum):
    #: No asset yet: create it, then store its mapping.
    CREATE = "create"
    #: The schema's version or content changed: create an asset revision, store the mapping.
    REVISE = "revise"
    UNCHANGED = "unchanged"


def asset_action(desired: DesiredTopicState, stored: MappingRecord | None) -> ActionKind:
    """What to do for one topic's asset, given its stored mapping (None when it has none).

    CREATE without a mapping; UNCHANGED when the mapping has the desired topic, schema ARN,
    schema version and content fingerprint; REVISE otherwise.
    """
    if stored is None:
        return ActionKind.CREATE
    current = (stored.topic, stored.schema_arn, stored.schema_version, stored.content_fingerprint)
    wanted = (
        desired.topic,
        desired.schema_arn,
        desired.schema_version,
        desired.content_fingerprint,
    )
    return ActionKind.UNCHANGED if current == wanted else ActionKind.REVISE


def datazone_asset_name(cluster_name: str, topic: str) -> str:
    """``<cluster>.<topic>``, shortened to DataZone's 256 characters when longer.

    A shortened name keeps its start and ends with ``~`` and 12 hex digits of the full name's
    SHA-256, so distinct topics keep distinct names. MSK cluster names have no dots, so the
    first dot separates cluster from topic.
    """
    if not cluster_name or not topic:
        raise ValueError("an asset name needs a cluster name and a topic")
    name = f"{cluster_name}.{topic}"
    if len(name) <= MAX_ASSET_NAME_LENGTH:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:_SHORTENED_HASH_LENGTH]
    kept = MAX_ASSET_NAME_LENGTH - len(_SHORTENED_MARK) - _SHORTENED_HASH_LENGTH
    return f"{name[:kept]}{_SHORTENED_MARK}{digest}"
