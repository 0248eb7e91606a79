"""MSK cluster ARNs shaped like AWS's.

moto names a cluster ``arn:aws:kafka:<region>:<account>:cluster/<uuid>``; AWS puts the cluster
name in it and a numbered suffix after the id:
``arn:aws:kafka:<region>:<account>:cluster/<name>/<uuid>-<n>`` (``-s<n>`` for a serverless
cluster, whose ARN also says ``cluster``). Code that takes the name from the ARN, or validates
one, so meets the same shape in the sandbox as on AWS.
"""

from __future__ import annotations

import uuid

from moto.utilities.utils import get_partition

#: AWS's suffixes seen in the wild run from 1 to the low twenties; it is the cell number.
_SUFFIX_CELLS = 25


def aws_shaped_cluster_arn(cluster: object) -> str:
    """The moto cluster's ARN as AWS would write it (deterministic from its id)."""
    cluster_id: str = cluster.cluster_id
    cell = uuid.UUID(cluster_id).int % _SUFFIX_CELLS + 1
    suffix = f"s{cell}" if cluster.cluster_type == "SERVERLESS" else str(cell)
    partition = get_partition(cluster.region_name)
    return (
        f"arn:{partition}:kafka:{cluster.region_name}:{cluster.account_id}:"
        f"cluster/{cluster.cluster_name}/{cluster_id}-{suffix}"
    )
