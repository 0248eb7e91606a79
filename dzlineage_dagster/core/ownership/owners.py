"""Who owns a topic and the tables written from it: owners as teams declare them.

Teams keep owners where they keep the rest of a topic's configuration:

- a tag of the topic's schema in the Glue Schema Registry, key :data:`OWNER_TAG` (``owner``);
  a tag value allows letters, digits, spaces and ``+ - = . _ : / @`` only (AWS's tagging
  rules), so several owners are separated by spaces there;
- a key of a connector's configuration, :data:`CONNECTOR_OWNERS_KEY` (``dzlineage.owners``),
  owners separated by commas or spaces: Kafka Connect hands connectors their whole
  configuration and connectors ignore keys they do not define, so a namespaced key is safe.

An owner is an email address or ``team:<name>``, the two forms Dagster accepts on an
``AssetSpec``'s ``owners``; anything else is refused by name, with where it was found.
DataZone's owners (the owning project, as ``team:<project name>``, and its members designated
``PROJECT_OWNER``, as their DataZone user ids) come from the sync (``sync/catalog/owners.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

OWNER_TAG = "owner"
CONNECTOR_OWNERS_KEY = "dzlineage.owners"
#: What Dagster's owner validation accepts (``dagster._core.definitions.asset_spec``): an
#: email address, or ``team:`` and a name.
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_SEPARATORS = re.compile(r"[,\s]+")


class InvalidOwner(ValueError):
    """An owner that is neither an email address nor ``team:<name>``."""


@dataclass(frozen=True)
class Owner:
    """An owner and where it was found (``glue-schema-tag:owner``, ``connector:<name>``,
    ``datazone-project``, ``datazone-project-owner``)."""

    name: str
    source: str

    @property
    def is_dagster_owner(self) -> bool:
        """Whether Dagster accepts it on an AssetSpec (a DataZone user id is not)."""
        return is_owner_name(self.name)


def is_owner_name(name: str) -> bool:
    return bool(_EMAIL.fullmatch(name)) or (name.startswith("team:") and len(name) > len("team:"))


def parse_owners(value: str, source: str) -> tuple[Owner, ...]:
    """The owners listed in ``value`` (separated by commas or spaces), each checked."""
    names = [name for name in _SEPARATORS.split(value.strip()) if name]
    wrong = [name for name in names if not is_owner_name(name)]
    if wrong:
        raise InvalidOwner(
            f"{source}: {', '.join(map(repr, wrong))} is not an owner; write an email address "
            "or team:<name>, several separated by spaces (docs/impact.md, Owners)"
        )
    return tuple(Owner(name, source) for name in names)


def merge_owners(*groups: Iterable[Owner]) -> tuple[Owner, ...]:
    """The owners of every group, each name once (where it was found first)."""
    merged: dict[str, Owner] = {}
    for group in groups:
        for owner in group:
            merged.setdefault(owner.name, owner)
    return tuple(merged.values())


def dagster_owners(owners: Iterable[Owner]) -> tuple[str, ...]:
    """The owners an AssetSpec can carry."""
    return tuple(owner.name for owner in owners if owner.is_dagster_owner)
