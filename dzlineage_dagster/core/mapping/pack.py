"""The packed mapping layout: many :class:`MappingRecord` per SSM parameter, as pure code.

SSM's standard tier holds 10,000 parameters per account and Region, shared with every other
application there, and values of at most 4,096 characters (the advanced tier: 100,000 and
8,192, charged per parameter; PutParameter's ``Tier`` documentation in botocore's model). One
parameter per topic therefore fails below 10,000 topics. Here a parameter (a *bucket*) holds
every record whose schema ARN hashes into it, compressed, up to the tier's value limit.

Buckets form a 4-ary tree addressed by the SHA-256 of the schema ARN, two bits a level: the
root ``x``, then ``x0``..``x3``, ``x00``..``x33``, and so on to :data:`MAX_DEPTH`. A schema's
*chain* is the buckets on its path (:func:`bucket_chain`, 8 names: one GetParameters call). A
new record goes to the shallowest bucket of its chain with room (:func:`place`), so a small
registry fits in one parameter and 20,000 topics in a few thousand (:func:`parameters_needed`).

A bucket's value also says whether it *overflowed* (a record of its chains had to go deeper:
its children may hold records; a value without the flag, written before it existed, says so
too), so a reader walks a chain level by level and stops at the first bucket that did not
overflow; the root's value also carries the store's *migrated* mark (see
:mod:`dzlineage_dagster.sync.catalog.mapping_store`).

Every entry carries a *stamp* (milliseconds, larger is newer) and a deleted schema leaves a
*tombstone*. :func:`merge_packs` keeps, for each schema, the entry with the largest
(stamp, tombstone, content): commutative, associative and idempotent, so merging any versions
of any buckets in any order gives the same mapping. That is what lets writers without
compare-and-swap repair each other's overwrites (see :mod:`dzlineage_dagster.sync.catalog.mapping_store`)
and readers take a record from wherever in its chain it is newest.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields

from dzlineage_dagster.core.mapping.ssm_names import (
    MAX_PARAMETER_VALUE_LENGTH,
    CorruptMappingValue,
    MappingRecord,
)

#: What PutParameter accepts per tier (characters; the pack is ASCII, so also bytes).
ADVANCED_VALUE_LIMIT = 8192
VALUE_LIMITS = {"Standard": MAX_PARAMETER_VALUE_LENGTH, "Advanced": ADVANCED_VALUE_LIMIT}

#: Marks a value as a pack (and its format version) before the base64 text.
PACK_MARKER = "dzm1:"
ROOT_BUCKET = "x"
#: The deepest level: 4**7 = 16,384 buckets there, 21,845 in all; a chain has 8 buckets.
MAX_DEPTH = 7
#: A tombstone outlives any run that could still hold the record it deletes.
TOMBSTONE_LIFETIME_MS = 30 * 24 * 3600 * 1000
#: A pack's compressed size per record, measured on the demo platform's and the benchmark's
#: records (270 to 290, four SHA-256 fingerprints each), plus the 17 the record of the
#: product's own text added (the demo's: 243 -> 260): what :func:`parameters_needed` assumes
#: when it has no record at hand (13 records a standard bucket, as at 290).
TYPICAL_PACKED_CHARACTERS_PER_RECORD = 307

#: Characters a bucket keeps free when a record moves in (see :func:`place`).
GROWTH_ROOM = 96

_FIELD_NAMES = tuple(field.name for field in fields(MappingRecord))


class PackFull(ValueError):
    """No bucket of a schema's chain can take its record within the tier's value limit."""


@dataclass(frozen=True, slots=True)
class PackEntry:
    """One schema's state in a bucket: its record, or a tombstone (``record`` None)."""

    stamp: int
    record: MappingRecord | None

    def order(self) -> tuple[int, bool, tuple[str | int, ...]]:
        """Newer stamp wins; on a tie a tombstone wins, then the larger content (so that the
        merge never depends on the order it sees entries in)."""
        content = () if self.record is None else _values(self.record)
        return (self.stamp, self.record is None, content)


#: Schema ARN -> its entry: the content of one bucket.
Pack = dict[str, PackEntry]


@dataclass(frozen=True)
class BucketValue:
    """A bucket's parameter value, decoded: its entries and its two flags."""

    pack: Pack
    #: Records of this bucket's chains may be in its children: a reader reads them too.
    overflowed: bool = False
    #: The root's only: the store holds no record of the one-per-topic layouts any more.
    migrated: bool = False


def bucket_chain(schema_arn: str) -> list[str]:
    """The buckets that may hold ``schema_arn``'s record, from the root down."""
    digest = int.from_bytes(hashlib.sha256(_utf8(schema_arn)).digest(), "big")
    digits = []
    for level in range(MAX_DEPTH):
        digits.append(str((digest >> (254 - 2 * level)) & 0b11))
    return [ROOT_BUCKET + "".join(digits[:depth]) for depth in range(MAX_DEPTH + 1)]


def is_bucket_id(text: str) -> bool:
    digits = text.removeprefix(ROOT_BUCKET)
    return (
        text.startswith(ROOT_BUCKET)
        and len(digits) <= MAX_DEPTH
        and all(digit in "0123" for digit in digits)
    )


def encode_pack(
    pack: Mapping[str, PackEntry], *, overflowed: bool = False, migrated: bool = False
) -> str:
    """The parameter value holding ``pack``: marker + base64 of zlib of compact JSON. The
    flags ride inside the JSON document, as 0 or 1, where a reader of the format before them
    ignores them (and a writer of that format drops them: its values read as overflowed)."""
    records = sorted(
        (entry.stamp, *_values(entry.record)) for entry in pack.values() if entry.record is not None
    )
    tombstones = sorted([arn, entry.stamp] for arn, entry in pack.items() if entry.record is None)
    document = {
        "f": list(_FIELD_NAMES),
        "r": records,
        "t": tombstones,
        "o": int(overflowed),
        "m": int(migrated),
    }
    text = json.dumps(document, separators=(",", ":"))  # ASCII: escapes what is not
    return PACK_MARKER + base64.b64encode(zlib.compress(text.encode("ascii"), 9)).decode()


def is_pack_value(text: str) -> bool:
    return text.startswith(PACK_MARKER)


def decode_pack(text: str) -> Pack:
    """Parse :func:`encode_pack`'s output; CorruptMappingValue says what is wrong."""
    return decode_bucket(text).pack


def decode_bucket(text: str) -> BucketValue:
    """:func:`decode_pack` with the flags. A value without the overflow flag (written before
    it existed) may have children: it reads as overflowed."""
    if not is_pack_value(text):
        raise CorruptMappingValue(f"a mapping pack starts with {PACK_MARKER!r}")
    try:
        raw = zlib.decompress(base64.b64decode(text[len(PACK_MARKER) :], validate=True))
        document = json.loads(raw)
        names, records, tombstones = document["f"], document["r"], document["t"]
        overflowed, migrated = document.get("o", 1), document.get("m", 0)
    except (binascii.Error, zlib.error, ValueError, TypeError, KeyError) as error:
        raise CorruptMappingValue(f"mapping pack is unreadable: {error}") from error
    pack: Pack = {}
    try:
        for stamp, *values in records:
            record = MappingRecord.from_fields(dict(zip(names, values, strict=True)))
            pack[record.schema_arn] = _checked_entry(stamp, record)
        for arn, stamp in tombstones:
            if not isinstance(arn, str):
                raise CorruptMappingValue("a tombstone's schema ARN must be a string")
            pack[arn] = _checked_entry(stamp, None)
    except (TypeError, ValueError) as error:
        raise CorruptMappingValue(f"mapping pack has a malformed entry: {error}") from error
    if overflowed not in (0, 1) or migrated not in (0, 1):
        raise CorruptMappingValue("a mapping pack's flags must be 0 or 1")
    return BucketValue(pack, bool(overflowed), bool(migrated))


def _checked_entry(stamp: object, record: MappingRecord | None) -> PackEntry:
    if type(stamp) is not int:
        raise CorruptMappingValue(f"a stamp must be an integer, not {stamp!r}")
    return PackEntry(stamp, record)


def merge_packs(*packs: Mapping[str, PackEntry]) -> Pack:
    """Each schema's newest entry across ``packs`` (see :meth:`PackEntry.order`)."""
    merged: Pack = {}
    for pack in packs:
        for arn, entry in pack.items():
            held = merged.get(arn)
            if held is None or entry.order() > held.order():
                merged[arn] = entry
    return merged


def records_of(pack: Mapping[str, PackEntry]) -> dict[str, MappingRecord]:
    """The live records of a (merged) pack: tombstones dropped."""
    return {arn: entry.record for arn, entry in pack.items() if entry.record is not None}


def without_expired_tombstones(pack: Mapping[str, PackEntry], now_ms: int) -> Pack:
    return {
        arn: entry
        for arn, entry in pack.items()
        if entry.record is not None or now_ms - entry.stamp < TOMBSTONE_LIFETIME_MS
    }


def fits(
    pack: Mapping[str, PackEntry],
    value_limit: int,
    *,
    overflowed: bool = False,
    migrated: bool = False,
) -> bool:
    """Whether the value is within the limit, with the flags it will be written with
    (compressed, a flag's 0 or 1 may change the length by a character or so)."""
    encoded = encode_pack(pack, overflowed=overflowed, migrated=migrated)
    return len(encoded) <= value_limit


@dataclass(frozen=True)
class BucketChange:
    """What one bucket's write does: set these entries, drop these schemas' older copies."""

    put: Mapping[str, PackEntry]
    drop: frozenset[str] = frozenset()
    #: Mark the bucket overflowed: a record of its chain goes deeper.
    overflowed: bool = False

    def and_then(self, later: BucketChange) -> BucketChange:
        """This change followed by ``later`` in one write."""
        return BucketChange(
            {**self.put, **later.put}, self.drop | later.drop, self.overflowed or later.overflowed
        )

    def applied_to(self, pack: Mapping[str, PackEntry]) -> Pack:
        changed = {arn: entry for arn, entry in pack.items() if arn not in self.drop}
        return merge_packs(changed, self.put)


def place(
    chain: Sequence[Mapping[str, PackEntry]],
    schema_arn: str,
    entry: PackEntry,
    value_limit: int,
    *,
    skip: int = 0,
    overflowed: Sequence[bool] = (),
) -> dict[int, BucketChange]:
    """The bucket writes (by depth in the chain) that make ``entry`` the schema's state.

    A record stays in the bucket that holds its newest copy while it fits there, else goes to
    the shallowest bucket below ``skip`` with room; its copies elsewhere in the chain are
    dropped, and every bucket above it not yet marked ``overflowed`` (the chain's flags, by
    depth) is marked, so a reader walking the chain level by level reaches it. A tombstone
    replaces every copy (nowhere to write if there is none). PackFull when no bucket of the
    chain has room (a record larger than a whole value, or a full chain).
    """
    holders = [depth for depth, pack in enumerate(chain) if schema_arn in pack]
    if entry.record is None:
        return {depth: BucketChange({schema_arn: entry}) for depth in holders}
    newest = max(holders, key=lambda depth: chain[depth][schema_arn].order(), default=None)
    candidates = [newest] if newest is not None and newest >= skip else []
    candidates += [depth for depth in range(skip, len(chain)) if depth != newest]
    for depth in candidates:
        # A record that moves in leaves room for the bucket's records to grow in place (their
        # stamps and revisions change length); one staying where it is may use all of it.
        limit = value_limit if depth == newest else value_limit - GROWTH_ROOM
        if fits({**chain[depth], schema_arn: entry}, limit):
            changes = {depth: BucketChange({schema_arn: entry})}
            for other in holders:
                if other != depth:
                    changes[other] = BucketChange({}, frozenset({schema_arn}))
            for above in range(depth):
                if not (above < len(overflowed) and overflowed[above]):
                    mark = BucketChange({}, overflowed=True)
                    changes[above] = changes.get(above, BucketChange({})).and_then(mark)
            return changes
    raise PackFull(
        f"no SSM parameter of the mapping has room for schema {schema_arn!r}: its record packs "
        f"to {len(encode_pack({schema_arn: entry}))} characters and every bucket on its path "
        f"is full at the {value_limit}-character value limit"
    )


def overflow(
    pack: Mapping[str, PackEntry],
    value_limit: int,
    keep: Iterable[str],
    *,
    migrated: bool = False,
) -> list[str]:
    """Schemas to move out of ``pack`` (deeper) until it fits, written overflowed (as it will
    be, having moved records down): those not in ``keep`` first, each group in ARN order (any
    fixed order would do)."""
    kept = set(keep)
    remaining = dict(pack)
    moved: list[str] = []
    for arn in sorted(remaining, key=lambda arn: (arn in kept, arn)):
        if fits(remaining, value_limit, overflowed=True, migrated=migrated):
            break
        if remaining[arn].record is None:
            continue  # a tombstone is small and must stay where the record was
        moved.append(arn)
        del remaining[arn]
    return moved


def parameters_needed(
    topics: int,
    tier: str = "Standard",
    characters_per_record: int = TYPICAL_PACKED_CHARACTERS_PER_RECORD,
) -> int:
    """How many SSM parameters the packed mapping of ``topics`` topics needs, for a preflight
    to compare with the account's headroom under the cap.

    Places ``topics`` stand-in schemas as :func:`place` does (shallowest bucket of the chain
    with room), a bucket holding as many records as ``characters_per_record`` allows, and
    counts the buckets used. Hashing spreads the stand-ins as it spreads real ARNs.
    """
    per_bucket = max(1, (VALUE_LIMITS[tier] - GROWTH_ROOM) // characters_per_record)
    held: dict[str, int] = {}
    for index in range(topics):
        chain = bucket_chain(f"stand-in schema {index}")
        bucket = next((name for name in chain if held.get(name, 0) < per_bucket), None)
        if bucket is None:
            raise PackFull(
                f"{topics} topics exceed the packed mapping's capacity in the {tier} tier"
            )
        held[bucket] = held.get(bucket, 0) + 1
    return len(held)


def _values(record: MappingRecord) -> tuple[str | int, ...]:
    # dataclasses.asdict copies recursively: ten times slower, and packing runs per write.
    return tuple(getattr(record, name) for name in _FIELD_NAMES)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogatepass")
