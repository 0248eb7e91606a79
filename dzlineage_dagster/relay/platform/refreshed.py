"""A value the relay reads from AWS at most once per TTL, and only when asked for it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.sync.errors import SyncError

log = logging.getLogger("dzlineage.relay")

T = TypeVar("T")


class Refreshed(Generic[T]):
    """``read()``'s answer, read again once ``ttl_seconds`` have passed since the last read. A
    read that fails keeps the last good answer (``initial`` before the first), is logged once
    per failure, naming ``what`` was read and ``meanwhile`` what that means, and is tried again
    a TTL later; its error stays in :attr:`error` for ``/status``."""

    def __init__(
        self,
        read: Callable[[], T],
        ttl_seconds: float,
        *,
        what: str,
        meanwhile: str,
        initial: T,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._read = read
        self.ttl_seconds = ttl_seconds
        self._what, self._meanwhile = what, meanwhile
        self._clock = clock
        self._lock = threading.Lock()
        self._value = initial
        self._read_at: float | None = None
        self.reads = 0
        self.error: str | None = None

    def current(self) -> T:
        with self._lock:
            now = self._clock()
            if self._read_at is None or now - self._read_at >= self.ttl_seconds:
                self._read_at = now
                self.reads += 1
                try:
                    self._value = self._read()
                    self.error = None
                except (BotoCoreError, ClientError, SyncError, ValueError) as error:
                    # A SyncError's message names the setting already; AWS's need their type.
                    named = isinstance(error, SyncError)
                    self.error = str(error) if named else f"{type(error).__name__}: {error}"
                    log.error(
                        "cannot read %s (%s until it reads again in %.0f s): %s",
                        self._what,
                        self._meanwhile,
                        self.ttl_seconds,
                        self.error,
                    )
            return self._value
