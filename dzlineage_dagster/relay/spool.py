"""The relay's durable queue: events DataZone has not taken yet, in arrival order (SQLite).

An event is written (and committed) before the producer hears 2xx, and deleted only after
DataZone accepted it, so a relay killed at any point redelivers it on restart; the event's
clientToken makes that redelivery a replay at DataZone rather than a second event.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path


class SpoolFull(Exception):
    """The spool holds its maximum number of events."""


@dataclass(frozen=True)
class SpooledEvent:
    seq: int
    client_token: str
    event_json: str
    attempts: int


class Spool:
    """A bounded FIFO of (clientToken, event JSON) in one SQLite file, safe across threads."""

    def __init__(self, path: Path | str, max_events: int) -> None:
        self.path = Path(path)
        self.max_events = max_events
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One connection shared under a lock: SQLite serialises writers anyway, and the
        # relay's writes are single rows.
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(
            """
            CREATE TABLE IF NOT EXISTS pending (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                client_token TEXT NOT NULL UNIQUE,
                event_json TEXT NOT NULL,
                received_at REAL NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                last_error TEXT
            );
            CREATE TABLE IF NOT EXISTS rejected (
                client_token TEXT PRIMARY KEY,
                event_json TEXT NOT NULL,
                error TEXT NOT NULL,
                rejected_at REAL NOT NULL
            );
            """
        )
        self._depth = self._count()

    def _count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM pending").fetchone()[0]

    def __len__(self) -> int:
        return self._depth

    def add(self, client_token: str, event_json: str) -> bool:
        """Append an event; False when one with this token is already waiting (a retry).

        Raises :class:`SpoolFull` when the spool holds ``max_events``.
        """
        with self._lock:
            if self._depth >= self.max_events:
                raise SpoolFull(f"the spool {self.path} holds its maximum of {self.max_events}")
            cursor = self._db.execute(
                "INSERT OR IGNORE INTO pending (client_token, event_json, received_at) "
                "VALUES (?, ?, ?)",
                (client_token, event_json, time.time()),
            )
            added = cursor.rowcount == 1
            self._depth += added
            return added

    def oldest(self, limit: int = 100) -> list[SpooledEvent]:
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, client_token, event_json, attempts FROM pending ORDER BY seq LIMIT ?",
                (limit,),
            ).fetchall()
        return [SpooledEvent(*row) for row in rows]

    def delivered(self, event: SpooledEvent) -> None:
        with self._lock:
            cursor = self._db.execute("DELETE FROM pending WHERE seq = ?", (event.seq,))
            self._depth -= cursor.rowcount

    def failed_attempt(self, event: SpooledEvent, error: str) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE pending SET attempts = attempts + 1, last_error = ? WHERE seq = ?",
                (error, event.seq),
            )

    def reject(self, event: SpooledEvent, error: str) -> None:
        """Move an event DataZone refuses for good out of the queue, keeping it for a human."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "INSERT OR REPLACE INTO rejected VALUES (?, ?, ?, ?)",
                (event.client_token, event.event_json, error, time.time()),
            )
            cursor = self._db.execute("DELETE FROM pending WHERE seq = ?", (event.seq,))
            self._db.execute("COMMIT")
            self._depth -= cursor.rowcount

    def rejected_count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM rejected").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
