"""A :class:`~.service.Relay` from the settings, with clients from the project's resources."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.identity.kafka import (
    UNKNOWN_NAMESPACE,
    KafkaCluster,
    parse_broker_aliases,
)
from dzlineage_dagster.core.identity.sources import SourceHosts
from dzlineage_dagster.core.lineage.relay_access import InvalidKeys, ReservedNamespaces
from dzlineage_dagster.core.lineage.relay_events import NameRules, PlatformDatasets
from dzlineage_dagster.relay.connectors import debezium_connectors
from dzlineage_dagster.relay.keys import KeyStore
from dzlineage_dagster.relay.platform.datasets import PlatformCache
from dzlineage_dagster.relay.platform.glue_catalog import GlueCatalogCache
from dzlineage_dagster.relay.service import Relay
from dzlineage_dagster.relay.settings import RelaySettings, RelaySettingsError
from dzlineage_dagster.relay.spool import Spool
from dzlineage_dagster.resources import (
    DataZoneResource,
    GlueDataCatalogResource,
    LineageSyncResource,
    MskResource,
)
from dzlineage_dagster.settings import (
    InvalidSettings,
    LineageSettings,
    MissingSettings,
    aws_side_options,
    env_name,
)
from dzlineage_dagster.sync.checks.preflight import check_cluster, check_registry
from dzlineage_dagster.sync.destinations.glue import GlueDestination
from dzlineage_dagster.sync.lineage.platform_graph import platform_datasets
from dzlineage_dagster.sync.run_state import SyncRun

#: Attempts per PostLineageEvent (DZLINEAGE_MAX_ATTEMPTS wins). With a spool, one: a failed
#: event goes to the spool at once, whose worker is the retry loop, so a producer never waits
#: out botocore's backoff. Without (Lambda), botocore's retries are the only ones we make.
ATTEMPTS_WITH_SPOOL, ATTEMPTS_WITHOUT_SPOOL = 1, 3


def glue_catalog(
    settings: RelaySettings, data_catalog: GlueDataCatalogResource
) -> GlueCatalogCache | None:
    """The Glue catalog the relay confirms tables with (None: Glue names pass as sent)."""
    if not settings.relay_glue_symlinks:
        return None
    return GlueCatalogCache(
        data_catalog,
        region=data_catalog.client().meta.region_name,
        athena_account=settings.glue_catalog_account(),
        accounts=settings.glue_accounts_allowed(),
        databases=[settings.glue_database],
        ttl_seconds=settings.relay_glue_catalog_ttl_seconds,
    )


def name_rules(
    settings: RelaySettings, msk: MskResource, glue: GlueCatalogCache | None = None
) -> NameRules:
    """The renaming rules: the Glue catalog's tables, the settings' namespace map and, if set,
    the cluster's identity (every broker of every listener, the aliases, Debezium's unknown)."""
    options = {
        "namespace_map": dict(settings.relay_namespace_map),
        "glue_catalog": glue,
        "source_hosts": SourceHosts.parse(settings.source_host_aliases),
    }
    arn = settings.msk_cluster_arn
    if not arn and settings.relay_kafka_namespace:
        logging.getLogger("dzlineage.relay").warning(
            "Kafka names are relayed as sent: %s is not set, so no broker, alias (%s) or "
            "Debezium %s is mapped to the topics' nodes; set it to the cluster's ARN",
            env_name("msk_cluster_arn"),
            env_name("kafka_broker_aliases"),
            UNKNOWN_NAMESPACE,
        )
    if not (arn and settings.relay_kafka_namespace):
        return NameRules(**options)
    try:
        kafka = KafkaCluster.of(
            name=msk.describe_cluster(arn)["ClusterName"],
            broker_strings=msk.bootstrap_brokers(arn),
            style=settings.topic_namespace_style,
            pinned=settings.topic_namespace,
            aliases=parse_broker_aliases(settings.kafka_broker_aliases),
        )
    except (BotoCoreError, ClientError, ValueError) as error:
        raise RelaySettingsError(
            f"cannot read the brokers of {env_name('msk_cluster_arn')}={arn}: {error} (unset "
            f"it or set {env_name('relay_kafka_namespace')}=false to relay Kafka names as sent)"
        ) from None
    debezium = debezium_connectors(msk, settings.relay_debezium_ttl_seconds)
    return NameRules(kafka=kafka, debezium=debezium, **options)


def platform_cache(
    settings: RelaySettings, sides: dict[str, dict[str, Any]], environ: Mapping[str, str] | None
) -> PlatformCache | None:
    """The platform's datasets, read as a sync reads them, when the sync's settings are set
    (else None: the relay cannot tell what is unmapped, and says so in its log)."""
    try:
        lineage_settings = LineageSettings.from_env(environ)
    except (MissingSettings, InvalidSettings) as error:
        if settings.relay_refuse_unmapped_topics:
            raise RelaySettingsError(
                f"{env_name('relay_refuse_unmapped_topics')}=true needs the sync's settings to "
                f"know the platform's topics: {error}"
            ) from None
        logging.getLogger("dzlineage.relay").warning(
            "unmapped datasets are not reported: the sync's settings are not set (%s)", error
        )
        return None

    def read() -> PlatformDatasets:
        resource = LineageSyncResource.with_settings(lineage_settings, sides)
        run = SyncRun(resource, logging.getLogger("dzlineage.relay"))
        # The registry and the cluster first, as the sync starts: a failure names the setting.
        check_registry(run)
        check_cluster(run)
        return platform_datasets(run)

    cache = PlatformCache(read, settings.relay_platform_ttl_seconds)
    if settings.relay_refuse_unmapped_topics and cache.current() is None:
        raise RelaySettingsError(
            f"{env_name('relay_refuse_unmapped_topics')}=true needs the platform's topics, and "
            f"they cannot be read: {cache.error}"
        )
    return cache


def build_relay(
    settings: RelaySettings, *, with_spool: bool, environ: Mapping[str, str] | None = None
) -> Relay:
    attempts = ATTEMPTS_WITH_SPOOL if with_spool else ATTEMPTS_WITHOUT_SPOOL
    try:
        sides = {
            side: {"max_attempts": attempts, **options}
            for side, options in aws_side_options(environ).items()
        }
    except InvalidSettings as error:
        raise RelaySettingsError(str(error)) from None
    try:
        keys = KeyStore(
            api_key=settings.relay_api_key,
            keys_file=settings.relay_keys_file,
            keys_secret=settings.relay_keys_secret,
            # The secret is read with the credentials that post to DataZone.
            secrets=(
                DataZoneResource(**sides["governance"]).client("secretsmanager")
                if settings.relay_keys_secret
                else None
            ),
            ttl_seconds=settings.relay_keys_ttl_seconds,
        )
    except InvalidKeys as error:
        raise RelaySettingsError(str(error)) from None
    spool = None
    if with_spool:
        spool = Spool(settings.relay_spool_path, settings.relay_spool_max_events)
    return Relay(
        datazone=DataZoneResource(**sides["governance"]).client(),
        domain_id=settings.domain_id,
        rules=name_rules(
            settings,
            MskResource(**sides["data"]),
            glue_catalog(settings, GlueDataCatalogResource(**sides["data"])),
        ),
        keys=keys,
        reserved=ReservedNamespaces.of_product(settings.job_namespace),
        glue_accounts=settings.glue_accounts_allowed(),
        max_body_bytes=settings.relay_max_body_bytes,
        spool=spool,
        max_backoff_seconds=settings.relay_max_backoff_seconds,
        # A Lambda keeps no memory between invocations: only the server holds runs' datasets.
        hold_streaming_runs=with_spool,
        platform=platform_cache(settings, sides, environ),
        refuse_unmapped_topics=settings.relay_refuse_unmapped_topics,
        glue=(
            GlueDestination(
                GlueDataCatalogResource(**sides["data"]).client(), settings.glue_lineage_tps
            )
            if "glue" in settings.lineage_destinations
            else None
        ),
        to_datazone="datazone" in settings.lineage_destinations,
    )
