"""The schema -> DataZone asset mapping of one run: the only code that reads or writes it in SSM.

Scope: every record belongs to one DataZone domain and owning project (its SSM path,
``<prefix>/<domain id>/<project id>/s/<escaped schema ARN>``) and one registry (the schema ARN
names it; the record carries ``registry_arn`` too). A run reads, writes and retires only the
records of its own domain and project, so a second domain, project or registry with the same
``DZLINEAGE_SSM_PREFIX`` keeps its own mapping.

Records of the first layout (``<prefix>/s/...``, no scope) are migrated when a run first sees
them: ``legacy_owner`` (the run's DataZone check) confirms that the record's asset belongs to
this run's domain and project, then the record is rewritten under the scoped path and the old
parameter deleted. A record whose asset is not this run's is left alone for its own run.

Reads: the whole mapping once per run (GetParametersByPath under the scoped path, 10 a page,
plus one call for each first-layout folder), or, for a run over a few topics, only those
schemas' parameters by name (GetParameters, 10 names a call; a first-layout name rides along).
Writes: the stages *stage* a topic's new record, and the runner *commits* it once when the
topic's stages are done, so a topic whose asset and lineage both change costs one PutParameter.

The scoped path also holds one registry digest per registry (``<scoped path>/d/<sha256>``, see
:meth:`MappingStore.stored_digest`): under the scope, so another domain's or project's sync never
trusts this one's digest, and never read as a mapping.

The run's threads share one store: every method holds its lock, so a topic's read and its
commit see whole records (the calls they make are per topic, so holding the lock costs little
against the whole-prefix read, which every thread would otherwise repeat).

A crash between a DataZone write and the commit loses no mapping: CreateAsset's client token
derives from the content, so a rerun gets the asset it created; and a changed content meets
DataZone's ConflictException on the schema ARN, after which the asset is adopted by search.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection
from dataclasses import replace
from typing import Any

from dzlineage_dagster.core.ssm_names import (
    HASH_NAMESPACE,
    READABLE_NAMESPACE,
    MappingRecord,
    digest_parameter_name,
    is_digest_parameter,
    parameter_name,
    scoped_prefix,
    validate_prefix,
)
from dzlineage_dagster.resources import SsmMappingResource
from dzlineage_dagster.sync.errors import SyncError

#: Given a first-layout record, the record with this run's scope if its asset is this run's
#: (same domain, owning project and externalIdentifier), else None.
LegacyOwner = Callable[[MappingRecord], "MappingRecord | None"]


class MappingStore:
    def __init__(
        self,
        parameters: SsmMappingResource,
        prefix: str,
        log: Any = None,
        *,
        domain_id: str,
        project_id: str,
        legacy_owner: LegacyOwner | None = None,
    ) -> None:
        try:
            validate_prefix(prefix)
        except ValueError as error:
            raise SyncError(f"DZLINEAGE_SSM_PREFIX: {error}") from None
        try:
            self._prefix = scoped_prefix(prefix, domain_id, project_id)
        except ValueError as error:
            raise SyncError(str(error)) from None  # names the setting at fault
        self._parameters = parameters
        self._legacy_prefix = prefix
        self.domain_id = domain_id
        self.project_id = project_id
        self._legacy_owner = legacy_owner
        self._log = log or logging.getLogger("dzlineage")
        #: Schema ARN -> what SSM holds (None: read by name and not there).
        self._stored: dict[str, MappingRecord | None] = {}
        #: Whether ``_stored`` holds every parameter of the scope.
        self._read_all = False
        #: Records the stages made this run that are not in SSM yet, by schema ARN.
        self._staged: dict[str, MappingRecord] = {}
        self._lock = threading.RLock()
        #: Records under this scope's path whose own scope names another domain or project
        #: (hand-copied): not trusted by the sync, repaired by reconcile.
        self.foreign: dict[str, MappingRecord] = {}
        #: A dry run's store: first-layout records are read as migrated, nothing is written.
        self.read_only = False
        #: Schema ARN -> the first-layout parameter this run migrated it from.
        self.migrated: dict[str, str] = {}
        #: Schema ARNs whose record this run wrote.
        self.committed: set[str] = set()

    @property
    def prefix(self) -> str:
        """The SSM path of this run's scope."""
        return self._prefix

    @property
    def read_whole(self) -> bool:
        """Whether this run has read every record of its scope (:meth:`all` costs no call)."""
        return self._read_all

    def parameter_name(self, schema_arn: str) -> str:
        return parameter_name(self._prefix, schema_arn)

    def legacy_parameter_name(self, schema_arn: str) -> str:
        return parameter_name(self._legacy_prefix, schema_arn)

    def all(self) -> dict[str, MappingRecord]:
        """Schema ARN -> record, every schema of this scope the mapping knows (read once a run)."""
        with self._lock:
            return self._all()

    def _all(self) -> dict[str, MappingRecord]:
        if not self._read_all:
            for name, value in self._parameters.parameters_under(self._prefix).items():
                if is_digest_parameter(self._prefix, name):
                    continue  # the registry digest, not a mapping
                record = self._readable(name, value, self.parameter_name)
                if record is not None:
                    self._stored[record.schema_arn] = record
            legacy: dict[str, str] = {}
            for namespace in (READABLE_NAMESPACE, HASH_NAMESPACE):
                folder = f"{self._legacy_prefix}/{namespace}"
                legacy.update(self._parameters.parameters_under(folder, recursive=False))
            self._migrate(legacy)
            self._read_all = True
        known = {arn: record for arn, record in self._stored.items() if record is not None}
        return {**known, **self._staged}

    def read(self, schema_arns: Collection[str]) -> None:
        """Read these schemas' records by name, so that :meth:`get` needs no whole listing."""
        with self._lock:
            self._read(schema_arns)

    def _read(self, schema_arns: Collection[str]) -> None:
        if self._read_all:
            return
        wanted = [arn for arn in schema_arns if arn not in self._stored]
        names = {self.parameter_name(arn): arn for arn in wanted}
        legacy_names = {self.legacy_parameter_name(arn): arn for arn in wanted}
        found = self._parameters.parameters_named([*names, *legacy_names])
        for name, arn in names.items():
            self._stored[arn] = (
                self._readable(name, found[name], self.parameter_name) if name in found else None
            )
        self._migrate(
            {
                name: found[name]
                for name, arn in legacy_names.items()
                if name in found and self._stored[arn] is None
            }
        )

    def get(self, schema_arn: str) -> MappingRecord | None:
        """The schema's record as this run sees it: staged this run, else as stored in SSM."""
        with self._lock:
            if schema_arn in self._staged:
                return self._staged[schema_arn]
            if schema_arn not in self._stored and not self._read_all:
                self._all()
            return self._stored.get(schema_arn)

    def stage(self, record: MappingRecord) -> None:
        """Make ``record`` the schema's mapping for the rest of the run; :meth:`commit` writes it."""
        with self._lock:
            self._staged[record.schema_arn] = self.scoped(record)

    def scoped(self, record: MappingRecord) -> MappingRecord:
        """``record`` stamped with this store's domain and project."""
        return replace(record, domain_id=self.domain_id, project_id=self.project_id)

    def is_staged(self, schema_arn: str) -> bool:
        with self._lock:
            return schema_arn in self._staged

    def commit(self, schema_arn: str) -> None:
        """Write the schema's staged record to SSM (nothing staged: no call).

        The record leaves the stage first: when the write fails, the next run finds the asset
        by its client token or adopts it, instead of this run retrying with a stale view.
        """
        with self._lock:
            record = self._staged.pop(schema_arn, None)
        if record is None:
            return
        # Outside the lock: the other threads' puts go on meanwhile (each topic writes its own).
        self._put(record)
        with self._lock:
            self.foreign.pop(schema_arn, None)
            self._stored[schema_arn] = record
            self.committed.add(schema_arn)

    def forget(self, schema_arn: str) -> None:
        """Treat the schema as unmapped for the rest of the run (SSM keeps the record until a
        new one is committed over it)."""
        with self._lock:
            self._staged.pop(schema_arn, None)
            self.foreign.pop(schema_arn, None)
            self._stored[schema_arn] = None

    def delete(self, schema_arn: str) -> None:
        self._parameters.delete(self.parameter_name(schema_arn))
        with self._lock:
            self._staged.pop(schema_arn, None)
            self.foreign.pop(schema_arn, None)
            self._stored[schema_arn] = None

    def stored_digest(self, registry_arn: str) -> str | None:
        """The registry digest the last complete headless sync of this scope recorded (one
        GetParameters)."""
        name = digest_parameter_name(self._prefix, registry_arn)
        return self._parameters.parameters_named([name]).get(name)

    def record_digest(self, registry_arn: str, digest: str) -> None:
        self._parameters.put(
            digest_parameter_name(self._prefix, registry_arn),
            digest,
            description=f"Registry {registry_arn} as of the last complete dzlineage sync"[:1024],
        )

    def stored_sweep(self, registry_arn: str) -> str:
        """Where the last headless sync's version sweep of the registry stopped ("": never
        swept; see :mod:`~dzlineage_dagster.sync.version_sweep`). One GetParameters."""
        name = self._sweep_parameter_name(registry_arn)
        return self._parameters.parameters_named([name]).get(name, "")

    def record_sweep(self, registry_arn: str, swept_to: str) -> None:
        self._parameters.put(
            self._sweep_parameter_name(registry_arn),
            swept_to,
            description=f"Registry {registry_arn}: the last topic dzlineage sync's version "
            "sweep checked"[:1024],
        )

    def _sweep_parameter_name(self, registry_arn: str) -> str:
        # Named like a digest, so that reading the mapping skips it as one.
        return digest_parameter_name(self._prefix, f"version sweep of {registry_arn}")

    def forget_digest(self, registry_arn: str) -> None:
        """Drop the registry digest, so the next headless sync reads the mapping again.

        For a run that does not record a digest of its own (a Dagster run covers some topics,
        not the registry): a headless sync that finished while this run was still writing
        recorded a digest that vouches for mappings this run then overwrote, perhaps with an
        older view of the registry (SSM keeps the last write). Without the digest the next
        headless sync compares each record's registry token with the listing and re-syncs the
        topics whose record lags.
        """
        self._parameters.delete(digest_parameter_name(self._prefix, registry_arn))

    def _put(self, record: MappingRecord) -> None:
        self._parameters.put(
            self.parameter_name(record.schema_arn),
            record.to_parameter_value(),
            description=f"DataZone asset of Kafka topic {record.topic}"[:1024],
        )

    def _migrate(self, legacy: dict[str, str]) -> None:
        """Move first-layout records whose asset is this run's under the scoped path."""
        for name, value in legacy.items():
            record = self._readable(name, value, self.legacy_parameter_name)
            if record is None or self._stored.get(record.schema_arn) is not None:
                continue  # unreadable, or the scoped record already exists
            owned = self._legacy_owner(record) if self._legacy_owner else None
            if owned is None:
                self._log.info(
                    f"mapping parameter {name} (first layout) names asset {record.asset_id}, "
                    f"which is not an asset of domain {self.domain_id} and project "
                    f"{self.project_id}: left for the run of its own domain"
                )
                continue
            owned = self.scoped(owned)
            if not self.read_only:
                self._put(owned)
                self._parameters.delete(name)
            self._stored[owned.schema_arn] = owned
            self.migrated[owned.schema_arn] = name
            self._log.info(f"{owned.topic}: mapping moved from {name} to its scoped path")

    def _readable(
        self, name: str, value: str, expected_name: Callable[[str], str]
    ) -> MappingRecord | None:
        try:
            record = MappingRecord.from_parameter_value(value)
        except ValueError as error:
            self._log.warning(f"ignoring unreadable mapping parameter {name}: {error}")
            return None
        if name != expected_name(record.schema_arn):
            # Hand-copied or from another prefix: trusting it would map a schema twice.
            self._log.warning(f"ignoring mapping parameter {name}: it names another schema")
            return None
        if expected_name == self.parameter_name and (
            (record.domain_id, record.project_id) != (self.domain_id, self.project_id)
        ):
            self._log.warning(
                f"mapping parameter {name} records domain {record.domain_id or '?'} / project "
                f"{record.project_id or '?'}, not this run's: not trusted (reconcile repairs it)"
            )
            self.foreign[record.schema_arn] = record
            return None
        return record
