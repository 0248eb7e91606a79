"""The AWS behaviours AWS's documents leave open, as sandbox switches (``/_sandbox/ambiguities``).

Each switch has the reading the sandbox answered first as its default and the other reading as
its alternative, so the suite can run the product under both:

- ``type_recreation``: ``CreateFormType``/``CreateAssetType`` with an existing name and another
  model. ``revision`` (default): a new revision, as CloudFormation's FormType update handler and
  AWS's Data Solutions Framework rely on. ``conflict``: ``ConflictException``, as the API
  reference reads ("must be unique within the domain"). The same model again answers the
  latest revision under both.
- ``schema_updated_time``: the Glue Schema Registry's ``UpdatedTime`` (``ListSchemas``,
  ``GetSchema``). ``moves`` (default): it moves on ``RegisterSchemaVersion`` and
  ``DeleteSchemaVersions``. ``frozen``: it stays the schema's creation time; no AWS document
  says it moves.
- ``policy_ancestry``: what a DataZone policy grant on an ancestor domain unit means for a
  project below it. ``cascade`` (default): a grant on the project's own unit, or on an ancestor
  with ``includeChildDomainUnits``, is enough (the guides' "cascade permissions").
  ``intersect``: the project's unit and every ancestor must each grant it; no document says so
  or otherwise.
- ``glue_node_naming``: which lineage node a dataset posted with OpenLineage's Glue naming
  (namespace ``arn:aws:glue:<region>:<account>``, name ``table/<db>/<table>``) lands on.
  ``documented`` (default): DataZone's guide ("The importance of the sourceIdentifier
  attribute to lineage nodes") read literally, ``<namespace>/<name>`` for every dataset it does
  not name otherwise, so that dataset lands on ``arn:aws:glue:<region>:<account>/table/...``,
  beside the table's ARN. ``colon-join``: DataZone joins that naming at a colon, into the ARN;
  no AWS document says so.
- ``search_omits``: asset ids DataZone's ``Search`` leaves out of its answers (default none).
  Search's consistency is not documented either way; this is its worst case, an asset that
  exists and is not found, for tests of what must never be concluded from Search alone.
- ``search_lag_seconds``: how long DataZone's ``Search`` takes to see a write (default 0).
  Search shows each asset as it was that many seconds ago: a newer asset not at all, a newer
  revision as the revision before it. Terraform's DataZone resources retry reads after creates
  for this reason; no AWS document gives a bound.
- ``lineage_conflict``: what a 409 ``ConflictException`` from ``PostLineageEvent`` means (the
  API reference says only "There is a conflict while performing this action").
  ``duplicate`` (default): the event's client token was used before, so DataZone has the
  event. ``other``: a conflict that did not store the event (a concurrent post, say): the
  sandbox refuses the first post of each run's event of each type so, storing nothing; a post
  of it again is accepted.
- ``glue_lineage_repost``: what the Glue Data Catalog's ``PostLineageEvent`` (no client token)
  does with an event posted again. ``same-run`` (default): a run node is its job's and run
  id's, and the same event again changes nothing. ``new-event``: every accepted post is an
  event of its own, so a repost is one more event of the run (its ``amazon.glue.JobRunEvents``
  form lists it twice; still one run node). The guide says neither.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

CHOICES = {
    "type_recreation": ("revision", "conflict"),
    "schema_updated_time": ("moves", "frozen"),
    "policy_ancestry": ("cascade", "intersect"),
    "glue_node_naming": ("documented", "colon-join"),
    "lineage_conflict": ("duplicate", "other"),
    "glue_lineage_repost": ("same-run", "new-event"),
}


@dataclass(frozen=True)
class Ambiguities:
    type_recreation: str = "revision"
    schema_updated_time: str = "moves"
    policy_ancestry: str = "cascade"
    glue_node_naming: str = "documented"
    search_omits: tuple[str, ...] = ()
    search_lag_seconds: float = 0.0
    lineage_conflict: str = "duplicate"
    glue_lineage_repost: str = "same-run"

    @property
    def types_conflict(self) -> bool:
        return self.type_recreation == "conflict"

    @property
    def updated_time_moves(self) -> bool:
        return self.schema_updated_time == "moves"

    @property
    def glue_colon_join(self) -> bool:
        return self.glue_node_naming == "colon-join"

    @property
    def glue_repost_adds_event(self) -> bool:
        return self.glue_lineage_repost == "new-event"

    def changed(self, changes: Mapping[str, Any]) -> Ambiguities:
        """This policy with ``changes`` applied; ValueError names an unknown switch or value."""
        changes = dict(changes)
        if "search_omits" in changes:
            omitted = changes["search_omits"]
            if not isinstance(omitted, list | tuple) or not all(
                isinstance(i, str) for i in omitted
            ):
                raise ValueError(f"search_omits is a list of asset ids, not {omitted!r}")
            changes["search_omits"] = tuple(omitted)
        if "search_lag_seconds" in changes:
            lag = changes["search_lag_seconds"]
            if isinstance(lag, bool) or not isinstance(lag, int | float) or not lag >= 0:
                raise ValueError(f"search_lag_seconds is a number >= 0, not {lag!r}")
        for switch, value in changes.items():
            if switch in ("search_omits", "search_lag_seconds"):
                continue
            if switch not in CHOICES:
                known = ", ".join([*CHOICES, "search_omits", "search_lag_seconds"])
                raise ValueError(f"no switch {switch!r} (switches: {known})")
            if value not in CHOICES[switch]:
                raise ValueError(f"{switch} is one of {', '.join(CHOICES[switch])}, not {value!r}")
        return replace(self, **changes)

    def describe(self) -> dict[str, Any]:
        return {**asdict(self), "search_omits": list(self.search_omits)}
