"""What every part of the DataZone emulator shares: new ids, timestamps and errors."""

from __future__ import annotations

import secrets
import string
from datetime import datetime, timezone

from dzlineage_dagster.sandbox.protocol.aws import AwsServiceError

_ID_ALPHABET = string.ascii_lowercase + string.digits


def new_id(length: int = 14) -> str:
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(length))


def now() -> datetime:
    # Millisecond precision, as AWS answers, so timestamps round-trip through clients exactly.
    moment = datetime.now(timezone.utc)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def invalid(message: str) -> AwsServiceError:
    return AwsServiceError("ValidationException", message)


def not_found(message: str) -> AwsServiceError:
    return AwsServiceError("ResourceNotFoundException", message)
