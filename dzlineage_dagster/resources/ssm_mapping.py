"""SSM Parameter Store: the durable schema -> DataZone asset mapping."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, ClassVar

from dzlineage_dagster.resources.base import AwsClientResource

#: GetParameters' limit of names per call.
NAMES_PER_GET_PARAMETERS = 10


class SsmMappingResource(AwsClientResource):
    """Reads and writes the mapping parameters (service `ssm`)."""

    service_names: ClassVar[tuple[str, ...]] = ("ssm",)

    def parameters_under(self, path: str, *, recursive: bool = True) -> dict[str, str]:
        """Name -> value of every parameter below `path` (all pages, 10 a page); only those
        directly below it when not `recursive`."""
        parameters = self.paginate(
            "ssm",
            "get_parameters_by_path",
            "Parameters",
            page_size=10,
            Path=path,
            Recursive=recursive,
        )
        return {p["Name"]: p["Value"] for p in parameters}

    def parameters_named(self, names: Sequence[str]) -> dict[str, str]:
        """Name -> value of those of `names` that exist, 10 names a call (GetParameters)."""
        ssm = self.client()
        found: dict[str, str] = {}
        unique = list(dict.fromkeys(names))
        for start in range(0, len(unique), NAMES_PER_GET_PARAMETERS):
            batch = unique[start : start + NAMES_PER_GET_PARAMETERS]
            found.update(
                {p["Name"]: p["Value"] for p in ssm.get_parameters(Names=batch)["Parameters"]}
            )
        return found

    def put(self, name: str, value: str, description: str = "") -> dict[str, Any]:
        return self.client().put_parameter(
            Name=name, Value=value, Type="String", Overwrite=True, Description=description
        )

    def delete(self, name: str) -> None:
        ssm = self.client()
        # Already gone is as good as deleted: a rerun after a crash must not fail here.
        with contextlib.suppress(ssm.exceptions.ParameterNotFound):
            ssm.delete_parameter(Name=name)
