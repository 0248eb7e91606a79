"""The relay's settings, each from a ``DZLINEAGE_*`` environment variable like the rest."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from dzlineage_dagster.settings import env_name


class RelaySettingsError(ValueError):
    """A relay setting is missing or wrong; the message names the variable."""


class RelaySettings(BaseModel):
    """Where the relay forwards to, who may post, and how much it keeps while DataZone is away."""

    domain_id: str = Field(description="DataZone domain id (`dzd_...`) the relay posts into.")
    msk_cluster_arn: str | None = Field(
        default=None,
        description=(
            "MSK cluster whose brokers (every listener) the relay maps to the one Kafka "
            "namespace of the graph; unset: Kafka namespaces pass unchanged."
        ),
    )
    topic_namespace_style: Literal["bootstrap", "cluster"] = Field(
        default="bootstrap",
        description="The Kafka namespace the relay maps to, as for the sync (see above).",
    )
    relay_api_key: str | None = Field(
        default=None,
        description=(
            "Key producers send as `Authorization: Bearer <key>` (the OpenLineage HTTP "
            "transport's `api_key` auth). Required unless the relay listens on loopback only."
        ),
    )
    relay_spool_path: Path = Field(
        default=Path("dzlineage-relay-spool.sqlite3"),
        description="SQLite file holding events DataZone has not taken yet (survives restarts).",
    )
    relay_spool_max_events: int = Field(
        default=100_000,
        gt=0,
        description="Events the spool holds at most; when full the relay answers 503.",
    )
    relay_max_body_bytes: int = Field(
        default=5_000_000,
        gt=0,
        description=(
            "Largest request body accepted, before and after gzip decoding; larger gets 413. "
            "Events over DataZone's 300,000 bytes are trimmed of their largest facets."
        ),
    )
    relay_max_backoff_seconds: float = Field(
        default=30.0,
        gt=0,
        description="Longest wait between two delivery attempts of the spool while DataZone fails.",
    )
    relay_kafka_namespace: bool = Field(
        default=True,
        description="Map every broker address of the MSK cluster to the graph's Kafka namespace.",
    )
    relay_glue_symlinks: bool = Field(
        default=True,
        description=(
            "Rename a Glue table named by OpenLineage's Glue naming (`arn:aws:glue:{region}:"
            "{account}` + `table/{db}/{table}`), or a dataset whose `symlinks` facet names one, "
            "to `arn:aws:glue:{region}:{account}:table` + `{db}/{table}`, which DataZone files "
            "under the table's ARN (docs/lineage-nodes.md)."
        ),
    )
    relay_namespace_map: dict[str, str] = Field(
        default_factory=dict,
        description=(
            'JSON object of namespaces to rename, e.g. `{"postgres://10.0.1.5:5432": '
            '"postgres://shop-db.example.com:5432"}`; applied before the Kafka mapping.'
        ),
    )

    @field_validator("relay_namespace_map", mode="before")
    @classmethod
    def _json_object(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError as error:
                raise ValueError(
                    f"must be a JSON object of namespace -> namespace: {error}"
                ) from None
        return value

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RelaySettings:
        """Values from ``DZLINEAGE_*`` variables; a wrong or missing one is named in the error."""
        environ = os.environ if environ is None else environ
        values = {
            name: environ[env_name(name)] for name in cls.model_fields if env_name(name) in environ
        }
        if "domain_id" not in values:
            raise RelaySettingsError(f"set {env_name('domain_id')} to the DataZone domain id")
        try:
            return cls(**values)
        except ValidationError as error:
            problems = "; ".join(
                f"{env_name(str(e['loc'][0]))}: {e['msg']}" for e in error.errors()
            )
            raise RelaySettingsError(problems) from None
