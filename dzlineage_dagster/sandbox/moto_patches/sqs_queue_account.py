"""An SQS call names its queue by URL, and the URL names the queue's account
(``https://sqs.<region>.amazonaws.com/<account>/<name>``): AWS serves the call on that
account's queue, and refuses a caller of another account unless the queue's policy grants it
(SQS developer guide, "Basic examples of Amazon SQS policies": granting another account
``sqs:ReceiveMessage`` and the others by the queue's policy).

moto 5.2.5 reads only the name at the end of the URL and serves the caller's own queue of
that name: a change queue URL of another account's scope would silently read the caller's own
``dzlineage-changes``. Here such a call is served on the URL's account when its queue's policy
grants the caller's account the action (evaluated as
:func:`~.glue_catalog_policy.denied_resource` does, with its two kindnesses), and answered
``AccessDenied`` otherwise.
"""

from __future__ import annotations

import re

from moto.sqs.models import sqs_backends

from dzlineage_dagster.sandbox.moto_patches.glue_catalog_policy import denied_resource
from dzlineage_dagster.sandbox.protocol.aws import json_text_member

#: A queue URL's path: /<account>/<queue name>.
_QUEUE_PATH = re.compile(r"https?://[^/]+/(\d{12})/([\w-]{1,80}(?:\.fifo)?)")


def queue_of_call(service: str, body: bytes) -> tuple[str, str] | None:
    """The (account, queue name) an SQS call's ``QueueUrl`` names, if any."""
    url = json_text_member(body, "QueueUrl") if service == "sqs" else None
    match = _QUEUE_PATH.fullmatch(url) if url else None
    return (match.group(1), match.group(2)) if match else None


def cross_account_queue_denial(
    region: str, caller: str, owner: str, name: str, operation: str
) -> str | None:
    """AWS's AccessDenied message when ``owner``'s queue ``name`` (in ``region``) does not let
    ``caller``'s account make this call, else None (moto answers, a missing queue too)."""
    queue = sqs_backends[owner][region].queues.get(name)
    if queue is None:
        return None
    arn = f"arn:aws:sqs:{region}:{owner}:{name}"
    action = f"sqs:{operation}"
    if denied_resource(queue.policy, caller, action, [arn]) is None:
        return None
    return (
        f"User: arn:aws:iam::{caller}:root is not authorized to perform: {action} on resource: "
        f"{arn} because no resource-based policy allows the {action} action"
    )
