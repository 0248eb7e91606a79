"""A :class:`~.service.Relay` from the settings, with clients from the project's resources."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.identity.kafka import (
    UNKNOWN_NAMESPACE,
    KafkaCluster,
    parse_broker_aliases,
)
from dzlineage_dagster.core.identity.sources import SourceHosts
from dzlineage_dagster.core.lineage.relay_access import InvalidKeys, ReservedNamespaces
from dzlineage_dagster.core.lineage.relay_events import (
    NameRules,
    PlatformDatasets,
    ScopedNameRules,
)
from dzlineage_dagster.relay.connectors import debezium_connectors
from dzlineage_dagster.relay.keys import KeyStore
from dzlineage_dagster.relay.platform.datasets import PlatformCache
from dzlineage_dagster.relay.platform.glue_catalog import GlueCatalogCache
from dzlineage_dagster.relay.platform.scopes import GlueScope, ScopedGlue
from dzlineage_dagster.relay.service import Relay
from dzlineage_dagster.relay.settings import RelaySettings, RelaySettingsError
from dzlineage_dagster.relay.spool import Spool
from dzlineage_dagster.resources import (
    DataZoneResource,
    GlueDataCatalogResource,
    LineageSyncResource,
    MskResource,
)
from dzlineage_dagster.scopes import ScopeConfig, read_scopes
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
    settings: RelaySettings,
    sides: dict[str, dict[str, Any]],
    environ: Mapping[str, str] | None,
    scopes: Sequence[ScopeConfig] = (),
    scope: str | None = None,
) -> PlatformCache | None:
    """The platform's datasets, read as a sync reads them, when the sync's settings are set
    (else None: the relay cannot tell what is unmapped, and says so in its log). ``scope``:
    one of ``scopes``' platforms, read with its settings, Region and role
    (:meth:`LineageSyncResource.for_scope`)."""
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
        resource = LineageSyncResource.with_settings(lineage_settings, sides, list(scopes))
        run = SyncRun(resource.for_scope(scope), logging.getLogger("dzlineage.relay"))
        # The registry and the cluster first, as the sync starts: a failure names the setting.
        check_registry(run)
        check_cluster(run)
        return platform_datasets(run)

    cache = PlatformCache(read, settings.relay_platform_ttl_seconds)
    if settings.relay_refuse_unmapped_topics and cache.current() is None:
        where = f" of scope {scope!r}" if scope else ""
        raise RelaySettingsError(
            f"{env_name('relay_refuse_unmapped_topics')}=true needs the platform's topics"
            f"{where}, and they cannot be read: {cache.error}"
        )
    return cache


@dataclass(frozen=True)
class PlatformView:
    """One platform the relay maps names for: the settings' one (``scope`` None), or a scope's,
    with the relay's settings as the scope sees them and its data side's Region and role."""

    scope: str | None
    settings: RelaySettings
    sides: dict[str, dict[str, Any]]
    environ: Mapping[str, str] | None


def platform_views(
    settings: RelaySettings,
    sides: dict[str, dict[str, Any]],
    scopes: Sequence[ScopeConfig],
    environ: Mapping[str, str] | None,
) -> list[PlatformView]:
    """Each scope's platform (DZLINEAGE_SCOPES), or the settings' one when there are none."""
    if not scopes:
        return [PlatformView(None, settings, sides, environ)]
    environ = os.environ if environ is None else environ
    views = []
    for scope in scopes:
        scoped = scope.environ(environ)
        try:
            scope_settings = RelaySettings.from_env(scoped)
        except RelaySettingsError as error:
            raise RelaySettingsError(f"scope {scope.name!r}: {error}") from None
        views.append(PlatformView(scope.name, scope_settings, scope.side_options(sides), scoped))
    return views


def scoped_rules(settings: RelaySettings, views: list[PlatformView]) -> NameRules | ScopedNameRules:
    """The renaming rules of every platform the relay serves (a scope's error names it)."""
    rules = {}
    for view in views:
        data = view.sides["data"]
        try:
            rules[view.scope] = name_rules(
                view.settings,
                MskResource(**data),
                glue_catalog(view.settings, GlueDataCatalogResource(**data)),
            )
        except RelaySettingsError as error:
            raise RelaySettingsError(f"scope {view.scope!r}: {error}") from None
    if list(rules) == [None]:
        return rules[None]
    # The namespace map is the relay's, applied once between the scopes' Glue and Kafka rules.
    return ScopedNameRules(
        {scope: replace(one, namespace_map={}) for scope, one in rules.items()},
        dict(settings.relay_namespace_map),
    )


def glue_destination(
    settings: RelaySettings, views: list[PlatformView], rules: NameRules | ScopedNameRules
) -> GlueDestination | ScopedGlue | None:
    """Where Glue's lineage goes (None: not a destination): the data side's Glue, or with
    scopes each scope's, with its Region and role (:mod:`.platform.scopes`)."""
    if "glue" not in settings.lineage_destinations:
        return None
    destinations = {
        view.scope: GlueDestination(
            GlueDataCatalogResource(**view.sides["data"]).client(), settings.glue_lineage_tps
        )
        for view in views
    }
    if not isinstance(rules, ScopedNameRules):
        return destinations[None]
    scopes = {}
    for view in views:
        region = destinations[view.scope].client.meta.region_name
        account = view.settings.glue_catalog_account()
        scopes[view.scope] = GlueScope(
            destinations[view.scope],
            rules.scopes[view.scope].kafka_namespaces(),
            f"arn:aws:glue:{region}:{account}" if account else None,
        )
    return ScopedGlue(scopes)


def build_relay(
    settings: RelaySettings, *, with_spool: bool, environ: Mapping[str, str] | None = None
) -> Relay:
    attempts = ATTEMPTS_WITH_SPOOL if with_spool else ATTEMPTS_WITHOUT_SPOOL
    try:
        sides = {
            side: {"max_attempts": attempts, **options}
            for side, options in aws_side_options(environ).items()
        }
        scopes = read_scopes(environ)
    except InvalidSettings as error:
        raise RelaySettingsError(str(error)) from None
    views = platform_views(settings, sides, scopes, environ)
    rules = scoped_rules(settings, views)
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
        rules=rules,
        keys=keys,
        reserved=ReservedNamespaces.of_product(settings.job_namespace),
        glue_accounts=frozenset().union(*(v.settings.glue_accounts_allowed() for v in views)),
        max_body_bytes=settings.relay_max_body_bytes,
        spool=spool,
        max_backoff_seconds=settings.relay_max_backoff_seconds,
        # A Lambda keeps no memory between invocations: only the server holds runs' datasets.
        hold_streaming_runs=with_spool,
        platforms={
            view.scope: cache
            for view in views
            if (
                cache := platform_cache(view.settings, view.sides, view.environ, scopes, view.scope)
            )
        },
        refuse_unmapped_topics=settings.relay_refuse_unmapped_topics,
        glue=glue_destination(settings, views, rules),
        to_datazone="datazone" in settings.lineage_destinations,
    )
