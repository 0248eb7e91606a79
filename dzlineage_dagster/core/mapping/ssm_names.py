"""Where a schema's DataZone asset mapping lives in SSM Parameter Store, and what it holds.

One parameter per Glue Schema Registry schema, named from the schema ARN::

    <prefix>/s/<escaped ARN>     readable form, decodable back to the ARN
    <prefix>/h/<sha256 hex>      hash form, for an ARN too long to escape within AWS's limit

A schema ARN has ``:`` and ``/``, which SSM names do not allow (``/`` would also add hierarchy
levels), and a schema name may contain ``$``, ``#`` and ``_``. The readable form keeps every
character of ``[A-Za-z0-9.-]`` and writes every other one as ``_`` followed by the two
upper-case hex digits of each of its UTF-8 bytes (``:`` is ``_3A``, ``/`` is ``_2F``, ``_`` is
``_5F``). Every escape is exactly three characters and starts with the only character that
escapes use, so the code is prefix-free: decoding is unambiguous and the encoding injective.
The whole ARN stays in one hierarchy level.

A third sub-namespace, ``<scoped prefix>/d/<sha256 hex of the registry ARN>`` (the scoped prefix
of :func:`scoped_prefix`, so one domain's and project's digest is never another's), holds one
registry cursor per registry, never read as a mapping: what the registry looked like at the last complete headless sync (see
:mod:`~dzlineage_dagster.core.catalog.registry_cursor`), so a sync needs one GetParameters, not every
mapping, to know which topics changed.

The two mapping forms live under different sub-namespaces (``s`` and ``h``), so a hash name can never
equal a readable one. A hash name cannot be decoded; its parameter value (a
:class:`MappingRecord`) carries the ARN, as every value does.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import MISSING, asdict, dataclass, fields

from dzlineage_dagster.core.text import shown

#: AWS counts the whole parameter ARN against 1011 characters, not only the name.
MAX_PARAMETER_ARN_LENGTH = 1011
#: Room for ``arn:<partition>:ssm:<region>:<account>:parameter/``: 45 characters in
#: ``us-east-1``, under 64 in every partition and region (``aws-us-gov`` with a 20-character
#: region is 63), so a name that fits here fits in any account.
PARAMETER_ARN_PREFIX_ALLOWANCE = 64
MAX_HIERARCHY_LEVELS = 15
#: The levels a mapping name adds below its prefix: ``/s/<name>`` or ``/h/<hash>``.
MAPPING_NAME_LEVELS = 2
#: The standard tier's value limit (the advanced tier costs money per parameter).
MAX_PARAMETER_VALUE_LENGTH = 4096

READABLE_NAMESPACE = "s"
HASH_NAMESPACE = "h"
DIGEST_NAMESPACE = "d"

_UNESCAPED = re.compile(r"[A-Za-z0-9.\-]")
_ESCAPE = re.compile(rb"_([0-9A-F]{2})")
_ESCAPED_TEXT = re.compile(r"(?:[A-Za-z0-9.\-]|_[0-9A-F]{2})+")
_DIGEST_RELATIVE_NAME = re.compile(rf"(?:[^/]+/[^/]+/)?{DIGEST_NAMESPACE}/[0-9a-f]{{64}}")
_PREFIX_LEVEL = re.compile(r"[A-Za-z0-9_.\-]+")
_RESERVED_PREFIXES = ("aws", "ssm")
_SHA256_HEX_LENGTH = 64


def validate_prefix(prefix: str) -> None:
    """Raise ValueError unless ``prefix`` can hold mapping parameters.

    A prefix is a fully qualified SSM path without a trailing slash (``/dzlineage/prod``):
    levels of ``[A-Za-z0-9_.-]``, not starting with ``aws`` or ``ssm`` (AWS reserves both,
    case-insensitive), and leaving room for the two levels added below it and for a hash-form
    name within AWS's length limit.
    """
    if not prefix.startswith("/"):
        raise ValueError(f"SSM prefix {shown(prefix)} must start with '/' (e.g. '/dzlineage/prod')")
    levels = prefix[1:].split("/")
    bad_levels = [level for level in levels if not _PREFIX_LEVEL.fullmatch(level)]
    if bad_levels:
        raise ValueError(
            f"SSM prefix {shown(prefix)} has invalid levels {shown(bad_levels)}: each level between "
            "slashes must be non-empty and use only A-Z a-z 0-9 _ . - (no trailing slash)"
        )
    if levels[0][:3].lower() in _RESERVED_PREFIXES:
        raise ValueError(
            f"SSM prefix {shown(prefix)} starts with a name AWS reserves ('aws'/'ssm', any case)"
        )
    if len(levels) + MAPPING_NAME_LEVELS > MAX_HIERARCHY_LEVELS:
        raise ValueError(
            f"SSM prefix {shown(prefix)} has {len(levels)} levels; mapping names add "
            f"{MAPPING_NAME_LEVELS} and SSM allows {MAX_HIERARCHY_LEVELS}, so use at most "
            f"{MAX_HIERARCHY_LEVELS - MAPPING_NAME_LEVELS}"
        )
    longest = f"{prefix}/{HASH_NAMESPACE}/" + "0" * _SHA256_HEX_LENGTH
    if not _fits(longest):
        raise ValueError(
            f"SSM prefix {shown(prefix)} is too long: a mapping name under it would exceed "
            f"{_max_name_length()} characters"
        )


def parameter_name(prefix: str, schema_arn: str) -> str:
    """The SSM parameter name for ``schema_arn``'s mapping: readable if it fits, else hashed."""
    validate_prefix(prefix)
    if not schema_arn:
        raise ValueError("a schema ARN can't be empty")
    readable = f"{prefix}/{READABLE_NAMESPACE}/{_escape(schema_arn)}"
    if _fits(readable):
        return readable
    return f"{prefix}/{HASH_NAMESPACE}/{hashlib.sha256(_utf8(schema_arn)).hexdigest()}"


def digest_parameter_name(prefix: str, registry_arn: str) -> str:
    """Where the registry's digest lives: one parameter per registry under the prefix."""
    validate_prefix(prefix)
    return f"{prefix}/{DIGEST_NAMESPACE}/{hashlib.sha256(_utf8(registry_arn)).hexdigest()}"


def is_digest_parameter(prefix: str, name: str) -> bool:
    """Whether ``name`` is a registry digest under ``prefix``: directly, or under the scoped
    path of any domain and project below it (``prefix`` may be either)."""
    relative = name.removeprefix(f"{prefix}/")
    return relative != name and bool(_DIGEST_RELATIVE_NAME.fullmatch(relative))


def schema_arn_from_parameter_name(prefix: str, name: str) -> str | None:
    """The schema ARN that :func:`parameter_name` encoded as ``name``, or None.

    None for a hash-form name (read the ARN from the value) and for any name that
    :func:`parameter_name` would not have produced under ``prefix``.
    """
    escaped = name.removeprefix(f"{prefix}/{READABLE_NAMESPACE}/")
    if escaped == name or not escaped:
        return None
    schema_arn = _unescape(escaped)
    if schema_arn is None or parameter_name(prefix, schema_arn) != name:
        return None
    return schema_arn


class CorruptMappingValue(ValueError):
    """A parameter value under the mapping prefix that is not a :class:`MappingRecord`."""


@dataclass(frozen=True, slots=True)
class MappingRecord:
    """What the store remembers about one schema's DataZone asset (the parameter value).

    ``lineage_fingerprint`` is the lineage last posted for the topic (empty before the first):
    its content, the base its run ids derive from and the jobs it left open, as
    :class:`~dzlineage_dagster.core.lineage.state.PostedLineage` encodes them, so an unchanged
    edge is not posted again and a hop that is gone gets its job closed. ``registry_token`` is the schema's
    change token in the registry listing (its ARN and ``UpdatedTime``) combined with the sync's
    settings, when the record was last written: an equal token in a later listing means the
    topic needs no GetSchema, GetSchemaVersion or write (empty: unknown, read it). Records
    written before a field existed lack it and read as its default.

    ``domain_id``, ``project_id`` and ``registry_arn`` are the record's scope: the run that
    wrote it. Records of the first layout (``<prefix>/s/...``, before scopes) have none; they
    read with empty scope fields (:attr:`is_legacy`) and are migrated on first sight.
    """

    schema_arn: str
    topic: str
    asset_id: str
    asset_revision: str
    schema_version: int
    content_fingerprint: str
    asset_type_revision: str
    lineage_fingerprint: str = ""
    registry_token: str = ""
    domain_id: str = ""
    project_id: str = ""
    registry_arn: str = ""
    #: The asset revision last published to the catalog (empty: never published by the sync).
    published_revision: str = ""
    #: The name and description the product last wrote as its own, whether or not a person's
    #: text replaced them on the asset (:func:`~dzlineage_dagster.core.catalog.curation.
    #: text_record`, digests; empty: unknown): what tells a person's text from the product's.
    product_text: str = ""

    @property
    def is_legacy(self) -> bool:
        """Written before mappings had a scope: no domain, project or registry recorded."""
        return not (self.domain_id or self.project_id or self.registry_arn)

    def to_parameter_value(self) -> str:
        """Compact ASCII JSON (so characters equal bytes), within the standard tier's limit."""
        value = json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)
        if len(value) > MAX_PARAMETER_VALUE_LENGTH:
            raise ValueError(
                f"mapping for {self.schema_arn!r} is {len(value)} characters as JSON, more than "
                f"SSM's standard-tier limit of {MAX_PARAMETER_VALUE_LENGTH}"
            )
        return value

    @classmethod
    def from_parameter_value(cls, text: str) -> MappingRecord:
        """Parse :meth:`to_parameter_value`'s output; CorruptMappingValue says what is wrong."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise CorruptMappingValue(f"mapping value is not JSON: {error}") from error
        if not isinstance(data, dict):
            raise CorruptMappingValue(
                f"mapping value must be a JSON object, not {type(data).__name__}"
            )
        return cls.from_fields(data)

    @classmethod
    def from_fields(cls, data: dict[str, object]) -> MappingRecord:
        """A record from its fields by name, checked as :meth:`from_parameter_value` checks
        them (also the packed store's decoder, :mod:`~dzlineage_dagster.core.mapping.pack`)."""
        expected = {field.name: field.type for field in fields(cls)}
        # Fields added later (the scope, the registry token) have defaults: records written
        # before them (the first layout lacks the scope) read with the default.
        optional = {field.name for field in fields(cls) if field.default is not MISSING}
        missing = sorted(set(expected) - set(data) - optional)
        unknown = sorted(set(data) - set(expected))
        if missing or unknown:
            raise CorruptMappingValue(
                f"mapping value has missing keys {missing} / unknown keys {unknown}"
            )
        for key, value in data.items():
            wanted = _JSON_TYPES[expected[key]]
            if type(value) is not wanted:
                raise CorruptMappingValue(
                    f"mapping value {key!r} must be {wanted.__name__}, not {type(value).__name__}"
                )
        return cls(**{key: _shared(key, value) for key, value in data.items()})


_JSON_TYPES = {"str": str, "int": int}
SCOPE_FIELDS = ("domain_id", "project_id", "registry_arn")
#: Fields most records of a store share (their scope, the asset type they were written with):
#: one string object for all, not one per record read (a whole read holds every record).
SHARED_FIELDS = frozenset({*SCOPE_FIELDS, "asset_type_revision"})


def _shared(key: str, value: object) -> object:
    return sys.intern(value) if key in SHARED_FIELDS and type(value) is str else value


#: What a scope level (a DataZone domain or project id) may be.
SCOPE_ID = re.compile(r"[A-Za-z0-9_\-]{1,64}")
_SCHEMA_ARN = re.compile(
    r"arn:(?P<partition>[^:]+):glue:(?P<region>[^:]*):(?P<account>[^:]*):schema/(?P<registry>[^/]+)/.+"
)


#: The levels a run adds below ``DZLINEAGE_SSM_PREFIX``: the domain's and the project's.
SCOPE_LEVELS = 2


def scoped_prefix(prefix: str, domain_id: str, project_id: str) -> str:
    """The SSM path of one domain's and owning project's mappings: ``<prefix>/<domain>/<project>``.

    A run reads, writes and retires only below it, so another domain or project with the same
    ``DZLINEAGE_SSM_PREFIX`` keeps its own mapping. (A registry needs no level of its own: the
    schema ARN in every name below names its registry.)
    """
    for setting, value in (
        ("DZLINEAGE_DOMAIN_ID", domain_id),
        ("DZLINEAGE_PROJECT_ID", project_id),
    ):
        if not SCOPE_ID.fullmatch(value):
            raise ValueError(
                f"{setting} {shown(value)} is not a DataZone id (1 to 64 of A-Z a-z 0-9 _ -)"
            )
    scoped = f"{prefix}/{domain_id}/{project_id}"
    levels = prefix.count("/")
    if levels + SCOPE_LEVELS + MAPPING_NAME_LEVELS > MAX_HIERARCHY_LEVELS:
        raise ValueError(
            f"DZLINEAGE_SSM_PREFIX={shown(prefix)} has {levels} levels; a run adds the domain's and "
            f"project's, each mapping name {MAPPING_NAME_LEVELS} more, and SSM allows "
            f"{MAX_HIERARCHY_LEVELS}, so use at most "
            f"{MAX_HIERARCHY_LEVELS - SCOPE_LEVELS - MAPPING_NAME_LEVELS}"
        )
    try:
        validate_prefix(scoped)
    except ValueError as error:
        raise ValueError(
            f"DZLINEAGE_SSM_PREFIX={shown(prefix)} leaves no room for domain {shown(domain_id)} and "
            f"project {shown(project_id)} below it: {error}"
        ) from None
    return scoped


def registry_arn_of_schema(schema_arn: str) -> str:
    """``arn:aws:glue:r:a:schema/<registry>/<schema>`` -> ``arn:aws:glue:r:a:registry/<registry>``."""
    match = _SCHEMA_ARN.fullmatch(schema_arn)
    if match is None:
        raise ValueError(f"{schema_arn!r} is not a Glue Schema Registry schema ARN")
    return (
        f"arn:{match['partition']}:glue:{match['region']}:{match['account']}:"
        f"registry/{match['registry']}"
    )


def _escape(text: str) -> str:
    return "".join(
        character if _UNESCAPED.fullmatch(character) else _escape_character(character)
        for character in text
    )


def _escape_character(character: str) -> str:
    return "".join(f"_{byte:02X}" for byte in _utf8(character))


def _unescape(escaped: str) -> str | None:
    """The text behind ``escaped``, or None if it is not a well-formed escaped string."""
    if not _ESCAPED_TEXT.fullmatch(escaped):
        return None
    data = _ESCAPE.sub(lambda escape: bytes([int(escape[1], 16)]), escaped.encode("ascii"))
    try:
        return data.decode("utf-8", errors="surrogatepass")
    except UnicodeDecodeError:
        return None


def _utf8(text: str) -> bytes:
    # Python strings may hold lone surrogates; keep them round-trippable instead of failing.
    return text.encode("utf-8", errors="surrogatepass")


def _max_name_length() -> int:
    """Characters a name may have after its leading slash, in any partition and region."""
    return MAX_PARAMETER_ARN_LENGTH - PARAMETER_ARN_PREFIX_ALLOWANCE


def _fits(name: str) -> bool:
    return len(name.removeprefix("/")) <= _max_name_length()
