"""What one sync must do to make DataZone match the registry, decided without calling AWS.

The registry says what should exist (:class:`DesiredTopicState`, one per topic); the SSM
mapping store says what was made (:class:`MappingRecord`, keyed by schema ARN).
:func:`plan_sync` pairs them and gives exactly one :class:`PlannedAction` for each desired
topic and each stored mapping.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Literal

from dzlineage_dagster.core.ssm_names import MappingRecord

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
    (e.g. :func:`~dzlineage_dagster.core.forms.forms_fingerprint` of the forms).
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
        )


class ActionKind(Enum):
    #: No asset yet: create it, then store its mapping.
    CREATE = "create"
    #: The schema's version or content changed (or the schema describing the topic): create
    #: an asset revision and store the new mapping.
    REVISE = "revise"
    UNCHANGED = "unchanged"
    #: The schema is gone and the policy is "delete": delete the asset, then the mapping.
    DELETE = "delete"
    #: The schema is gone and the policy is "keep": mark the asset deprecated, then drop the
    #: mapping (the kept asset is found again by its externalIdentifier if the schema returns).
    DEPRECATE = "deprecate"


@dataclass(frozen=True)
class PlannedAction:
    """What to do for one topic. ``stored`` is its current mapping, when it has one.

    ``schema_arn`` is the desired one; for REVISE it can differ from ``stored.schema_arn``
    (the topic is now described by another schema), and the old mapping key goes away.
    """

    topic: str
    schema_arn: str
    kind: ActionKind
    stored: MappingRecord | None = None


def plan_sync(
    desired: Sequence[DesiredTopicState],
    stored: Mapping[str, MappingRecord],
    *,
    deleted_policy: Literal["keep", "delete"],
) -> list[PlannedAction]:
    """One action per desired topic (in their order), then one per left-over mapping.

    A desired topic takes the stored mapping of its schema ARN, or else a left-over mapping of
    the same topic, so a topic keeps its one asset when the schema describing it changes
    name; :func:`asset_action` then decides. A mapping no desired topic takes is DELETE or
    DEPRECATE by ``deleted_policy`` (sorted by ARN).

    Raises ValueError when two desired states share a topic or a schema ARN, or when a
    mapping is stored under a key other than its schema ARN.
    """
    _check_unique(desired)
    misfiled = sorted(key for key, record in stored.items() if key != record.schema_arn)
    if misfiled:
        raise ValueError(f"mappings stored under keys other than their schema ARN: {misfiled}")
    unmatched = dict(stored)
    # All ARN matches first, so a topic's fallback never takes another topic's own mapping.
    matches = [unmatched.pop(state.schema_arn, None) for state in desired]
    matches = [
        record or _take_same_topic(unmatched, state.topic)
        for state, record in zip(desired, matches, strict=True)
    ]
    actions = [
        PlannedAction(state.topic, state.schema_arn, asset_action(state, record), record)
        for state, record in zip(desired, matches, strict=True)
    ]
    gone = ActionKind.DELETE if deleted_policy == "delete" else ActionKind.DEPRECATE
    actions += [
        PlannedAction(unmatched[arn].topic, arn, gone, unmatched[arn]) for arn in sorted(unmatched)
    ]
    return actions


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


def _check_unique(desired: Sequence[DesiredTopicState]) -> None:
    for attribute in ("topic", "schema_arn"):
        values = [getattr(state, attribute) for state in desired]
        repeated = sorted({value for value in values if values.count(value) > 1})
        if repeated:
            raise ValueError(f"desired topic states repeat {attribute} {repeated}")


def _take_same_topic(unmatched: dict[str, MappingRecord], topic: str) -> MappingRecord | None:
    same_topic = sorted(arn for arn, record in unmatched.items() if record.topic == topic)
    return unmatched.pop(same_topic[0]) if same_topic else None


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
