"""What a 409 from PostLineageEvent means, decided one way for the sync and the relay.

PostLineageEvent's API reference says of ``ConflictException`` only "There is a conflict while
performing this action". Two readings fit, and the sandbox answers either
(``lineage_conflict`` in :mod:`dzlineage_dagster.sandbox.server.ambiguities`):

- *duplicate*: the client token posted this event before (a retry after a crash, within the
  token's window, whose eventTime or forwarded bytes differ), so DataZone holds it;
- *other*: the conflict stored nothing (a concurrent post, say), so the event is not held.

So a 409 counts as delivered only when DataZone holds the event. Otherwise the event is posted
again, a bounded number of times: once with the same token (the conflict stored nothing, so
the token is free); then, refused again, DataZone's events are read once more (a writer beside
this one may have posted the event meanwhile) and, still not held, the event is posted once
with a token derived from the first (which is spent: used for an event DataZone does not hold).
A third refusal is the caller's to report; the event is still not held.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from botocore.exceptions import ClientError

CONFLICT = "ConflictException"


def is_conflict(error: ClientError) -> bool:
    return error.response.get("Error", {}).get("Code") == CONFLICT


def conflict_retry_token(token: str) -> str:
    """The client token of the last re-post after a 409 (a fixed function of the first, so a
    retry of that re-post replays instead of posting twice)."""
    return hashlib.sha256(f"{token} after a 409".encode()).hexdigest()


def post_after_conflict(
    post: Callable[[str], str], token: str, held: Callable[[bool], bool]
) -> str | None:
    """After PostLineageEvent answered 409 to the post with ``token``: None when DataZone holds
    the event, else the id DataZone gave a re-post of it.

    ``post(token)`` posts the event with that client token and returns its id; ``held(fresh)``
    says whether DataZone holds the event (``fresh``: read DataZone again rather than what the
    caller read before). The ClientError of the last post propagates: a 409 there means three
    posts were refused and DataZone still does not hold the event.
    """
    if held(False):
        return None
    try:
        return post(token)
    except ClientError as error:
        if not is_conflict(error):
            raise
    if held(True):
        return None
    return post(conflict_retry_token(token))
