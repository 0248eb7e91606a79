"""A :class:`~.service.Relay` from the settings, with clients from the project's resources."""

from __future__ import annotations

from collections.abc import Mapping

from botocore.exceptions import BotoCoreError, ClientError

from dzlineage_dagster.core.lineage.openlineage import (
    kafka_dataset_namespace,
    preferred_broker_string,
)
from dzlineage_dagster.core.lineage.relay_access import InvalidKeys, ReservedNamespaces
from dzlineage_dagster.core.lineage.relay_events import NameRules
from dzlineage_dagster.relay.keys import KeyStore
from dzlineage_dagster.relay.service import Relay
from dzlineage_dagster.relay.settings import RelaySettings, RelaySettingsError
from dzlineage_dagster.relay.spool import Spool
from dzlineage_dagster.resources import DataZoneResource, GlueDataCatalogResource, MskResource
from dzlineage_dagster.settings import InvalidSettings, aws_side_options, env_name
from dzlineage_dagster.sync.destinations.glue import GlueDestination

#: Attempts per PostLineageEvent (DZLINEAGE_MAX_ATTEMPTS wins). With a spool, one: a failed
#: event goes to the spool at once, whose worker is the retry loop, so a producer never waits
#: out botocore's backoff. Without (Lambda), botocore's retries are the only ones we make.
ATTEMPTS_WITH_SPOOL, ATTEMPTS_WITHOUT_SPOOL = 1, 3


def name_rules(settings: RelaySettings, msk: MskResource) -> NameRules:
    """The renaming rules: the settings' namespace map and, if set, the cluster's brokers."""
    options = {
        "namespace_map": dict(settings.relay_namespace_map),
        "glue_symlinks": settings.relay_glue_symlinks,
    }
    arn = settings.msk_cluster_arn
    if not (arn and settings.relay_kafka_namespace):
        return NameRules(**options)
    try:
        brokers = msk.bootstrap_brokers(arn)
        if settings.topic_namespace_style == "cluster":
            namespace = f"kafka://{msk.describe_cluster(arn)['ClusterName']}"
        else:
            namespace = kafka_dataset_namespace(preferred_broker_string(brokers))
    except (BotoCoreError, ClientError, ValueError) as error:
        raise RelaySettingsError(
            f"cannot read the brokers of {env_name('msk_cluster_arn')}={arn}: {error} (unset "
            f"it or set {env_name('relay_kafka_namespace')}=false to relay Kafka names as sent)"
        ) from None
    return NameRules.for_cluster(brokers, namespace, **options)


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
        rules=name_rules(settings, MskResource(**sides["data"])),
        keys=keys,
        reserved=ReservedNamespaces.of_product(settings.job_namespace),
        glue_accounts=settings.glue_accounts_allowed(),
        max_body_bytes=settings.relay_max_body_bytes,
        spool=spool,
        max_backoff_seconds=settings.relay_max_backoff_seconds,
        glue=(
            GlueDestination(
                GlueDataCatalogResource(**sides["data"]).client(), settings.glue_lineage_tps
            )
            if "glue" in settings.lineage_destinations
            else None
        ),
        to_datazone="datazone" in settings.lineage_destinations,
    )
