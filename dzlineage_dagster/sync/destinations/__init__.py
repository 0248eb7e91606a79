"""Where lineage goes: one seam for the sync, the relay and the Dagster assets.

On the model of openlineage-python's ``Transport`` / ``CompositeTransport``: a destination
posts the events of one run with the product's idempotency, names the IAM actions and the
quotas its posting needs, and a composite fans the same run out to several. Adding a backend
(any OpenLineage HTTP endpoint) is one module beside :mod:`.datazone` and :mod:`.glue`.

Idempotency differs by destination and each keeps its own:

- DataZone takes a ``clientToken`` (derived from the run id and event type): a retried post
  replays; a 409 is resolved by reading DataZone's events (:mod:`.datazone`).
- Glue takes none. The product's run ids are deterministic
  (:func:`~dzlineage_dagster.core.lineage.state.hop_run_id`), and the topic's mapping record says
  which destination holds which content (:class:`~dzlineage_dagster.core.lineage.state.
  PostedLineage`), so a sync posts a destination nothing it holds, and the only re-post is
  that of a run whose post failed or whose record write did not follow: the same run id, the
  same content, which Glue files under the one run node (:mod:`.glue`).

A composite keeps going past a destination that fails: the others' progress is not lost, the
failed one is skipped for the rest of the composite's life (one topic's post), and
:attr:`CompositeDestination.failures` says which failed and why, for the record and the error.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from botocore.exceptions import BotoCoreError, ClientError
from openlineage.client.event_v2 import DatasetEvent, RunEvent

from dzlineage_dagster.sync.errors import SyncError, describe_error


@dataclass(frozen=True)
class DeliveredEvents:
    """What a destination made of one run's events."""

    #: The ids the destination gave the events it accepted (DataZone's; Glue answers none).
    event_ids: tuple[str, ...] = ()
    #: Events the destination held already (a used DataZone client token): nothing new.
    refused: int = 0


@dataclass(frozen=True)
class RunPost:
    """The events of one run, to post in order. ``subject`` (a topic, an asset) names what
    failed; ``split``: the events are the parts of one run; ``delivery`` / ``retry_of``: a new
    delivery of a run posted before (DataZone needs new client tokens for it)."""

    subject: str
    job_label: str
    events: Sequence[RunEvent]
    split: bool = False
    delivery: str = ""
    retry_of: str | None = None


class LineageDestination(Protocol):
    """A place the product posts OpenLineage events to."""

    #: The setting's word for it (``DZLINEAGE_LINEAGE_DESTINATIONS``).
    name: str
    #: Whether it takes OpenLineage dataset events (:meth:`post_dataset`) beside run events.
    takes_dataset_events: bool
    #: The IAM actions posting needs, for the errors and ``doctor``.
    iam_actions: tuple[str, ...]
    #: The operations it calls, ``service.Operation``, as benchmarks and quotas count them.
    operations: tuple[str, ...]

    def post_run(self, post: RunPost) -> DeliveredEvents:
        """Post every event of one run, in order."""
        ...

    def post_dataset(self, subject: str, event: DatasetEvent) -> None:
        """Post one dataset event (only where :attr:`takes_dataset_events`)."""
        ...


#: What a destination's post may raise that fails the destination, not the composite.
DESTINATION_ERRORS = (SyncError, ClientError, BotoCoreError)


class CompositeDestination:
    """Fans each run out to several destinations, in order; one failing does not stop the
    others (see the module doc)."""

    def __init__(self, destinations: Sequence[LineageDestination]) -> None:
        if not destinations:
            raise ValueError("a composite of lineage destinations needs at least one")
        self.destinations = tuple(destinations)
        #: Destination name -> the error its post failed with (it gets nothing more from this
        #: composite).
        self.failures: dict[str, Exception] = {}

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(destination.name for destination in self.destinations)

    def post_run(
        self, post: RunPost, only: Collection[str] | None = None
    ) -> dict[str, DeliveredEvents]:
        """Each destination (of ``only``, when given) that has not failed yet posts the run;
        what each made of it, by destination name."""
        delivered: dict[str, DeliveredEvents] = {}
        for destination in self.destinations:
            if destination.name in self.failures or (
                only is not None and destination.name not in only
            ):
                continue
            try:
                delivered[destination.name] = destination.post_run(post)
            except DESTINATION_ERRORS as error:
                self.failures[destination.name] = error
        return delivered

    def post_dataset(
        self, subject: str, event: Callable[[], DatasetEvent], only: Collection[str]
    ) -> tuple[str, ...]:
        """The dataset event ``event`` builds, to each destination of ``only`` that takes
        dataset events and has not failed; the names it reached. Building it (reading the
        owners, say) failing fails those destinations alone."""
        takers = [
            d
            for d in self.destinations
            if d.takes_dataset_events and d.name in only and d.name not in self.failures
        ]
        if not takers:
            return ()
        try:
            built = event()
        except DESTINATION_ERRORS as error:
            self.failures.update((d.name, error) for d in takers)
            return ()
        reached = []
        for destination in takers:
            try:
                destination.post_dataset(subject, built)
                reached.append(destination.name)
            except DESTINATION_ERRORS as error:
                self.failures[destination.name] = error
        return tuple(reached)

    @property
    def succeeded(self) -> tuple[str, ...]:
        return tuple(name for name in self.names if name not in self.failures)

    def raise_failures(self, subject: str) -> None:
        """Raise what failed, if anything did: a lone destination's own error as it came (so
        DataZone alone fails as it always has), else a SyncError naming each destination."""
        if not self.failures:
            return
        if len(self.destinations) == 1:
            raise next(iter(self.failures.values()))
        reasons = "; ".join(
            f"{name}: {describe_error(error)}" for name, error in self.failures.items()
        )
        done = ", ".join(self.succeeded)
        kept = f" ({done} posted and recorded)" if done else ""
        raise SyncError(f"{subject}: lineage not posted to every destination{kept}: {reasons}")
