"""The schema -> DataZone asset mapping of one run: the only code that reads or writes it in SSM.

Reads: the whole mapping once per run (GetParametersByPath under the prefix, 10 a page), or,
for a run over a few topics, only those schemas' parameters by name (GetParameters, 10 names a
call). Writes: the stages *stage* a topic's new record, and the runner *commits* it once when the
topic's stages are done, so a topic whose asset and lineage both change costs one PutParameter.

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
from collections.abc import Collection
from typing import Any

from dzlineage_dagster.core.ssm_names import (
    MappingRecord,
    digest_parameter_name,
    is_digest_parameter,
    parameter_name,
    validate_prefix,
)
from dzlineage_dagster.resources import SsmMappingResource
from dzlineage_dagster.sync.errors import SyncError


class MappingStore:
    def __init__(self, parameters: SsmMappingResource, prefix: str, log: Any = None) -> None:
        try:
            validate_prefix(prefix)
        except ValueError as error:
            raise SyncError(f"DZLINEAGE_SSM_PREFIX: {error}") from None
        self._parameters = parameters
        self._prefix = prefix
        self._log = log or logging.getLogger("dzlineage")
        #: Schema ARN -> what SSM holds (None: read by name and not there).
        self._stored: dict[str, MappingRecord | None] = {}
        #: Whether ``_stored`` holds every parameter under the prefix.
        self._read_all = False
        #: Records the stages made this run that are not in SSM yet, by schema ARN.
        self._staged: dict[str, MappingRecord] = {}
        self._lock = threading.RLock()

    def parameter_name(self, schema_arn: str) -> str:
        return parameter_name(self._prefix, schema_arn)

    def all(self) -> dict[str, MappingRecord]:
        """Schema ARN -> record, every schema the mapping knows (SSM read once per run)."""
        with self._lock:
            return self._all()

    def _all(self) -> dict[str, MappingRecord]:
        if not self._read_all:
            for name, value in self._parameters.parameters_under(self._prefix).items():
                if is_digest_parameter(self._prefix, name):
                    continue
                record = self._readable(name, value)
                if record is not None:
                    self._stored[record.schema_arn] = record
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
        wanted = {self.parameter_name(arn): arn for arn in schema_arns if arn not in self._stored}
        found = self._parameters.parameters_named(list(wanted))
        for name, arn in wanted.items():
            record = self._readable(name, found[name]) if name in found else None
            self._stored[arn] = record

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
            self._staged[record.schema_arn] = record

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
        self._parameters.put(
            self.parameter_name(schema_arn),
            record.to_parameter_value(),
            description=f"DataZone asset of Kafka topic {record.topic}"[:1024],
        )
        with self._lock:
            self._stored[schema_arn] = record

    def delete(self, schema_arn: str) -> None:
        self._parameters.delete(self.parameter_name(schema_arn))
        with self._lock:
            self._staged.pop(schema_arn, None)
            self._stored[schema_arn] = None

    def stored_digest(self, registry_arn: str) -> str | None:
        """The registry digest the last complete headless sync recorded (one GetParameters)."""
        name = digest_parameter_name(self._prefix, registry_arn)
        return self._parameters.parameters_named([name]).get(name)

    def record_digest(self, registry_arn: str, digest: str) -> None:
        self._parameters.put(
            digest_parameter_name(self._prefix, registry_arn),
            digest,
            description=f"Registry {registry_arn} as of the last complete dzlineage sync"[:1024],
        )

    def _readable(self, name: str, value: str) -> MappingRecord | None:
        try:
            record = MappingRecord.from_parameter_value(value)
        except ValueError as error:
            self._log.warning(f"ignoring unreadable mapping parameter {name}: {error}")
            return None
        if name != self.parameter_name(record.schema_arn):
            # Hand-copied or from another prefix: trusting it would map a schema twice.
            self._log.warning(f"ignoring mapping parameter {name}: it names another schema")
            return None
        return record
