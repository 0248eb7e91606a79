"""How the sync says what went wrong, for the run log, the run's failure and the CLI."""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError


class SyncError(Exception):
    """A topic could not be synced; the message says why, for the run log and the CLI."""


#: What a topic's stage may raise without stopping the other topics.
TOPIC_ERRORS = (SyncError, ClientError, BotoCoreError, ValueError)


def describe_error(error: Exception) -> str:
    if isinstance(error, ClientError):
        details = error.response.get("Error", {})
        operation = getattr(error, "operation_name", "call")
        return f"{operation} failed: {details.get('Code')}: {details.get('Message')}"
    return str(error) or type(error).__name__


def error_code(error: ClientError) -> str:
    return error.response.get("Error", {}).get("Code", "")
