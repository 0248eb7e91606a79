"""The one name of a captured source table, as Debezium's own OpenLineage posts it, and the
database hosts' aliases that map to it.

A source table is named ``<scheme>://<database.hostname>:<port>`` + the table's qualified name
(Debezium 3.2+, the OpenLineage naming spec). A database answers under several host names (an
RDS endpoint, a Route 53 alias, its IP), so the same table may arrive under several namespaces;
:class:`SourceHosts` maps each configured alias to the canonical host, in the sync's first hop
(a connector whose ``database.hostname`` is an alias) and in the relay alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from openlineage.client.naming import dataset as naming

from dzlineage_dagster.core.connectors.debezium import SourceEngine, SourceTable
from dzlineage_dagster.core.text import shown

#: How SQL Server source tables are named: Debezium's own OpenLineage writes ``sqlserver://``,
#: the OpenLineage naming spec says ``mssql://``. Debezium's is the default so the nodes join.
SQLSERVER_SCHEMES = ("sqlserver", "mssql")
#: The namespace schemes of the databases Debezium captures (MariaDB is named ``mysql://``).
SOURCE_SCHEMES = ("postgres", "mysql", "oracle", *SQLSERVER_SCHEMES)


@dataclass(frozen=True)
class SourceHosts:
    """Database host aliases -> canonical host (lowercased keys; DNS names have no case)."""

    aliases: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str | None) -> SourceHosts:
        """From a comma list of ``alias=host`` (DZLINEAGE_SOURCE_HOST_ALIASES)."""
        aliases = {}
        for entry in (text or "").split(","):
            if not entry.strip():
                continue
            alias, equals, host = (part.strip() for part in entry.partition("="))
            if not equals or not alias or not host or any(c in alias + host for c in "/ :="):
                raise ValueError(
                    f"{shown(entry.strip())} is not alias=host, e.g. "
                    "10.0.0.5=shop-db.abc123.us-east-1.rds.amazonaws.com"
                )
            aliases[alias.lower()] = host
        return cls(aliases)

    def canonical_host(self, host: str) -> str:
        return self.aliases.get(host.lower(), host)

    def canonical_namespace(self, namespace: str) -> str | None:
        """The namespace of a source table named under an alias host, None when ``namespace``
        is not a source database's or names no alias."""
        scheme, separator, address = namespace.partition("://")
        if not separator or scheme not in SOURCE_SCHEMES:
            return None
        host, colon, port = address.rpartition(":")
        if not colon or not port.isdigit():
            host, port = address, ""
        canonical = self.canonical_host(host)
        if canonical == host:
            return None
        return f"{scheme}://{canonical}{':' + port if port else ''}"


def source_table_dataset(
    table: SourceTable, *, sqlserver_scheme: str = "sqlserver", hosts: SourceHosts | None = None
) -> tuple[str, str]:
    """The (namespace, name) of a captured source table, as Debezium 3.2+ names it, its host
    taken through ``hosts``' aliases.

    Postgres ``postgres://{host}:{port}`` + ``{db}.{schema}.{table}``, MySQL/MariaDB
    ``mysql://{host}:{port}`` + ``{db}.{table}``, Oracle ``oracle://{host}:{port}`` +
    ``{service}.{schema}.{table}`` (the PDB when the connector has one), SQL Server
    ``{sqlserver_scheme}://{host}:{port}`` + ``{db}.{schema}.{table}``.
    """
    if not table.hostname:
        raise ValueError(
            f"source table {table.qualified} of connector {table.connector!r} has no "
            "database.hostname: its dataset cannot be named"
        )
    if hosts is not None:
        table = replace(table, hostname=hosts.canonical_host(table.hostname))
    host, port = table.hostname, table.port
    if table.engine is SourceEngine.POSTGRES:
        named: naming.DatasetNaming = naming.Postgres(
            host=host,
            port=port,
            database=table.database,
            schema=table.schema or "",
            table=table.table,
        )
    elif table.engine is SourceEngine.MYSQL:
        named = naming.MySQL(host=host, port=port, database=table.database, table=table.table)
    elif table.engine is SourceEngine.ORACLE:
        named = naming.Oracle(
            host=host,
            port=port,
            service_name=table.database,
            schema=table.schema or "",
            table=table.table,
        )
    else:
        if sqlserver_scheme not in SQLSERVER_SCHEMES:
            raise ValueError(
                f"sqlserver_scheme {sqlserver_scheme!r} must be one of {SQLSERVER_SCHEMES}"
            )
        return f"{sqlserver_scheme}://{host}:{port}", table.qualified
    return named.get_namespace(), named.get_name()
