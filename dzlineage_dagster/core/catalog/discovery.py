"""From a registry listing to topics, and what changed since the last look."""

from __future__ import annotations

import bisect
import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from enum import Enum
from typing import Any

from dzlineage_dagster.core.connectors.topics import topic_for_schema_name, topic_name_problem


class UpdatedTimeBehaviour(str, Enum):
    """What a registry's ``UpdatedTime`` does when a version is registered, as learnt from it.

    No AWS document says; each registry shows it the first time a schema with two or more
    versions is looked at (:func:`updated_time_evidence`), and a topic found behind its latest
    version by the sweep while its listing stood still proves ``frozen``.
    """

    UNKNOWN = "unknown"
    MOVES = "moves"
    FROZEN = "frozen"


@dataclass(frozen=True, slots=True)
class RegistryTopic:
    """A topic as the registry describes it: by its value (or only) schema. One per topic of
    the registry is held for a run: slots, no per-instance dict."""

    topic: str
    schema_name: str
    schema_arn: str
    updated_time: str
    key_schema_arn: str | None = None
    #: The describing schema's ``CreatedTime`` (ISO text; "" when not listed).
    created_time: str = ""

    @property
    def updated_at(self) -> datetime | None:
        """``updated_time`` as a moment (None when the registry gave none)."""
        return _moment(self.updated_time)

    @property
    def change_token(self) -> str:
        """Short, changes whenever the describing schema changes (new version, new ARN)."""
        digest = hashlib.sha256(f"{self.schema_arn}\n{self.updated_time}".encode())
        return digest.hexdigest()[:16]


def _timestamp(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)


@dataclass(frozen=True, slots=True)
class _ListedSchema:
    """The fields of a `SchemaListItem` a topic is described by: kept in place of the item, so
    a listing's pages are released as they are folded."""

    name: str
    arn: str
    updated_time: str
    created_time: str

    @classmethod
    def of(cls, item: Mapping[str, Any]) -> _ListedSchema:
        return cls(
            item["SchemaName"],
            item["SchemaArn"],
            _timestamp(item.get("UpdatedTime", "")),
            _timestamp(item.get("CreatedTime", "")),
        )


#: The roles of a topic's schemas, in the order they describe it: its value schema, a schema
#: named as the topic, its key schema.
_DESCRIBING_ROLES = ("value", "topic", "key")


def registry_topics(schema_list_items: Iterable[Mapping[str, Any]]) -> dict[str, RegistryTopic]:
    """Topic -> :class:`RegistryTopic` from Glue `SchemaListItem`s, sorted by topic.

    `<topic>-key` and `<topic>-value` fold into one topic described by the value schema; a
    schema named as the topic itself describes it too. A topic with only a key schema is
    described by that. The items are read once, in order, and none is kept: given a listing
    page by page, only the page being read is held beside the topics.
    """
    # Topic -> its schemas in the order they may describe it (a list a topic: no dict).
    by_topic: dict[str, list[_ListedSchema | None]] = {}
    for listed in map(_ListedSchema.of, schema_list_items):  # no reference to an item stays
        subject = topic_for_schema_name(listed.name)
        roles = by_topic.setdefault(subject.topic, [None] * len(_DESCRIBING_ROLES))
        roles[_DESCRIBING_ROLES.index(subject.role)] = listed
    topics = {}
    for topic in sorted(by_topic):
        roles = by_topic.pop(topic)
        describing = next(listed for listed in roles if listed is not None)
        key = roles[-1]
        topics[topic] = RegistryTopic(
            topic=topic,
            schema_name=describing.name,
            schema_arn=describing.arn,
            updated_time=describing.updated_time,
            key_schema_arn=key.arn if key is not None and key is not describing else None,
            created_time=describing.created_time,
        )
    return topics


def schemas_naming_no_topic(topics: Mapping[str, RegistryTopic]) -> dict[str, str]:
    """Of the listed ``topics``, those whose schema names no topic Kafka allows, with why
    (:func:`~dzlineage_dagster.core.connectors.topics.topic_name_problem`): not topics, so not
    synced; nothing but deleting the schema changes that, so a run reports them and goes on."""
    problems = {
        topic: topic_name_problem(topic, info.schema_name) for topic, info in topics.items()
    }
    return {topic: problem for topic, problem in problems.items() if problem}


def describing_schema_names(topic: str) -> tuple[str, ...]:
    """The schema names that may describe ``topic``, in the order :func:`registry_topics`
    prefers them: its value schema, a schema named as the topic, its key schema."""
    return (f"{topic}-value", topic, f"{topic}-key")


def topic_sync_token(topic: RegistryTopic, sync_context: str) -> str:
    """The topic's registry change token under these settings (a mapping record keeps it)."""
    return hashlib.sha256(f"{topic.change_token}\n{sync_context}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class RegistryChanges:
    added: list[str]
    changed: list[str]
    removed: list[str]


def diff_against_cursor(
    current: Mapping[str, RegistryTopic], seen_tokens: Mapping[str, str]
) -> RegistryChanges:
    """What the registry did since the tokens a sensor last recorded (all lists sorted)."""
    added = sorted(t for t in current if t not in seen_tokens)
    changed = sorted(
        t for t, info in current.items() if t in seen_tokens and seen_tokens[t] != info.change_token
    )
    removed = sorted(t for t in seen_tokens if t not in current)
    return RegistryChanges(added, changed, removed)


#: How long after its ``UpdatedTime`` a schema's token stays in the sensor's cursor. It covers
#: a listing that shows a change later than the change's own timestamp (the registry is
#: eventually consistent over seconds) and a clock difference between AWS and the sensor's host
#: (minutes at worst); older changes were seen by an earlier tick.
SETTLING_SECONDS = 600


def _moment(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class SensorCursor:
    """What the registry sensor remembers between ticks, small at any registry size.

    ``horizon`` is the tick's time less :data:`SETTLING_SECONDS`; ``recent`` holds the change
    tokens of the topics updated after it. At the next tick, a topic whose ``UpdatedTime`` is
    at or before the horizon is unchanged (its change was listed, and synced, by a tick that
    still had it in its window); one after it is compared by token. New and deleted topics come
    from the partitions, not from the cursor. So the cursor grows with the topics changed in
    the last minutes, and with those whose last run failed (``retry``: a topic's retries and
    when it may be tried next, about 40 characters besides its name), not with the registry.
    """

    horizon: str
    recent: dict[str, str]
    #: The last topic the version sweep checked (see :func:`version_sweep`).
    swept_to: str = ""
    #: What the registry showed its ``UpdatedTime`` does (see :class:`UpdatedTimeBehaviour`).
    updated_time: str = "unknown"
    #: The failed topics' retries (``RetrySchedule.to_json`` of ``registry_cursor``).
    retry: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(
            {
                "horizon": self.horizon,
                "recent": self.recent,
                "swept_to": self.swept_to,
                "updated_time": self.updated_time,
                "retry": dict(self.retry),
            },
            sort_keys=True,
        )

    @classmethod
    def after(
        cls,
        current: Mapping[str, RegistryTopic],
        now: datetime,
        swept_to: str = "",
        updated_time: UpdatedTimeBehaviour = UpdatedTimeBehaviour.UNKNOWN,
        retry: Mapping[str, Any] | None = None,
    ) -> SensorCursor:
        horizon = now - timedelta(seconds=SETTLING_SECONDS)
        recent = {
            topic: info.change_token
            for topic, info in current.items()
            if not _settled(info, horizon)
        }
        return cls(horizon.isoformat(), recent, swept_to, updated_time.value, retry or {})


@dataclass(frozen=True)
class SweepState:
    """Where the version sweep stopped and what the registry showed of its ``UpdatedTime``:
    kept in the sensor's cursor and, for ``dzlineage sync``, in one SSM parameter."""

    swept_to: str = ""
    updated_time: UpdatedTimeBehaviour = UpdatedTimeBehaviour.UNKNOWN

    def to_json(self) -> str:
        return json.dumps({"swept_to": self.swept_to, "updated_time": self.updated_time.value})

    @classmethod
    def from_text(cls, text: str | None) -> SweepState:
        """From a cursor or a stored state; a bare topic name (the first stored form) is a
        position with nothing learnt yet."""
        if not text:
            return cls()
        try:
            saved = json.loads(text)
        except ValueError:
            return cls(text)
        if not isinstance(saved, dict):
            return cls(text)
        try:
            behaviour = UpdatedTimeBehaviour(saved.get("updated_time", "unknown"))
        except ValueError:
            behaviour = UpdatedTimeBehaviour.UNKNOWN
        return cls(str(saved.get("swept_to", "")), behaviour)


def swept_to(cursor_text: str | None) -> str:
    """Where the cursor's version sweep stopped ("": it has not started)."""
    return SweepState.from_text(cursor_text).swept_to


def _settled(info: RegistryTopic, horizon: datetime | None) -> bool:
    moment = _moment(info.updated_time)
    return moment is not None and horizon is not None and moment <= horizon


def changed_topics(current: Mapping[str, RegistryTopic], cursor_text: str | None) -> list[str]:
    """Topics of ``current`` whose schema changed since the cursor (sorted); no cursor: all.

    Reads both the horizon cursor and the older one (a JSON object of topic -> token).
    """
    if not cursor_text:
        return sorted(current)
    saved = json.loads(cursor_text)
    if "horizon" not in saved:
        changes = diff_against_cursor(current, saved)
        return sorted(changes.added + changes.changed)
    horizon = _moment(saved["horizon"])
    recent: dict[str, str] = saved["recent"]
    return sorted(
        topic
        for topic, info in current.items()
        if not _settled(info, horizon) and recent.get(topic) != info.change_token
    )


#: Ticks in which the version sweep checks every schema once where ``UpdatedTime`` is known
#: not to move (``frozen``): there the sweep is what finds a new version, at most this many
#: ticks after it (an hour at the registry sensor's 60-second interval), at
#: ``ceil(N / VERSION_SWEEP_TICKS)`` GetSchema calls a tick for N topics (167 at 10,000).
VERSION_SWEEP_TICKS = 60
#: Topics a tick's sweep checks while the registry has not shown what ``UpdatedTime`` does: a
#: constant, so an idle tick costs the listing and a fixed amount more at any size. Each look
#: is also the probe (the first schema with two versions settles it), and a frozen registry's
#: new version is found within ``ceil(N / UNKNOWN_SWEEP_SIZE)`` ticks even if no schema ever
#: had two versions before (500 ticks at 10,000 topics).
UNKNOWN_SWEEP_SIZE = 20
#: Topics a tick's sweep checks where ``UpdatedTime`` is known to move: the listing shows new
#: versions at once; this keeps watch for a deleted latest version (which may not move it) and
#: for a registry that stops moving it, within ``ceil(N / MOVING_SWEEP_SIZE)`` ticks.
MOVING_SWEEP_SIZE = 5


def sweep_size(topics: int, behaviour: UpdatedTimeBehaviour) -> int:
    """Topics a tick's version sweep checks among ``topics``, given what the registry showed."""
    if behaviour is UpdatedTimeBehaviour.FROZEN:
        return -(-topics // VERSION_SWEEP_TICKS)
    size = MOVING_SWEEP_SIZE if behaviour is UpdatedTimeBehaviour.MOVES else UNKNOWN_SWEEP_SIZE
    return min(topics, size)


def sweep_pass_ticks(topics: int, behaviour: UpdatedTimeBehaviour) -> int:
    """Ticks in which the sweep checks every one of ``topics``: the bound on finding a new
    version the listing does not show."""
    size = sweep_size(topics, behaviour)
    return -(-topics // size) if size else 0


#: How much later than the schema's ``UpdatedTime`` its latest version must have been created
#: to prove ``frozen``: a version registered with the schema itself (Glue's CreateSchema with a
#: definition) is created in the same instant, and tells nothing.
FROZEN_EVIDENCE_SECONDS = 1.0


def updated_time_evidence(
    updated: Any, latest_version: int, latest_created: Any
) -> UpdatedTimeBehaviour:
    """What one schema shows: ``moves`` when its ``UpdatedTime`` is at or after its latest
    version's ``CreatedTime``, ``frozen`` when it is clearly before it; a schema with one
    version (or times that cannot be read) shows nothing."""
    updated_at, created_at = _moment(_timestamp(updated)), _moment(_timestamp(latest_created))
    if latest_version < 2 or updated_at is None or created_at is None:
        return UpdatedTimeBehaviour.UNKNOWN
    if updated_at >= created_at:
        return UpdatedTimeBehaviour.MOVES
    if (created_at - updated_at).total_seconds() > FROZEN_EVIDENCE_SECONDS:
        return UpdatedTimeBehaviour.FROZEN
    return UpdatedTimeBehaviour.UNKNOWN


def version_sweep(
    topics: Sequence[str],
    swept_to: str,
    behaviour: UpdatedTimeBehaviour = UpdatedTimeBehaviour.FROZEN,
) -> list[str]:
    """The topics a tick's version sweep checks: the next :func:`sweep_size` of ``topics`` in
    sorted order after ``swept_to``, wrapping around to the first.

    The position is a topic name, not an index: topics added or removed since the last tick
    never make the sweep skip one that stayed (a removed ``swept_to`` still orders the rest).
    """
    ordered = sorted(topics)
    size = sweep_size(len(ordered), behaviour)
    start = bisect.bisect_right(ordered, swept_to) if swept_to else 0
    return (ordered[start:] + ordered[:start])[:size]


#: The fewest slices a clock-driven sweep reads a registry as when it needs more than one: a
#: prime above 7, so that no cadence of whole minutes, hours, days or weeks made of 2, 3, 5 and 7
#: (5 or 15 minutes, an hour, a day, a week) keeps landing on the same few slices.
MIN_CLOCK_SLICES = 11


def _prime_at_least(number: int) -> int:
    candidate = max(number, 2)
    while any(candidate % divisor == 0 for divisor in range(2, math.isqrt(candidate) + 1)):
        candidate += 1
    return candidate


def clock_sweep(
    topics: Sequence[str], slot: int, behaviour: UpdatedTimeBehaviour = UpdatedTimeBehaviour.FROZEN
) -> list[str]:
    """The topics ``dzlineage sync``'s version sweep checks in clock slot ``slot`` (the run's
    minute since the epoch): derived, so an idle sync stores no position.

    The topics, in name order, are read as a prime number of slices of :func:`sweep_size`
    topics (the smallest prime that covers them, and at least :data:`MIN_CLOCK_SLICES`; see
    :func:`clock_sweep_slices`), and the slot modulo that prime picks one. Syncs run at any
    steady cadence of whole minutes that is not a multiple of the prime therefore check every
    topic within that many runs (a prime is coprime to every other step); syncs at odd times
    pick slices as the clock falls.
    """
    ordered = sorted(topics)
    count = clock_sweep_slices(len(ordered), behaviour)
    if count <= 1:
        return ordered
    # Every slice holds the sweep's size (a run costs the same whatever its minute), starting
    # evenly spread: more slices than the size needs overlap rather than leave a gap.
    start = slot % count * len(ordered) // count
    return (ordered[start:] + ordered[:start])[: sweep_size(len(ordered), behaviour)]


def clock_sweep_slices(topics: int, behaviour: UpdatedTimeBehaviour) -> int:
    """Slices :func:`clock_sweep` cuts ``topics`` into: the runs a steady cadence needs to
    check every topic."""
    size = sweep_size(topics, behaviour)
    slices = -(-topics // size) if size else 0
    return slices if slices <= 1 else _prime_at_least(max(slices, MIN_CLOCK_SLICES))


def behind_registry(latest: Mapping[str, int], synced: Mapping[str, int]) -> list[str]:
    """Topics whose latest registry version is not the one their asset was synced with: a
    registered version (a higher number) or a deleted latest one (a lower). Topics never
    synced are not compared (a new topic comes from the listing itself). Sorted."""
    return sorted(
        topic for topic, version in latest.items() if synced.get(topic, version) != version
    )
