"""The relay's view of the Glue Data Catalog: which tables exist and where each is stored, so
the other names producers give a table land on its node
(:func:`~dzlineage_dagster.core.identity.glue.resolve_glue_table`) without a Glue call per
event.

A database is read (GetTables, every page) the first time an event names a table in it, and
again once its listing is older than ``DZLINEAGE_RELAY_GLUE_CATALOG_TTL_SECONDS``; the
platform's database (``DZLINEAGE_GLUE_DATABASE``) is read for the first storage location an
event names, which is matched against every database read so far. A table an event names
that its database's listing lacks (created since the listing was read) is looked up once
(GetTable), and that answer, found or not, is kept for a TTL too. Only the relay's Region is
read, and only the accounts ``DZLINEAGE_RELAY_GLUE_ACCOUNTS`` allows. A read that fails
(AccessDenied, Glue unreachable) keeps what was read before (or no tables), is logged once and
shown in ``/status``, and is tried again a TTL later: Glue is never called per event.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.identity.glue import DatabaseTables, GlueCatalogIndex, GlueTableId
from dzlineage_dagster.resources import GlueDataCatalogResource

log = logging.getLogger("dzlineage.relay")


class GlueCatalogCache:
    """A :class:`~dzlineage_dagster.core.identity.glue.GlueCatalog` read from Glue on demand."""

    def __init__(
        self,
        data_catalog: GlueDataCatalogResource,
        *,
        region: str,
        athena_account: str | None,
        accounts: frozenset[str],
        databases: Iterable[str],
        ttl_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.data_catalog = data_catalog
        self.region = region
        self._athena_account = athena_account
        self.accounts = accounts
        self.ttl_seconds = ttl_seconds
        self.clock = clock
        self.last_error: str | None = None
        #: The platform's databases, read for a storage location before any event names them.
        self._platform = [(athena_account, db) for db in databases] if athena_account else []
        #: (account, lower-case database) -> (when read, its tables).
        self._listings: dict[tuple[str, str], tuple[float, DatabaseTables]] = {}
        #: (account, lower-case database, lower-case table) -> when GetTable was asked for it.
        self._looked_up: dict[tuple[str, str, str], float] = {}
        self._lock = threading.Lock()

    @property
    def athena_account(self) -> str | None:
        return self._athena_account

    def table(self, claimed: GlueTableId) -> GlueTableId | None:
        if claimed.region != self.region or (
            self.accounts and claimed.account not in self.accounts
        ):
            return None
        with self._lock:
            self._refresh(claimed.account, claimed.database)
            found = self._index().table(claimed)
            if found is None and self._look_up_due(claimed):
                self._look_up(claimed)
                found = self._index().table(claimed)
            return found

    def tables_at(self, location: str) -> list[GlueTableId]:
        with self._lock:
            known = [
                (account, tables.database) for (account, _), (_, tables) in self._listings.items()
            ]
            for account, database in dict.fromkeys([*self._platform, *known]):
                self._refresh(account, database)
            return self._index().tables_at(location)

    def status(self) -> dict[str, Any]:
        """What the relay knows of the catalog, and the Glue calls it made for it."""
        with self._lock:
            index = self._index()
        calls = self.data_catalog.api_calls
        return {
            **index.status(),
            "glue_calls": {name: calls[name] for name in sorted(calls) if name.startswith("glue.")},
            "ttl_seconds": self.ttl_seconds,
            "last_error": self.last_error,
        }

    def _index(self) -> GlueCatalogIndex:
        databases = {key: tables for key, (_, tables) in self._listings.items()}
        return GlueCatalogIndex(self.region, self._athena_account, databases)

    def _refresh(self, account: str, database: str) -> None:
        """Read ``database``'s tables unless a listing younger than the TTL is at hand."""
        key = (account, database.casefold())
        now = self.clock()
        read_at, tables = self._listings.get(key, (None, DatabaseTables(database)))
        if read_at is not None and now - read_at < self.ttl_seconds:
            return
        # Read or not, the next read waits a TTL: a failing Glue is not called per event.
        self._listings[key] = (now, tables)
        listed = self._read(
            f"GetTables {database} of account {account}",
            lambda: self.data_catalog.tables(database, account),
        )
        if listed is not None:
            self._listings[key] = (now, DatabaseTables.from_glue(database, listed))

    def _look_up_due(self, claimed: GlueTableId) -> bool:
        asked = self._looked_up.get(_table_key(claimed))
        return asked is None or self.clock() - asked >= self.ttl_seconds

    def _look_up(self, claimed: GlueTableId) -> None:
        now = self.clock()
        # Forget answers past their TTL, so names events made up do not pile up.
        self._looked_up = {k: t for k, t in self._looked_up.items() if now - t < self.ttl_seconds}
        self._looked_up[_table_key(claimed)] = now
        found = self._read(
            f"GetTable {claimed.database}.{claimed.table} of account {claimed.account}",
            lambda: self.data_catalog.table(claimed.database, claimed.table, claimed.account),
        )
        if found:
            key = (claimed.account, claimed.database.casefold())
            read_at, tables = self._listings[key]
            self._listings[key] = (read_at, tables.with_tables([found]))

    def _read(self, what: str, read: Callable[[], Any]) -> Any:
        """``read()``, or None after logging why Glue did not answer."""
        try:
            answer = read()
        except (ClientError, BotoCoreError) as error:
            problem = f"{what}: {error}"
            if problem != self.last_error:
                log.error(
                    "relay Glue catalog: %s (names of its tables pass as sent; tried again in "
                    "%g s)",
                    problem,
                    self.ttl_seconds,
                )
            self.last_error = problem
            return None
        self.last_error = None
        return answer


def _table_key(table: GlueTableId) -> tuple[str, str, str]:
    return table.account, table.database.casefold(), table.table.casefold()
