"""Glue's lineage per scope: a scope's Glue tables are in its account's and Region's Glue Data
Catalog, whose lineage graph only a PostLineageEvent made there reaches. With
``DZLINEAGE_LINEAGE_DESTINATIONS`` naming ``glue`` and ``DZLINEAGE_SCOPES`` set, the relay posts
an event to the Glue of each scope whose datasets it names (a topic under the scope's cluster's
namespace, a table of its catalog), with that scope's Region and role; an event naming none of
them goes to the first scope's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dzlineage_dagster.sync.destinations.glue import GlueDestination


@dataclass(frozen=True)
class GlueScope:
    """A scope's Glue lineage destination and the namespaces that say a dataset is its own:
    its cluster's Kafka namespace, its catalog's ``arn:aws:glue:<region>:<account>``."""

    destination: GlueDestination
    kafka_namespaces: frozenset[str]
    glue_namespace: str | None


class ScopedGlue:
    """:class:`GlueDestination`'s ``post_event`` over several scopes' destinations."""

    def __init__(self, scopes: Mapping[str, GlueScope]) -> None:
        self.scopes = dict(scopes)

    def owners(self, document: Mapping[str, Any]) -> list[str]:
        """The scopes whose datasets the event names (the first scope when none does)."""
        datasets = [d for key in ("inputs", "outputs") for d in document.get(key) or []]
        if isinstance(document.get("dataset"), dict):
            datasets.append(document["dataset"])
        namespaces = {str(dataset.get("namespace")) for dataset in datasets}
        owners = [
            name
            for name, scope in self.scopes.items()
            if namespaces & scope.kafka_namespaces
            or (
                scope.glue_namespace is not None
                and any(n.split(":table")[0] == scope.glue_namespace for n in namespaces)
            )
        ]
        return owners or list(self.scopes)[:1]

    def post_event(self, subject: str, what: str, document: str) -> None:
        for name in self.owners(json.loads(document)):
            self.scopes[name].destination.post_event(subject, f"{what} (scope {name})", document)
