"""The headless sync's memory of the registry: which topics changed, without every mapping.

``dzlineage sync`` keeps one SSM parameter per registry (where the registry digest was) that
holds a :class:`RegistryCursor`: the listing at its last complete sync, folded into
:data:`CURSOR_BUCKETS` bucket digests (each topic falls in one bucket by a hash of its name;
a bucket's digest covers its topics' names and change tokens). The next sync lists the registry,
folds it the same way and compares: a topic whose schema changed (a new version that moves
``UpdatedTime``, a new ARN), or was added or removed, changes its bucket's digest, so only the
dirty buckets' topics are read (their mapping records by name) and synced. A change then costs
the listing, one cursor read and write, and the records of one bucket's topics (N / 256 of
them: 4 at 1,000 topics, 39 at 10,000, read 10 names a call), instead of every mapping.

A removed topic leaves no name to read a record by. The cursor therefore also keeps a digest
of the registry's members (schema ARNs) and the newest ``CreatedTime`` it listed: when the
members now listed, less the schemas created after that time, hash to the stored digest,
nothing was removed and retirement has nothing to do; otherwise (a removal, or a schema the
last listing did not show yet) the sync reads the whole mapping and retires, as before.

Anything that shapes every topic (the settings, the connectors, the asset type's revision, the
code: the run's ``sync_context``) is kept as one digest: when it differs, every topic is read.

What a sync failed is kept too, so the next one tries it again: :class:`FailedTopics` for
``dzlineage sync``, and :class:`RetrySchedule`, with backoff, for the registry sensor.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from dzlineage_dagster.core.catalog.discovery import RegistryTopic

#: Buckets of the cursor. 256 digests of 12 hex characters (48 bits: a changed bucket that
#: keeps its digest by chance is a 1 in 2**48 event) fit SSM's 4 KB standard-tier value.
CURSOR_BUCKETS = 256
DIGEST_CHARS = 12
#: The stored form's first field: another one (the bare registry digest of earlier versions)
#: is read as no cursor, and the next sync reads every mapping once.
CURSOR_FORMAT = "c1"


def _short_hash(text: str, chars: int = DIGEST_CHARS) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:chars]


def topic_bucket(topic: str) -> int:
    return int(hashlib.sha256(topic.encode()).hexdigest()[:8], 16) % CURSOR_BUCKETS


def _members_digest(arns: Collection[str]) -> str:
    return _short_hash("\n".join(sorted(arns)), 32)


@dataclass(frozen=True)
class RegistryCursor:
    #: Digest of the run's sync context (settings, connectors, type revision, code version).
    context: str
    #: Digest of the listed schema ARNs (one per topic).
    members: str
    #: The newest ``CreatedTime`` listed (ISO text; "" when none was).
    created_through: str
    #: One digest per bucket of the topics in it and their change tokens.
    buckets: tuple[str, ...]

    @classmethod
    def of(cls, topics: Mapping[str, RegistryTopic], sync_context: str) -> RegistryCursor:
        lines: list[list[str]] = [[] for _ in range(CURSOR_BUCKETS)]
        for name in sorted(topics):
            lines[topic_bucket(name)].append(f"{name}\t{topics[name].change_token}")
        return cls(
            context=_short_hash(sync_context, 32),
            members=_members_digest([t.schema_arn for t in topics.values()]),
            created_through=max((t.created_time for t in topics.values()), default=""),
            buckets=tuple(_short_hash("\n".join(bucket)) for bucket in lines),
        )

    def to_text(self) -> str:
        return json.dumps(
            [
                CURSOR_FORMAT,
                self.context,
                self.members,
                self.created_through,
                "".join(self.buckets),
            ]
        )

    @classmethod
    def from_text(cls, text: str | None) -> RegistryCursor | None:
        """The stored cursor; None for none, or one of another form (read everything once)."""
        try:
            form, context, members, created_through, joined = json.loads(text or "")
        except (ValueError, TypeError):
            return None
        if form != CURSOR_FORMAT or len(joined) != CURSOR_BUCKETS * DIGEST_CHARS:
            return None
        buckets = tuple(joined[i : i + DIGEST_CHARS] for i in range(0, len(joined), DIGEST_CHARS))
        return cls(str(context), str(members), str(created_through), buckets)

    def changed_topics(self, now: RegistryCursor, topics: Collection[str]) -> list[str] | None:
        """Of ``topics`` (listed now, folded into ``now``), those in a bucket whose digest
        moved since this cursor, sorted; None when the sync context changed (every topic)."""
        if now.context != self.context:
            return None
        dirty = {
            i for i, (a, b) in enumerate(zip(self.buckets, now.buckets, strict=True)) if a != b
        }
        return sorted(topic for topic in topics if topic_bucket(topic) in dirty)

    def nothing_removed(self, topics: Mapping[str, RegistryTopic]) -> bool:
        """Whether every schema of this cursor is still listed in ``topics``: the members now,
        less those created after this cursor's newest, are exactly this cursor's members."""
        if _members_digest([t.schema_arn for t in topics.values()]) == self.members:
            return True
        older = [
            t.schema_arn
            for t in topics.values()
            if not (self.created_through and t.created_time > self.created_through)
        ]
        return _members_digest(older) == self.members


@dataclass(frozen=True)
class FailedTopics:
    """The topics the last sync of a registry failed, kept beside its cursor.

    A failure the listing cannot show (a wrong owner tag, a DataZone error while a reconcile
    repaired the topic) leaves the topic's registry token and the last complete sync's cursor as
    they were: without this record the next plain sync would call the topic unchanged. The next
    sync syncs these topics whatever their tokens say, and a sync with no failure clears it.
    """

    topics: frozenset[str] = frozenset()
    #: More failed topics than one parameter holds: the next sync trusts no registry token.
    overflowed: bool = False

    @classmethod
    def of(cls, topics: Collection[str], limit: int) -> FailedTopics:
        """``topics`` as stored in a value of at most ``limit`` characters (else overflowed)."""
        failed = cls(frozenset(topics))
        return failed if len(failed.to_text()) <= limit else cls(overflowed=True)

    def __bool__(self) -> bool:
        return bool(self.topics) or self.overflowed

    def to_text(self) -> str:
        return json.dumps({"overflowed": True} if self.overflowed else sorted(self.topics))

    @classmethod
    def from_text(cls, text: str | None) -> FailedTopics:
        """The stored record; an unreadable one is read as overflowed (trust no token once)."""
        if text is None:
            return cls()
        try:
            saved = json.loads(text)
        except ValueError:
            return cls(overflowed=True)
        if isinstance(saved, list) and all(isinstance(topic, str) for topic in saved):
            return cls(frozenset(saved))
        return cls(overflowed=True)


@dataclass(frozen=True)
class Backoff:
    """How long a failed topic waits for each retry: ``first``, then twice the last wait, never
    more than ``longest`` (seconds; the registry sensor's settings)."""

    first: float
    longest: float

    def delay(self, retries: int) -> float:
        """Seconds to wait before the next retry of a topic already retried ``retries`` times."""
        return float(min(self.first * 2 ** min(retries, 32), self.longest))


@dataclass(frozen=True)
class RetrySchedule:
    """The registry sensor's counterpart of :class:`FailedTopics`: which failed topics a tick
    syncs again, with exponential backoff, kept in the sensor's cursor.

    Which topics failed is not kept here: Dagster's records of failed partitions say it (a
    topic's partition is failed while its last planned materialization ended in a failed run),
    so a failure of any run counts, whoever launched it. This keeps, per failed topic, how many
    times the sensor has retried it and when it may next: a topic seen failed is retried after
    the :class:`Backoff`'s first wait, again and again, each wait twice the last up to its
    longest; a topic no longer failed (synced, or gone) is forgotten.
    """

    #: Topic -> (retries requested so far, the POSIX time before which it is not retried).
    topics: Mapping[str, tuple[int, float]]

    @classmethod
    def from_text(cls, text: str | None) -> RetrySchedule:
        """From the sensor's cursor (its ``retry`` field); anything unreadable is no schedule:
        every failed topic then waits its first delay again."""
        try:
            saved = json.loads(text or "{}").get("retry", {})
            return cls({str(t): (int(n), float(at)) for t, (n, at) in saved.items()})
        except (ValueError, TypeError, AttributeError):
            return cls({})

    def to_json(self) -> dict[str, list[float]]:
        return {topic: [n, at] for topic, (n, at) in sorted(self.topics.items())}

    def plan(
        self, failed: Collection[str], busy: Collection[str], now: float, backoff: Backoff
    ) -> tuple[dict[str, str], RetrySchedule]:
        """The ``failed`` topics due for a retry at ``now`` (topic -> a key naming the attempt,
        new for each), and the schedule after requesting them. ``busy`` topics (a run of them
        is under way, or this tick syncs them for another reason) keep their place."""
        due: dict[str, str] = {}
        kept: dict[str, tuple[int, float]] = {}
        for topic in sorted({*failed, *busy}):
            retries, not_before = self.topics.get(topic, (0, now + backoff.delay(0)))
            if topic in failed and topic not in busy and not_before <= now:
                due[topic] = f"retry{retries + 1}@{not_before:.0f}"
                retries, not_before = retries + 1, now + backoff.delay(retries + 1)
            if topic in failed or topic in self.topics:
                kept[topic] = (retries, not_before)
        return due, RetrySchedule(kept)
