"""Which transfers move an asset to another project.

DataZone's ``UpdateAssetOwner`` moves an asset only from or to the domain's administration
project (botocore's model: "If the domain's administration project owns the asset, the target
can be any project. Otherwise, the target must be the administration project."). So an asset of
project A reaches project B in two transfers, A -> administration -> B, or in one when A or B
is the administration project. An asset found already with the administration project (a move
interrupted between its two transfers) needs only the second; one already with B, none.
"""

from __future__ import annotations


class MoveError(ValueError):
    """An asset that the move cannot take: owned by a project that is neither the source nor
    the administration project."""


def transfer_route(owner: str, *, source: str, target: str, administration: str) -> list[str]:
    """The projects the asset owned by ``owner`` is transferred to, in order, to reach
    ``target`` from ``source``."""
    if owner == target:
        return []
    if owner == administration or target == administration:
        return [target]
    if owner == source:
        return [administration, target]
    raise MoveError(
        f"owned by project {owner}, neither the source project {source} nor the domain's "
        f"administration project {administration}"
    )
