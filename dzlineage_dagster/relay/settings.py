"""The relay's settings, each from a ``DZLINEAGE_*`` environment variable like the rest."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, field_validator
from pydantic.fields import FieldInfo

from dzlineage_dagster.settings import (
    DEFAULT_GLUE_LINEAGE_TPS,
    DEFAULT_LINEAGE_DESTINATIONS,
    LineageSettings,
    env_name,
    parse_lineage_destinations,
    setting_problems,
)

_ACCOUNT = re.compile(r"\d{12}")


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
    job_namespace: str = Field(
        default=LineageSettings.model_fields["job_namespace"].default,
        description=(
            "The sync's namespace of the jobs of hops no connector decided: reserved, like "
            "`kafka-connect` and `dagster://*`, so no producer can post runs in it."
        ),
    )
    glue_catalog_id: str | None = Field(
        default=None,
        description="The Glue Data Catalog's account, where set: one of the default Glue accounts.",
    )
    relay_api_key: str | None = Field(
        default=None,
        description=(
            "A key producers send as `Authorization: Bearer <key>` (the OpenLineage HTTP "
            "transport's `api_key` auth); it may write every job namespace that is not "
            "reserved. A key is required unless the relay listens on loopback only."
        ),
        json_schema_extra={"secret": True},
    )
    relay_keys_file: Path | None = Field(
        default=None,
        description=(
            'JSON file of producers\' keys: `{"<producer>": {"key": "...", "namespaces": '
            '["spark", "spark-*"]}}`, each key writing only the job namespaces listed '
            "(patterns allowed); re-read when it changes, no restart needed."
        ),
    )
    relay_keys_secret: str | None = Field(
        default=None,
        description=(
            "Secrets Manager secret (name or ARN) holding the same JSON as "
            "DZLINEAGE_RELAY_KEYS_FILE; re-read every DZLINEAGE_RELAY_KEYS_TTL_SECONDS."
        ),
    )
    relay_keys_ttl_seconds: float = Field(
        default=60.0,
        gt=0,
        description="How long the keys read from DZLINEAGE_RELAY_KEYS_SECRET are used before it is read again.",
    )
    relay_glue_accounts: list[str] | None = Field(
        default=None,
        description=(
            "Comma-separated accounts whose Glue tables an event may name (others get 403); "
            "unset: the accounts of DZLINEAGE_MSK_CLUSTER_ARN and DZLINEAGE_GLUE_CATALOG_ID; "
            "empty: no check."
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

    lineage_destinations: list[str] = Field(
        default=list(DEFAULT_LINEAGE_DESTINATIONS),
        description="Where the relay forwards each event, as for the sync (see above).",
    )
    glue_lineage_tps: float = Field(
        default=DEFAULT_GLUE_LINEAGE_TPS,
        gt=0,
        description="The pace of Glue's PostLineageEvent, as for the sync (see above).",
    )

    @field_validator("lineage_destinations", mode="before")
    @classmethod
    def _known_lineage_destinations(cls, value: object) -> list[str]:
        return parse_lineage_destinations(value)

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

    @field_validator("relay_glue_accounts", mode="before")
    @classmethod
    def _accounts(cls, value: object) -> object:
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        for account in value or ():
            if not isinstance(account, str) or not _ACCOUNT.fullmatch(account):
                raise ValueError(f"{account!r} is not an account id (12 digits)")
        return value

    @property
    def has_keys(self) -> bool:
        return bool(self.relay_api_key or self.relay_keys_file or self.relay_keys_secret)

    def glue_accounts_allowed(self) -> frozenset[str]:
        """The accounts whose Glue tables events may name (empty: any)."""
        if self.relay_glue_accounts is not None:
            return frozenset(self.relay_glue_accounts)
        platform = {self.glue_catalog_id}
        arn = (self.msk_cluster_arn or "").split(":")
        if len(arn) > 4:  # arn:aws:kafka:<region>:<account>:cluster/...
            platform.add(arn[4])
        return frozenset(account for account in platform if account)

    @classmethod
    def own_fields(cls) -> dict[str, FieldInfo]:
        """The relay's own settings (``DZLINEAGE_RELAY_*``); the others are the sync's too."""
        return {name: f for name, f in cls.model_fields.items() if name.startswith("relay_")}

    @classmethod
    def problems(cls, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """Variable -> what is wrong with it, for the relay's own settings that are set."""
        environ = os.environ if environ is None else environ
        problems = {}
        for name in cls.own_fields():
            variable = env_name(name)
            if variable not in environ:
                continue
            try:
                cls(domain_id="-", **{name: environ[variable]})
            except ValidationError as error:
                problems[variable] = " ".join(setting_problems(error))
        return problems

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
            raise RelaySettingsError("; ".join(setting_problems(error))) from None
