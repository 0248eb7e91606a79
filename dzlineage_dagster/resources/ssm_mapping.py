"""SSM Parameter Store: the durable schema -> DataZone asset mapping."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from dzlineage_dagster.core.aws.concurrency import at_once
from dzlineage_dagster.resources.base import AwsClientResource

#: GetParameters' and DeleteParameters' limit of names per call.
NAMES_PER_GET_PARAMETERS = 10
#: GetParameters calls one read makes at once.
BATCHES_AT_ONCE = 8


@dataclass(frozen=True)
class StoredParameter:
    """A parameter as read: its value, version (PutParameter numbers them 1, 2, ...) and when
    it was last written (milliseconds since the epoch)."""

    value: str
    version: int
    modified_ms: int

    @classmethod
    def of(cls, parameter: dict[str, Any]) -> StoredParameter:
        modified = parameter.get("LastModifiedDate")
        return cls(
            parameter["Value"],
            int(parameter.get("Version", 0)),
            int(modified.timestamp() * 1000) if modified is not None else 0,
        )


class SsmMappingResource(AwsClientResource):
    """Reads and writes the mapping parameters (service `ssm`)."""

    service_names: ClassVar[tuple[str, ...]] = ("ssm",)

    def parameters_under(self, path: str, *, recursive: bool = True) -> dict[str, str]:
        """Name -> value of every parameter below `path` (all pages, 10 a page); only those
        directly below it when not `recursive`."""
        stored = self.stored_under(path, recursive=recursive)
        return {name: parameter.value for name, parameter in stored.items()}

    def stored_under(self, path: str, *, recursive: bool = True) -> dict[str, StoredParameter]:
        """:meth:`parameters_under` with each parameter's version and time of last write."""
        parameters = self.paginate(
            "ssm",
            "get_parameters_by_path",
            "Parameters",
            page_size=10,
            Path=path,
            Recursive=recursive,
        )
        return {p["Name"]: StoredParameter.of(p) for p in parameters}

    def stored_named(self, references: Sequence[str]) -> dict[str, StoredParameter]:
        """Reference -> parameter for those of ``references`` that exist, 10 a call: a name, or
        ``name:version`` for an earlier version (SSM keeps the last 100).

        The calls are independent, so up to :data:`BATCHES_AT_ONCE` are made at once (the
        client's pacing keeps them within GetParameters' quota): reading a sweep's or a run's
        few dozen names costs one call's latency, not one per ten names."""
        unique = list(dict.fromkeys(references))
        batches = [
            unique[start : start + NAMES_PER_GET_PARAMETERS]
            for start in range(0, len(unique), NAMES_PER_GET_PARAMETERS)
        ]
        answers = [
            answer
            for start in range(0, len(batches), BATCHES_AT_ONCE)
            for answer in at_once(
                *(partial(self._stored_batch, b) for b in batches[start : start + BATCHES_AT_ONCE])
            )
        ]
        return {reference: p for answer in answers for reference, p in answer.items()}

    def _stored_batch(self, batch: Sequence[str]) -> dict[str, StoredParameter]:
        found: dict[str, StoredParameter] = {}
        for parameter in self.client().get_parameters(Names=list(batch))["Parameters"]:
            # AWS answers a versioned name with its Selector (":3"); moto leaves it out.
            versioned = f"{parameter['Name']}:{parameter.get('Version')}"
            reference = parameter["Name"] + parameter.get("Selector", "")
            found[versioned if versioned in batch else reference] = StoredParameter.of(parameter)
        return found

    def parameters_named(self, names: Sequence[str]) -> dict[str, str]:
        """Name -> value of those of `names` that exist (:meth:`stored_named`)."""
        return {name: parameter.value for name, parameter in self.stored_named(names).items()}

    def put(
        self, name: str, value: str, description: str = "", tier: str | None = None
    ) -> dict[str, Any]:
        """PutParameter (overwriting); ``tier`` None leaves it to the account's default."""
        return self.client().put_parameter(
            Name=name,
            Value=value,
            Type="String",
            Overwrite=True,
            Description=description,
            **({"Tier": tier} if tier else {}),
        )

    def delete_many(self, names: Sequence[str]) -> None:
        """DeleteParameters, 10 names a call (names already gone are no error)."""
        ssm = self.client()
        unique = list(dict.fromkeys(names))
        for start in range(0, len(unique), NAMES_PER_GET_PARAMETERS):
            ssm.delete_parameters(Names=unique[start : start + NAMES_PER_GET_PARAMETERS])

    def delete(self, name: str) -> None:
        ssm = self.client()
        # Already gone is as good as deleted: a rerun after a crash must not fail here.
        with contextlib.suppress(ssm.exceptions.ParameterNotFound):
            ssm.delete_parameter(Name=name)
