"""Who may post what through the relay (pure, no AWS): producers' keys, the job namespaces
each may write, the namespaces no producer may write, and the accounts whose Glue tables an
event may name.

The product's own lineage lives in jobs it names itself: a connector's hop of a topic
(:func:`~dzlineage_dagster.core.lineage.openlineage.hop_job`, namespace ``kafka-connect``, or
``DZLINEAGE_JOB_NAMESPACE`` for a hop no connector decided) and a Dagster asset's downstream job
(:func:`~dzlineage_dagster.core.lineage.downstream.asset_job`, ``dagster://<code location>``).
DataZone shows the latest run of each job, so a producer posting a run under one of them
rewrites the platform's lineage: those namespaces are :class:`ReservedNamespaces`, refused
whatever the key.

A key document (a file or a Secrets Manager secret, both JSON) names each producer with its key
and the job namespaces it may write (exact, or ``fnmatch`` patterns such as ``spark-*``)::

    {"spark-team": {"key": "...", "namespaces": ["spark", "spark-*"]},
     "debezium": {"key": "...", "namespaces": ["debezium"]}}
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from dzlineage_dagster.core.lineage.downstream import DAGSTER_NAMESPACE_SCHEME
from dzlineage_dagster.core.lineage.openlineage import CONNECTOR_JOB_NAMESPACE

#: Any Glue ARN, as a dataset namespace or a symlink's: OpenLineage's ``arn:aws:glue:{region}:
#: {account}`` and the project's ``arn:aws:glue:{region}:{account}:table`` alike.
_GLUE_ARN_ACCOUNT = re.compile(r"arn:aws[a-z-]*:glue:[^:]*:([^:]*)")
#: The wildcard that lets a key write every namespace that is not reserved.
EVERY_NAMESPACE = "*"
#: Shorter keys can be guessed; ``openssl rand -hex 24`` gives 48 characters.
MIN_KEY_LENGTH = 16


class AccessDenied(ValueError):
    """The event may not go through with this key; the message says which name and why."""


class InvalidKeys(ValueError):
    """A key document that cannot be used; the message names the producer or field."""


@dataclass(frozen=True)
class Producer:
    """A key's holder: its name (what logs and answers say, never the key) and the job
    namespaces it may write."""

    name: str
    namespaces: tuple[str, ...] = (EVERY_NAMESPACE,)

    def may_write(self, namespace: str) -> bool:
        return any(fnmatchcase(namespace, pattern) for pattern in self.namespaces)


@dataclass(frozen=True)
class ReservedNamespaces:
    """The job namespaces of the product's own lineage: exact names and a scheme prefix."""

    exact: frozenset[str]
    prefixes: tuple[str, ...] = (DAGSTER_NAMESPACE_SCHEME,)

    @classmethod
    def of_product(cls, unconnected_job_namespace: str) -> ReservedNamespaces:
        """The sync's connector jobs' namespace, its stand-in jobs' (``DZLINEAGE_JOB_NAMESPACE``)
        and the downstream sensor's ``dagster://`` jobs."""
        return cls(frozenset({CONNECTOR_JOB_NAMESPACE, unconnected_job_namespace}))

    def owner_of(self, namespace: str) -> str | None:
        """What of the product's lineage ``namespace`` holds, or None if it is not reserved."""
        if namespace == CONNECTOR_JOB_NAMESPACE:
            return "the sync's connector jobs"
        if namespace in self.exact:
            return "the sync's jobs of hops no connector decided (DZLINEAGE_JOB_NAMESPACE)"
        if namespace.startswith(self.prefixes):
            return "the downstream lineage jobs of Dagster assets"
        return None


def check_job_namespace(namespace: str, producer: Producer, reserved: ReservedNamespaces) -> None:
    """Raise :class:`AccessDenied` when ``producer`` may not post a run of a job in
    ``namespace``: a reserved namespace, or one its key does not list."""
    owner = reserved.owner_of(namespace)
    if owner is not None:
        raise AccessDenied(
            f"job namespace {namespace!r} is reserved for dzlineage's own lineage ({owner}); "
            "no producer may post runs in it: name your jobs in a namespace of your own"
        )
    if not producer.may_write(namespace):
        allowed = ", ".join(producer.namespaces) or "none"
        raise AccessDenied(
            f"producer {producer.name!r} may write job namespaces {allowed}, not {namespace!r}"
        )


def glue_accounts_named(document: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(where, account) of every Glue ARN an event's datasets name, their symlinks included."""
    for key in ("inputs", "outputs"):
        datasets = document.get(key)
        for index, dataset in enumerate(datasets if isinstance(datasets, list) else ()):
            if not isinstance(dataset, dict):
                continue
            where = f"{key}[{index}]"
            yield from _glue_account(dataset.get("namespace"), where)
            symlinks = (dataset.get("facets") or {}).get("symlinks")
            identifiers = symlinks.get("identifiers") if isinstance(symlinks, dict) else None
            for position, identifier in enumerate(
                identifiers if isinstance(identifiers, list) else ()
            ):
                if isinstance(identifier, dict):
                    yield from _glue_account(
                        identifier.get("namespace"),
                        f"{where}.facets.symlinks.identifiers[{position}]",
                    )


def _glue_account(namespace: object, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(namespace, str):
        match = _GLUE_ARN_ACCOUNT.match(namespace)
        if match:
            yield where, match.group(1)


def check_glue_accounts(document: Mapping[str, Any], allowed: frozenset[str]) -> None:
    """Raise :class:`AccessDenied` for a Glue table of an account outside ``allowed`` (an
    empty set allows every account)."""
    if not allowed:
        return
    for where, account in glue_accounts_named(document):
        if account not in allowed:
            raise AccessDenied(
                f"{where} names a Glue table of account {account!r}, which is not one of the "
                f"platform's ({', '.join(sorted(allowed))}; DZLINEAGE_RELAY_GLUE_ACCOUNTS)"
            )


def parse_keys(text: str, source: str) -> dict[str, Producer]:
    """Key -> its producer, from a key document's JSON; ``source`` names it in errors."""
    try:
        document = json.loads(text)
    except ValueError as error:
        raise InvalidKeys(f"{source} is not JSON: {error}") from None
    if not isinstance(document, dict):
        raise InvalidKeys(
            f'{source} must be a JSON object: {{"<producer>": {{"key": ..., "namespaces": [...]}}}}'
        )
    keys: dict[str, Producer] = {}
    for name, entry in document.items():
        key = entry.get("key") if isinstance(entry, dict) else None
        namespaces = entry.get("namespaces") if isinstance(entry, dict) else None
        if not isinstance(key, str) or len(key) < MIN_KEY_LENGTH:
            raise InvalidKeys(
                f'{source}: producer {name!r} needs a "key" of at least {MIN_KEY_LENGTH} characters'
            )
        if not (
            isinstance(namespaces, list)
            and namespaces
            and all(isinstance(n, str) and n for n in namespaces)
        ):
            raise InvalidKeys(
                f'{source}: producer {name!r} needs "namespaces", a non-empty list of job '
                f'namespaces (or patterns such as "spark-*"; "{EVERY_NAMESPACE}" for any)'
            )
        if key in keys:
            raise InvalidKeys(
                f"{source}: producers {keys[key].name!r} and {name!r} have the same key"
            )
        keys[key] = Producer(str(name), tuple(namespaces))
    return keys


def merge_keys(documents: Iterable[tuple[str, Mapping[str, Producer]]]) -> dict[str, Producer]:
    """One key table from several (source, keys); a key in two sources is refused."""
    merged: dict[str, Producer] = {}
    origin: dict[str, str] = {}
    for source, keys in documents:
        for key, producer in keys.items():
            if key in merged:
                raise InvalidKeys(
                    f"producer {producer.name!r} of {source} has the key of producer "
                    f"{merged[key].name!r} of {origin[key]}"
                )
            merged[key], origin[key] = producer, source
    return merged


def producer_of(authorization: str | None, keys: Mapping[str, Producer]) -> Producer | None:
    """The producer whose key ``Authorization: Bearer <key>`` carries, or None.

    Every key is compared, each in constant time, so neither a key nor which producer holds
    it can be told from how fast a wrong one is refused."""
    scheme, _, sent = (authorization or "").partition(" ")
    sent_bytes = sent.strip().encode("utf-8", "replace")
    found = None
    for key, producer in keys.items():
        if hmac.compare_digest(sent_bytes, key.encode()) and scheme.lower() == "bearer":
            found = producer
    return found
