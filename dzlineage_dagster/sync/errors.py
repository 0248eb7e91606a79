"""How the sync says what went wrong, for the run log, the run's failure and the CLI."""

from __future__ import annotations

from types import SimpleNamespace

from botocore.exceptions import BotoCoreError, ClientError
from botocore.retries.standard import (
    RetryContext,
    ThrottledRetryableChecker,
    ThrottlingStatusCodeChecker,
    TransientRetryableChecker,
)

#: botocore's own reasons to retry an error (the standard mode's, without the attempt count).
_RETRYABLE = (
    ThrottledRetryableChecker(),
    ThrottlingStatusCodeChecker(),
    TransientRetryableChecker(),
)


class SyncError(Exception):
    """A topic could not be synced; the message says why, for the run log and the CLI."""


#: What a topic's stage may raise without stopping the other topics.
TOPIC_ERRORS = (SyncError, ClientError, BotoCoreError, ValueError)


def describe_error(error: Exception) -> str:
    if isinstance(error, ClientError):
        details = error.response.get("Error", {})
        operation = getattr(error, "operation_name", "call")
        described = f"{operation} failed: {details.get('Code')}: {details.get('Message')}"
        budget = retry_budget_exhausted(error)
        return f"{described} ({budget})" if budget else described
    return str(error) or type(error).__name__


def retry_budget_exhausted(error: ClientError) -> str | None:
    """What botocore's retry handler says ran out, or None when it did not give up.

    botocore records it in the error's ``ResponseMetadata``: ``MaxAttemptsReached`` when the
    call used every attempt of ``DZLINEAGE_MAX_ATTEMPTS``, ``RetryQuotaReached`` when the
    standard mode's per-client retry quota (shared by every call of the client) was spent, so
    the call was not retried at all. An operator then knows the service kept failing, and that
    raising the attempts or slowing the sync down is the lever, not the request itself.
    """
    metadata = error.response.get("ResponseMetadata", {})
    attempts = int(metadata.get("RetryAttempts", 0)) + 1
    if not _retryable(error):
        # botocore marks the last attempt of any failed call, a NotFound too: no retry could
        # have helped it, so no budget ran out.
        return None
    if metadata.get("RetryQuotaReached"):
        return (
            f"retry budget exhausted: botocore's retry quota for this client was used up after "
            f"{attempts} attempt{'s' if attempts > 1 else ''}"
        )
    if metadata.get("MaxAttemptsReached"):
        return f"retry budget exhausted: all {attempts} attempts failed (DZLINEAGE_MAX_ATTEMPTS)"
    return None


def _retryable(error: ClientError) -> bool:
    status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    context = RetryContext(
        attempt_number=1,
        parsed_response=error.response,
        http_response=SimpleNamespace(status_code=status) if status else None,
    )
    return any(checker.is_retryable(context) for checker in _RETRYABLE)


def error_code(error: ClientError) -> str:
    return error.response.get("Error", {}).get("Code", "")
