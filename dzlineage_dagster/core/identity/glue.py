"""A Glue Data Catalog table's one identity, and the other names producers give it (pure).

DataZone files a Glue table's lineage node under the table's ARN
(``arn:aws:glue:<region>:<account>:table/<db>/<table>``), so the project posts a table as
namespace ``arn:aws:glue:<region>:<account>:table`` + name ``<db>/<table>``
(:func:`glue_dataset`; ``docs/lineage-nodes.md`` gives the sources). The producers of the AWS
ecosystem name the same table in other ways, each of which :func:`resolve_glue_table` maps to
that name, recording which rule did it:

=================================================================  ========================
a dataset named                                                    rule
=================================================================  ========================
``arn:aws:glue:<r>:<a>`` + ``table/<db>/<t>`` (OpenLineage's)      ``glue-table-name``
``arn:aws:glue:<r>:<a>`` + ``<db>.<t>`` (dbt-glue)                 ``dbt-glue-table-name``
``awsathena://athena.<r>.amazonaws.com`` + ``AwsDataCatalog.       ``athena-table-name``
<db>.<t>`` (Airflow's AthenaOperator, dbt-athena)
any name, with one of the forms above in its ``symlinks`` facet    ``glue-table-symlink``
``s3://<bucket>`` + ``<path>`` (``s3a://``, ``s3n://``), the       ``glue-table-location``
location of exactly one table of the catalog
=================================================================  ========================

A name is mapped only when the catalog has the table (:class:`GlueCatalog`): a dataset that
claims a table that does not exist, a location no table or two tables have, or a table of an
Athena catalog other than the account's default one keeps its own name. Glue keeps database
and table names in lower case and Athena's are case-insensitive, so a claim matches the
catalog's table whatever its case and takes the catalog's spelling.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from openlineage.client.facet_v2 import symlinks_dataset
from openlineage.client.naming import dataset as naming
from openlineage.client.serde import Serde

#: The ``type`` of a Glue table's identifier in a ``symlinks`` facet (OpenLineage's example).
GLUE_SYMLINK_TYPE = "TABLE"

GLUE_NAME_RULE = "glue-table-name"
DBT_GLUE_RULE = "dbt-glue-table-name"
ATHENA_RULE = "athena-table-name"
GLUE_SYMLINK_RULE = "glue-table-symlink"
LOCATION_RULE = "glue-table-location"
#: Every rule that renames a dataset to a Glue table.
GLUE_RULES = frozenset(
    {GLUE_NAME_RULE, DBT_GLUE_RULE, ATHENA_RULE, GLUE_SYMLINK_RULE, LOCATION_RULE}
)
#: Athena's name of the account's default catalog, the Glue Data Catalog (case-insensitive).
ATHENA_DEFAULT_CATALOG = "awsdatacatalog"
#: An account that stands for any in :func:`claimed_table_name`.
ANY_ACCOUNT = "000000000000"

_GLUE_ARN_NAMESPACE = re.compile(r"arn:aws[a-z-]*:glue:([a-z0-9-]+):(\d{12})")
_PROJECT_NAMESPACE = re.compile(r"arn:aws[a-z-]*:glue:[a-z0-9-]+:\d{12}:table")
_OPENLINEAGE_NAME = re.compile(r"table/([^/]+)/([^/]+)")
_DOTTED_NAME = re.compile(r"([^./]+)\.([^./]+)")
_ATHENA_NAMESPACE = re.compile(r"awsathena://athena\.([a-z0-9-]+)\.amazonaws\.com/?")
_ATHENA_NAME = re.compile(r"([^./]+)\.([^./]+)\.([^./]+)")
_S3_SCHEMES = ("s3://", "s3a://", "s3n://")


def is_project_table_namespace(namespace: str) -> bool:
    """Whether ``namespace`` is the project's naming of a Glue table
    (``arn:aws:glue:<region>:<account>:table``, the name ``<db>/<table>``)."""
    return _PROJECT_NAMESPACE.fullmatch(namespace) is not None


def is_glue_namespace(namespace: str) -> bool:
    """Whether ``namespace`` is a Glue catalog's (``arn:aws:glue:<region>:<account>...``)."""
    return _GLUE_ARN_NAMESPACE.match(namespace) is not None


def glue_dataset(region: str, account_id: str, database: str, table: str) -> tuple[str, str]:
    """The (namespace, name) the project posts a Glue Data Catalog table as:
    ``arn:aws:glue:<region>:<account>:table`` + ``<db>/<table>``, which DataZone's documented
    ``<namespace>/<name>`` rule turns into the table's ARN, its node's sourceIdentifier.

    Only the account's default catalog: a federated catalog's table (S3 Tables,
    ``table/<catalog>/<db>/<table>``) is refused, as a ``/`` in a part would be.
    """
    for part, value in (("database", database), ("table", table)):
        if not value or "/" in value:
            raise ValueError(
                f"Glue {part} {value!r} cannot name a table of the default Glue Data Catalog "
                "(a federated catalog's table, such as S3 Tables', is not supported: see "
                "docs/lineage-nodes.md)"
            )
    return f"arn:aws:glue:{region}:{account_id}:table", f"{database}/{table}"


def openlineage_glue_name(
    region: str, account_id: str, database: str, table: str
) -> tuple[str, str]:
    """OpenLineage's naming of a Glue table (``arn:aws:glue:{region}:{account}`` +
    ``table/{db}/{table}``): the ``symlinks`` identifier other OpenLineage consumers join on."""
    named = naming.AWSGlue(
        region_name=region, account_id=account_id, database_name=database, table_name=table
    )
    return named.get_namespace(), named.get_name()


@dataclass(frozen=True)
class GlueTableId:
    """A table of a Region's and account's default Glue Data Catalog."""

    region: str
    account: str
    database: str
    table: str

    @property
    def dataset(self) -> tuple[str, str]:
        """The (namespace, name) the project posts the table as (:func:`glue_dataset`)."""
        return glue_dataset(self.region, self.account, self.database, self.table)


def s3_location(namespace: str, name: str) -> str | None:
    """The ``s3://bucket/path`` a dataset named by its storage location points at (``s3a://``
    and ``s3n://`` are Hadoop's schemes for the same objects), without trailing slashes;
    None for any other dataset."""
    for scheme in _S3_SCHEMES:
        if namespace.startswith(scheme):
            bucket = namespace.removeprefix(scheme).strip("/")
            if bucket and "/" not in bucket:
                return f"s3://{bucket}/{name.strip('/')}".rstrip("/")
    return None


def normalized_location(location: str) -> str | None:
    """A Glue table's ``StorageDescriptor.Location`` as :func:`s3_location` gives a dataset's."""
    for scheme in _S3_SCHEMES:
        if location.startswith(scheme):
            bucket, _, path = location.removeprefix(scheme).partition("/")
            return s3_location(f"s3://{bucket}", path)
    return None


@dataclass(frozen=True)
class DatabaseTables:
    """One database of a catalog as GetTables returned it: its tables, and their locations."""

    database: str
    #: Each table's name, by its lower-case form.
    names: Mapping[str, str] = field(default_factory=dict)
    #: The tables whose storage location is each normalized location.
    by_location: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def from_glue(cls, database: str, tables: Iterable[Mapping[str, Any]]) -> DatabaseTables:
        """From GetTables' ``TableList`` (or GetTable's ``Table``s)."""
        names: dict[str, str] = {}
        by_location: dict[str, tuple[str, ...]] = {}
        for table in tables:
            names[table["Name"].casefold()] = table["Name"]
            location = normalized_location(
                (table.get("StorageDescriptor") or {}).get("Location") or ""
            )
            if location is not None:
                by_location[location] = (*by_location.get(location, ()), table["Name"])
        return cls(database, names, by_location)

    def with_tables(self, tables: Iterable[Mapping[str, Any]]) -> DatabaseTables:
        """These tables and ``tables`` (a table found by GetTable after the listing)."""
        added = DatabaseTables.from_glue(self.database, tables)
        by_location = dict(self.by_location)
        for location, names in added.by_location.items():
            by_location[location] = tuple(dict.fromkeys((*by_location.get(location, ()), *names)))
        return DatabaseTables(self.database, {**self.names, **added.names}, by_location)


class GlueCatalog(Protocol):
    """What the renaming needs of a Region's Glue Data Catalogs: whether a table exists (by any
    account the caller may read), and which tables a storage location belongs to."""

    @property
    def athena_account(self) -> str | None:
        """The account whose default catalog Athena's ``AwsDataCatalog`` is (the caller's)."""

    def table(self, claimed: GlueTableId) -> GlueTableId | None:
        """The catalog's table ``claimed`` names (its own spelling), None if there is none."""

    def tables_at(self, location: str) -> list[GlueTableId]:
        """The tables whose normalized storage location is ``location``."""

    def status(self) -> dict[str, Any]:
        """What is known of the catalog, for the relay's ``/status``."""


@dataclass(frozen=True)
class GlueCatalogIndex:
    """A :class:`GlueCatalog` from tables already read: databases by (account, lower-case name)."""

    region: str
    athena_account: str | None
    databases: Mapping[tuple[str, str], DatabaseTables] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        region: str,
        account: str,
        tables: Mapping[str, Iterable[Mapping[str, Any]]],
    ) -> GlueCatalogIndex:
        """One account's catalog, from GetTables' ``TableList`` of each database."""
        databases = {
            (account, database.casefold()): DatabaseTables.from_glue(database, listed)
            for database, listed in tables.items()
        }
        return cls(region, account, databases)

    def table(self, claimed: GlueTableId) -> GlueTableId | None:
        if claimed.region != self.region:
            return None
        database = self.databases.get((claimed.account, claimed.database.casefold()))
        name = database.names.get(claimed.table.casefold()) if database else None
        if database is None or name is None:
            return None
        return GlueTableId(self.region, claimed.account, database.database, name)

    def tables_at(self, location: str) -> list[GlueTableId]:
        return [
            GlueTableId(self.region, account, database.database, name)
            for (account, _), database in self.databases.items()
            for name in database.by_location.get(location, ())
        ]

    def status(self) -> dict[str, Any]:
        return {
            "databases": len(self.databases),
            "tables": sum(len(database.names) for database in self.databases.values()),
        }


def claimed_table(
    namespace: str, name: str, athena_account: str | None
) -> tuple[GlueTableId, str] | None:
    """The table a dataset's name claims, by OpenLineage's Glue naming, dbt-glue's or Athena's
    (whose default catalog is ``athena_account``'s), and the rule; None for any other name."""
    glue = _GLUE_ARN_NAMESPACE.fullmatch(namespace)
    if glue:
        for pattern, rule in ((_OPENLINEAGE_NAME, GLUE_NAME_RULE), (_DOTTED_NAME, DBT_GLUE_RULE)):
            parts = pattern.fullmatch(name)
            if parts:
                return GlueTableId(glue.group(1), glue.group(2), *parts.groups()), rule
        return None
    athena = _ATHENA_NAMESPACE.fullmatch(namespace)
    parts = _ATHENA_NAME.fullmatch(name) if athena else None
    if athena and parts and athena_account and parts.group(1).casefold() == ATHENA_DEFAULT_CATALOG:
        return GlueTableId(
            athena.group(1), athena_account, parts.group(2), parts.group(3)
        ), ATHENA_RULE
    return None


def claimed_table_name(namespace: str, name: str) -> tuple[str, str] | None:
    """The (database, table) a dataset's name claims in any of :func:`claimed_table`'s forms,
    whatever the account (for advice about a table that is not there)."""
    claim = claimed_table(namespace, name, athena_account=ANY_ACCOUNT)
    return (claim[0].database, claim[0].table) if claim else None


def _symlink_identifiers(dataset: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """The (namespace, name) of each identifier of the dataset's ``symlinks`` facet."""
    symlinks = (dataset.get("facets") or {}).get("symlinks") or {}
    identifiers = symlinks.get("identifiers") if isinstance(symlinks, dict) else None
    for identifier in identifiers if isinstance(identifiers, list) else ():
        if isinstance(identifier, dict):
            yield str(identifier.get("namespace", "")), str(identifier.get("name", ""))


def _symlinked_claims(
    dataset: Mapping[str, Any], athena_account: str | None
) -> Iterator[GlueTableId]:
    for namespace, name in _symlink_identifiers(dataset):
        claim = claimed_table(namespace, name, athena_account)
        if claim is not None:
            yield claim[0]


def resolve_glue_table(
    dataset: Mapping[str, Any], catalog: GlueCatalog
) -> tuple[str, str, str] | None:
    """The (namespace, name, rule) of the Glue table ``dataset`` is, when it is another name of
    one the catalog has; None when it keeps its own name. The dataset's own name is tried
    first, then its ``symlinks``, then its storage location (its own name, or a symlink's)
    when exactly one table has it."""
    namespace, name = str(dataset["namespace"]), str(dataset["name"])
    if is_project_table_namespace(namespace):
        return None  # the project's own naming already
    own = claimed_table(namespace, name, catalog.athena_account)
    claims = [own] if own else []
    claims += [
        (claim, GLUE_SYMLINK_RULE) for claim in _symlinked_claims(dataset, catalog.athena_account)
    ]
    for claim, rule in claims:
        table = catalog.table(claim)
        if table is not None:
            return (*table.dataset, rule)
    # Its storage location, as its own name or as a symlink (Hive's hook names a table of the
    # Glue metastore hive://<metastore> + <db>.<table>, its location a LOCATION symlink).
    for location_namespace, location_name in ((namespace, name), *_symlink_identifiers(dataset)):
        location = s3_location(location_namespace, location_name)
        tables = catalog.tables_at(location) if location else []
        if len(tables) == 1:
            return (*tables[0].dataset, LOCATION_RULE)
    return None


def keep_glue_symlink(facets: dict[str, Any], table: tuple[str, str], producer: str) -> None:
    """Add OpenLineage's Glue name of the table the dataset was renamed to (``table``: the
    project's (namespace, name)) to its ``symlinks`` facet, unless it is there: other
    OpenLineage consumers join on it."""
    arn = table[0].removeprefix("arn:aws:glue:").split(":")
    database, _, name = table[1].partition("/")
    ol_namespace, ol_name = openlineage_glue_name(arn[0], arn[1], database, name)
    symlinks = facets.get("symlinks")
    if not isinstance(symlinks, dict) or not isinstance(symlinks.get("identifiers"), list):
        symlinks = Serde.to_dict(
            symlinks_dataset.SymlinksDatasetFacet(identifiers=[], producer=producer)
        )
        facets["symlinks"] = symlinks
    known = {
        (i.get("namespace"), i.get("name")) for i in symlinks["identifiers"] if isinstance(i, dict)
    }
    if (ol_namespace, ol_name) not in known:
        symlinks["identifiers"].append(
            {"namespace": ol_namespace, "name": ol_name, "type": GLUE_SYMLINK_TYPE}
        )
