"""The quota figures the quota-bound benchmark gives the sandbox: typed from AWS's pages.

``aws_quotas.json`` beside this module holds each figure with the page it was read from, or
``assumed`` and why, independently of the product's pacing table (``core/aws/quotas.py``): a
run at these figures can disagree with the code (issue 18). :func:`sandbox_quota_spec` turns
them into the sandbox's ``--quotas`` text (``service.Operation=TPS``, operations that share one
published quota joined by ``+``), and the quota floor is reckoned at the same text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

PUBLISHED_QUOTAS_FILE = Path(__file__).with_name("aws_quotas.json")
#: ``--sandbox-quotas published``: the figures of :data:`PUBLISHED_QUOTAS_FILE`.
PUBLISHED = "published"


@dataclass(frozen=True)
class QuotaFigure:
    operations: tuple[str, ...]
    tps: float
    #: The AWS page the figure was typed from, or ``assumed``.
    source: str
    shared: bool

    def spec(self) -> list[str]:
        if self.shared:
            return [f"{'+'.join(self.operations)}={self.tps:g}"]
        return [f"{operation}={self.tps:g}" for operation in self.operations]


def published_quota_figures(path: Path = PUBLISHED_QUOTAS_FILE) -> list[QuotaFigure]:
    document = json.loads(path.read_text(encoding="utf-8"))
    return [
        QuotaFigure(
            tuple(entry["operations"]),
            float(entry["tps"]),
            entry["source"],
            bool(entry.get("shared", False)),
        )
        for entry in document["quotas"]
    ]


def sandbox_quota_spec(given: str) -> str:
    """The sandbox's ``--quotas`` text for ``--sandbox-quotas``: ``published`` becomes the
    figures of :data:`PUBLISHED_QUOTAS_FILE`; anything else (``aws``, rates, a JSON file of
    rates) is passed as it is."""
    if given != PUBLISHED:
        return given
    return ",".join(part for figure in published_quota_figures() for part in figure.spec())
