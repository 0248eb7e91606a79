"""The schema -> DataZone asset mapping of one run: the only code that reads or writes it in SSM.

Scope: every record belongs to one DataZone domain and owning project (its SSM path,
``<prefix>/<domain id>/<project id>/s/<escaped schema ARN>``) and one registry (the schema ARN
names it; the record carries ``registry_arn`` too). A run reads, writes and retires only the
records of its own domain and project, so a second domain, project or registry with the same
``DZLINEAGE_SSM_PREFIX`` keeps its own mapping.

Records of the first layout (``<prefix>/s/...``, no scope) are migrated when a run first sees
them: ``legacy_owner`` (the run's DataZone check) confirms that the record's asset belongs to
this run's domain and project, then the record is rewritten under the scoped path and the old
parameter deleted. A record whose asset is not this run's is left alone for its own run.

Reads: the whole mapping once per run (GetParametersByPath under the scoped path, 10 a page,
plus one call for each first-layout folder), or, for a run over a few topics, only those
schemas' parameters by name (GetParameters, 10 names a call; a first-layout name rides along).
Writes: the stages *stage* a topic's new record, and the runner *commits* it once when the
topic's stages are done, so a topic whose asset and lineage both change costs one PutParameter.

With ``DZLINEAGE_SSM_MAPPING_LAYOUT=packed`` the records live many to a
parameter, ``<scoped path>/p/<bucket>`` (:mod:`~dzlineage_dagster.core.mapping.pack`; the
design and its reasons: ``docs/mapping-store.md``). Reading all of them costs a call per ten
buckets, not per ten topics. Reading a few topics walks their chains level by level, a child
bucket only where its parent *overflowed* (its value's flag), 10 names a call, and reads their
two one-per-topic names (for the migration) only until the root bucket's *migrated* mark says
a whole read moved them all. Records of the one-per-topic layouts found beside the packs move
into them (one PutParameter per bucket touched, DeleteParameters ten names a call); a record
wins by its write time, so nothing older overwrites anything newer.

SSM has no compare-and-swap, and two writers (this run's threads, or a Dagster run beside a
headless ``dzlineage sync``) may rewrite the same bucket. A bucket's write therefore checks the
version PutParameter answers: one more than the version it started from means nobody wrote in
between. Otherwise it reads the versions it missed (``name:version``, SSM keeps 100), merges
them (stamped entries merge order-free, so every writer's records survive) and writes again,
until its write directly follows the last version it merged. Within one run, a lock per
bucket keeps the threads from racing at all.

The flags under concurrency. *Overflowed* only ever goes from unset to set: a write keeps the
flag of the version it started from and ORs those of every version it merges, so a stale
writer that overwrote a mark puts it back exactly as it puts back the records it overwrote
(and a crash in that window loses the mark as it would lose those records: until a whole read
or an adoption by DataZone finds them). The write that puts a record below a bucket not yet
marked writes the mark first, and a bucket that must pass records down marks itself in the
same write that lets them go: so when a record sits below a bucket, some version of that
bucket written before it says so. A reader that read a version without the mark read it
before any record went below, and misses only what was written after its read began, as any
read does. A record that moves down the chain is written in its new bucket before its old
copy is dropped (a reader in between finds the old copy, never none). *Migrated* is written
only by a run that read the whole scope and moved what it found; a one-per-topic record a
writer of the earlier layout adds after that is found by the next whole read (reconcile,
retirement, a headless sync without a cursor) and meanwhile costs an adoption by DataZone's
unique externalIdentifier, never a duplicate.

The scoped path also holds one registry cursor per registry (``<scoped path>/d/<sha256>``, see
:meth:`MappingStore.last_sync`, with the version sweep's state and the topics the last
sync failed): under the scope, so another domain's or project's sync never
trusts this one's cursor, and never read as a mapping.

The run's threads share one store: every method holds its lock, so a topic's read and its
commit see whole records (the calls they make are per topic, so holding the lock costs little
against the whole-prefix read, which every thread would otherwise repeat).

A crash between a DataZone write and the commit loses no mapping: CreateAsset's client token
derives from the content, so a rerun gets the asset it created; and a changed content meets
DataZone's ConflictException on the schema ARN, after which the asset is adopted by search.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from botocore.exceptions import ClientError

from dzlineage_dagster.core.catalog.discovery import SweepState
from dzlineage_dagster.core.catalog.registry_cursor import FailedTopics, RegistryCursor
from dzlineage_dagster.core.mapping.pack import (
    ROOT_BUCKET,
    VALUE_LIMITS,
    BucketChange,
    BucketValue,
    Pack,
    PackEntry,
    PackFull,
    bucket_chain,
    decode_bucket,
    encode_pack,
    fits,
    is_bucket_id,
    merge_packs,
    overflow,
    place,
    without_expired_tombstones,
)
from dzlineage_dagster.core.mapping.ssm_names import (
    HASH_NAMESPACE,
    READABLE_NAMESPACE,
    MappingRecord,
    digest_parameter_name,
    is_digest_parameter,
    parameter_name,
    scoped_prefix,
    validate_prefix,
)
from dzlineage_dagster.resources import SsmMappingResource
from dzlineage_dagster.resources.ssm_mapping import NAMES_PER_GET_PARAMETERS, StoredParameter
from dzlineage_dagster.sync.errors import SyncError

PACKED, PER_TOPIC = "packed", "per-topic"
#: The folder of the packed layout's buckets below the scoped path.
PACK_FOLDER = "p"
#: One-per-topic records moved into buckets per step (about a bucket's worth).
MIGRATION_CHUNK = 10
NO_CHANGE = BucketChange({})

#: Given a first-layout record, the record with this run's scope if its asset is this run's
#: (same domain, owning project and externalIdentifier), else None.
LegacyOwner = Callable[[MappingRecord], "MappingRecord | None"]


@dataclass(frozen=True)
class LastSync:
    """What the last headless sync of a registry left in SSM for the next one."""

    cursor: RegistryCursor | None
    sweep: SweepState
    failed: FailedTopics


@dataclass
class _Bucket:
    """A bucket as this run knows it: its content, flags and the version that holds them (0:
    none)."""

    pack: Pack = field(default_factory=dict)
    version: int = 0
    overflowed: bool = False
    migrated: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


def _write_order(change: BucketChange) -> int:
    """A bucket that is only marked overflowed is written before the record it leads to (a
    crash in between leaves a mark too many: a read more, never a record out of reach); the
    record's new copy before its old copies are dropped (a reader in between finds the old
    copy, as it would before this write, never none)."""
    if change.put:
        return 1
    return 2 if change.drop else 0


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class MappingStore:
    def __init__(
        self,
        parameters: SsmMappingResource,
        prefix: str,
        log: Any = None,
        *,
        domain_id: str,
        project_id: str,
        legacy_owner: LegacyOwner | None = None,
        layout: str = PACKED,
        tier: str = "Standard",
    ) -> None:
        try:
            validate_prefix(prefix)
        except ValueError as error:
            raise SyncError(f"DZLINEAGE_SSM_PREFIX: {error}") from None
        try:
            self._prefix = scoped_prefix(prefix, domain_id, project_id)
        except ValueError as error:
            raise SyncError(str(error)) from None  # names the setting at fault
        self._parameters = parameters
        self._legacy_prefix = prefix
        self.domain_id = domain_id
        self.project_id = project_id
        self._legacy_owner = legacy_owner
        self._log = log or logging.getLogger("dzlineage")
        #: Schema ARN -> what SSM holds (None: read by name and not there).
        self._stored: dict[str, MappingRecord | None] = {}
        #: Whether ``_stored`` holds every parameter of the scope.
        self._read_all = False
        #: Records the stages made this run that are not in SSM yet, by schema ARN.
        self._staged: dict[str, MappingRecord] = {}
        self._lock = threading.RLock()
        #: Records under this scope's path whose own scope names another domain or project
        #: (hand-copied): not trusted by the sync, repaired by reconcile.
        self.foreign: dict[str, MappingRecord] = {}
        #: A dry run's store: first-layout records are read as migrated, nothing is written.
        self.read_only = False
        #: Schema ARN -> the first-layout parameter this run migrated it from.
        self.migrated: dict[str, str] = {}
        #: Schema ARNs whose record this run wrote.
        self.committed: set[str] = set()
        self.layout = layout
        self.tier = tier
        #: Packed layout: bucket id -> what this run knows of it (absent: not read yet).
        self._buckets: dict[str, _Bucket] = {}
        #: Packed layout: schema ARN -> its newest entry in any bucket this run has read.
        self._entries: dict[str, PackEntry] = {}
        #: Whether the scope's parameters were listed (every bucket is known from then on).
        self._listed = False
        #: Packed layout: whether this run moved every one-per-topic record it found in a whole
        #: read (the root bucket's next write then says so to the runs that read by name).
        self._migrated = False

    @property
    def prefix(self) -> str:
        """The SSM path of this run's scope."""
        return self._prefix

    @property
    def read_whole(self) -> bool:
        """Whether this run has read every record of its scope (:meth:`all` costs no call)."""
        return self._read_all

    def parameter_name(self, schema_arn: str) -> str:
        return parameter_name(self._prefix, schema_arn)

    def legacy_parameter_name(self, schema_arn: str) -> str:
        return parameter_name(self._legacy_prefix, schema_arn)

    def all(self) -> dict[str, MappingRecord]:
        """Schema ARN -> record, every schema of this scope the mapping knows (read once a run)."""
        with self._lock:
            return self._all()

    def _all(self) -> dict[str, MappingRecord]:
        if not self._read_all:
            per_topic: dict[str, StoredParameter] = {}
            for name, stored in self._parameters.stored_under(self._prefix).items():
                if is_digest_parameter(self._prefix, name):
                    continue  # the registry digest, not a mapping
                bucket_id = self._bucket_id(name)
                if bucket_id is not None:
                    self._learn_bucket(bucket_id, name, stored)
                else:
                    per_topic[name] = stored
            self._listed = True
            self._take_per_topic(per_topic, self.parameter_name)
            legacy: dict[str, StoredParameter] = {}
            for namespace in (READABLE_NAMESPACE, HASH_NAMESPACE):
                folder = f"{self._legacy_prefix}/{namespace}"
                legacy.update(self._parameters.stored_under(folder, recursive=False))
            self._migrate(legacy)
            self._read_all = True
            # Without the owner check a first-layout record may be this scope's and was left.
            checked = self._legacy_owner is not None or not legacy
            if self.layout == PACKED and not self.read_only and checked:
                self._mark_migrated()
        known = {arn: record for arn, record in self._stored.items() if record is not None}
        return {**known, **self._staged}

    def read(self, schema_arns: Collection[str]) -> None:
        """Read these schemas' records by name, so that :meth:`get` needs no whole listing."""
        with self._lock:
            self._read(schema_arns)

    def _read(self, schema_arns: Collection[str]) -> None:
        if self._read_all:
            return
        wanted = [arn for arn in schema_arns if arn not in self._stored]
        if self.layout == PACKED:
            found = self._read_chains(schema_arns, wanted)
        else:
            names = [self.parameter_name(arn) for arn in wanted]
            found = self._parameters.stored_named(
                [*names, *map(self.legacy_parameter_name, wanted)]
            )
        for arn in wanted:
            self._stored.setdefault(arn, None)
        self._take_per_topic(
            {name: found[name] for arn in wanted if (name := self.parameter_name(arn)) in found},
            self.parameter_name,
        )
        self._migrate(
            {
                name: found[name]
                for arn in wanted
                if (name := self.legacy_parameter_name(arn)) in found and self._stored[arn] is None
            }
        )

    def _read_chains(
        self, schema_arns: Collection[str], wanted: Collection[str]
    ) -> dict[str, StoredParameter]:
        """Read the schemas' chains level by level, a child bucket only where its parent
        overflowed, and the one-per-topic names of ``wanted`` unless the root says they were
        all moved. Each call's spare names go to what the next rounds would likely ask for
        (the chains' next buckets, the one-per-topic names while the root is unread), so a
        round costs no more calls than the names it must read; what it finds is as good as
        read. The parameters found by name (one-per-topic ones included)."""
        found: dict[str, StoredParameter] = {}
        asked: set[str] = set()
        while True:
            needed, hoped = self._chain_reads(schema_arns, wanted, asked)
            if not needed:
                return found
            spare = -len(needed) % NAMES_PER_GET_PARAMETERS
            batch = [*needed, *hoped[:spare]]
            asked.update(batch)
            answers = self._parameters.stored_named(batch)
            found.update(answers)
            for name in batch:
                bucket_id = self._bucket_id(name)
                if bucket_id is None or bucket_id in self._buckets:
                    continue
                if name in answers:
                    self._learn_bucket(bucket_id, name, answers[name])
                else:
                    self._buckets[bucket_id] = _Bucket()

    def _chain_reads(
        self, schema_arns: Collection[str], wanted: Collection[str], asked: set[str]
    ) -> tuple[list[str], list[str]]:
        """The names the next round must read, and those it may read for free."""
        needed: list[str] = []
        next_level: list[str] = []
        deeper: list[str] = []
        for arn in schema_arns:
            chain = bucket_chain(arn)
            depth = self._unread_depth(chain)
            if depth is not None:
                needed.append(self._bucket_name(chain[depth]))
                next_level += map(self._bucket_name, chain[depth + 1 : depth + 2])
                deeper += map(self._bucket_name, chain[depth + 2 :])
        per_topic = [
            name
            for arn in wanted
            for name in (self.parameter_name(arn), self.legacy_parameter_name(arn))
        ]
        root = self._buckets.get(ROOT_BUCKET)
        if root is not None:
            # The root read (or absent): it says whether one-per-topic names can hold records.
            needed += [] if root.migrated else per_topic
            per_topic = []
        needed = [name for name in dict.fromkeys(needed) if name not in asked]
        hoped = [
            name
            for name in dict.fromkeys([*next_level, *per_topic, *deeper])
            if name not in asked and name not in needed
        ]
        return needed, hoped

    def _unread_depth(self, chain: list[str]) -> int | None:
        """The depth of the chain's next bucket to read (None: the chain is known): its first
        unread bucket, unless a bucket above it did not overflow (or is absent)."""
        for depth, bucket_id in enumerate(chain):
            bucket = self._buckets.get(bucket_id)
            if bucket is None:
                return depth
            if not bucket.overflowed:
                return None
        return None

    def get(self, schema_arn: str) -> MappingRecord | None:
        """The schema's record as this run sees it: staged this run, else as stored in SSM."""
        with self._lock:
            if schema_arn in self._staged:
                return self._staged[schema_arn]
            if schema_arn not in self._stored and not self._read_all:
                self._all()
            return self._stored.get(schema_arn)

    def stage(self, record: MappingRecord) -> None:
        """Make ``record`` the schema's mapping for the rest of the run; :meth:`commit` writes it."""
        with self._lock:
            self._staged[record.schema_arn] = self.scoped(record)

    def scoped(self, record: MappingRecord) -> MappingRecord:
        """``record`` stamped with this store's domain and project."""
        return replace(record, domain_id=self.domain_id, project_id=self.project_id)

    def is_staged(self, schema_arn: str) -> bool:
        with self._lock:
            return schema_arn in self._staged

    def commit(self, schema_arn: str) -> None:
        """Write the schema's staged record to SSM (nothing staged: no call).

        The record leaves the stage first: when the write fails, the next run finds the asset
        by its client token or adopts it, instead of this run retrying with a stale view.
        """
        with self._lock:
            record = self._staged.pop(schema_arn, None)
        if record is None:
            return
        # Outside the lock: the other threads' puts go on meanwhile (each topic writes its own
        # parameter, or locks only its bucket).
        self._put({schema_arn: record})
        with self._lock:
            self.foreign.pop(schema_arn, None)
            self._stored[schema_arn] = record
            self.committed.add(schema_arn)

    def forget(self, schema_arn: str) -> None:
        """Treat the schema as unmapped for the rest of the run (SSM keeps the record until a
        new one is committed over it)."""
        with self._lock:
            self._staged.pop(schema_arn, None)
            self.foreign.pop(schema_arn, None)
            self._stored[schema_arn] = None

    def delete(self, schema_arn: str) -> None:
        if self.layout == PACKED:
            self._put({schema_arn: None})  # a read moved any one-per-topic record already
        else:
            self._parameters.delete(self.parameter_name(schema_arn))
        with self._lock:
            self._staged.pop(schema_arn, None)
            self.foreign.pop(schema_arn, None)
            self._stored[schema_arn] = None

    def last_sync(self, registry_arn: str) -> LastSync:
        """What the last headless sync of this scope recorded of the registry: the last complete
        sync's cursor (:mod:`~dzlineage_dagster.core.catalog.registry_cursor`; None: none, or of
        an earlier form), its version sweep's state (see
        :mod:`~dzlineage_dagster.sync.catalog.version_sweep`) and the topics the last sync
        failed. One GetParameters for the three."""
        cursor_name = digest_parameter_name(self._prefix, registry_arn)
        sweep_name = self._sweep_parameter_name(registry_arn)
        failed_name = self._failed_parameter_name(registry_arn)
        found = self._parameters.parameters_named([cursor_name, sweep_name, failed_name])
        return LastSync(
            RegistryCursor.from_text(found.get(cursor_name)),
            SweepState.from_text(found.get(sweep_name)),
            FailedTopics.from_text(found.get(failed_name)),
        )

    def record_failed(self, registry_arn: str, failed: FailedTopics) -> None:
        """Keep the topics this sync failed for the next one (none: drop the record)."""
        name = self._failed_parameter_name(registry_arn)
        if not failed:
            self._parameters.delete(name)
            return
        self._parameters.put(
            name,
            failed.to_text(),
            description=f"Registry {registry_arn}: topics the last dzlineage sync failed"[:1024],
        )

    def _failed_parameter_name(self, registry_arn: str) -> str:
        # Named like a digest, so that reading the mapping skips it as one.
        return digest_parameter_name(self._prefix, f"failed topics of {registry_arn}")

    def record_cursor(self, registry_arn: str, cursor: RegistryCursor) -> None:
        self._parameters.put(
            digest_parameter_name(self._prefix, registry_arn),
            cursor.to_text(),
            description=f"Registry {registry_arn} as of the last complete dzlineage sync"[:1024],
        )

    def record_sweep(self, registry_arn: str, state: SweepState) -> None:
        self._parameters.put(
            self._sweep_parameter_name(registry_arn),
            state.to_json(),
            description=f"Registry {registry_arn}: what dzlineage sync's version sweep learnt "
            "of UpdatedTime"[:1024],
        )

    def _sweep_parameter_name(self, registry_arn: str) -> str:
        # Named like a digest, so that reading the mapping skips it as one.
        return digest_parameter_name(self._prefix, f"version sweep of {registry_arn}")

    def forget_digest(self, registry_arn: str) -> None:
        """Drop the registry cursor, so the next headless sync reads the mapping again.

        For a run that does not record a digest of its own (a Dagster run covers some topics,
        not the registry): a headless sync that finished while this run was still writing
        recorded a digest that vouches for mappings this run then overwrote, perhaps with an
        older view of the registry (SSM keeps the last write). Without the digest the next
        headless sync compares each record's registry token with the listing and re-syncs the
        topics whose record lags.
        """
        self._parameters.delete(digest_parameter_name(self._prefix, registry_arn))

    def _put(self, records: Mapping[str, MappingRecord | None]) -> None:
        """Write these records (None: the schema's record is deleted) in the store's layout."""
        if self.layout != PACKED:
            for record in records.values():
                if record is not None:
                    self._put_parameter(
                        self.parameter_name(record.schema_arn),
                        record.to_parameter_value(),
                        f"DataZone asset of Kafka topic {record.topic}",
                    )
            return
        now = _now_ms()
        entries = {}
        with self._lock:
            for arn, record in records.items():
                held = self._entries.get(arn)
                entries[arn] = PackEntry(max(now, held.stamp + 1 if held else 0), record)
        self._put_entries(entries)

    def _put_entries(self, entries: Mapping[str, PackEntry], skip: int = 0) -> None:
        """Place the entries in their chains (deeper than ``skip``) and write each bucket
        touched once."""
        self._read([arn for arn in entries if not self._chain_known(arn)])
        limit = VALUE_LIMITS[self.tier]
        changes: dict[str, BucketChange] = {}
        with self._lock:
            view = {}
            for arn, entry in entries.items():
                chain = bucket_chain(arn)
                packs = [view.get(b, self._bucket(b).pack) for b in chain]
                marked = [
                    self._bucket(b).overflowed or changes.get(b, NO_CHANGE).overflowed
                    for b in chain
                ]
                try:
                    placed = place(packs, arn, entry, limit, skip=skip, overflowed=marked)
                except PackFull as error:
                    raise SyncError(f"{error}. {self._room_advice()}") from None
                for depth, change in placed.items():
                    bucket_id = chain[depth]
                    view[bucket_id] = change.applied_to(packs[depth])
                    changes[bucket_id] = changes.get(bucket_id, NO_CHANGE).and_then(change)
        for bucket_id in sorted(changes, key=lambda b: _write_order(changes[b])):
            evicted = self._write_bucket(bucket_id, changes[bucket_id])
            if evicted:
                self._put_entries(evicted, skip=len(bucket_id))  # below the bucket they left

    def _write_bucket(self, bucket_id: str, change: BucketChange) -> dict[str, PackEntry]:
        """Write one bucket with ``change`` applied, repairing any write it overtook; the entries
        that no longer fit it (another writer filled it), to be placed deeper. Its flags are
        kept from every version merged (once set, a flag stays)."""
        name = self._bucket_name(bucket_id)
        with self._lock:
            bucket = self._bucket(bucket_id)
            migrated = bucket_id == ROOT_BUCKET and self._migrated
        limit = VALUE_LIMITS[self.tier]
        evicted: dict[str, PackEntry] = {}
        with bucket.lock:
            content = without_expired_tombstones(change.applied_to(bucket.pack), _now_ms())
            overflowed = bucket.overflowed or change.overflowed
            migrated = bucket.migrated or migrated
            seen = bucket.version
            conflicts = 0
            while True:
                if not fits(content, limit, overflowed=overflowed, migrated=migrated):
                    ours = set(change.put)
                    keep = set(content) - ours
                    for arn in overflow(content, limit, keep, migrated=migrated):
                        # One newer than the copy an overtaken version may still hold here.
                        entry = content.pop(arn)
                        evicted[arn] = replace(entry, stamp=entry.stamp + 1)
                    overflowed = True  # before the evicted records go deeper
                version = self._put_parameter(
                    name,
                    encode_pack(content, overflowed=overflowed, migrated=migrated),
                    "dzlineage: DataZone assets of Kafka topics (packed mapping)",
                )
                if version == seen + 1:
                    break
                conflicts += 1
                # Writers that keep overtaking each other back off for a random while, so
                # that one of them writes next to the last version it merged.
                time.sleep(random.uniform(0, min(2.0, 0.05 * 2**conflicts)))
                missed = self._versions(name, range(seen + 1, version))
                merged = merge_packs(content, *(value.pack for value in missed))
                content = {arn: e for arn, e in merged.items() if arn not in evicted}
                overflowed = overflowed or any(value.overflowed for value in missed)
                migrated = migrated or any(value.migrated for value in missed)
                seen = version
                self._log.info(
                    f"mapping bucket {name}: {len(missed)} concurrent write(s) merged "
                    f"(version {version})"
                )
            bucket.pack, bucket.version = content, version
            bucket.overflowed, bucket.migrated = overflowed, migrated
        with self._lock:
            self._learn_entries(content)
        return evicted

    def _versions(self, name: str, versions: range) -> list[BucketValue]:
        """The bucket's contents at ``versions`` (those SSM still keeps)."""
        references = [f"{name}:{version}" for version in versions]
        found = self._parameters.stored_named(references)
        lost = [reference for reference in references if reference not in found]
        if lost:
            # More than 100 writes overtook this one: the records only those versions held
            # are found again by the next run (DataZone's externalIdentifier is unique).
            self._log.warning(f"mapping bucket versions no longer kept by SSM: {lost}")
        return [self._decoded(reference, found[reference].value) for reference in found]

    def _put_parameter(self, name: str, value: str, description: str) -> int:
        try:
            response = self._parameters.put(
                name, value, description=description[:1024], tier=self.tier
            )
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") == "ParameterLimitExceeded":
                raise SyncError(
                    f"SSM refused a new mapping parameter {name}: the account's {self.tier}-tier "
                    f"parameters in this Region are used up. {self._room_advice()}"
                ) from error
            raise
        return int(response.get("Version", 0))

    def _room_advice(self) -> str:
        if self.layout != PACKED:
            return (
                "Set DZLINEAGE_SSM_MAPPING_LAYOUT=packed (many topics a parameter; "
                "docs/mapping-store.md)."
            )
        if self.tier == "Standard":
            return (
                "Free standard parameters in this account and Region, or set "
                "DZLINEAGE_SSM_TIER=Advanced (100,000 parameters of 8 KB, charged per "
                "parameter; docs/mapping-store.md)."
            )
        return "Free advanced parameters in this account and Region (docs/mapping-store.md)."

    def _bucket_name(self, bucket_id: str) -> str:
        return f"{self._prefix}/{PACK_FOLDER}/{bucket_id}"

    def _bucket_id(self, name: str) -> str | None:
        bucket_id = name.removeprefix(f"{self._prefix}/{PACK_FOLDER}/")
        return bucket_id if bucket_id != name and is_bucket_id(bucket_id) else None

    def _chain_known(self, schema_arn: str) -> bool:
        return self._listed or self._unread_depth(bucket_chain(schema_arn)) is None

    def _mark_migrated(self) -> None:
        """After a whole read moved every one-per-topic record: the root bucket says so from
        its next write on (a new scope's first record writes it), or now, once, when it exists
        without the mark. From then on reads by name skip the one-per-topic names; a record a
        writer of the earlier layout adds later is found by the next whole read (reconcile,
        retirement, a sync without a registry cursor), and until then costs an adoption by
        DataZone's unique externalIdentifier, never a duplicate."""
        self._migrated = True
        root = self._bucket(ROOT_BUCKET)
        if root.version and not root.migrated:
            self._write_bucket(ROOT_BUCKET, NO_CHANGE)

    def _bucket(self, bucket_id: str) -> _Bucket:
        """The bucket as known; one not listed or read by name was absent (version 0)."""
        return self._buckets.setdefault(bucket_id, _Bucket())

    def _learn_bucket(self, bucket_id: str, name: str, stored: StoredParameter) -> None:
        value = self._decoded(name, stored.value)
        bucket = self._buckets.setdefault(bucket_id, _Bucket())
        bucket.pack, bucket.version = value.pack, stored.version
        bucket.overflowed, bucket.migrated = value.overflowed, value.migrated
        self._learn_entries(value.pack, name)

    def _decoded(self, name: str, value: str) -> BucketValue:
        try:
            return decode_bucket(value)
        except ValueError as error:
            self._log.warning(f"ignoring unreadable mapping bucket {name}: {error}")
            return BucketValue({}, overflowed=True)  # what it held below it is still read

    def _learn_entries(self, pack: Pack, name: str = "") -> None:
        """Keep each schema's newest entry; a record of another scope is not trusted."""
        for arn, entry in pack.items():
            held = self._entries.get(arn)
            if held is not None and held.order() >= entry.order():
                continue
            record = entry.record
            if record is not None and (record.domain_id, record.project_id) != (
                self.domain_id,
                self.project_id,
            ):
                self._log.warning(
                    f"mapping bucket {name} holds a record of domain {record.domain_id or '?'} "
                    f"/ project {record.project_id or '?'}: not trusted (reconcile repairs it)"
                )
                self.foreign[arn] = record
                continue
            self._entries[arn] = entry
            self._stored[arn] = record

    def _take_per_topic(
        self, stored: Mapping[str, StoredParameter], expected_name: Callable[[str], str]
    ) -> None:
        """Read one-per-topic records; the packed layout moves them into its buckets (those
        newer than the packed entry: a writer of the earlier layout may still be running) and
        deletes their parameters."""
        moving: dict[str, PackEntry] = {}
        retired: list[str] = []
        for name, parameter in stored.items():
            record = self._readable(name, parameter.value, expected_name)
            if record is None:
                continue
            if self.layout != PACKED:
                self._stored[record.schema_arn] = record
                continue
            retired.append(name)
            self.migrated[record.schema_arn] = name
            held = self._entries.get(record.schema_arn)
            if held is None or held.stamp < parameter.modified_ms:
                moving[record.schema_arn] = PackEntry(parameter.modified_ms, record)
        if self.read_only:
            self._stored.update({arn: entry.record for arn, entry in moving.items()})
            return
        names = {arn: self.migrated[arn] for arn in moving}
        pending = list(moving.items())
        # A bucket's worth at a time, each chunk's old parameters deleted once it is written: an
        # account at the cap frees parameters as it goes.
        for start in range(0, len(pending), MIGRATION_CHUNK):
            chunk = dict(pending[start : start + MIGRATION_CHUNK])
            try:
                self._put_entries(chunk)
            except SyncError:
                # No room: free the chunk's own old parameters first (at least as many as the
                # buckets its records can need). Their records are in hand; a crash right now
                # loses only them, and the next run finds their assets again by DataZone's
                # unique externalIdentifier.
                self._parameters.delete_many([names[arn] for arn in chunk])
                self._put_entries(chunk)
            self._parameters.delete_many([names[arn] for arn in chunk])
        stale = [name for name in retired if name not in set(names.values())]
        if stale:
            self._parameters.delete_many(stale)
        if retired:
            self._log.info(f"{len(retired)} one-per-topic mapping parameters moved into buckets")

    def _migrate(self, legacy: Mapping[str, StoredParameter]) -> None:
        """Move first-layout records whose asset is this run's under the scoped path."""
        moving: dict[str, MappingRecord] = {}
        for name, parameter in legacy.items():
            record = self._readable(name, parameter.value, self.legacy_parameter_name)
            if record is None or self._stored.get(record.schema_arn) is not None:
                continue  # unreadable, or the scoped record already exists
            owned = self._legacy_owner(record) if self._legacy_owner else None
            if owned is None:
                self._log.info(
                    f"mapping parameter {name} (first layout) names asset {record.asset_id}, "
                    f"which is not an asset of domain {self.domain_id} and project "
                    f"{self.project_id}: left for the run of its own domain"
                )
                continue
            owned = self.scoped(owned)
            moving[owned.schema_arn] = owned
            self._stored[owned.schema_arn] = owned
            self.migrated[owned.schema_arn] = name
            self._log.info(f"{owned.topic}: mapping moved from {name} to its scoped path")
        if moving and not self.read_only:
            self._put(moving)
            self._parameters.delete_many([self.migrated[arn] for arn in moving])

    def _readable(
        self, name: str, value: str, expected_name: Callable[[str], str]
    ) -> MappingRecord | None:
        try:
            record = MappingRecord.from_parameter_value(value)
        except ValueError as error:
            self._log.warning(f"ignoring unreadable mapping parameter {name}: {error}")
            return None
        if name != expected_name(record.schema_arn):
            # Hand-copied or from another prefix: trusting it would map a schema twice.
            self._log.warning(f"ignoring mapping parameter {name}: it names another schema")
            return None
        if expected_name == self.parameter_name and (
            (record.domain_id, record.project_id) != (self.domain_id, self.project_id)
        ):
            self._log.warning(
                f"mapping parameter {name} records domain {record.domain_id or '?'} / project "
                f"{record.project_id or '?'}, not this run's: not trusted (reconcile repairs it)"
            )
            self.foreign[record.schema_arn] = record
            return None
        return record
