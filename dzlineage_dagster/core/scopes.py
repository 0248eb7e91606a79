"""Scopes: the registries (each with its Region, account and cluster) one deployment serves.

A deployment with no scopes configured serves one registry, the ``DZLINEAGE_*`` settings' own,
and its topics' partition keys are their bare names. With ``DZLINEAGE_SCOPES``, each scope has a
name and each partition key says its scope: ``<scope>/<topic>``. The slash cannot occur in a
topic's name (Kafka allows ``[a-zA-Z0-9._-]``) nor in a Glue schema's (``[a-zA-Z0-9-_$#.]``), so
every key splits one way. A scope's name is also part of its sensors' names and its runs' tags,
so it keeps to what Dagster's names allow.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: Lower case, so two scopes never differ by case alone; Dagster's names allow ``[A-Za-z0-9_]``.
SCOPE_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
SEPARATOR = "/"
#: The run tag that names the scope a run works in (the run queue limits runs per value).
SCOPE_TAG = "dzlineage/scope"


def check_scope_name(name: object) -> str:
    """``name`` if it can name a scope; ValueError says the rule."""
    if not isinstance(name, str) or not SCOPE_NAME.fullmatch(name):
        raise ValueError(
            f"scope name {name!r} must be 1-40 of a-z, 0-9 and _, starting with a letter "
            "(it is part of the scope's sensor names, run tags and partition keys)"
        )
    return name


def partition_key(scope: str | None, topic: str) -> str:
    """The partition key of ``topic`` in ``scope`` (None: the deployment's one registry)."""
    return topic if scope is None else f"{scope}{SEPARATOR}{topic}"


def split_partition_key(key: str) -> tuple[str | None, str]:
    """The scope (None for a bare key) and the topic of a partition key."""
    scope, separator, topic = key.partition(SEPARATOR)
    return (scope, topic) if separator else (None, key)


def keys_by_scope(keys: Iterable[str]) -> dict[str | None, list[str]]:
    """The topics of ``keys`` by scope, each scope's in the keys' order."""
    grouped: dict[str | None, list[str]] = {}
    for key in keys:
        scope, topic = split_partition_key(key)
        grouped.setdefault(scope, []).append(topic)
    return grouped
