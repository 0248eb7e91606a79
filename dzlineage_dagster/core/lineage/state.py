"""What the product last posted for a topic's lineage, and which jobs a new post must close.

DataZone's timestamp view shows "only the latest job run for each job at that timestamp", and
its aggregated view the jobs currently contributing. So every hop of a topic is a job of its
own (:func:`~dzlineage_dagster.core.lineage.openlineage.hop_job`: the connector and the topic), and the
newest run of that job states the hop's whole current truth. A hop that disappears (its
connector deleted or re-routed away, the topic deleted) gets a *closing* run: the topic on its
side of the job and nothing on the other, so the old edge leaves both views.

To know which jobs it posted, the product keeps them in the topic's mapping record
(``MappingRecord.lineage_fingerprint``), not by reading DataZone back: the record is read
anyway, it knows only the product's own jobs (another producer's are not ours to close), and it
holds a job the moment it was posted, while DataZone processes events asynchronously (a job
posted a minute ago may not be in its graph yet). A job is kept as (side, namespace, owner), the
topic being the record's own, so a record stays far below SSM's 4 KB standard-tier limit.

Run ids chain: a new content's runs derive from the content and the runs before it, so content
that comes back (a sink re-added) gets new run ids and new client tokens (an old token would
only replay the first post), while a rerun after a crash, whose record still names the runs
before it, derives the same ids and replays.

With several destinations (``DZLINEAGE_LINEAGE_DESTINATIONS``) the record also says which of
them hold the content (``holders``) and, for each that failed to take it, which jobs may still
be open there (``behind``): a destination that failed is posted to again by the next sync, and
closes its own jobs, while the others post nothing. A record that names neither was posted to
DataZone alone (every record before destinations, and every one under the default setting),
so such a record is written exactly as before.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from dzlineage_dagster.core.lineage.openlineage import deterministic_run_id, hop_job

Side = Literal["source", "sink"]
#: Marks a record of this layout; a record without it was written when one job stood for a
#: whole connector and kept only the run ids, comma-separated.
STATE_VERSION = 2
#: Who holds a record's content when the record does not say: DataZone, the one destination
#: before there were several.
DEFAULT_HOLDERS: tuple[str, ...] = ("datazone",)


@dataclass(frozen=True)
class HopJob:
    """The job of one hop of a topic: ``owner`` is the connector (or the stand-in for edges
    no connector decided) and the job's name is ``<owner>/<topic>``."""

    side: Side
    namespace: str
    owner: str

    def job(self, topic: str) -> tuple[str, str]:
        return hop_job(self.owner, topic, self.namespace)


def hop_run_id(base: str, side: str, job: tuple[str, str]) -> str:
    """The run id of one hop's job under a lineage state's ``base``."""
    return deterministic_run_id(base, side, *job)


@dataclass(frozen=True)
class PostedLineage:
    """A topic's lineage as last posted: ``content`` identifies the hops' content, ``base``
    the runs that carried it, ``jobs`` the hops' jobs still open."""

    content: str
    base: str
    jobs: tuple[HopJob, ...] = ()
    #: Run ids of a record written before this layout (its jobs were one per connector).
    legacy_runs: tuple[str, ...] = ()
    #: The destinations that hold ``content`` (its runs were posted to them).
    holders: tuple[str, ...] = DEFAULT_HOLDERS
    #: Destinations that failed to take ``content``, each with the jobs it may have open.
    behind: tuple[tuple[str, tuple[HopJob, ...]], ...] = ()

    def holds(self, destination: str, content: str) -> bool:
        """Whether ``destination`` holds ``content`` already: nothing to post to it."""
        return destination in self.holders and self.content == content

    def open_jobs(self, destination: str) -> tuple[HopJob, ...]:
        """The product's jobs ``destination`` may still show a hop of."""
        if destination in self.holders:
            return self.jobs
        return dict(self.behind).get(destination, ())

    def run_ids(self, topic: str) -> list[str]:
        """The runs DataZone should hold for the topic (what a reconcile looks for)."""
        if self.legacy_runs:
            return list(self.legacy_runs)
        return [hop_run_id(self.base, job.side, job.job(topic)) for job in self.jobs]

    def encode(self) -> str:
        state: dict = {
            "v": STATE_VERSION,
            "content": self.content,
            "base": self.base,
            "jobs": _encode_jobs(self.jobs),
        }
        # Only what differs from DataZone alone: the default's records stay as they were.
        if self.holders != DEFAULT_HOLDERS:
            state["to"] = list(self.holders)
        if self.behind:
            state["lag"] = {name: _encode_jobs(jobs) for name, jobs in self.behind}
        return json.dumps(state, separators=(",", ":"))

    @classmethod
    def decode(cls, text: str) -> PostedLineage | None:
        """The state a record keeps; None for a record that has posted nothing yet.

        Raises ValueError for text that is neither this layout nor the earlier run-id list.
        """
        if not text:
            return None
        if not text.startswith("{"):
            return cls(content="", base="", legacy_runs=tuple(text.split(",")))
        try:
            data = json.loads(text)
            if data["v"] != STATE_VERSION:
                raise ValueError(f"layout {data['v']!r} is not {STATE_VERSION}")
            jobs = _decode_jobs(data["jobs"])
            holders = tuple(str(name) for name in data.get("to", DEFAULT_HOLDERS))
            behind = tuple(
                (str(name), _decode_jobs(lagging)) for name, lagging in data.get("lag", {}).items()
            )
            return cls(str(data["content"]), str(data["base"]), jobs, (), holders, behind)
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(
                f"the posted lineage state {text!r} is not readable: {error}"
            ) from None


def _encode_jobs(jobs: Sequence[HopJob]) -> list[list[str]]:
    return [[job.side, job.namespace, job.owner] for job in jobs]


def _decode_jobs(data: Sequence[Sequence[str]]) -> tuple[HopJob, ...]:
    jobs = tuple(HopJob(side, namespace, owner) for side, namespace, owner in data)
    if any(job.side not in ("source", "sink") for job in jobs):
        raise ValueError("a job's side must be 'source' or 'sink'")
    return jobs


def after_posting(
    posted: PostedLineage,
    previous: PostedLineage | None,
    destinations: Sequence[str],
    failed: Collection[str],
) -> PostedLineage | None:
    """The state to record once ``posted`` (the new content, its runs and jobs) went to
    ``destinations`` but not to ``failed``; None when it reached none (the record stays).

    A destination that failed keeps the jobs it had open and gains the new ones (a partial
    post may have opened them), so its next post closes whatever it no longer has.
    """
    holders = tuple(name for name in destinations if name not in failed)
    if not holders:
        return None
    behind = []
    for name in destinations:
        if name in failed:
            before = previous.open_jobs(name) if previous is not None else ()
            behind.append((name, tuple(dict.fromkeys((*before, *posted.jobs)))))
    return replace(posted, holders=holders, behind=tuple(behind))


def next_base(content: str, previous: PostedLineage | None) -> str:
    """What the runs of ``content`` derive from: the same as before while the content is
    unchanged (a rerun replays), else new, chained to the runs before (see the module doc)."""
    if previous is not None and previous.content == content:
        return previous.base
    before = "" if previous is None else previous.base or ",".join(previous.legacy_runs)
    return deterministic_run_id("lineage state", content, before)


def jobs_to_close(
    previous: PostedLineage | None,
    current: Iterable[HopJob],
    destination: str = DEFAULT_HOLDERS[0],
) -> tuple[HopJob, ...]:
    """The jobs ``previous`` left open at ``destination`` that the current hops no longer have."""
    if previous is None:
        return ()
    live = {(job.namespace, job.owner) for job in current}
    return tuple(
        job for job in previous.open_jobs(destination) if (job.namespace, job.owner) not in live
    )


def closing_datasets(
    side: Side, topic: tuple[str, str]
) -> tuple[Sequence[tuple[str, str]], Sequence[tuple[str, str]]]:
    """(inputs, outputs) of a closing run: the topic on the job's side, nothing on the other.
    A sink job read the topic and now writes nothing; a source job now writes the topic from
    nothing. The topic stays so the closing is visible from the topic's own node."""
    return ((topic,), ()) if side == "sink" else ((), (topic,))
