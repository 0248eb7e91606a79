"""The relay's producers' keys, from its settings, a key file and a Secrets Manager secret,
re-read while it runs so a key can be added, rotated or revoked without a restart.

The file is read again whenever its modification time or size changes (one ``stat`` a
request); the secret at most every ``DZLINEAGE_RELAY_KEYS_TTL_SECONDS``. A document that no
longer reads (a half-written file, a secret with a typo) keeps the last good keys, and the
error is logged and shown in ``/status``; at start it stops the relay.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.lineage.relay_access import (
    InvalidKeys,
    Producer,
    merge_keys,
    parse_keys,
    producer_of,
)
from dzlineage_dagster.settings import env_name

log = logging.getLogger("dzlineage.relay")
#: The producer a relay without any key (loopback only) takes every request for.
ANONYMOUS = Producer("anonymous (no key configured)")


class KeyStore:
    """Key -> producer, kept current with the key file and the secret."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        keys_file: Path | None = None,
        keys_secret: str | None = None,
        secrets: Any = None,
        ttl_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.api_key = api_key
        self.keys_file = keys_file
        self.keys_secret = keys_secret
        self.secrets = secrets
        self.ttl_seconds = ttl_seconds
        self.clock = clock
        self.last_error: str | None = None
        self._lock = threading.Lock()
        self._file_stamp: tuple[int, int] | None = None
        self._file_keys: dict[str, Producer] = {}
        self._secret_read_at: float | None = None
        self._secret_keys: dict[str, Producer] = {}
        self._keys: dict[str, Producer] = {}
        self._stale = True
        self._refresh(strict=True)

    @property
    def open(self) -> bool:
        """No key of any kind is configured: every request is taken (loopback only)."""
        return not (self.api_key or self.keys_file or self.keys_secret)

    def producer(self, authorization: str | None) -> Producer | None:
        """The producer the request's key belongs to (None: missing or wrong key)."""
        if self.open:
            return ANONYMOUS
        with self._lock:
            self._refresh(strict=False)
            keys = self._keys
        return producer_of(authorization, keys)

    def producers(self) -> list[str]:
        """The names of the producers holding a key now."""
        return sorted({producer.name for producer in self._keys.values()})

    def _refresh(self, strict: bool) -> None:
        """Re-read what changed; ``strict``: an unreadable document raises instead of being
        logged (at start there are no last good keys to keep). One document that does not
        read keeps its last good keys; the other's changes still apply."""
        problems = []
        for read in (self._read_file_if_changed, self._read_secret_if_due):
            try:
                self._stale |= read()
            except InvalidKeys as error:
                problems.append(str(error))
        if self._stale and not (strict and problems):
            try:
                keys = merge_keys(self._documents())
            except InvalidKeys as error:
                problems.append(str(error))
            else:
                reloaded = bool(self._keys)
                self._keys, self._stale = keys, False
                if reloaded:
                    log.warning("relay keys reloaded: producers %s", ", ".join(self.producers()))
        problem = "; ".join(problems) or None
        if problem and strict:
            raise InvalidKeys(problem)
        if problem and problem != self.last_error:
            log.error("relay keys: %s (the last good keys stay in use)", problem)
        self.last_error = problem

    def _documents(self) -> list[tuple[str, dict[str, Producer]]]:
        documents = [
            (env_name("relay_keys_file"), self._file_keys),
            (env_name("relay_keys_secret"), self._secret_keys),
        ]
        if self.api_key:
            single = {self.api_key: Producer(env_name("relay_api_key"))}
            documents.append((env_name("relay_api_key"), single))
        return documents

    def _read_file_if_changed(self) -> bool:
        if self.keys_file is None:
            return False
        source = f"{env_name('relay_keys_file')}={self.keys_file}"
        try:
            stat = self.keys_file.stat()
        except OSError as error:
            raise InvalidKeys(f"{source} cannot be read: {error.strerror}") from None
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp == self._file_stamp:
            return False
        try:
            text = self.keys_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise InvalidKeys(f"{source} cannot be read: {error}") from None
        self._file_keys = parse_keys(text, source)
        self._file_stamp = stamp
        return True

    def _read_secret_if_due(self) -> bool:
        if self.keys_secret is None:
            return False
        now = self.clock()
        if self._secret_read_at is not None and now - self._secret_read_at < self.ttl_seconds:
            return False
        source = f"{env_name('relay_keys_secret')}={self.keys_secret}"
        # Read or not, the next try waits a TTL: a failing Secrets Manager is not hammered.
        self._secret_read_at = now
        try:
            answer = self.secrets.get_secret_value(SecretId=self.keys_secret)
        except (ClientError, BotoCoreError) as error:
            raise InvalidKeys(f"{source} cannot be read: {error}") from None
        if "SecretString" not in answer:
            raise InvalidKeys(f"{source} holds a binary secret; store the keys' JSON as text")
        self._secret_keys = parse_keys(answer["SecretString"], source)
        return True
