"""A Kafka Connect connector's ``transforms`` chain, as far as it decides topic names.

Kafka Connect applies the aliases in ``transforms`` in order; each has ``transforms.<a>.type``
and its own settings, and may be guarded by ``transforms.<a>.predicate`` (an alias in
``predicates``, with ``predicates.<p>.type``) and ``transforms.<a>.negate``. Of the topic
renaming transforms this module evaluates Kafka's ``RegexRouter`` and Debezium's
``ByLogicalTableRouter`` / ``ToLogicalTopicRouter``: each rewrites a topic only when its regex
matches the *whole* name (``matcher.matches()``) and then replaces with ``replaceFirst``.
Transforms known to leave topic names alone pass through; any other type (a custom SMT,
``TimestampRouter``, Debezium's content-based or outbox routers) makes the result ambiguous,
with the reason, because it may rename topics in ways the configuration does not show.

A chain Kafka Connect or the transform itself refuses raises :class:`TransformConfigError`:
such a connector never starts, so it decides no topic at all. Checked against Kafka's
``ConnectorConfig`` (a step needs ``type``; ``negate`` needs ``predicate``; a predicate alias
must be listed in ``predicates`` and have a ``type``), ``RegexRouter`` (``regex`` and
``replacement`` have no default, ``regex`` must compile), ``TopicNameMatches`` (``pattern``
non-empty and valid) and Debezium's ``ToLogicalTopicRouter`` (``topic.regex`` and
``topic.replacement`` required non-blank, ``key.field.regex`` valid and, when set, a non-blank
``key.field.replacement``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from dzlineage_dagster.core.connectors.java_regex import (
    InvalidJavaRegex,
    JavaPattern,
    UnsupportedJavaRegex,
    compile_java_regex,
    parse_java_replacement,
)

REGEX_ROUTER = "org.apache.kafka.connect.transforms.RegexRouter"
BY_LOGICAL_TABLE_ROUTER = "io.debezium.transforms.ByLogicalTableRouter"
TO_LOGICAL_TOPIC_ROUTER = "io.debezium.transforms.ToLogicalTopicRouter"
#: Router type -> (regex setting, replacement setting).
TOPIC_ROUTERS = {
    REGEX_ROUTER: ("regex", "replacement"),
    BY_LOGICAL_TABLE_ROUTER: ("topic.regex", "topic.replacement"),
    TO_LOGICAL_TOPIC_ROUTER: ("topic.regex", "topic.replacement"),
}
#: Routers that merge several physical tables into one topic (every one is an upstream).
LOGICAL_TABLE_ROUTERS = frozenset({BY_LOGICAL_TABLE_ROUTER, TO_LOGICAL_TOPIC_ROUTER})

#: Transforms that never change the topic a record goes to. Some reshape the value (noted by
#: :data:`VALUE_RESHAPING_TRANSFORMS`), which matters for column lineage, not for topics.
TOPIC_PRESERVING_TRANSFORMS = frozenset(
    {
        *(
            f"org.apache.kafka.connect.transforms.{name}{side}"
            for name in (
                "InsertField",
                "ReplaceField",
                "MaskField",
                "ValueToKey",
                "HoistField",
                "ExtractField",
                "SetSchemaMetadata",
                "TimestampConverter",
                "Flatten",
                "Cast",
            )
            for side in ("$Key", "$Value")
        ),
        "org.apache.kafka.connect.transforms.Filter",
        "org.apache.kafka.connect.transforms.InsertHeader",
        "org.apache.kafka.connect.transforms.DropHeaders",
        "org.apache.kafka.connect.transforms.HeaderFrom$Key",
        "org.apache.kafka.connect.transforms.HeaderFrom$Value",
        "io.debezium.transforms.ExtractNewRecordState",
        "io.debezium.transforms.ExtractChangedRecordState",
        "io.debezium.transforms.HeaderToValue",
        "io.debezium.transforms.Filter",
        "io.debezium.transforms.SchemaChangeEventFilter",
        "io.debezium.transforms.openlineage.OpenLineage",
        "io.debezium.transforms.TimezoneConverter",
        "org.apache.iceberg.connect.transforms.DebeziumTransform",
        "io.tabular.iceberg.connect.transforms.DebeziumTransform",
        "org.apache.iceberg.connect.transforms.KafkaMetadataTransform",
        "io.tabular.iceberg.connect.transforms.KafkaMetadataTransform",
        "org.apache.iceberg.connect.transforms.DmsTransform",
        "io.tabular.iceberg.connect.transforms.DmsTransform",
        "org.apache.iceberg.connect.transforms.CopyValue",
        "io.tabular.iceberg.connect.transforms.CopyValue",
    }
)
#: Transforms after which a Debezium value is no longer the ``before``/``after`` envelope.
VALUE_RESHAPING_TRANSFORMS = frozenset(
    {
        "io.debezium.transforms.ExtractNewRecordState",
        "org.apache.kafka.connect.transforms.ReplaceField$Value",
        "org.apache.kafka.connect.transforms.Flatten$Value",
        "org.apache.kafka.connect.transforms.ExtractField$Value",
        "org.apache.kafka.connect.transforms.HoistField$Value",
    }
)

TOPIC_NAME_MATCHES = "org.apache.kafka.connect.transforms.predicates.TopicNameMatches"
RECORD_IS_TOMBSTONE = "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone"
HAS_HEADER_KEY = "org.apache.kafka.connect.transforms.predicates.HasHeaderKey"


class ConnectorConfigError(ValueError):
    """A connector configuration the platform refuses (``refused``: the connector fails to
    start), or one this project cannot evaluate (``refused=False``: it may well run)."""

    def __init__(self, message: str, *, refused: bool = True) -> None:
        super().__init__(message)
        self.refused = refused


class TransformConfigError(ConnectorConfigError):
    """A ``transforms`` / ``predicates`` setting that Kafka Connect or the transform refuses: the
    connector fails to start (the message names the connector, the alias and the setting)."""


def compile_setting(
    error: type[ConnectorConfigError], where: str, pattern: str, *, case_insensitive: bool = False
) -> JavaPattern:
    """``pattern`` compiled; raises ``error`` naming ``where``: refused when Java would not
    compile it, not refused when only this project cannot evaluate it."""
    try:
        return compile_java_regex(pattern, case_insensitive=case_insensitive)
    except InvalidJavaRegex as invalid:
        raise error(f"{where}: {invalid}") from invalid
    except UnsupportedJavaRegex as unsupported:
        raise error(f"{where}: {unsupported}", refused=False) from unsupported


def config_list(value: str | None) -> list[str]:
    """A Kafka Connect LIST setting: comma-separated, entries trimmed, blanks dropped."""
    return [entry.strip() for entry in (value or "").split(",") if entry.strip()]


def is_true(value: str | None) -> bool:
    """A Kafka Connect BOOLEAN setting (case-insensitive ``true``)."""
    return (value or "").strip().lower() == "true"


@dataclass(frozen=True)
class TransformStep:
    """One alias of ``transforms``: its type and, for a router, the compiled rewrite."""

    alias: str
    type: str
    regex: JavaPattern | None = None
    replacement: str | None = None
    #: Why the step's effect on topic names cannot be evaluated (None when it can).
    ambiguous_reason: str | None = None
    #: Applies only to topics that full-match this pattern (a TopicNameMatches predicate).
    topic_condition: JavaPattern | None = None
    #: With ``topic_condition``: apply to topics that do NOT match (``negate=true``).
    condition_negated: bool = False
    #: False when a predicate limits the step to tombstones, which carry no row data.
    applies_to_change_events: bool = True

    @property
    def is_router(self) -> bool:
        return self.type in TOPIC_ROUTERS

    @property
    def merges_tables(self) -> bool:
        return self.type in LOGICAL_TABLE_ROUTERS

    def may_produce(self, topic: str) -> bool:
        """Whether this router's replacement can yield ``topic`` (group references read as
        anything): a topic no known table explains may still come from it."""
        if self.regex is None or self.replacement is None:
            return False
        try:
            parts = parse_java_replacement(self.replacement, self.regex.compiled)
        except InvalidJavaRegex:
            return False
        shape = "".join(re.escape(part) if isinstance(part, str) else ".*" for part in parts)
        return re.fullmatch(shape, topic, flags=re.DOTALL) is not None


@dataclass(frozen=True)
class RoutedTopic:
    """Where a record first sent to ``original`` ends up after the chain."""

    original: str
    topic: str
    #: Aliases of the routers that rewrote the name, in order.
    renamed_by: tuple[str, ...]
    #: Whether a logical-table router merged it (several physical tables may share ``topic``).
    merged: bool
    ambiguous_reason: str | None

    @property
    def is_ambiguous(self) -> bool:
        return self.ambiguous_reason is not None


@dataclass(frozen=True)
class TransformChain:
    connector: str
    steps: tuple[TransformStep, ...]

    @property
    def reshapes_value(self) -> bool:
        """Whether a step turns the Debezium envelope into something else (column paths move)."""
        return any(step.type in VALUE_RESHAPING_TRANSFORMS for step in self.steps)

    def types(self) -> tuple[str, ...]:
        return tuple(step.type for step in self.steps)

    def route(self, topic: str) -> RoutedTopic:
        """Apply the chain's routers to ``topic`` in order."""
        current = topic
        renamed_by: list[str] = []
        merged = False
        for step in self.steps:
            if not step.applies_to_change_events:
                continue
            if step.topic_condition is not None:
                applies = step.topic_condition.matches(current) != step.condition_negated
                if not applies:
                    continue
            if step.ambiguous_reason is not None:
                return RoutedTopic(topic, current, tuple(renamed_by), merged, step.ambiguous_reason)
            if step.regex is None or step.replacement is None:
                continue
            if step.regex.matches(current):
                where = f"transform {step.alias!r} of connector {self.connector!r}"
                try:
                    renamed = step.regex.replace_first(current, step.replacement)
                except InvalidJavaRegex as error:
                    return RoutedTopic(
                        topic, current, tuple(renamed_by), merged, f"{where}: {error}"
                    )
                if not renamed and step.merges_tables:
                    # ToLogicalTopicRouter: "Routing regex returned an empty topic name,
                    # propagating original record".
                    continue
                if not renamed:
                    reason = (
                        f"{where} renames {current!r} to an empty topic name, which Kafka rejects"
                    )
                    return RoutedTopic(topic, current, tuple(renamed_by), merged, reason)
                current = renamed
                renamed_by.append(step.alias)
                merged = merged or step.merges_tables
        return RoutedTopic(topic, current, tuple(renamed_by), merged, None)


def parse_transform_chain(connector: str, config: Mapping[str, str]) -> TransformChain:
    """The ``transforms`` of a connector, each step evaluated or marked ambiguous with why."""
    return TransformChain(
        connector,
        tuple(
            _parse_step(connector, alias, config) for alias in config_list(config.get("transforms"))
        ),
    )


def _parse_step(connector: str, alias: str, config: Mapping[str, str]) -> TransformStep:
    prefix = f"transforms.{alias}."
    where = f"transform {alias!r} of connector {connector!r}"
    step_type = (config.get(prefix + "type") or "").strip()
    if not step_type:
        raise TransformConfigError(f"{where} has no {prefix}type (Kafka Connect requires it)")
    condition, negated, condition_problem = _parse_predicate(connector, alias, config)
    only_tombstones = _predicate_type(alias, config) == RECORD_IS_TOMBSTONE and not negated
    base = {
        "alias": alias,
        "type": step_type,
        "topic_condition": condition,
        "condition_negated": negated,
        "applies_to_change_events": not only_tombstones,
    }
    if step_type in TOPIC_ROUTERS:
        compiled, replacement = parse_rename(
            where,
            router_settings(prefix, step_type),
            config,
            logical=step_type in LOGICAL_TABLE_ROUTERS,
        )
        if condition_problem:
            return TransformStep(**base, ambiguous_reason=condition_problem)
        if isinstance(compiled, str):
            return TransformStep(**base, ambiguous_reason=compiled)
        return TransformStep(**base, regex=compiled, replacement=replacement)
    if step_type in TOPIC_PRESERVING_TRANSFORMS:
        return TransformStep(**base)
    return TransformStep(
        **base,
        ambiguous_reason=(
            f"{where} has type {step_type}, which may rename topics in ways the "
            "configuration does not show"
        ),
    )


def router_settings(prefix: str, step_type: str) -> tuple[str, str, str | None, str | None]:
    """The settings a router reads: (regex, replacement, key regex, key replacement), the key
    ones only for the logical-table routers."""
    regex_key, replacement_key = TOPIC_ROUTERS[step_type]
    if step_type not in LOGICAL_TABLE_ROUTERS:
        return prefix + regex_key, prefix + replacement_key, None, None
    return (
        prefix + regex_key,
        prefix + replacement_key,
        prefix + "key.field.regex",
        prefix + "key.field.replacement",
    )


def parse_rename(
    where: str,
    settings: tuple[str, str, str | None, str | None],
    config: Mapping[str, str],
    *,
    logical: bool,
) -> tuple[JavaPattern | str, str]:
    """A router's (compiled regex, or why it cannot be evaluated; replacement) from
    ``settings`` (:func:`router_settings`); raises TransformConfigError for what the router
    refuses. ``logical``: Debezium's ``Field.isRequired`` also refuses blank values, and a key
    regex needs a non-blank key replacement."""
    regex_setting, replacement_setting, key_regex_setting, key_replacement_setting = settings
    regex = config.get(regex_setting)
    replacement = config.get(replacement_setting)
    for setting, value in ((regex_setting, regex), (replacement_setting, replacement)):
        # RegexRouter's settings have no default, so only a missing one is refused.
        if value is None or (logical and not value.strip()):
            raise TransformConfigError(f"{where} needs a value for {setting}")
    key_regex = (config.get(key_regex_setting) or "").strip() if key_regex_setting else ""
    if key_regex and key_regex_setting:
        if not (config.get(key_replacement_setting or "") or "").strip():
            raise TransformConfigError(
                f"{where}: {key_replacement_setting} must be non-empty if {key_regex_setting} "
                "is set"
            )
        _refuse_invalid_regex(where, key_regex_setting, key_regex)
    return _refuse_invalid_regex(where, regex_setting, regex or ""), replacement or ""


def _refuse_invalid_regex(where: str, setting: str, regex: str) -> JavaPattern | str:
    """The compiled regex, or why this project cannot evaluate it; raises TransformConfigError
    when Java would not compile it (the connector is refused)."""
    try:
        return compile_java_regex(regex)
    except InvalidJavaRegex as error:
        raise TransformConfigError(f"{where} ({setting}): {error}") from error
    except UnsupportedJavaRegex as error:
        return f"{where} ({setting}): {error}"


def _predicate_type(alias: str, config: Mapping[str, str]) -> str:
    name = config.get(f"transforms.{alias}.predicate")
    return (config.get(f"predicates.{name}.type") or "").strip() if name else ""


def _parse_predicate(
    connector: str, alias: str, config: Mapping[str, str]
) -> tuple[JavaPattern | None, bool, str | None]:
    """(topic condition, negated, why the predicate cannot be evaluated); raises
    TransformConfigError for a predicate Kafka Connect refuses."""
    name = config.get(f"transforms.{alias}.predicate")
    negate_setting = f"transforms.{alias}.negate"
    if not name:
        if negate_setting in config:
            raise TransformConfigError(
                f"transform {alias!r} of connector {connector!r}: {negate_setting} was provided "
                f"but there is no transforms.{alias}.predicate defining a predicate to be negated"
            )
        return None, False, None
    negated = is_true(config.get(negate_setting))
    where = f"predicate {name!r} of transform {alias!r} (connector {connector!r})"
    predicate_type = _predicate_type(alias, config)
    if name not in config_list(config.get("predicates")) or not predicate_type:
        raise TransformConfigError(
            f"{where} must be listed in predicates and have a predicates.{name}.type"
        )
    if predicate_type == TOPIC_NAME_MATCHES:
        pattern = config.get(f"predicates.{name}.pattern")
        if not pattern:
            raise TransformConfigError(f"{where} needs a non-empty predicates.{name}.pattern")
        compiled = _refuse_invalid_regex(where, f"predicates.{name}.pattern", pattern)
        if isinstance(compiled, str):
            return None, negated, compiled
        return compiled, negated, None
    if predicate_type == RECORD_IS_TOMBSTONE:
        # Negated: every record with a value (all change events); else only tombstones.
        return None, negated, None
    return (
        None,
        negated,
        (
            f"{where} has type {predicate_type}: whether it applies depends on each "
            "record, not on the configuration"
        ),
    )
